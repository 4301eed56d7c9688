"""National ID numbers that are plain digit runs, found only under their label and kept
only when their check digit holds: a check for ``rules.py`` (the US SSN and UK NINO, whose
shape alone is distinctive, are in ``personal.py``).

Each label names one scheme and its validator:

- ``bsn`` / ``burgerservicenummer`` (NL): 9 digits, the 11-proof;
- ``steuer-id`` / ``steueridentifikationsnummer`` / ``IdNr`` (DE): 11 digits, ISO 7064 MOD 11,10;
- ``aadhaar`` (IN): 12 digits, Verhoeff, not starting with 0 or 1;
- ``social insurance number`` / ``SIN`` (CA): 9 digits, Luhn, not starting with 0 or 8;
- ``personnummer`` (SE): YYMMDD-NNNN, a real date, Luhn over the last 10 digits;
- ``pesel`` (PL): 11 digits, weights 1-3-7-9, a real date;
- ``NIR`` / ``numéro de sécurité sociale`` (FR): 15 digits, key = 97 - (number mod 97).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from .personal import PRIORITY, luhn_ok, typed_digits
from .shapes import Span, marked_fake, mask
from .vocab import PII_EXAMPLES

_VERHOEFF_D = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9), (1, 2, 3, 4, 0, 6, 7, 8, 9, 5), (2, 3, 4, 0, 1, 7, 8, 9, 5, 6),
    (3, 4, 0, 1, 2, 8, 9, 5, 6, 7), (4, 0, 1, 2, 3, 9, 5, 6, 7, 8), (5, 9, 8, 7, 6, 0, 4, 3, 2, 1),
    (6, 5, 9, 8, 7, 1, 0, 4, 3, 2), (7, 6, 5, 9, 8, 2, 1, 0, 4, 3), (8, 7, 6, 5, 9, 3, 2, 1, 0, 4),
    (9, 8, 7, 6, 5, 4, 3, 2, 1, 0))
_VERHOEFF_P = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9), (1, 5, 7, 6, 2, 8, 3, 0, 9, 4), (5, 8, 0, 3, 7, 9, 6, 1, 4, 2),
    (8, 9, 1, 6, 0, 4, 3, 5, 2, 7), (9, 4, 5, 3, 1, 2, 6, 8, 7, 0), (4, 2, 8, 6, 5, 7, 3, 9, 0, 1),
    (2, 7, 9, 3, 8, 0, 6, 4, 1, 5), (7, 0, 4, 6, 9, 1, 3, 2, 5, 8))


def verhoeff_ok(digits: str) -> bool:
    c = 0
    for i, ch in enumerate(reversed(digits)):
        c = _VERHOEFF_D[c][_VERHOEFF_P[i % 8][ord(ch) - 48]]
    return c == 0


def bsn_ok(d: str) -> bool:
    return len(d) == 9 and sum(int(c) * w for c, w in zip(d, (9, 8, 7, 6, 5, 4, 3, 2, -1), strict=True)) % 11 == 0


def steuer_id_ok(d: str) -> bool:
    if len(d) != 11 or d[0] == "0":
        return False
    product = 10
    for c in d[:10]:
        s = (int(c) + product) % 10 or 10
        product = (s * 2) % 11
    return (11 - product) % 10 == int(d[10])


def aadhaar_ok(d: str) -> bool:
    return len(d) == 12 and d[0] not in "01" and verhoeff_ok(d)


def sin_ok(d: str) -> bool:
    return len(d) == 9 and d[0] not in "08" and luhn_ok(d)


def _date_ok(yy: str, mm: str, dd: str) -> bool:
    return 1 <= int(mm) <= 12 and 1 <= int(dd) <= 31


def personnummer_ok(d: str) -> bool:
    d = d[-10:] if len(d) == 12 else d
    return len(d) == 10 and _date_ok(d[:2], d[2:4], d[4:6]) and luhn_ok(d)


def pesel_ok(d: str) -> bool:
    if len(d) != 11 or not 1 <= int(d[2:4]) % 20 <= 12 or not 1 <= int(d[4:6]) <= 31:
        return False
    weights = (1, 3, 7, 9, 1, 3, 7, 9, 1, 3)
    return (10 - sum(int(c) * w for c, w in zip(d[:10], weights, strict=True)) % 10) % 10 == int(d[10])


def nir_ok(d: str) -> bool:
    return len(d) == 15 and d[0] in "12" and 97 - int(d[:13]) % 97 == int(d[13:])


# label (lower-cased, separators dropped) -> (scheme, validator)
SCHEMES: dict[str, tuple[str, Callable[[str], bool]]] = {
    "bsn": ("BSN", bsn_ok), "burgerservicenummer": ("BSN", bsn_ok),
    "steuerid": ("Steuer-ID", steuer_id_ok), "steueridentifikationsnummer": ("Steuer-ID", steuer_id_ok),
    "idnr": ("Steuer-ID", steuer_id_ok),
    "aadhaar": ("Aadhaar", aadhaar_ok), "aadhar": ("Aadhaar", aadhaar_ok),
    "socialinsurancenumber": ("SIN", sin_ok), "sin": ("SIN", sin_ok),
    "personnummer": ("personnummer", personnummer_ok),
    "pesel": ("PESEL", pesel_ok),
    "nir": ("NIR", nir_ok), "numerodesecuritesociale": ("NIR", nir_ok), "numérodesécuritésociale": ("NIR", nir_ok),
}
LABELS = ("bsn", "BSN", "Bsn", "burgerservicenummer", "Burgerservicenummer", "steuer_id", "steuerId", "SteuerId",
          "steuer-id", "Steuer-ID", "STEUER_ID", "Steuer-Id", "steueridentifikationsnummer",
          "Steueridentifikationsnummer", "IdNr", "aadhaar", "Aadhaar", "AADHAAR", "aadhar", "Aadhar",
          "social_insurance_number", "socialInsuranceNumber", "Social Insurance Number", "social insurance number",
          "SIN", "personnummer", "Personnummer", "PERSONNUMMER", "pesel", "PESEL", "Pesel", "NIR", "nir",
          "numero_securite_sociale", "numéro de sécurité sociale", "Numéro de sécurité sociale")
PATTERN = (r"(?P<label>(?i:burgerservicenummer|bsn|steueridentifikationsnummer|steuer[_-]?id|idnr|aadhaa?r"
           r"|social[ _]?insurance[ _]?number|sin|personnummer|pesel|nir|num[ée]ro[ _]de[ _]s[ée]curit[ée][ _]sociale))"
           r"""(?:[_ ]?(?i:no|nr|number|num))?["'\]]?[ \t]*(?:=>|:=|[:=,]|\(|)[ \t]*["'(]?"""
           r"(?P<v>[0-9](?:[ .-]?[0-9]){8,14})")


def labelled_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    start = m.start()
    if start > 0 and (text[start - 1].isalnum() or (text[start - 1] == "_" and m.group("label").islower())):
        return ()
    label = re.sub(r"[ _-]", "", m.group("label")).lower()
    scheme = SCHEMES.get(label)
    if scheme is None or (label in ("sin", "nir", "idnr") and not m.group("label")[:1].isupper()):
        return ()  # sin()/nir are words or functions in lower case: only SIN, NIR, IdNr
    name, valid = scheme
    v_start, v_end = m.span("v")
    if v_end < len(text) and (text[v_end].isalnum() or text[v_end] in "_"):
        return ()
    value = m.group("v")
    digits = re.sub(r"[ .-]", "", value)
    if not valid(digits) or typed_digits(digits) or digits in PII_EXAMPLES or marked_fake(text, v_start):
        return ()
    return (Span(v_start, v_end, "national-id", f"{name} " + mask(value, 0), PRIORITY),)
