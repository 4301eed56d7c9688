"""Random personal-data values with valid check digits, for the dev corpus
(``secret_corpus_pii``): card numbers (issuer prefix + Luhn), IBANs (mod-97 check digits),
SSNs, NINOs, E.164 phone numbers and the labelled national IDs (BSN, Steuer-ID, Aadhaar,
SIN, personnummer, PESEL, NIR). Drawn from a seeded ``Gen``: never a real person's number."""

from __future__ import annotations

import string

from .corpus_tokens import Gen

IBAN_LENGTHS = {"DE": 22, "GB": 22, "FR": 27, "NL": 18, "ES": 24, "IT": 27, "AT": 20, "BE": 16, "CH": 21,
                "PL": 28, "SE": 24, "DK": 18, "FI": 18, "IE": 22, "PT": 25, "NO": 15, "LU": 20, "CZ": 24}
LETTER_BANKS = {"GB": 4, "NL": 4, "IE": 4}  # BBANs that start with a bank code of letters


# ------------------------------------------------------------------------------- values

def luhn_digit(body: str) -> str:
    total = 0
    for i, c in enumerate(reversed(body)):
        d = int(c)
        if i % 2 == 0:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return str((10 - total % 10) % 10)


def _varied(digits: str) -> bool:
    """Drawn, not typed: the scrubber leaves typed-looking runs alone, so positives avoid them."""
    return (len(set(digits)) > max(2, len(digits) // 4) and max(digits.count(d) for d in set(digits)) * 3 <= len(digits) * 2
            and not any(s in digits for s in ("123456", "654321", "012345", "987654")))


ISSUERS = (("visa", ("4",), 16), ("visa", ("4",), 16), ("mastercard", ("51", "52", "53", "54", "55"), 16),
           ("mastercard-2", ("2221", "2300", "2500", "2720"), 16), ("amex", ("34", "37"), 15),
           ("discover", ("6011", "65", "644"), 16), ("jcb", ("3528", "3540", "3589"), 16),
           ("diners", ("36", "300", "305"), 14), ("unionpay", ("62",), 16), ("maestro", ("6759", "5018"), 16))


def card(g: Gen, issuer: tuple[str, tuple[str, ...], int] | None = None) -> str:
    _, prefixes, n = issuer or g.r.choice(ISSUERS)
    while True:
        p = g.r.choice(prefixes)
        if p == "62":
            p = "62" + g.r.choice("012345789")  # 622126-622925 is Discover's
        body = p + g.chars(string.digits, n - 1 - len(p))
        number = body + luhn_digit(body)
        if _varied(number):
            return number


def bad_luhn(number: str) -> str:
    return number[:-1] + str((int(number[-1]) + 1 + int(number[-2]) % 8) % 10)


def grouped(number: str, sep: str = " ") -> str:
    if len(number) == 15:
        return sep.join((number[:4], number[4:10], number[10:]))
    if len(number) == 14:
        return sep.join((number[:4], number[4:10], number[10:]))
    return sep.join(number[i:i + 4] for i in range(0, len(number), 4))


def iban(g: Gen, cc: str | None = None) -> str:
    cc = cc or g.r.choice(sorted(IBAN_LENGTHS))
    n = IBAN_LENGTHS[cc] - 4
    while True:
        letters = LETTER_BANKS.get(cc, 0)
        bban = g.chars(string.ascii_uppercase, letters) + g.chars(string.digits, n - letters)
        digits = "".join(str(int(c, 36)) for c in bban + cc + "00")
        check = 98 - int(digits) % 97
        value = f"{cc}{check:02d}{bban}"
        if _varied("".join(c for c in bban if c.isdigit())):
            return value


def spaced(value: str) -> str:
    return " ".join(value[i:i + 4] for i in range(0, len(value), 4))


def ssn(g: Gen) -> str:
    while True:
        area = g.r.randint(1, 899)
        if area == 666:
            continue
        value = f"{area:03d}-{g.r.randint(1, 99):02d}-{g.r.randint(1, 9999):04d}"
        if _varied(value.replace("-", "")):
            return value


NINO_FIRST, NINO_SECOND = "ABCEGHJKLMNOPRSTWXYZ", "ABCEGHJKLMNPRSTWXYZ"


def nino(g: Gen) -> str:
    while True:
        prefix = g.r.choice(NINO_FIRST) + g.r.choice(NINO_SECOND)
        digits = g.chars(string.digits, 6)
        if prefix not in ("BG", "GB", "KN", "NK", "NT", "TN", "ZZ") and _varied(digits):
            return prefix + digits + g.r.choice("ABCD")


def _with_check(g: Gen, n: int, ok) -> str:
    """n random digits, the last one chosen so that ``ok`` (the scheme's validator) holds."""
    while True:
        body = g.chars(string.digits, n - 1)
        for last in "0123456789":
            if ok(body + last) and _varied(body + last):
                return body + last


def labelled_ids(g: Gen) -> list[tuple[str, str]]:
    """(label, value) for each labelled scheme, with valid check digits."""
    from codeseam.scrub import nationalid as n

    bsn = _with_check(g, 9, n.bsn_ok)
    steuer = _with_check(g, 11, n.steuer_id_ok)
    aadhaar = _with_check(g, 12, n.aadhaar_ok)
    sin = _with_check(g, 9, n.sin_ok)
    yy, mm, dd = f"{g.r.randint(40, 99)}", f"{g.r.randint(1, 12):02d}", f"{g.r.randint(1, 28):02d}"
    pnr = next(v for v in (yy + mm + dd + g.chars(string.digits, 3) + c for _ in range(100) for c in "0123456789")
               if n.personnummer_ok(v))
    pesel = next(v for v in (yy + mm + dd + g.chars(string.digits, 4) + c for _ in range(100) for c in "0123456789")
                 if n.pesel_ok(v))
    nir13 = g.r.choice("12") + yy + mm + g.chars(string.digits, 8)
    nir = nir13 + f"{97 - int(nir13) % 97:02d}"
    return [("BSN", bsn), ("Steuer-ID", steuer), ("aadhaar", f"{aadhaar[:4]} {aadhaar[4:8]} {aadhaar[8:]}"),
            ("SIN", f"{sin[:3]} {sin[3:6]} {sin[6:]}"), ("personnummer", f"{pnr[:6]}-{pnr[6:]}"), ("pesel", pesel),
            ("NIR", nir)]


PHONE_PLANS = (("49", "15", 9), ("49", "17", 9), ("44", "7", 9), ("33", "6", 8), ("31", "6", 8), ("34", "6", 8),
               ("39", "3", 9), ("61", "4", 8), ("91", "9", 9), ("81", "90", 8), ("48", "5", 8), ("41", "7", 8))


def e164(g: Gen) -> str:
    while True:
        if g.r.random() < 0.25:  # NANP: NXX NXX XXXX
            national = (str(g.r.randint(2, 9)) + g.chars(string.digits, 2) + str(g.r.randint(2, 9))
                        + g.chars(string.digits, 6))
            if national[3:7] == "5550":
                continue
            number = "1" + national
        else:
            cc, lead, rest = g.r.choice(PHONE_PLANS)
            number = cc + lead + g.chars(string.digits, rest)
            if cc == "44" and number[2:9] == "7700900":
                continue
        if _varied(number[1:]):
            return "+" + number
