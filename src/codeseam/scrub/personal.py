"""Personal data that has a check rule: payment card numbers, IBANs, national ID numbers and
E.164 phone numbers written without separators. Checks for ``rules.py``.

Each shape is validated the way its issuer defines it, so a number that merely looks like
one is left alone:

- ``card_check``: issuer range and length (Visa, Mastercard incl. 2-series, Amex, Discover,
  JCB, Diners, UnionPay, Maestro, Mir) and the Luhn check digit; a plain run or the usual
  groupings (4-4-4-4, 4-6-5, ...) with one kind of separator; never a piece of a longer run;
- ``iban_check``: the country's IBAN length and the ISO 7064 mod-97 check, printed in groups
  of four or as one run;
- ``ssn_check``: US SSN area/group/serial rules (no 000, 666, 9xx area; no 00 group; no 0000
  serial); written ``AAA-GG-SSSS`` anywhere, or plain / spaced after an SSN label;
- ``nino_check``: UK National Insurance number prefix rules (HMRC's letter sets, no BG, GB,
  KN, NK, NT, TN, ZZ) and suffix A-D;
- ``e164_check``: ``+`` and an assigned country calling code, 8-15 digits in all (NANP:
  valid area code and exchange), no separators.

Documented test values (Stripe's and the card networks' test numbers, the ECB/Wikipedia
example IBANs, SSN 078-05-1120 ...) and typed stand-ins (repeated or sequential digits) are
not personal data (``vocab.PII_EXAMPLES``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .shapes import Span, marked_fake, mask
from .vocab import IBAN_LENGTHS, PHONE_COUNTRY_CODES, PII_EXAMPLES

PRIORITY = 22  # above phone/email (20): a card number is not also a phone number

_DIGITS = frozenset("0123456789")
_WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
# a number right after one of these is part of something longer (a version, a path, a hex
# literal, a negative number, a dashed id)
_NUMBER_BANNED_LEFT = _WORD | frozenset(".-+/\\@$%")


def _left_free(text: str, start: int, banned: frozenset[str] = _NUMBER_BANNED_LEFT) -> bool:
    return start == 0 or text[start - 1] not in banned


def _right_free(text: str, end: int) -> bool:
    """Nothing continues the number: no word character, no ``.5``/``-5``/``/5``/``:5``."""
    if end >= len(text):
        return True
    c = text[end]
    if c in _WORD:
        return False
    return not (c in ".-/:" and end + 1 < len(text) and text[end + 1] in _DIGITS)


def typed_digits(digits: str) -> bool:
    """A stand-in someone typed: few distinct digits (4111 1111 ...), one digit over 2/3 of
    the way (4000 0000 0000 0002), or a run of 6+ ascending/descending digits (123456789)."""
    if len(set(digits)) <= max(2, len(digits) // 4):
        return True
    if max(digits.count(d) for d in set(digits)) * 3 > len(digits) * 2:
        return True
    return "123456" in digits or "654321" in digits or "012345" in digits or "987654" in digits


# ------------------------------------------------------------------------------- cards

def luhn_ok(digits: str) -> bool:
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = ord(c) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def card_issuer(digits: str) -> str | None:
    """The network whose IIN range and length the number is in (None: no network's)."""
    n = len(digits)
    p2, p3, p4, p6 = int(digits[:2]), int(digits[:3]), int(digits[:4]), int(digits[:6])
    if digits[0] == "4" and n in (16, 19):  # (13-digit Visas are long gone; a 13-digit run is a phone or a timestamp)
        return "visa"
    if (51 <= p2 <= 55 or 2221 <= p4 <= 2720) and n == 16:
        return "mastercard"
    if p2 in (34, 37) and n == 15:
        return "amex"
    if 2200 <= p4 <= 2204 and 16 <= n <= 19:
        return "mir"
    if (p4 == 6011 or 644 <= p3 <= 649 or p2 == 65 or 622126 <= p6 <= 622925) and 16 <= n <= 19:
        return "discover"
    if 3528 <= p4 <= 3589 and 16 <= n <= 19:
        return "jcb"
    if ((300 <= p3 <= 305 or p2 == 36) and 14 <= n <= 19) or (p2 in (38, 39) and 16 <= n <= 19):
        return "diners"
    if p2 == 62 and 16 <= n <= 19:
        return "unionpay"
    if p4 in (5018, 5020, 5038, 5893, 6304, 6759, 6761, 6762, 6763) and 12 <= n <= 19:
        return "maestro"
    return None


def _card_grouping(run: str) -> str | None:
    """The digits of ``run`` if it is written as a card is: one run, groups of four (the
    last 1-4), or 4-6-5 / 4-6-4, with one kind of separator."""
    if run.isdigit():
        return run
    sep = " " if " " in run else "-"
    groups = run.split(sep)
    if any(not g.isdigit() for g in groups):
        return None  # mixed separators or a double one
    sizes = [len(g) for g in groups]
    if sizes in ([4, 6, 5], [4, 6, 4]) or (all(s == 4 for s in sizes[:-1]) and 1 <= sizes[-1] <= 4
                                            and len(sizes) >= 4):
        return "".join(groups)
    return None


# an id, a counter or a hash: a plain digit run named so is not a card number
_ID_CONTEXT = re.compile(
    r"(?:\b|_|(?<=[a-z])(?=[A-Z]))(?i:ids?|uuid|guid|order|invoice|tracking|ref|reference|nonce|seed|hash|checksum"
    r"|crc|version|build|serial|sku|ean|upc|gtin|isbn|imei|iccid|timestamp|epoch|ts|time|offset|count|size|snowflake"
    r"|txn|transaction|confirmation|booking|ticket|shipment|parcel|customer|user|account|msisdn)s?"
    r"(?:\b|_|(?=[A-Z]))[^\n]{0,12}\Z")
_CARD_CONTEXT = re.compile(r"(?i)card|pan\b|\bcc|kredit|credit")


def card_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    start, end = m.span()
    if not _left_free(text, start) or not _right_free(text, end):
        return ()
    if end < len(text) - 1 and text[end] in " -" and text[end + 1] in _DIGITS:
        return ()  # the groups go on: a longer number, a list of numbers
    run = m.group()
    digits = _card_grouping(run)
    if digits is None or card_issuer(digits) is None or not luhn_ok(digits):
        return ()
    if digits in PII_EXAMPLES or typed_digits(digits) or marked_fake(text, start):
        return ()
    head = text[max(0, start - 40):start]
    if "test" in head.lower() and "\n" not in head[head.lower().rfind("test"):]:
        return ()  # TEST_CARD = ..., "test card": a network's test number
    if run.isdigit() and _ID_CONTEXT.search(head) and not _CARD_CONTEXT.search(head[-16:]):
        return ()  # order_id = 4539..., "ts": 4024...: a plain run named as an id
    return (Span(start, end, "card-number", mask(run, 0), PRIORITY),)


CARD_PATTERN = re.compile(r"[2-6][0-9]{3}(?:[ -]?[0-9]){8,20}")
_TO_ZERO = bytes.maketrans(b"123456789", b"000000000")
_EIGHT_DIGITS = re.compile(rb"0000[ -]?0000")


def cards_in_text(text: str, m: re.Match[str]) -> Iterable[Span]:
    """Every card number in ``text`` (the rule's pattern matches once, at the start).

    Regex search for a digit-led shape tries every digit of the text; here an ASCII text is
    first mapped to its shape (every digit becomes ``0``, one C pass), where eight digits in
    a row or in two groups are a literal the regex engine finds fast; the card pattern is
    then tried only at the start of those runs."""
    if not text.isascii():
        for run in CARD_PATTERN.finditer(text):
            yield from card_check(text, run)
        return
    shape = text.encode("ascii").translate(_TO_ZERO)
    done = 0
    for hit in _EIGHT_DIGITS.finditer(shape):
        start = hit.start()
        if start < done:
            continue
        while start > done and shape[start - 1] == 48:  # back to the run's first digit (not
            start -= 1  # past the last run tried: linear on a megabyte of digits)
        c = CARD_PATTERN.match(text, start)
        done = hit.end()
        if c is not None:
            done = max(done, c.end())
            yield from card_check(text, c)


# ------------------------------------------------------------------------------- IBAN

def iban_ok(iban: str) -> bool:
    """ISO 13616: the country's length and ISO 7064 mod 97-10 (check digits 02-98)."""
    if IBAN_LENGTHS.get(iban[:2]) != len(iban) or not iban[4:].isalnum():
        return False
    moved = iban[4:] + iban[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def iban_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    start = m.start()
    if not _left_free(text, start, _WORD):
        return ()
    cc = m.group()[:2]
    length = IBAN_LENGTHS.get(cc)
    if length is None:
        return ()
    # read `length` characters, with a single space allowed only between groups of four
    spaced = len(text) > start + 4 and text[start + 4] == " "
    chars: list[str] = []
    i = start
    limit = min(len(text), start + length + length // 4 + 1)
    while i < limit and len(chars) < length:
        c = text[i]
        if c == " " and spaced and len(chars) % 4 == 0 and chars:
            i += 1
            continue
        if not (c.isascii() and (c.isdigit() or c.isupper())):
            return ()
        chars.append(c)
        i += 1
    iban = "".join(chars)
    if len(iban) != length or (i < len(text) and text[i] in _WORD):
        return ()
    if spaced and i < len(text) - 1 and text[i] == " " and text[i + 1] in _DIGITS:
        return ()  # more digit groups follow: not where this IBAN ends
    if not iban_ok(iban) or iban in PII_EXAMPLES or typed_digits("".join(c for c in iban[4:] if c.isdigit()) or "0"):
        return ()
    if not any(c.isdigit() for c in iban[4:]) or marked_fake(text, start):
        return ()
    return (Span(start, i, "iban", f"{cc}…({length} chars)", PRIORITY),)


# ------------------------------------------------------------------------------- national IDs

def ssn_ok(area: str, group: str, serial: str) -> bool:
    """SSA rules: no area 000, 666 or 900-999; no group 00; no serial 0000."""
    return (area != "000" and area != "666" and area[0] != "9" and group != "00" and serial != "0000"
            and not typed_digits(area + group + serial))


def ssn_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    """``AAA-GG-SSSS``: the pattern starts at ``-GG-SSSS``; the area is the 3 digits before."""
    start, end = m.start() - 3, m.end()
    if start < 0 or not text[start:m.start()].isdigit():
        return ()
    if not _left_free(text, start) or not _right_free(text, end):
        return ()
    value = text[start:end]
    if value in PII_EXAMPLES or not ssn_ok(value[:3], value[4:6], value[7:]) or marked_fake(text, start):
        return ()
    return (Span(start, end, "national-id", "SSN " + mask(value, 0), PRIORITY),)


def ssn_labelled_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    """``ssn: 123456789`` / ``SSN 123 45 6789``: plain or spaced only under an SSN label."""
    if m.start() > 0 and text[m.start() - 1].isalpha():
        return ()
    v = m.group("v")
    start, end = m.span("v")
    if not _left_free(text, start) or not _right_free(text, end):
        return ()
    digits = v.replace(" ", "").replace("-", "")
    area, group, serial = digits[:3], digits[3:5], digits[5:]
    if f"{area}-{group}-{serial}" in PII_EXAMPLES or not ssn_ok(area, group, serial) or marked_fake(text, start):
        return ()
    return (Span(start, end, "national-id", "SSN " + mask(v, 0), PRIORITY),)


_NINO_FIRST = frozenset("ABCEGHJKLMNOPRSTWXYZ")
_NINO_SECOND = frozenset("ABCEGHJKLMNPRSTWXYZ")
NINO_BANNED_PREFIXES = frozenset({"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"})


def nino_prefixes() -> tuple[str, ...]:
    """The literals a NINO starts with: every allowed prefix and its first digit."""
    return tuple(a + b + sp + d for a in sorted(_NINO_FIRST) for b in sorted(_NINO_SECOND)
                 if a + b not in NINO_BANNED_PREFIXES for sp in ("", " ") for d in "0123456789")


def nino_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    start, end = m.span()
    if not _left_free(text, start, _WORD) or (end < len(text) and text[end] in _WORD):
        return ()
    value = m.group()
    digits = "".join(c for c in value if c.isdigit())
    if value.replace(" ", "") in PII_EXAMPLES or typed_digits(digits) or marked_fake(text, start):
        return ()
    return (Span(start, end, "national-id", "NINO " + mask(value, 0), PRIORITY),)


# ------------------------------------------------------------------------------- phones

def e164_country(digits: str) -> str | None:
    for n in (1, 2, 3):
        if digits[:n] in PHONE_COUNTRY_CODES:
            return digits[:n]
    return None


def e164_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    """``+4915123038998``: a ``+``, an assigned country code, 8-15 digits, no separators."""
    start, end = m.span()
    if not _left_free(text, start, _WORD | frozenset("+)]./\\-")) or not _right_free(text, end):
        return ()
    if end < len(text) and text[end] in " -" and end + 1 < len(text) and text[end + 1] in _DIGITS:
        return ()  # a grouped number goes on (the separated shape is the phone rule's)
    digits = m.group()[1:]
    cc = e164_country(digits)
    if cc is None or not 8 <= len(digits) <= 15:
        return ()
    national = digits[len(cc):]
    if cc == "1":  # NANP: NXX-NXX-XXXX, and 555-01XX is fiction
        if len(national) != 10 or national[0] in "01" or national[3] in "01" or national[3:7] == "5550":
            return ()
    elif len(national) < 6 or (cc == "44" and national.startswith("7700900")):
        return ()  # too short for a subscriber number; Ofcom's drama range
    if digits in PII_EXAMPLES or typed_digits(national) or marked_fake(text, start):
        return ()
    return (Span(start, end, "phone", mask(m.group()), PRIORITY - 2),)


# ------------------------------------------------------------------------------- literals

def iban_literals() -> tuple[str, ...]:
    """What an IBAN starts with: a country that has IBANs and check digits 02-98."""
    return tuple(f"{cc}{d:02d}" for cc in sorted(IBAN_LENGTHS) for d in range(2, 99))


SSN_LABELS = ("ssn", "SSN", "Ssn", "social_security", "socialSecurity", "SocialSecurity", "SOCIAL_SECURITY",
              "social security", "Social Security", "Social security", "SOCIAL SECURITY", "social-security")
