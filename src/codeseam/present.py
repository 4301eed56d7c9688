"""What a person sees of a hit on the page: its lines as highlighted tokens, and a link that
opens the file at that line in an editor.

Pure hearts:

- ``highlight_lines(text, language, path)``: the hit's text as lines of ``(css class, text)``
  tokens, from Pygments (the lexer named by the chunk's language, else the one for the file
  name, else plain text). The page builds its DOM from these with ``textContent``, so no
  indexed text is ever parsed as HTML. Invariant: joining each line's texts gives exactly
  the text's lines (``text_lines(display_text(text))``); when a lexer would break that
  (or the text is too long to lex on a keystroke), the lines come back as plain tokens.
- ``editor_url(pattern, root, path, line)``: ``RAG_EDITOR_URL`` (default
  ``vscode://file{path}:{line}``) filled in with the percent-encoded absolute path; a pattern
  whose scheme could run code in the page (``javascript:``, ``data:``, ...) is refused by
  ``check_editor_pattern`` when settings load.
- ``page_hits(hits, roots, pattern)``: the hits of ``search --json`` with ``lines`` and
  ``editor_url`` added (``GET /search?highlight=true``).

Pygments is imported on first use (it is a dependency of rich, so it is always there).
"""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote

DEFAULT_EDITOR_URL = "vscode://file{path}:{line}"
PLACEHOLDERS = frozenset({"path", "line", "end_line", "repo", "relpath", "root"})
# Schemes a link on the page must never carry: they run code or content in the page itself.
BLOCKED_SCHEMES = frozenset({"javascript", "data", "vbscript", "blob", "about", "filesystem"})
MAX_HIGHLIGHT_CHARS = 20_000  # longer hits are shown plain (a lexer's cost grows with the text)
# codeseam's language labels (tree-sitter grammar names) that Pygments spells otherwise.
LEXER_ALIASES = {"c_sharp": "csharp", "commonlisp": "common-lisp", "embedded_template": "erb",
                 "gitcommit": "text", "svelte": "html", "tsq": "scheme"}

Token = tuple[str, str]
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")


# -- highlighting --------------------------------------------------------------------------

def display_text(text: str) -> str:
    """The text as the page shows it: carriage returns dropped (lines are cut at ``\\n`` only)."""
    return text.replace("\r", "")


def text_lines(shown: str) -> list[str]:
    """The lines of a hit's text (its last line's ``\\n`` ends that line, it starts none)."""
    lines = shown.split("\n")
    return lines[:-1] if shown.endswith("\n") else lines


def highlight_lines(text: str, language: str, path: str = "") -> list[list[Token]]:
    """The lines of ``text`` as ``(css class, text)`` tokens (class "" for plain text)."""
    return [list(line) for line in _highlight(text, language, _basename(path))]


@functools.lru_cache(maxsize=4096)  # searches while typing return the same hits again and again
def _highlight(text: str, language: str, filename: str) -> tuple[tuple[Token, ...], ...]:
    return tuple(tuple(line) for line in _highlight_now(text, language, filename))


def _highlight_now(text: str, language: str, filename: str) -> list[list[Token]]:
    shown = display_text(text)
    plain = [[("", line)] if line else [] for line in text_lines(shown)]
    if len(shown) > MAX_HIGHLIGHT_CHARS:
        return plain
    lexer = _lexer(language or "", filename)
    if lexer is None:
        return plain
    lines: list[list[Token]] = [[]]
    try:
        for ttype, value in lexer.get_tokens(shown):
            css = _css_class(ttype)
            for i, piece in enumerate(value.split("\n")):
                if i:
                    lines.append([])
                if piece:
                    _append(lines[-1], css, piece)
    except Exception:  # noqa: BLE001 - a lexer bug must not cost the hit: show it plain
        return plain
    if shown.endswith("\n"):
        lines.pop()  # the last line's newline ends it; no line follows
    if len(lines) != len(plain) or any("".join(t for _, t in a) != "".join(t for _, t in b)
                                       for a, b in zip(lines, plain, strict=True)):
        return plain  # the lexer changed the text (e.g. stripped a BOM): what is shown must be exact
    return lines


def _append(line: list[Token], css: str, piece: str) -> None:
    if line and line[-1][0] == css:
        line[-1] = (css, line[-1][1] + piece)
    else:
        line.append((css, piece))


