"""Milvus filter expressions built from user strings, safely; path globs.

Milvus Lite 2.5.1 unescapes only ``\\\\``, ``\\"`` and ``\\'`` inside string literals, rejects
a raw newline or carriage return, and *crashes its server* on an unknown escape such as
``\\_``. So a literal here escapes exactly backslash and double quote, and a string holding
``\\n`` or ``\\r`` is never put in an expression (:class:`Unquotable`; callers fall back to a
coarser filter plus an exact check in Python).

Path globs use gitignore syntax (pathspec): ``*.go`` matches at any depth, ``src/**/*.py``
and ``tests/*`` are anchored at the repo root, a directory pattern matches what is below it.
The glob becomes a ``LIKE`` pre-filter that can only widen the match (a literal prefix when
anchored, else the longest literal run, cut at LIKE's own wildcards ``%`` and ``_``); the
exact match is done in Python on what comes back.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..errors import ConfigError

# A bracket expression (a "]" right after "[", "[!" or "[^" is a member, as in fnmatch and
# gitignore: "[]a]" is one class of "]" and "a"), or one special character.
_GLOB_SPECIAL = re.compile(r"\[[!^]?\]?[^\]]*\]|[*?\[\]\\%_]")


class Unquotable(ValueError):
    """A string that no Milvus Lite string literal can express (holds a newline or CR)."""


def quotable(value: str) -> bool:
    return "\n" not in value and "\r" not in value


def literal(value: str) -> str:
    """``value`` as a double-quoted Milvus string literal."""
    if not quotable(value):
        raise Unquotable(value)
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def eq(field: str, value: str) -> str:
    return f"{field} == {literal(value)}"


def is_in(field: str, values: Iterable[str]) -> str:
    vals = list(values)
    if len(vals) == 1:
        return eq(field, vals[0])
    return f"{field} in [{', '.join(literal(v) for v in vals)}]"


def all_of(*parts: str | None) -> str:
    kept = [p for p in parts if p]
    if len(kept) == 1:
        return kept[0]
    return " and ".join(f"({p})" for p in kept)


def like_prefix(field: str, prefix: str) -> str | None:
    """``field like "prefix%"`` for the part of ``prefix`` before any LIKE wildcard/newline."""
    cut = re.split(r"[%_\\\n\r]", prefix, maxsplit=1)[0]
    return f"{field} like {literal(cut + '%')}" if cut else None


# -- path globs ------------------------------------------------------------------------------

@dataclass(frozen=True)
class PathGlob:
    """A compiled path glob: ``like`` (a pre-filter expression or None) and ``match``."""

    pattern: str
    like: str | None
    match: Callable[[str], bool]


def compile_glob(pattern: str, field: str = "path") -> PathGlob:
    from pathspec import GitIgnoreSpec

    text = pattern.strip()
    if not text or text.startswith(("!", "#")) or not quotable(text):
        raise ConfigError(f"invalid path glob {pattern!r}",
                          hint="use a glob such as 'src/**/*.py', '*.go' or 'tests/*'")
    try:
        with warnings.catch_warnings():  # re's "possible nested set" on globs like "[[a]"
            warnings.simplefilter("ignore", FutureWarning)
            spec = GitIgnoreSpec.from_lines([text])
    except (ValueError, re.error) as exc:  # re.error: a character range pathspec cannot compile
        raise ConfigError(f"invalid path glob {pattern!r}: {exc}") from None
    return PathGlob(pattern, _like_for(text, field), spec.match_file)


def _like_for(glob: str, field: str) -> str | None:
    body = glob[1:] if glob.startswith("/") else glob
    anchored = glob.startswith("/") or "/" in body.rstrip("/")
    runs = [r for r in _GLOB_SPECIAL.split(body.rstrip("/")) if r]
    if anchored:
        head = _GLOB_SPECIAL.split(body, maxsplit=1)[0]
        return f"{field} like {literal(head + '%')}" if head else None
    if not runs:
        return None
    return f"{field} like {literal('%' + max(runs, key=len) + '%')}"
