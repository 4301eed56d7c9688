"""The one name rule: a literal assigned to a SCREAMING_SNAKE secret name.

``DB_PASSWORD=hunter2``, ``API_TOKEN: "..."``, ``"CLIENT_SECRET": "..."``, ``SECRET_KEY: str =
"..."``. Only the value is redacted; the name stays, so the line still says what it is.
What only looks like an assignment is left alone: references (``process.env.X``,
``os.environ[...]``, ``${X}``, ``this.x``, ``NAME = identifier``), calls, type names, URLs,
paths, format strings and placeholders (``your-...``, ``change-me``, ``xxx``, ``<...>``, ``***``).
An unquoted value counts only where it is a literal: ``KEY=value`` with no spaces (.env,
shell, Dockerfile) or ``KEY: value`` (YAML), running to the end of the line or a comment.
"""

from __future__ import annotations

import re
from typing import Iterable

from .shapes import Span, is_placeholder, mask
from .vocab import FIELD_WORDS, KEY_QUALIFIERS, NON_VALUES, PASS_QUALIFIERS, TYPE_WORDS

_UPPER_NAME = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
MAX_NAME = 128  # longest name looked at, in characters
MAX_VALUE_LINE = 4096  # the rest of the line is read up to this many characters
_QUOTED = re.compile(r"""[bBrRuUfF]{0,2}(?P<q>["'`])(?P<v>(?:\\.|(?!(?P=q))[^\\\n])*)(?P=q)""")
_BARE = re.compile(r"""[^\s'"`]+""")
_REST_OK = re.compile(r"[ \t]*(?:(?:#|//|;\s*(?:#|//|$)).*)?(?:\r)?$", re.M)
_ANNOTATED = re.compile(r"""[A-Za-z_][\w\[\]., |<>]*?[ \t]*=(?![=>])[ \t]*""")
_FORMAT = re.compile(r"%(?:\([A-Za-z_]\w*\))?[-#0 +]*\d*(?:\.\d+)?[sdrifxXeEgGc]")
_CALL_OR_INDEX = re.compile(r"[A-Za-z_$][\w.$]*[(\[]")
_CAMEL = re.compile(r"[a-z]+(?:[A-Z][a-z]+)+\d?")
_PASCAL = re.compile(r"[A-Z][a-z]+(?:[A-Z][a-z]+)*")
_DOTTED = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_PATHLIKE = re.compile(r"(?:/|~/|\./|\.\./|[A-Za-z]:\\)")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_REFERENCE_PREFIXES = ("process.env", "os.environ", "os.getenv", "import.meta", "this.",
                       "self.", "env(", "getenv(", "config.", "settings.", "secrets.")


def _secret_name(text: str, m: re.Match[str]) -> str | None:
    """The full SCREAMING_SNAKE name ending with the matched secret word, if it is one."""
    word = m.group("word")
    ws = m.start("word")
    ns = ws
    floor = max(0, ws - MAX_NAME)
    while ns > floor and text[ns - 1] in _UPPER_NAME:
        ns -= 1
    if ns > 0 and (text[ns - 1].isalnum() or text[ns - 1] == "$"):
        return None  # camelCASE tail, or a $SHELL_VAR reference
    if text[max(0, ns - 2):ns] == "${":
        return None  # ${SECRET} / ${SECRET:-default}
    name = text[ns:m.end("word")].lstrip("_")
    if not name or not name[0].isalpha():
        return None
    prefix = name[: -len(word)]
    if prefix and not prefix.endswith("_"):
        return None
    qualifier = prefix.rstrip("_").rsplit("_", 1)[-1]
    if word in ("KEY", "KEY_BASE") and qualifier not in KEY_QUALIFIERS:
        return None
    if word == "PASS" and qualifier not in PASS_QUALIFIERS:
        return None
    return name


def _value_is_literal(value: str, word: str) -> bool:
    low = value.lower()
    if low in NON_VALUES or is_placeholder(value):
        return False
    if _URL.match(value) or _PATHLIKE.match(value) or low.startswith(_REFERENCE_PREFIXES):
        return False
    if "${" in value or value.startswith(("$", "{")) or ("{" in value and "}" in value):
        return False  # a template: ${X}, {{ x }}, {name}
    if _FORMAT.search(value) and sum(c.isalnum() for c in _FORMAT.sub("", value)) < 4:
        return False  # a format string: "%s:%s", "%(user)s"
    if all(part in FIELD_WORDS for part in re.split(r"[-_. ]+", low) if part):
        return False
    if _ENV_NAME.fullmatch(value):
        return False  # the name of another variable: API_KEY = "OPENAI_API_KEY"
    if value.isdigit() and len(value) < 6:
        return False
    if word in ("PASSWORD", "PASSWD", "PWD", "PASS"):
        return len(value) >= 4 and not any(c.isspace() for c in value)
    if word == "PASSPHRASE":
        return len(value) >= 8
    return len(value) >= 6 and not any(c.isspace() for c in value)


def _bare_value(text: str, m: re.Match[str], pos: int, line_end: int) -> tuple[int, int] | None:
    """An unquoted literal (``KEY=value`` in .env/shell, ``KEY: value`` in YAML), or None
    when the unquoted value is code: a reference, a call, a type name, an object member."""
    op = m.group("op")
    if op == "=>" or (op == "=" and (m.group("sp") or pos > m.end())):
        return None  # NAME = identifier in code is a reference, not a literal
    b = _BARE.match(text, pos, line_end)
    if b is None or not _REST_OK.match(text, b.end(), line_end):
        return None
    value = b.group()
    if value[0] in "|>!&*" or value[-1] in ",;" or _CALL_OR_INDEX.match(value):
        return None  # YAML block/tag/anchor, object member, statement, call, subscript
    if _DOTTED.fullmatch(value) or _CAMEL.fullmatch(value):
        return None  # process.env.X, this.token, apiKey
    if op == ":" and (value.lower() in TYPE_WORDS or _PASCAL.fullmatch(value)):
        return None  # SECRET: string, TOKEN: Token
    return b.start(), b.end()


def assignment_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    name = _secret_name(text, m)
    if name is None:
        return ()
    pos = m.end()
    limit = min(len(text), pos + MAX_VALUE_LINE)
    line_end = text.find("\n", pos, limit)
    line_end = limit if line_end < 0 else line_end
    while pos < line_end and text[pos] in " \t":
        pos += 1
    q = _QUOTED.match(text, pos, line_end)
    if q is None and m.group("op") == ":":  # NAME: type = "literal" (an annotation)
        ann = _ANNOTATED.match(text, pos, line_end)
        if ann is not None:
            q = _QUOTED.match(text, ann.end(), line_end)
            if q is None:
                return ()
    if q is not None:
        span = q.span("v")
    else:
        span = _bare_value(text, m, pos, line_end)
        if span is None:
            return ()
    value = text[span[0]:span[1]]
    if not _value_is_literal(value, m.group("word")):
        return ()
    return (Span(span[0], span[1], "secret-assignment", f"{name}={mask(value)}", 10),)
