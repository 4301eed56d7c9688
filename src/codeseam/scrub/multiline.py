"""Name and value on different lines: checks for ``rules.py`` (issue 42).

- ``yaml_block_check``: a YAML block scalar under a secret name (``api_secret: >-`` / ``|``,
  the value on the next, more indented line(s));
- ``triple_quoted_check``: a TOML (or Python) multi-line string under a secret name
  (``client_secret = '''...'''``, or three double quotes);
- ``hcl_variable_check``: a Terraform variable whose name is a secret's (or that is marked
  ``sensitive = true``) with a literal ``default`` (``variable "db_password" { default = "..." }``),
  on one line or over the block's lines;
- ``wordpress_salt_check``: WordPress' keys and salts, ``define('AUTH_KEY', '...')``
  (``SECURE_AUTH_KEY``, ``LOGGED_IN_SALT``, ...: the generator draws them from every printable
  character, spaces and braces included, so the name rule's value test does not apply).

The value is judged as the name rule judges it (``assign.value_is_literal``, the same
vocabulary and placeholder exclusions: a variable, ``${...}``, an env read, a placeholder is
not a secret). A value over several lines is judged as the lines joined (a wrapped base64
blob) and is redacted line by line, so the line count is kept; a value with words and
spaces is prose, not a secret, and is left alone. Every look is bounded (``MAX_LINES``
lines, ``MAX_BLOCK`` characters).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .assign import secret_name, value_is_literal
from .shapes import Span, is_placeholder, mask

MAX_LINES = 64  # lines of a multi-line value looked at
MAX_BLOCK = 16 * 1024  # characters of a value (or an HCL block) looked at
KIND = "secret-assignment"
PRIORITY = 12

_YAML_KEY = re.compile(r"""(?P<ind>[ \t]*)(?:-[ \t]+)?(?P<q>["']?)(?P<key>[A-Za-z_][\w.-]{0,127})(?P=q)[ \t]*\Z""")
_ASSIGN_KEY = re.compile(r"""(?P<q>["']?)(?P<key>[A-Za-z_][\w.-]{0,127})(?P=q)[ \t]*\Z""")


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", max(0, pos - 256), pos) + 1 or max(0, pos - 256)


def pieces(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """(start, end) of the stripped non-blank lines of text[start:end]."""
    out = []
    pos = start
    while pos < end:
        nl = text.find("\n", pos, end)
        stop = end if nl < 0 else nl
        a, b = pos, stop
        while a < b and text[a] in " \t":
            a += 1
        while b > a and text[b - 1] in " \t\r\\":
            b -= 1
        if b > a:
            out.append((a, b))
        pos = stop + 1
    return out


def judge(text: str, lines: list[tuple[int, int]], name: str, rule: str) -> Iterable[Span]:
    """Spans (one per line) when the lines joined are a literal secret for ``name``."""
    sort = secret_name(name)
    if sort is None or not lines or len(lines) > MAX_LINES:
        return ()
    parts = [text[a:b] for a, b in lines]
    if any(c.isspace() for p in parts for c in p):
        return ()  # words: a description, not a value
    value = "".join(parts)
    if is_placeholder(value) or not value_is_literal(value, sort, screaming=name.isupper()):
        return ()
    preview = f"{name}={mask(value, 0)}"
    return [Span(a, b, KIND, preview, PRIORITY, rule) for a, b in lines]


def yaml_block_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    """``name: |`` / ``name: >-`` then the value on the lines indented deeper than ``name``."""
    ls = _line_start(text, m.start())
    k = _YAML_KEY.match(text, ls, m.start())
    if k is None or secret_name(k.group("key")) is None:
        return ()
    indent = k.start("key") - ls
    pos, end, n = m.end(), m.end(), 0
    limit = min(len(text), m.end() + MAX_BLOCK)
    while pos < limit and n <= MAX_LINES:
        nl = text.find("\n", pos, limit)
        stop = limit if nl < 0 else nl
        line = text[pos:stop]
        if line.strip():
            if len(line) - len(line.lstrip(" \t")) <= indent:
                break  # back at the key's level: the block has ended
            end = stop
        pos, n = stop + 1, n + 1
    return judge(text, pieces(text, m.end(), end), k.group("key"), "yaml-block-secret")


def triple_quoted_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    """``name = '''value'''`` (or three double quotes) over one or more lines."""
    ls = _line_start(text, m.start())
    k = _ASSIGN_KEY.search(text, ls, m.start())
    if k is None or secret_name(k.group("key")) is None:
        return ()
    close = text.find(m.group("q"), m.end(), m.end() + MAX_BLOCK)
    if close < 0:
        return ()
    return judge(text, pieces(text, m.end(), close), k.group("key"), "multiline-string-secret")


_HCL_DEFAULT = re.compile(r"""(?:^|[{\s;,])default[ \t]*=[ \t]*"(?P<v>(?:\\.|[^"\\\n]){1,1024})\"""", re.M)
_HCL_SENSITIVE = re.compile(r"(?:^|[{\s;,])sensitive[ \t]*=[ \t]*true\b", re.M)


def _block_end(text: str, open_brace: int) -> int:
    """The index of the ``}`` closing the block opened at ``open_brace`` (strings skipped),
    or -1 within MAX_BLOCK characters."""
    depth, i, limit = 0, open_brace, min(len(text), open_brace + MAX_BLOCK)
    while i < limit:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < limit and text[j] not in '"\n':
                j += 2 if text[j] == "\\" else 1
            i = j
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def hcl_variable_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    """``variable "db_password" { default = "..." }`` (a secret's name, or ``sensitive = true``)."""
    if m.start() > 0 and (text[m.start() - 1].isalnum() or text[m.start() - 1] in "_."):
        return ()
    name = m.group("n")
    close = _block_end(text, m.end() - 1)
    if close < 0:
        return ()
    d = _HCL_DEFAULT.search(text, m.end(), close)
    if d is None:
        return ()
    sort = secret_name(name)
    if sort is None and _HCL_SENSITIVE.search(text, m.end(), close):
        sort = "password"
    value = d.group("v")
    if sort is None or is_placeholder(value) or not value_is_literal(value, sort, screaming=False):
        return ()
    return (Span(d.start("v"), d.end("v"), KIND, f"{name}={mask(value, 0)}", PRIORITY, "hcl-variable-secret"),)


WORDPRESS_KEYS = ("AUTH_KEY", "SECURE_AUTH_KEY", "LOGGED_IN_KEY", "NONCE_KEY", "AUTH_SALT", "SECURE_AUTH_SALT",
                  "LOGGED_IN_SALT", "NONCE_SALT", "WP_CACHE_KEY_SALT")
# what sample configs hold instead of a drawn salt: words ("put your unique phrase here"). A
# drawn one holds any printable character, so neither the name rule's placeholder test (it
# looks for ``<``, ``{{``, ``...``) nor a look for words inside it would do: a random 64
# characters can hold "SALt".
_WP_PROSE = re.compile(r"[A-Za-z][A-Za-z ,.'!-]*")
_WP_STAND_INS = ("unique phrase", "put your ", "your-", "your_", "replace", "change", "example", "random",
                 "placeholder")  # five letters or more: never by chance in 64 drawn characters


def wordpress_salt_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    """``define( 'AUTH_KEY', '<64 printable characters>' );`` and the other keys and salts."""
    if m.start() > 0 and (text[m.start() - 1].isalnum() or text[m.start() - 1] in "_$>:"):
        return ()
    raw = m.group("v")
    value = re.sub(r"\\(.)", r"\1", raw)
    low = value.lower()
    if len(value) < 16 or any(w in low for w in _WP_STAND_INS) or low.strip(" .*x-_") == "":
        return ()
    if _WP_PROSE.fullmatch(value) or len(set(value)) < 12:
        return ()  # words, or a typed run: not a drawn salt
    return (Span(m.start("v"), m.end("v"), KIND, f"{m.group('n')}={mask(value, 0)}", PRIORITY,
                 "wordpress-salt"),)
