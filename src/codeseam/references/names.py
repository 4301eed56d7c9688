"""What a person means by a name: ``parse``, ``Type.method``, ``pkg::name``, ``Class#method``.

The last segment is the identifier looked for; the segments before it (the qualifier) must
stand right before it in the source (``Type.method``, ``Type::method``, ``pkg->name``), or
the reference must sit inside that type's own definition behind ``self``/``this``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import ConfigError

MAX_NAME_CHARS = 200
# separators people write between a qualifier and a member
_SPLIT = re.compile(r"\s*(?:::|->|\.|#|\\)\s*")
# an identifier of any language we parse: letters, digits, _ and $ (JS), - (Lisp, CSS), ? and ! at the end (Ruby)
_SEGMENT = re.compile(r"[^\W\d]?[\w$-]*[?!]?", re.UNICODE)
# the source's separators between qualifier and member, in any of the languages
SEP = r"\s*(?:\.|::|->|\\|:|#)\s*"
# receivers that name the enclosing type itself
SELF_NAMES = ("self", "this", "cls", "Self", "@", "me", "super")


@dataclass(frozen=True, slots=True)
class Name:
    """A parsed name: ``segments[-1]`` is the identifier, the rest its qualifier."""

    text: str
    segments: tuple[str, ...]

    @property
    def last(self) -> str:
        return self.segments[-1]

    @property
    def qualifier(self) -> tuple[str, ...]:
        return self.segments[:-1]

    @property
    def dotted(self) -> str:
        """As the chunker writes symbol paths: ``Type.method``."""
        return ".".join(self.segments)


def parse_name(text: str) -> Name:
    """``Type.method`` -> segments (Type, method). A ConfigError for anything that is not a
    name (empty, whitespace inside a segment, operators)."""
    raw = (text or "").strip()
    if not raw:
        raise ConfigError("refs needs a name", hint="e.g. `codeseam refs parse_args` or `codeseam refs Server.Get`")
    if len(raw) > MAX_NAME_CHARS:
        raise ConfigError(f"a name holds at most {MAX_NAME_CHARS} characters")
    segments = tuple(s for s in _SPLIT.split(raw))
    if any(not s or not _SEGMENT.fullmatch(s) or s == "-" for s in segments):
        raise ConfigError(f"{raw!r} is not a name",
                          hint="give an identifier, optionally qualified: name, Type.method, pkg::name")
    return Name(raw, segments)


def qualifier_pattern(name: Name) -> re.Pattern[bytes] | None:
    """A pattern that matches the bytes right before an occurrence when the qualifier stands
    there (``Type.``, ``pkg::``, ``a.b.``); None for an unqualified name."""
    if not name.qualifier:
        return None
    parts = [re.escape(s.encode()) for s in name.qualifier]
    sep = SEP.encode()
    return re.compile(rb"(?<![\w$])" + sep.join(parts) + sep + rb"$")


def self_pattern() -> re.Pattern[bytes]:
    """The bytes before a member reached through the enclosing type (``self.``, ``this->``, ``@``)."""
    names = b"|".join(re.escape(s.encode()) for s in SELF_NAMES if s != "@")
    return re.compile(rb"(?:(?<![\w$])(?:" + names + rb")" + SEP.encode() + rb"|@)$")
