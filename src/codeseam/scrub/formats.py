"""Credential files read by their format, not by hoping a line rule matches (issue 42).

The format comes from the file name (``format_of``); ``file_spans(text, path)`` parses the
text as that format and returns the spans to redact, which ``scrub_text`` adds to the line
rules' candidates (so a parse that finds nothing, or fails, leaves the line rules' result
as it was: never less than the line rules):

- ``.netrc`` / ``_netrc``: ``machine H login U password P`` tokens (they may span lines,
  quoted tokens too); the token after ``password`` is redacted, whatever its shape (a Heroku
  key in ``.netrc`` looks like a UUID and is still its password);
- ``.pgpass`` / ``pgpass.conf``: ``host:port:db:user:password`` with ``\\:`` escapes;
- ``.git-credentials``: ``https://user:token@host`` lines (a token alone as the user too);
- ``.pypirc``: ``password =`` in any section;
- docker ``config.json`` / ``.dockercfg``: ``auths.*.auth`` (base64 of ``user:password``),
  ``identitytoken``, ``registrytoken``, ``password`` (parsed as JSON);
- any ``.json`` / ``.yaml`` / ``.yml`` file: a key whose *path* names a secret though its own
  name does not (``nested.py``: ``"Jwt": {"Key": "..."}``, ``database: {pass: ...}``).

Every parser is bounded: the line formats read at most ``MAX_LINES`` lines of at most
``MAX_LINE`` characters (``MAX_TOKENS`` tokens of a .netrc), JSON and YAML are parsed only
up to ``MAX_PARSE`` characters (``nested.py``: each node visited once, at most ``MAX_NODES``).
A file that does not parse returns no spans (the line rules still run). Values that are stand-ins are left
alone (placeholders, templates ``${X}``, ``{{ x }}``, ``%(x)s``, environment references).
"""

from __future__ import annotations

import base64
import binascii
import logging
import re
from collections.abc import Iterable, Iterator

from . import nested
from .assign import value_is_literal
from .nested import load_json, stand_in, walk_json
from .shapes import Span, mask
from .vocab import NON_VALUES

log = logging.getLogger(__name__)

MAX_LINES = 50_000  # lines of a line format that are read (a real one has tens)
MAX_TOKENS = 200_000  # tokens of a .netrc that are read
MAX_LINE = 4096  # a longer line is no line of a credential file: skipped
KIND = "credential-file"
PRIORITY = 25  # below the shape rules (a token keeps its provider's kind), above email/phone