def _basename(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _lexer(language: str, filename: str) -> Any:
    """A Pygments lexer for the chunk's language (else the file name), or None for plain text."""
    return _lexer_by_language(language.lower()) or (_lexer_for_file(filename) if filename else None)


_OPTIONS = {"stripnl": False, "ensurenl": False, "stripall": False}  # keep the text exactly


@functools.lru_cache(maxsize=256)
def _lexer_by_language(key: str) -> Any:
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    for name in dict.fromkeys((LEXER_ALIASES.get(key, key), key.replace("_", ""), key.replace("_", "-"))):
        if name and name != "text":
            try:
                return get_lexer_by_name(name, **_OPTIONS)
            except ClassNotFound:
                pass
    return None


@functools.lru_cache(maxsize=1024)
def _lexer_for_file(filename: str) -> Any:
    from pygments.lexers import get_lexer_for_filename
    from pygments.util import ClassNotFound

    try:
        lexer = get_lexer_for_filename(filename, **_OPTIONS)
    except ClassNotFound:
        return None
    return None if lexer.name == "Text only" else lexer


@functools.lru_cache(maxsize=1024)
def _css_class(ttype: Any) -> str:
    """Pygments' short class of a token type (``k``, ``nf``, ...), walking up to a known one."""
    from pygments.token import STANDARD_TYPES

    while ttype is not None:
        css = STANDARD_TYPES.get(ttype)
        if css is not None:
            return css
        ttype = ttype.parent
    return ""


@functools.lru_cache(maxsize=4)
def highlight_css(scope: str = ".hl") -> str:
    """The stylesheet for the token classes: a light theme, and a dark one for dark systems."""
    from pygments.formatters import HtmlFormatter

    light = HtmlFormatter(style="default").get_style_defs(scope)
    dark = HtmlFormatter(style="monokai").get_style_defs(scope)
    # Pygments draws a red box around lexer error tokens: on a page of search hits those are
    # ordinary text a lexer did not expect, not errors
    neutral = f"{scope} .err {{ border: none; color: inherit; background: none }}"
    return f"{light}\n{neutral}\n@media (prefers-color-scheme: dark) {{\n{dark}\n{neutral}\n}}\n"


# -- editor links --------------------------------------------------------------------------

def check_editor_pattern(pattern: str) -> str | None:
    """Why ``pattern`` (``RAG_EDITOR_URL``) is unusable, or None when it is fine."""
    if not pattern:
        return None  # empty: no editor links
    match = _SCHEME.match(pattern)
    if match is None:
        return f"editor_url must start with a URL scheme (such as vscode:), got {pattern[:80]!r}"
    if match.group(1).lower() in BLOCKED_SCHEMES:
        return f"editor_url must not use the {match.group(1)}: scheme"
    try:
        names = {name for _, name, _, _ in string.Formatter().parse(pattern) if name is not None}
    except ValueError as exc:
        return f"editor_url is not a valid pattern: {exc}"
    unknown = sorted(names - PLACEHOLDERS)
    if unknown:
        return (f"editor_url has unknown placeholders {', '.join('{' + n + '}' for n in unknown)} "
                f"(known: {', '.join('{' + n + '}' for n in sorted(PLACEHOLDERS))})")
    return None


def editor_url(pattern: str, root: str, path: str, line: int, end_line: int | None = None,
               repo: str = "") -> str | None:
    """The link that opens ``root/path`` at ``line`` (None without a pattern or a root)."""
    if not pattern or not root or check_editor_pattern(pattern) is not None:
        return None
    full = root.rstrip("/") + "/" + path.lstrip("/")
    url = pattern.format(path=quote(full, safe="/"), relpath=quote(path, safe="/"),
                         root=quote(root, safe="/"), repo=quote(repo, safe=""), line=int(line),
                         end_line=int(end_line if end_line is not None else line))
    match = _SCHEME.match(url)
    return url if match and match.group(1).lower() not in BLOCKED_SCHEMES else None


# -- hits for the page ---------------------------------------------------------------------

def page_hits(hits: Iterable[Mapping[str, Any]], roots: Mapping[str, str], pattern: str) -> list[dict[str, Any]]:
    """``search --json`` hits plus ``lines`` (highlighted tokens) and ``editor_url``."""
    out = []
    for hit in hits:
        lines = highlight_lines(hit.get("text", ""), hit.get("language", ""), hit.get("path", ""))
        url = editor_url(pattern, roots.get(hit.get("repo", ""), ""), hit.get("path", ""),
                         hit.get("start_line", 1), hit.get("end_line"), hit.get("repo", ""))
        out.append({**hit, "lines": [[list(t) for t in line] for line in lines], "editor_url": url})
    return out
