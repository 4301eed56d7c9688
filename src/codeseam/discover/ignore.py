"""Ignore files (``.gitignore``, ``.codeseamignore``) evaluated as git evaluates them.

The patterns of every ignore file in scope are merged into one pathspec ``GitIgnoreSpec``,
each nested file's patterns rewritten relative to the root (``x.py`` in ``a/.gitignore``
becomes ``/a/**/x.py``, ``/x.py`` becomes ``/a/x.py``), in root-to-leaf order so that deeper
files win. A folder is judged on its own (the last pattern that matches the folder itself
decides; ``b/**`` matches what is inside ``b``, not ``b``), and an ignored folder is not
entered, so, as in git, nothing inside it can be re-included. pathspec translates each
pattern (globs, classes, escapes, ``**``); the evaluation order is git's (``_Rule``).

``tests/test_discover_gitoracle.py`` checks all this against ``git ls-files`` itself.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_NAMED_GROUP = re.compile(r"\(\?P<\w+>")
_GLOB_SPECIAL = re.compile(r"([*?\[\]\\!#])")


def reroot(line: str, prefix: str) -> str | None:
    """One pattern line of the ignore file in folder ``prefix`` (``""`` or ``"a/b/"``),
    rewritten relative to the root; None for blank lines and comments."""
    if not line.strip() or line.startswith("#"):
        return None
    if not prefix:
        return line
    negate = line.startswith("!")
    body = line[1:] if negate else line
    core = body.rstrip()
    core = core[:-1] if core.endswith("/") else core
    if not core or core == "/":
        return None
    base = "/" + _GLOB_SPECIAL.sub(r"\\\1", prefix)
    rewritten = base + body.lstrip("/") if "/" in core else base + "**/" + body
    return ("!" if negate else "") + rewritten


class IgnoreRules:
    """The merged patterns of the ignore files in scope; immutable (``extend`` makes new)."""

    def __init__(self, lines: Sequence[str] = ()) -> None:
        import pathspec

        self.lines = tuple(lines)
        active = [p for p in pathspec.GitIgnoreSpec.from_lines(self.lines).patterns
                  if p.include is not None and p.regex is not None]
        self._rules = [_Rule(p) for p in reversed(active)]  # last pattern first
        parts = [_NAMED_GROUP.sub("(?:", p.regex.pattern) for p in active if p.regex is not None]  # (all: see active)
        self._any = re.compile("|".join(f"(?:{p})" for p in parts), re.DOTALL) if parts else None

    @property
    def empty(self) -> bool:
        return self._any is None

    def extend(self, lines: Sequence[str], prefix: str) -> IgnoreRules:
        """These rules plus an ignore file's ``lines`` from folder ``prefix``."""
        added = [r for r in (reroot(ln, prefix) for ln in lines) if r is not None]
        return IgnoreRules((*self.lines, *added)) if added else self

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether the last pattern that matches ``rel`` itself ignores it (the folders above
        ``rel`` are the caller's business: an ignored folder is not entered)."""
        target = rel + "/" if is_dir else rel
        if self._any is None or self._any.search(target) is None:  # the common case
            return False
        for rule in self._rules:
            if rule.matches(target, is_dir):
                return rule.include
        return False


class _Rule:
    """One compiled pattern, matched against a path itself. pathspec's regexes also match
    everything below a matched folder (``build/`` matches ``build/x.py``); git's walk does
    not, so: a name pattern must match the whole path, a folder pattern (``x/``) only
    folders, and ``x/**`` (``x/**/``) only what is strictly inside ``x``."""

    __slots__ = ("include", "regex", "dir_only", "inside_only", "anything")

    def __init__(self, pattern) -> None:
        text = str(pattern.pattern).rstrip()
        self.include = bool(pattern.include)
        # DOTALL: a name may hold a newline, and "." in pathspec's regexes means any character
        self.regex: re.Pattern[str] = re.compile(pattern.regex.pattern, re.DOTALL)
        self.dir_only = text.endswith("/")
        self.inside_only = text.endswith(("/**", "/**/"))
        # pathspec's shortcuts: "*" and "**" -> ".", "*/" and "**/" -> "(?P<ps_d>/)"
        self.anything = self.regex.pattern in (".", "/", "(?P<ps_d>/)")

    def matches(self, target: str, is_dir: bool) -> bool:
        if self.dir_only and not is_dir:
            return False
        if self.anything:
            return True
        if self.inside_only:  # some folder strictly above target matches "x/"
            return any(self.regex.fullmatch(target, 0, i + 1) for i, ch in enumerate(target)
                       if ch == "/" and i + 1 < len(target))
        return self.regex.fullmatch(target) is not None
