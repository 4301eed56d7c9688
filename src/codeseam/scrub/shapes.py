"""Checks for the shape rules: each looks at one regex match in context (boundaries,
placeholders, randomness) and returns the spans to redact. Also ``mask``, the safe preview."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import NamedTuple

from .vocab import (EMAIL_GTLDS, NOT_CC_TLDS, PLACEHOLDER_LOCALS, PLACEHOLDER_WORDS, RESERVED_DOMAINS,
                    RESERVED_TLDS, SERVICE_LOCALS)


class Span(NamedTuple):
    """A candidate redaction: text[start:end] is replaced. ``preview`` is safe to print."""

    start: int
    end: int
    kind: str
    preview: str
    priority: int
    rule: str = ""  # the id of the rule that found it (filled in by the engine)


Check = Callable[[str, "re.Match[str]"], Iterable[Span]]


_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_TOKEN_CHARS = _ALNUM | {"_", "-"}


_FAKE_NAME = re.compile(r"(?i)(?:^|[^a-z])(?:fake|dummy|mock|example|sample|placeholder|redacted)(?:[^a-z]|$)")


def marked_fake(text: str, start: int) -> bool:
    """The line says the value is a stand-in: ``FAKE_TOKEN = "ghp_..."``, ``example_key: ...``
    (the 80 characters before it on its line name it fake, dummy, mock, example, sample)."""
    lo = text.rfind("\n", max(0, start - 80), start) + 1 or max(0, start - 80)
    return _FAKE_NAME.search(text, lo, start) is not None


def is_placeholder(value: str) -> bool:
    """A stand-in value: ``your-api-key``, ``change-me``, ``XXXX``, ``<token>``, ``***``."""
    low = value.lower()
    if low.strip(" .*x-_\u2022#") == "" or (low[:1] == "[" and low[-1:] == "]"):
        return True  # ***, xxxx, ••••, [PASSWORD]
    return _PLACEHOLDER.search(low) is not None


_PLACEHOLDER = re.compile("|".join(re.escape(w) for w in PLACEHOLDER_WORDS))


def looks_random(body: str, *, min_distinct: int = 8) -> bool:
    """Mixed upper, lower and digits, and enough distinct characters."""
    has_upper = any(c.isupper() for c in body)
    has_lower = any(c.islower() for c in body)
    has_digit = any(c.isdigit() for c in body)
    return has_upper and has_lower and has_digit and len(set(body)) >= min_distinct


def _left_ok(text: str, start: int, banned: frozenset[str]) -> bool:
    return start == 0 or text[start - 1] not in banned


def _right_ok(text: str, end: int, banned: frozenset[str]) -> bool:
    return end >= len(text) or text[end] not in banned


def mask(secret: str, shown: int | None = None) -> str:
    """A safe preview: at most 4 leading characters (none for short values) and the length.
    ``shown`` caps the leading characters further: a token shows at most its public prefix
    (``glpa``), a password or any other value with no public prefix shows none (``shown=0``).

    >>> mask("hunter2")
    '…(7 chars)'
    """
    s = " ".join(secret.split())
    n = 0 if len(s) < 12 else min(4, len(s) // 6)
    if shown is not None:
        n = min(n, shown)
    return f"{s[:n]}…({len(secret)} chars)"


# --------------------------------------------------------------------------- shape checks

def token_check(kind: str, prefix_len: int) -> Check:
    """A check for ``<prefix><body>`` tokens: not inside a longer word, not a placeholder,
    and a random-looking body (upper, lower and digits)."""

    def check(text: str, m: re.Match[str]) -> Iterable[Span]:
        start, end = m.span()
        token = m.group()
        if not _left_ok(text, start, _TOKEN_CHARS):
            return ()
        if is_placeholder(token) or not looks_random(token[prefix_len:]) or marked_fake(text, start):
            return ()
        return (Span(start, end, kind, mask(token, prefix_len), 50),)

    return check


def slack_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    start, end = m.span()
    token = m.group()
    body = token[5:]
    if not _left_ok(text, start, _TOKEN_CHARS) or is_placeholder(token):
        return ()
    if sum(c.isdigit() for c in body) < 6 or len(set(body)) < 8:
        return ()
    return (Span(start, end, "slack-token", mask(token), 50),)


_AWS_ID = re.compile(r"A(?:KIA|SIA)[A-Z0-9]{16}")
_B64_LEFT = _ALNUM | {"/", "+"}
_B64_CHARS = _B64_LEFT | {"="}
AWS_NEIGHBOURHOOD = 5  # lines either side of a key id searched for its secret ...
AWS_REACH = 2000  # ... and at most this many characters either side


def _valid_aws_id(text: str, start: int, end: int) -> bool:
    key = text[start:end]
    return (_left_ok(text, start, _ALNUM) and _right_ok(text, end, _ALNUM)
            and not is_placeholder(key) and len(set(key[4:])) >= 6)


def aws_key_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    if not _valid_aws_id(text, *m.span()):
        return ()
    return (Span(m.start(), m.end(), "aws-access-key-id", mask(m.group()), 60),)


def _neighbourhood(text: str, start: int, end: int) -> tuple[int, int]:
    """From the start of the line AWS_NEIGHBOURHOOD lines above to the end of the line as
    many below, clipped to AWS_REACH characters either side."""
    floor, ceil = max(0, start - AWS_REACH), min(len(text), end + AWS_REACH)
    lo = text.rfind("\n", floor, start) + 1 or floor
    for _ in range(AWS_NEIGHBOURHOOD):
        if lo <= floor:
            break
        lo = text.rfind("\n", floor, lo - 1) + 1 or floor
    hi = text.find("\n", end, ceil)
    hi = ceil if hi < 0 else hi
    for _ in range(AWS_NEIGHBOURHOOD):
        if hi >= ceil:
            break
        nxt = text.find("\n", hi + 1, ceil)
        hi = ceil if nxt < 0 else nxt
    return lo, hi


def _aws_secret_shape(text: str, start: int, end: int) -> bool:
    secret = text[start:end]
    return (_left_ok(text, start, _B64_LEFT) and _right_ok(text, end, _B64_CHARS)
            and looks_random(secret.replace("/", "").replace("+", "")) and not is_placeholder(secret))


def aws_secret_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    """A 40-char base64 run is an AWS secret only with a valid key id close by."""
    start, end = m.span()
    if not _aws_secret_shape(text, start, end):
        return ()
    lo, hi = _neighbourhood(text, start, end)
    if not any(_valid_aws_id(text, *k.span()) for k in _AWS_ID.finditer(text, lo, hi)):
        return ()
    return (Span(start, end, "aws-secret-key", mask(m.group(), 0), 60),)


_AWS_SECRET_NAME = re.compile(r"(?:[Ss]ecret_?[Aa]|SECRET_?A)\Z")


def aws_named_secret_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    """``aws_secret_access_key = <40 chars>`` (any case style) needs no key id nearby."""
    start, end = m.span("value")
    if not _AWS_SECRET_NAME.search(text, max(0, m.start() - 8), m.start()):
        return ()
    if not _aws_secret_shape(text, start, end):
        return ()
    return (Span(start, end, "aws-secret-key", mask(m.group("value"), 0), 60),)


_JWT_HEADER_MAX = 2048
_JWT_CHARS = _TOKEN_CHARS


def jwt_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    """Anchored at ``.eyJ`` (the payload): the header ``eyJ...`` runs back from the dot."""
    end = m.end()
    start, floor = m.start(), max(0, m.start() - _JWT_HEADER_MAX)
    while start > floor and text[start - 1] in _JWT_CHARS:
        start -= 1
    if m.start() - start < 11 or not text.startswith("eyJ", start):
        return ()
    from .vocab import DOC_EXAMPLES

    token = text[start:end]
    if not _left_ok(text, start, _TOKEN_CHARS) or is_placeholder(token) or marked_fake(text, start):
        return ()
    if token in DOC_EXAMPLES or token.rsplit(".", 1)[-1] in DOC_EXAMPLES:
        return ()
    return (Span(start, end, "jwt", mask(token, 3), 50),)


_PEM_END = re.compile(r"-----END ([A-Z0-9 ]*)PRIVATE KEY(?: BLOCK)?-----")
_PEM_BODY = re.compile(r"[A-Za-z0-9+/]{32,}")
_PEM_BODY_LINE = re.compile(r"[ \t\"'`]*(?:[A-Za-z0-9+/=]{16,}|(?:Proc-Type|DEK-Info|Comment):.*)"
                            r"[ \t\"'`,;\\n+]*$")
PEM_MAX_CHARS = 16384


def pem_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    start = m.start()
    limit = min(len(text), m.end() + PEM_MAX_CHARS)
    next_begin = text.find("-----BEGIN", m.end(), limit)  # a block ends before the next one
    limit = limit if next_begin < 0 else next_begin
    end_m = _PEM_END.search(text, m.end(), limit)
    if end_m is not None and end_m.group(1) == m.group(1):
        end = end_m.end()
    else:  # truncated block: take the base64 lines that follow
        end = m.end()
        pos = text.find("\n", end, limit)
        while pos >= 0:
            nxt = text.find("\n", pos + 1, limit)
            line_end = limit if nxt < 0 else nxt
            if not _PEM_BODY_LINE.match(text, pos + 1, line_end):
                break
            end, pos = line_end, nxt
    if not _PEM_BODY.search(text, m.end(), end):
        return ()
    n_lines = text.count("\n", start, end) + 1
    header = m.group().strip("-")
    return (Span(start, end, "private-key", f"-----{header}----- ({n_lines} lines)", 100),)


_EMAIL_LOCAL = re.compile(r"[\w.%+-]{1,64}\Z")
_EMAIL_BANNED_LEFT = frozenset("@:/\\$")
_MESSAGE_ID_HEADERS = ("message-id", "references", "in-reply-to", "msgid")


def _machine_local(local: str) -> bool:
    """A generated id in address syntax (Message-ID, UUID@host): long and digit-heavy."""
    return len(local) >= 12 and sum(c.isdigit() for c in local) >= 0.4 * len(local)


def email_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    at, end = m.span()
    if not _right_ok(text, end, _TOKEN_CHARS | {"@"}):
        return ()
    lm = _EMAIL_LOCAL.search(text, max(0, at - 64), at)
    if lm is None:
        return ()
    start = lm.start()
    local = lm.group()
    while local and local[0] in ".-+%_":  # cannot start an address
        local, start = local[1:], start + 1
    if not local or local.endswith(".") or ".." in local or local.lower() in SERVICE_LOCALS \
            or local.lower() in PLACEHOLDER_LOCALS:
        return ()
    if start > 0 and text[start - 1] in _EMAIL_BANNED_LEFT \
            and not text[max(0, start - 7):start].lower().endswith("mailto:"):  # a@b@c, scheme:user@, path/user@
        return ()
    domain = m.group("domain").lower()
    tld = domain.rsplit(".", 1)[-1]
    if not tld.isalpha() or tld in RESERVED_TLDS or domain.endswith(RESERVED_DOMAINS):
        return ()
    if not (tld in EMAIL_GTLDS or (len(tld) == 2 and tld not in NOT_CC_TLDS)):
        return ()
    if end < len(text) - 1 and text[end] == ":" and not text[end + 1].isspace():
        return ()  # user@host:path is an ssh/scp target
    if _machine_local(local):
        return ()
    head_from = max(0, start - 200)
    line_head = text[text.rfind("\n", head_from, start) + 1 or head_from:start].lower()
    if any(h in line_head for h in _MESSAGE_ID_HEADERS):
        return ()  # Message-ID: <id@host> is an identifier, not an address
    return (Span(start, end, "email", mask(text[start:end]), 20),)


_PHONE_BANNED_LEFT = _ALNUM | frozenset("+)]._-/\\")
_PHONE_BANNED_RIGHT = _ALNUM | frozenset("(")


def phone_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    start, end = m.span()
    number = m.group()
    if not (_left_ok(text, start, _PHONE_BANNED_LEFT) and _right_ok(text, end, _PHONE_BANNED_RIGHT)):
        return ()
    if end < len(text) - 1 and text[end] in ".-" and text[end + 1].isdigit():
        return ()  # the number goes on: a version, a date, an id
    digits = sum(c.isdigit() for c in number)
    if not 10 <= digits <= 15:
        return ()
    return (Span(start, end, "phone", mask(number), 20),)


# --------------------------------------------------------------------------- provider tokens

def random_body(body: str, min_classes: int = 2) -> bool:
    """Drawn at random, not typed: two character classes (upper, lower, digit) and enough
    distinct characters for its length."""
    classes = (any(c.isupper() for c in body) + any(c.islower() for c in body)
               + any(c.isdigit() for c in body))
    return classes >= min_classes and len(set(body)) >= min(10, len(body) // 3 + 1)


def provider_check(kind: str, body_from: int, *, group: str | None = None,
                   back: re.Pattern[str] | None = None, back_max: int = 0,
                   min_classes: int = 2, right: bool = True, b64_left: bool = False,
                   left: str | None = None, back_fixed: bool = True) -> Check:
    """A check for a provider token: not inside a longer word, not a placeholder or a
    documented example, and a random-looking body (after the ``body_from`` prefix chars).
    ``group`` names the part to redact (the rest of the match is context, e.g. a key name);
    ``back`` is a pattern that must end right where the match starts (the token begins
    before the literal it is anchored at: ``<32 hex>-us21``, ``<digits>:AA...``)."""
    from .vocab import DOC_EXAMPLES

    banned = _TOKEN_CHARS | ({"+", "/"} if b64_left else set())

    def check(text: str, m: re.Match[str]) -> Iterable[Span]:
        if left is not None and (m.start() == 0 or text[m.start() - 1] not in left):
            return ()
        start, end = m.span(group) if group else m.span()
        body_start = start + body_from
        if back is not None:  # fixed length: one match right before; else the longest that ends there
            lo = max(0, m.start() - back_max)
            b = back.fullmatch(text, lo, m.start()) if back_fixed else back.search(text, lo, m.start())
            if b is None:
                return ()
            start = body_start = b.start()
        if group is None and not _left_ok(text, start, banned):
            return ()
        if right and not _right_ok(text, end, _ALNUM):
            return ()
        token = text[start:end]
        if is_placeholder(token) or token in DOC_EXAMPLES or marked_fake(text, start):
            return ()
        if not random_body(text[body_start:end], min_classes):
            return ()
        return (Span(start, end, kind, mask(token, 0 if back is not None else min(body_from, 4)), 55),)

    return check
