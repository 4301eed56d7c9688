"""The name rule: a literal assigned to a secret-named key, in any case style.

``DB_PASSWORD=hunter2``, ``password = "..."``, ``webhookSecret: 9f3c...``, ``"apiKey": "..."``,
``spring.datasource.password=...``, ``<password>...</password>``, ``SECRET_KEY: str = "..."``.
Only the value is redacted; the name stays, so the line still says what it is.

The rule is anchored at a secret word (``NAME_LITERALS``: password, secret, token, qualified
keys ... in lower, Title and UPPER case); ``secret_name`` reads the whole name around it and
decides whether it names a secret (its last word is a secret word, not a reference such as
``existingSecret``). What only looks like an assignment is left alone: references
(``process.env.X``, ``os.environ[...]``, ``${X}``, ``this.x``, ``NAME = identifier``), calls,
type names, URLs, paths, format strings, templates, placeholders (``your-...``,
``change-me``, ``xxx``, ``<...>``), test fixtures (``fake-token``) and public keys (``pk_live_``).

A SCREAMING_SNAKE name takes any literal of 6+ characters (4+ for a password): such names
are configuration. Any other case style needs a value that looks like a secret: 6+
characters of two character classes for a password, 8+ random-looking characters for a
token, secret or key.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import pairwise

from .shapes import Span, is_placeholder, mask
from .vocab import (COMPOUND_NAMES, DOC_EXAMPLES, FIELD_WORDS, FIXTURE_WORDS, KEY_QUALIFIERS,
                    NON_VALUES, PASS_QUALIFIERS, PASSWORD_WORDS, PUBLIC_PREFIXES, REFERENCE_WORDS,
                    SECRET_WORDS, TYPE_WORDS)

MAX_NAME = 128  # longest name looked at, in characters
MAX_VALUE_LINE = 4096  # the rest of the line is read up to this many characters
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_QUOTED = re.compile(r"""[bBrRuU]{0,2}(?P<q>["'`])(?P<v>(?:\\.|(?!(?P=q))[^\\\n])*)(?P=q)""")
_BYTES_CALL = re.compile(r"""(?:\[\]byte|bytes|SecretStr|Secret)\(""")
_BARE = re.compile(r"""[^\s'"`]+""")
_REST_OK = re.compile(r"[ \t]*(?:(?:#|//|;\s*(?:#|//|$)).*)?(?:\r)?$", re.M)
_ANNOTATED = re.compile(r"""[A-Za-z_][\w\[\]., |<>?]*?[ \t]*=(?![=>])[ \t]*""")
_FORMAT = re.compile(r"%(?:\([A-Za-z_]\w*\))?[-#0 +]*\d*(?:\.\d+)?[sdrifxXeEgGcqv]")
_CALL_OR_INDEX = re.compile(r"[A-Za-z_$][\w.$]*[(\[]")
_CAMEL = re.compile(r"[a-z]+(?:[A-Z][a-z]+)+\d?")
_PASCAL = re.compile(r"[A-Z][a-z]+(?:[A-Z][a-z]+)*")
_DOTTED = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")
_IDENT = re.compile(r"[A-Za-z_$][\w$]*")
_ANALYTICS_ID = re.compile(r"(?:G|AW|GT|UA|DC)-[A-Z0-9]{4,12}(?:-\d{1,3})?")
_WIN_VAR = re.compile(r"%[A-Za-z_][\w.-]*%")
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_WORDY_CHARS = re.compile(r"[A-Za-z]+(?:[-_./ :][A-Za-z]+)*")
_CAMEL_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_PATHLIKE = re.compile(r"(?:/|~/|\./|\.\./|[A-Za-z]:\\)")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_REFERENCE_PREFIXES = ("process.env", "os.environ", "os.getenv", "import.meta", "this.",
                       "self.", "env(", "getenv(", "config.", "settings.", "secrets.", "env.",
                       "vars.", "var.", "local.", "module.", "data.", "values.", "ENV[", "ENV.")
_EXPRESSION = re.compile(r"[ \t]*(?:[-+%*]|\.format\b|\.join\b|if\b|or\b|and\b|\?\?|\|\|)")


def name_literals() -> tuple[str, ...]:
    """Every literal the rule is anchored at (a secret word in each case style)."""
    words = [*PASSWORD_WORDS, *SECRET_WORDS, "api_key", "api-key", "pass"]
    out = {v for w in words for v in (w, w.title(), w.upper())}
    out |= {"apiKey", "ApiKey", "APIKey", "Api-Key", "API-Key", "_KEY_BASE", "_key_base", "_auth"}
    for qualifiers, word in ((KEY_QUALIFIERS, "key"), (PASS_QUALIFIERS, "pass")):
        for q in qualifiers:
            parts = q.lower().split("_")
            camel = parts[0] + "".join(p.title() for p in parts[1:])
            pascal = "".join(p.title() for p in parts)
            out |= {f"{q}_{word.upper()}", "_".join(parts) + "_" + word, camel + word.title(),
                    pascal + word.title(), "-".join(parts) + "-" + word, pascal + "-" + word.title(),
                    "".join(parts) + word, q.replace("_", "") + word.upper()}
    return tuple(sorted(out))


def _words(name: str) -> list[str]:
    return [w.lower() for w in _WORDS.findall(name)]


def secret_name(name: str) -> str | None:
    """``"password"`` or ``"secret"`` when ``name`` names a secret of that sort, else None.

    ``db_password``, ``dbPassword``, ``DB_PASSWORD``, ``spring.datasource.password``,
    ``key-store-password``, ``PGPASSWORD`` -> password; ``webhookSecret``, ``api_key``,
    ``SECRET_KEY_BASE``, ``authtoken`` -> secret; ``secret_name``, ``existingSecret``,
    ``primary_key``, ``token_url``, ``max_tokens`` -> None.
    """
    raw = name.strip("\"'`$@")
    name = raw.strip("_-.").rsplit(".", 1)[-1].strip("_-")
    if not name or not name[0].isalpha():
        return None
    if name in COMPOUND_NAMES:
        return "password"
    if name == "auth" and raw.startswith("_"):
        return "secret"  # .npmrc _auth=<base64 user:password>
    words = _words(name)
    if not words:
        return None
    if len(words) >= 2 and words[-1] == "base" and words[-2] == "key":
        words = words[:-1]
    last, before = words[-1], words[:-1]
    if any(w in REFERENCE_WORDS or w in _FAKE_WORDS for w in before):
        return None
    if last in PASSWORD_WORDS:
        return "password"
    if last in SECRET_WORDS or last == "apikey":
        return "secret"
    if last == "key":
        qualifier = "_".join(before[-2:]).upper() if len(before) >= 2 else ""
        if before and (before[-1].upper() in KEY_QUALIFIERS or qualifier in KEY_QUALIFIERS):
            return "secret"
        return None
    if last == "pass":  # alone it is a password (pass: x in YAML); a statement never takes "=" or ":"
        return "password" if not before or before[-1].upper() in PASS_QUALIFIERS else None
    if last.islower() and len(words) == 1 and name.islower():  # lowercase compounds: authtoken
        for w in PASSWORD_WORDS:
            if last.endswith(w) and len(last) - len(w) >= 2:
                return "password"
        for w in ("token", "secret", "apikey"):
            if last.endswith(w) and len(last) - len(w) >= 2:
                return "secret"
    return None


def _name_start(text: str, word_start: int) -> int:
    ns = word_start
    floor = max(0, word_start - MAX_NAME)
    while ns > floor and text[ns - 1] in _NAME_CHARS:
        ns -= 1
    return ns


def _is_path(value: str) -> bool:
    """/etc/secrets/db, ./key.pem, ~/.netrc, C:\\keys: a path; /vfKqb3lp...Qi (base64) is not."""
    if not _PATHLIKE.match(value):
        return False
    if value[-1] == "=" or "+" in value:
        return False  # base64
    segments = [s for s in re.split(r"[/\\]+", value.lstrip("~.")) if s]
    return not any(_random_ident(s) for s in segments)


def _wordy(value: str) -> bool:
    """Made of words, no digit: a name or a label (billing.auth.token, existing-secret),
    not base64 letters (kOgdPxGrB/ipwuyaghmQ...)."""
    if not _WORDY_CHARS.fullmatch(value):
        return False
    words = [w for seg in re.split(r"[-_./ :]+", value) for w in _CAMEL_WORD.findall(seg)]
    return bool(words) and sum(map(len, words)) / len(words) >= 3.5 and sum(len(w) == 1 for w in words) <= 1


def _random_ident(value: str) -> bool:
    """vcOsFfjBFmzqjUF6GgG118 (drawn at random), not userPassword2 (words)."""
    if len(value) < 12 or value.lower() == value or value.upper() == value or not any(c.isdigit() for c in value):
        return False
    kinds = ["u" if c.isupper() else "l" if c.islower() else "d" if c.isdigit() else "s" for c in value]
    return sum(a != b for a, b in pairwise(kinds)) >= len(value) / 4


def _sequential(value: str) -> bool:
    """abcdefgh123, 12345678: typed runs, not drawn at random."""
    low = value.lower()
    runs = sum(ord(b) - ord(a) in (1, -1) for a, b in pairwise(low))
    return runs >= (len(value) - 1) * 0.6


def _fixture(low: str) -> bool:
    return _FIXTURE.search(low) is not None


_FIXTURE = re.compile(r"(?<![a-z])(?:" + "|".join(FIXTURE_WORDS) + ")")


def _looks_random(value: str) -> bool:
    classes = (any(c.isupper() for c in value) + any(c.islower() for c in value)
               + any(c.isdigit() for c in value) + any(not c.isalnum() for c in value))
    return len(value) >= 8 and classes >= 2 and len(set(value)) >= 6 and not _wordy(value)


def value_is_literal(value: str, sort: str, screaming: bool) -> bool:
    """Is ``value`` a literal secret (for a name of ``sort``), not code or a stand-in?"""
    low = value.lower()
    if low in NON_VALUES or is_placeholder(value) or value in DOC_EXAMPLES \
            or value.rsplit(".", 1)[-1] in DOC_EXAMPLES:
        return False
    if value.startswith(PUBLIC_PREFIXES) or _ANALYTICS_ID.fullmatch(value):
        return False  # publishable keys, analytics ids: public by design
    if _URL.match(value) or _is_path(value) or value.startswith(_REFERENCE_PREFIXES) \
            or low.startswith(_REFERENCE_PREFIXES):
        return False
    if "${" in value or "#{" in value or "$(" in value or value.startswith(("$", "{", "@@")) \
            or ("{" in value and "}" in value) or "<%" in value or _WIN_VAR.fullmatch(value) \
            or _FORMAT.match(value):
        return False  # a template: ${X}, {{ x }}, {name}, %(x)s, <%= ... %>
    if _FORMAT.search(value) and sum(c.isalnum() for c in _FORMAT.sub("", value)) < 4:
        return False  # a format string: "%s:%s", "%(user)s"
    if all(part in FIELD_WORDS for part in re.split(r"[-_. /:]+", low) if part):
        return False
    if _ENV_NAME.fullmatch(value):
        return False  # the name of another variable: API_KEY = "OPENAI_API_KEY"
    if value.isdigit() and len(value) < 6:
        return False
    if any(c.isspace() for c in value) or _fixture(low):
        return False
    if re.fullmatch(r"[a-z]+(?:[-_][a-z]+)+", value) and any(
            w in FIELD_WORDS or secret_name(w) for w in re.split(r"[-_]", value)):
        return False  # a field or resource name: db-password, api_token
    if screaming:
        return len(value) >= (4 if sort == "password" else 6)
    if _sequential(value):
        return False
    if sort == "password":
        classes = (any(c.isalpha() for c in value) + any(c.isdigit() for c in value)
                   + any(not c.isalnum() for c in value) + (value.lower() != value and value.upper() != value))
        return len(value) >= 6 and classes >= 2 and not _wordy(value)
    return _looks_random(value)


def _bare_value(text: str, m: re.Match[str], pos: int, line_end: int, opener: str) -> tuple[int, int] | None:
    """An unquoted literal (``KEY=value`` in .env/shell, ``KEY: value`` in YAML, ``key = v@l``
    in INI, ``<password>v</password>``), or None when the unquoted value is code: a
    reference, a call, a type name, an object member."""
    op, spaced = m.group("op"), bool(m.group("sp")) or pos > m.end()
    if op == "=>":
        return None
    if op == ">":  # an XML element: the value runs to its closing tag
        close = text.find("</", pos, line_end)
        if close <= pos or "<" in text[pos:close]:
            return None
        return pos, close
    b = _BARE.match(text, pos, line_end)
    if b is None:
        return None
    end = b.end()
    rest_ok = _REST_OK.match(text, end, line_end) is not None
    if not rest_ok:
        if opener and text.startswith(opener, end):
            pass  # "password=value" inside a string: the value ends at the string's quote
        elif op == "=" and not spaced and text[end] in " \t":
            pass  # PGPASSWORD=x psql ..., username=ops password=x (command-line pairs)
        else:
            return None
    value = b.group()
    if (op == ":" and value[0] in "|>!&*") or value[-1] in ",;" or _CALL_OR_INDEX.match(value):
        return None  # YAML block/tag/anchor, object member, statement, call, subscript
    core = value.rstrip(")]}:,;")
    if core != value and (core.lower() in NON_VALUES or (_IDENT.fullmatch(core) and not _random_ident(core))):
        return None  # the end of an enclosing call: connect(password=password), f(pwd=None):
    if (_DOTTED.fullmatch(value) and not _looks_random(value.replace(".", ""))) or _CAMEL.fullmatch(value):
        return None  # process.env.X, this.token, apiKey
    if op == ":" and (value.lower() in TYPE_WORDS or _PASCAL.fullmatch(value)):
        return None  # SECRET: string, TOKEN: Token
    if op in ("=", ":=") and spaced and ((_IDENT.fullmatch(value) and not _random_ident(value)) or not rest_ok):
        return None  # NAME = identifier in code is a reference, not a literal
    return b.start(), end


_FLAG_VALUE = re.compile(r"""(?P<q>["'])(?P<v>[^"'\n]*)(?P=q)|(?P<b>[^\s'"`]+)""")


def _flag_value(text: str, name: str, sort: str, pos: int, list_form: bool) -> Iterable[Span]:
    """The value of a command-line option: ``--password X``, ``--token=X``, ``"--token", "X"``."""
    v = _FLAG_VALUE.match(text, pos)
    if v is None:
        return ()
    if list_form and not v.group("q"):
        return ()  # "--token", default=None: an option's definition, not its value
    start, end = v.span("v") if v.group("q") else v.span("b")
    value = text[start:end]
    if not value or value.startswith(("-", "$", "{", "<", "@", "`")) or "$(" in value or "${" in value:
        return ()
    if not value_is_literal(value, sort, screaming=False):
        return ()
    return (Span(start, end, "cli-password", f"{name} {mask(value, 0)}", 30),)


_ARG_END = re.compile(r"[ \t]*[),]")
_CALLEE = re.compile(r"([A-Za-z_][\w.:]*)[ \t]*\([ \t]*\Z")
_SETTERS = ("set", "with", "use")
_FAKE_WORDS = frozenset({"fake", "dummy", "mock", "example", "sample", "placeholder", "bogus"})
_GETTERS = ("get", "fetch", "pop", "read", "load", "lookup", "require", "has", "del", "remove", "unset",
            "assert", "check", "hash", "verify", "validate", "translate", "gettext", "_")


def _call_value(text: str, m: re.Match[str], ns: int, name: str) -> Iterable[Span]:
    """A literal handed to a setter: ``setPassword("x")``, ``withApiKey("x")``, or paired
    with a secret name in a call: ``define('DB_PASSWORD', 'x')``, ``Set("X-API-Key", "x")``,
    ``os.environ.setdefault("API_TOKEN", "x")``. Getters (a default value) are left alone."""
    sort = secret_name(name)
    if sort is None:
        return ()
    if m.group("op") == "(":
        if _words(name.rsplit(".", 1)[-1])[0] not in _SETTERS or m.group("q"):
            return ()
        pos = m.end()
    else:
        q = m.group("q")
        if not q or ns == 0 or text[ns - 1] != q:
            return ()
        callee = _CALLEE.search(text, max(0, ns - 81), ns - 1)
        if callee is None or callee.group(1).rsplit(".", 1)[-1].lower().startswith(_GETTERS):
            return ()
        pos = m.end()
    while pos < len(text) and text[pos] in " \t":
        pos += 1
    v = _QUOTED.match(text, pos, min(len(text), pos + MAX_VALUE_LINE))
    if v is None or not _ARG_END.match(text, v.end(), v.end() + 8):
        return ()
    value = v.group("v")
    if not value_is_literal(value, sort, screaming=name.isupper()):
        return ()
    return (Span(v.start("v"), v.end("v"), "secret-assignment", f"{name.strip(chr(34) + chr(39))}={mask(value, 0)}", 10),)


def assignment_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    ws = m.start()
    ns = _name_start(text, ws)
    name = text[ns:m.end("word")]
    op = m.group("op")
    if m.group("br") and not (m.group("q") and ns > 0 and text[ns - 1] == m.group("q") and op == "="):
        return ()  # only env["API_KEY"] = "..." (a subscript assigned a literal)
    if op == "(" or (op == "," and not name.startswith("--")):
        return _call_value(text, m, ns, name)
    if op in ("", ",") or name.startswith("--"):  # a command-line option, or nothing
        if not name.startswith("--") or (op == "" and not m.group("sp")) or (op == "," and not m.group("q")):
            return ()
        if ns > 0 and text[ns - 1] not in " \t\"'[(=,\n":
            return ()
        sort = secret_name(name)
        pos = m.end()
        while pos < len(text) and text[pos] in " \t":
            pos += 1
        return _flag_value(text, name, sort, pos, op == ",") if sort else ()
    if ns > 0 and text[ns - 1] == "$" and m.group("op") not in ("=", ":="):
        return ()  # $SECRET, a shell reference
    if text[max(0, ns - 2):ns] == "${" or text[max(0, ns - 3):ns].endswith(("${", "%(")):
        return ()  # ${SECRET} / ${SECRET:-default}
    sort = secret_name(name)
    if sort is None:
        return ()
    opener = text[ns - 1] if ns > 0 and text[ns - 1] in "\"'`" else ""
    if m.group("op") == ">" and not (ns > 0 and text[ns - 1] == "<"):
        return ()
    pos = m.end()
    limit = min(len(text), pos + MAX_VALUE_LINE)
    line_end = text.find("\n", pos, limit)
    line_end = limit if line_end < 0 else line_end
    while pos < line_end and text[pos] in " \t":
        pos += 1
    if m.group("op") == ">":
        q = None
    else:
        call = _BYTES_CALL.match(text, pos, line_end)
        q = _QUOTED.match(text, call.end() if call else pos, line_end)
        if q is None and m.group("op") == ":":  # NAME: type = "literal" (an annotation)
            ann = _ANNOTATED.match(text, pos, line_end)
            if ann is not None and " " in ann.group().strip():
                q = _QUOTED.match(text, ann.end(), line_end)
                if q is None:
                    return ()
    span: tuple[int, int] | None
    if q is not None:
        if text[q.start():q.start("q")].lower().count("f") or _EXPRESSION.match(text, q.end(), line_end):
            return ()  # an f-string, a concatenation, a format call, a fallback expression
        span = q.span("v")
    else:
        if text.startswith(("f\"", "f'"), pos):
            return ()
        span = _bare_value(text, m, pos, line_end, opener)
        if span is None:
            return ()
    value = text[span[0]:span[1]]
    screaming = name.upper() == name and any(c.isalpha() for c in name)
    if not value_is_literal(value, sort, screaming):
        return ()
    shown = name.strip("\"'`$@").lstrip("_")
    return (Span(span[0], span[1], "secret-assignment", f"{shown}={mask(value, 0)}", 10),)