def _basename(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def format_of(path: str | None, text: str = "") -> str | None:
    """The credential-file format of ``path`` (its name; for a ``config.json``, also its
    content), or None: ``netrc``, ``pgpass``, ``git-credentials``, ``pypirc``,
    ``docker-config``, ``json``, ``yaml``."""
    if not path:
        return None
    norm = path.replace("\\", "/")
    base = _basename(norm).lower()
    if base in (".netrc", "_netrc", "netrc") or base.endswith(".netrc"):
        return "netrc"
    if base in (".pgpass", "pgpass", "pgpass.conf"):
        return "pgpass"
    if base in (".git-credentials", "git-credentials") or base.endswith(".git-credentials"):
        return "git-credentials"
    if base in (".pypirc", "pypirc"):
        return "pypirc"
    if base in (".dockercfg", ".dockerconfigjson", "dockerconfig.json") or (
            base == "config.json" and ("docker/" in norm.lower() or '"auths"' in text[:65536])):
        return "docker-config"
    if base.endswith((".json", ".jsonc", ".json5")) and not base.endswith((".lock.json", "-lock.json")):
        return "docker-config" if '"auths"' in text[:SNIFF_HEAD] else "json"
    if base.endswith((".yaml", ".yml")):
        return "yaml"
    return None


SNIFF_HEAD = 4096  # characters of a file its content is sniffed in
_LEAD = re.compile(r"(?:[ \t]*(?:#[^\n]{0,512})?\r?\n){0,64}[ \t]*")  # blank and comment lines
_NETRC_LINE = re.compile(r"(?:machine[ \t]+\S+|default)(?:[ \t]+(?:login|password|account|port)[ \t]+\S+)*[ \t]*")
_PG_LINE = re.compile(r"[^:\s#][^:\s]*:(?:\*|\d{1,5}):[^:\s]+:[^:\s]+:\S.*")
_GIT_LINE = re.compile(r"https?://[^\s:/@]+(?::[^\s@/]+)?@[^\s/@]+/?")


def sniff(text: str) -> str | None:
    """The credential-file format of a text by its content, for a file whose name says
    nothing (or no name): its first line (after blank and ``#`` lines) and, for the line
    formats, every line of its head must have the format's exact shape. Costs one anchored
    match on the first line for any other file."""
    lead = _LEAD.match(text, 0, SNIFF_HEAD)
    pos = lead.end() if lead else 0
    nl = text.find("\n", pos, pos + MAX_LINE)
    first = text[pos:nl if nl >= 0 else pos + MAX_LINE].rstrip("\r \t")
    if not first:
        return None
    c = first[0]
    if c in "md" and _NETRC_LINE.fullmatch(first):
        return "netrc"
    if c == "[" and first in ("[distutils]", "[pypi]", "[testpypi]"):
        return "pypirc"
    if c == "{" and '"auths"' in text[:SNIFF_HEAD]:
        return "docker-config"
    for fmt, shape in (("git-credentials", _GIT_LINE), ("pgpass", _PG_LINE)):
        if shape.fullmatch(first):
            head = text[pos:pos + SNIFF_HEAD].split("\n")
            if len(text) > pos + SNIFF_HEAD:
                head = head[:-1]  # cut off
            rest = [ln.strip() for ln in head if ln.strip() and not ln.lstrip().startswith("#")]
            return fmt if all(shape.fullmatch(ln) for ln in rest) else None
    return None


def file_spans(text: str, path: str | None) -> list[Span]:
    """The spans a format-aware read of ``text`` (named ``path``) redacts; [] when the file
    has no known credential format (by name, else by content: ``sniff``) or does not parse."""
    if not text:
        return []
    fmt = format_of(path, text) or sniff(text)
    if fmt is None:
        return []
    try:
        return list(_PARSERS[fmt](text))
    except (ValueError, RecursionError, MemoryError) as exc:  # a hostile or broken file: line rules only
        log.debug("%s: not read as %s (%s); line rules only", path, fmt, type(exc).__name__)
        return []


def _span(start: int, end: int, rule: str, label: str, value: str, kind: str = KIND,
          priority: int = PRIORITY) -> Span:
    return Span(start, end, kind, f"{label}={mask(value, 0)}", priority, rule)


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """(offset, line without ``\\r``) of at most MAX_LINES lines of at most MAX_LINE characters."""
    pos, n = 0, 0
    while pos <= len(text) and n < MAX_LINES:
        nl = text.find("\n", pos)
        end = len(text) if nl < 0 else nl
        if end - pos <= MAX_LINE:
            line = text[pos:end]
            yield pos, line[:-1] if line.endswith("\r") else line
        if nl < 0:
            return
        pos, n = nl + 1, n + 1


# ------------------------------------------------------------------------------ .netrc

_NETRC_TOKEN = re.compile(r'"(?:\\.|[^"\\\n])*"|[^\s"]\S*')
_NETRC_VALUED = frozenset({"machine", "login", "password", "account", "port", "macdef"})


def netrc_spans(text: str) -> Iterable[Span]:
    """``password P`` wherever it stands (tokens are separated by any whitespace, newlines
    included); ``macdef`` bodies (up to a blank line) are skipped, ``#`` lines are comments."""
    out: list[Span] = []
    pos, expect, limit = 0, "", len(text)
    for count, m in enumerate(_NETRC_TOKEN.finditer(text)):
        if count >= MAX_TOKENS:
            break
        if m.start() < pos:
            continue  # inside a comment or a macro body
        tok, pos = m.group(), m.end()
        if expect:
            key, expect = expect, ""
            if key == "macdef":  # the macro body runs to the next blank line
                blank = text.find("\n\n", pos)
                pos = limit if blank < 0 else blank + 2
                continue
            if key == "password":
                start, end = m.span()
                value = tok
                if tok.startswith('"'):
                    start, end, value = start + 1, end - 1, re.sub(r"\\(.)", r"\1", tok[1:-1])
                if not stand_in(value):
                    out.append(_span(start, end, "netrc", "password", value))
            continue
        if tok.startswith("#"):  # a comment, to the end of its line
            nl = text.find("\n", m.start())
            pos = limit if nl < 0 else nl + 1
            continue
        low = tok.lower()
        if low in _NETRC_VALUED:
            expect = low
    return out


# ------------------------------------------------------------------------------ .pgpass

def _pg_fields(line: str) -> list[tuple[int, int]]:
    """(start, end) of each ``:``-separated field; ``\\:`` and ``\\\\`` are escapes."""
    fields: list[tuple[int, int]] = []
    start = i = 0
    while i < len(line):
        c = line[i]
        if c == "\\":
            i += 2
            continue
        if c == ":" and len(fields) < 4:
            fields.append((start, i))
            start = i + 1
        i += 1
    fields.append((start, len(line)))
    return fields


_PG_PORT = re.compile(r"(?:\*|\d{1,5})\Z")


def pgpass_spans(text: str) -> Iterable[Span]:
    """The fifth field of ``host:port:database:username:password`` (the rest of the line)."""
    out = []
    for off, line in _lines(text):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = _pg_fields(line)
        if len(fields) != 5 or not _PG_PORT.match(line[fields[1][0]:fields[1][1]]):
            continue
        start, end = fields[4]
        value = re.sub(r"\\(.)", r"\1", line[start:end])
        if not stand_in(value):
            user = line[fields[3][0]:fields[3][1]]
            out.append(_span(off + start, off + end, "pgpass", f"{user}:password", value))
    return out


# ------------------------------------------------------------------------------ .git-credentials

_GIT_CRED = re.compile(r"[ \t]*[A-Za-z][A-Za-z0-9+.-]{0,30}://(?P<user>[^\s:/@]*)(?::(?P<pw>[^\s@/]*))?@[^\s@]")


def git_credentials_spans(text: str) -> Iterable[Span]:
    """``scheme://user:password@host``: the password; a token given as the user alone
    (``https://<token>@github.com``) when it looks drawn at random."""
    out = []
    for off, line in _lines(text):
        m = _GIT_CRED.match(line)
        if m is None:
            continue
        user, pw = m.group("user"), m.group("pw")
        if pw:
            if not stand_in(pw) and pw != user:
                out.append(_span(off + m.start("pw"), off + m.end("pw"), "git-credentials", f"{user}:password", pw))
        elif user and len(user) >= 16 and value_is_literal(user, "secret", screaming=False):
            out.append(_span(off + m.start("user"), off + m.end("user"), "git-credentials", "token", user))
    return out


# ------------------------------------------------------------------------------ .pypirc

_PYPIRC = re.compile(r"[ \t]*(?:password|token)[ \t]*[=:][ \t]*(?P<v>\S(?:.*\S)?)?[ \t]*\Z", re.I)


def pypirc_spans(text: str) -> Iterable[Span]:
    """``password = X`` (and ``token = X``) in any section of a ``.pypirc``."""
    out = []
    for off, line in _lines(text):
        m = _PYPIRC.match(line)
        if m is None or m.group("v") is None:
            continue
        value = m.group("v")
        if not stand_in(value):
            out.append(_span(off + m.start("v"), off + m.end("v"), "pypirc", "password", value))
    return out


# ------------------------------------------------------------------------------ docker config.json

_DOCKER_SECRETS = frozenset({"auth", "identitytoken", "registrytoken", "password"})


def _b64_user_pass(value: str) -> bool:
    try:
        raw = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
        decoded = raw.decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False
    user, sep, pw = decoded.partition(":")
    return bool(sep and pw and decoded.isprintable() and pw.lower() not in NON_VALUES)


def docker_config_spans(text: str) -> Iterable[Span]:
    """``auths.<registry>.auth`` (base64 of user:password), ``identitytoken``,
    ``registrytoken``, ``password`` of a docker ``config.json`` (or an old ``.dockercfg``)."""
    out = []
    for _, key, value in walk_json(load_json(text), _DOCKER_SECRETS):
        if stand_in(value):
            continue
        if key.lower() == "auth" and not _b64_user_pass(value):
            continue
        if key.lower() == "password" and not value_is_literal(value, "password", screaming=True):
            continue
        for start, end in nested.json_value_spans(text, key, value):
            out.append(_span(start, end, "docker-config-file", key, value, kind="docker-auth", priority=45))
    return out


_PARSERS = {
    "netrc": netrc_spans,
    "pgpass": pgpass_spans,
    "git-credentials": git_credentials_spans,
    "pypirc": pypirc_spans,
    "docker-config": docker_config_spans,
    "json": nested.json_spans,
    "yaml": nested.yaml_spans,
}
