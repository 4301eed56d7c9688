"""The scrub engine: run the rules over a text, resolve overlaps, apply the allow-list,
and replace each secret by ``[REDACTED:<kind>]`` without changing the line count."""

from __future__ import annotations

import bisect
import logging
import os
import re
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..records import Redaction
from . import k8s
from .formats import file_spans
from .rules import RULES, Rule, Span

log = logging.getLogger(__name__)

ALLOW_FILE = ".codeseamallow"
MIN_ALLOW_LITERAL = 8  # a shorter allow-file entry is ignored (too close to matching anything)
MAX_ALLOW_BYTES = 64 * 1024  # what of an allow file is read
_REGEX_SIGNS = ("\\", ".*", ".+", "[", "(", "|", "{")


@dataclass(frozen=True)
class ScrubResult:
    text: str
    redactions: tuple[Redaction, ...]


def placeholder(kind: str) -> str:
    return f"[REDACTED:{kind}]"


def compile_allow(allow: Sequence[str], source: str = "allow-list") -> tuple[Any, ...]:
    """Compile allow regexes with RE2 (``google-re2``: linear time in the text, so no pattern
    can run unbounded, ``(a+)+$`` included); a bad one, or one that needs backtracking
    (look-around, back-references), is a ConfigError that names it and its source."""
    if not allow:
        return ()
    import re2

    options = re2.Options()
    options.log_errors = False  # the error is raised, not also printed by RE2 on stderr
    out = []
    for pattern in allow:
        try:
            out.append(re2.compile(pattern, options=options))
        except re2.error as exc:
            why = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else exc
            raise ConfigError(f"invalid allow pattern {pattern!r} in {source}: {why}",
                              hint="allow patterns are RE2 regexes (no look-around or back-references)") from None
    return tuple(out)


class AllowList(tuple[str, ...]):
    """What a secret-shaped match may be left alone for.

    ``literals``: exact known-false-positive strings from a repository's ``.codeseamallow``; a
    match is kept only when its text *is* one of them, so a repository file can exempt its own
    fixtures but never broaden redaction (no regex, no line rule, nothing that matches an
    unknown secret). ``patterns``: regexes from the user's own settings (``scrub_allow`` /
    ``RAG_SCRUB_ALLOW``), searched in the match and in its line, run by RE2. ``ignored``: one
    warning per allow-file entry that was dropped (for the index report and ``codeseam scrub``).
    As a tuple it holds ``=literal`` and ``~pattern`` (what the pipeline fingerprint hashes)."""

    literals: frozenset[str]
    patterns: tuple[str, ...]
    ignored: tuple[str, ...]
    _compiled: tuple[Any, ...] | None

    def __new__(cls, literals: Iterable[str] = (), patterns: Iterable[str] = (),
                ignored: Iterable[str] = ()) -> AllowList:
        lits, pats = tuple(dict.fromkeys(literals)), tuple(dict.fromkeys(patterns))
        self = super().__new__(cls, (*("=" + v for v in lits), *("~" + p for p in pats)))
        self.literals, self.patterns, self.ignored = frozenset(lits), pats, tuple(ignored)
        self._compiled = None
        return self

    def __reduce__(self):
        return (AllowList, (tuple(self.literals), self.patterns, self.ignored))

    def compiled(self) -> tuple[Any, ...]:
        if self._compiled is None:
            self._compiled = compile_allow(self.patterns, "settings (scrub_allow / RAG_SCRUB_ALLOW)")
        return self._compiled


class _Literals:
    """Every rule's literals, found in one Aho-Corasick pass (``ahocorasick_rs``: the Rust
    aho-corasick crate; a Python ``in`` test per literal would read the text ~300 times).
    An ASCII text is searched as bytes (offsets are the same, and it is twice as fast)."""

    def __init__(self, rules: Sequence[Rule]) -> None:
        from ahocorasick_rs import AhoCorasick, BytesAhoCorasick, Implementation

        multi = sorted({lit for r in rules for lit in r.needs if len(lit) > 1})
        where = {lit: i for i, lit in enumerate(multi)}
        self.by_literal: list[list[int]] = [[] for _ in multi]
        self.single: dict[str, list[int]] = {}
        self.always: list[int] = []
        for ri, rule in enumerate(rules):
            for lit in dict.fromkeys(rule.needs):
                if len(lit) > 1:
                    self.by_literal[where[lit]].append(ri)
                else:
                    assert not rule.anchored, rule.id
                    self.single.setdefault(lit, []).append(ri)
            if not rule.needs:
                self.always.append(ri)
        self.automaton = AhoCorasick(multi, implementation=Implementation.DFA)
        self.bytes_automaton = BytesAhoCorasick([lit.encode() for lit in multi],
                                                implementation=Implementation.DFA)

    def find(self, text: str) -> list[tuple[int, int, int]]:
        if text.isascii():
            return self.bytes_automaton.find_matches_as_indexes(text.encode("ascii"), overlapping=True)
        return self.automaton.find_matches_as_indexes(text, overlapping=True)


_LITERALS: _Literals | None = None


def _literals() -> _Literals:
    global _LITERALS
    if _LITERALS is None:
        _LITERALS = _Literals(RULES)
    return _LITERALS


def _candidates(text: str) -> list[Span]:
    lits = _literals()
    starts: dict[int, set[int]] = {}  # anchored rule -> where its literals start
    present: set[int] = set(lits.always)  # other rules whose literals occur
    for lit, start, _ in lits.find(text):
        for ri in lits.by_literal[lit]:
            if RULES[ri].anchored:
                starts.setdefault(ri, set()).add(start)
            else:
                present.add(ri)
    for ch, rule_ids in lits.single.items():
        if ch in text:
            present.update(rule_ids)
    found: list[Span] = []
    m: re.Match[str] | None
    for ri in sorted(present | starts.keys()):
        rule = RULES[ri]
        if not rule.anchored:
            for m in rule.pattern.finditer(text):
                found.extend(s if s.rule else s._replace(rule=rule.id) for s in rule.check(text, m))
            continue
        match, done = rule.pattern.match, -1
        for pos in sorted(starts[ri]):
            if pos < done:
                continue  # inside this rule's last match: a literal repeated within one token
            m = match(text, pos)
            if m is None:
                continue
            done = m.end()  # a hit inside this match would read the same run again (linear time)
            spans = [s if s.rule else s._replace(rule=rule.id) for s in rule.check(text, m)]
            if spans:
                found.extend(spans)
                done = max(done, *(s.end for s in spans))
    return found


def candidates(text: str) -> list[Span]:
    """Every rule's candidate spans in ``text``, before overlaps are resolved (k8s.py scans a
    decoded Secret value with it)."""
    return _candidates(text)


k8s.use_finder(candidates)  # the Secret check scans decoded values with every rule


def _resolve(spans: list[Span]) -> list[Span]:
    """Keep non-overlapping spans: higher priority first, then earlier, then longer.
    O(n log n) in the number of candidates (a minified file can hold thousands)."""
    starts: list[int] = []
    kept: list[Span] = []  # sorted by start, pairwise disjoint
    for s in sorted(spans, key=lambda s: (-s.priority, s.start, s.start - s.end)):
        i = bisect.bisect_right(starts, s.start)
        if (i > 0 and kept[i - 1].end > s.start) or (i < len(kept) and kept[i].start < s.end):
            continue
        starts.insert(i, s.start)
        kept.insert(i, s)
    return kept


def _replacement(matched: str, kind: str) -> str:
    """One placeholder per line of the match; a line's trailing ``\\r`` is kept."""
    ph = placeholder(kind)
    if "\n" not in matched:
        return ph
    parts = matched.split("\n")
    return "\n".join(ph + ("\r" if p.endswith("\r") and i < len(parts) - 1 else "")
                     for i, p in enumerate(parts))


def scrub_text(text: str, *, allow: Sequence[str] = (), path: str | None = None) -> ScrubResult:
    """Redact secrets and personal data in ``text``; pure.

    Each secret becomes ``[REDACTED:<kind>]``. A match that spans lines (a PEM private-key
    block) becomes one placeholder per line, BEGIN and END lines included, so
    ``text.count("\n")`` never changes and line numbers stay valid. ``allow`` is what
    ``load_allow`` returns (an ``AllowList``), or a plain sequence of the user's regexes: a
    match is left alone when its text is one of the list's literals, or when one of its
    regexes is found (RE2 ``search``) in the matched text or in the whole line where the match
    starts. Each ``Redaction`` carries the 1-based line where its match starts, the kind, the
    rule that found it and a masked preview, never the secret. A credential file is also read by its
    format (``formats.py``: .netrc, .pgpass, .git-credentials, .pypirc, docker config.json,
    nested keys of JSON/YAML), chosen by ``path`` (the file's name, relative or not) or, without
    one, by the text's first lines; those spans are added to the rules' own, never in place
    of them.
    """
    if not text:
        return ScrubResult(text, ())
    spans = _candidates(text)
    spans.extend(file_spans(text, path))
    if not spans:
        return ScrubResult(text, ())
    allow_list = allow if isinstance(allow, AllowList) else AllowList(patterns=allow)
    literals = allow_list.literals
    patterns = allow_list.compiled()
    pieces: list[str] = []
    redactions: list[Redaction] = []
    pos = counted = line_start = 0
    line, line_end, line_allowed = 1, -1, False
    for s in _resolve(spans):
        line += text.count("\n", counted, s.start)
        line_start = max(line_start, text.rfind("\n", counted, s.start) + 1)
        counted = s.start
        if literals and text[s.start:s.end] in literals:
            continue
        if patterns:
            if line_end < s.start:  # a new line: is it allowed as a whole? (once per line)
                nl = text.find("\n", s.start)
                line_end = len(text) if nl < 0 else nl
                line_text = text[line_start:line_end]
                line_allowed = any(p.search(line_text) for p in patterns)
            if line_allowed or any(p.search(text[s.start:s.end]) for p in patterns):
                continue
        pieces.append(text[pos:s.start])
        pieces.append(_replacement(text[s.start:s.end], s.kind))
        redactions.append(Redaction(line=line, kind=s.kind, preview=s.preview, rule=s.rule))
        pos = s.end
    pieces.append(text[pos:])
    return ScrubResult("".join(pieces), tuple(redactions))


def load_allow(root: str | Path, settings_allow: Sequence[str] = ()) -> AllowList:
    """The allow-list for the repository at ``root``: the literal values of
    ``<root>/.codeseamallow`` (one exact string per line; blank lines and lines starting with
    ``#`` are skipped) and the regexes of ``settings_allow`` (the user's config / env).

    A repository file never weakens scrubbing (DESIGN §9): its lines are values, not regexes,
    and a line that is shorter than ``MIN_ALLOW_LITERAL`` or has no letter or digit is
    ignored, with a warning in ``AllowList.ignored`` (as is an allow file that is a link, or
    what lies past ``MAX_ALLOW_BYTES``). The settings' regexes are compiled once here, so a bad
    one stops the run with a ConfigError.
    """
    literals, ignored = _read_allow_file(Path(root) / ALLOW_FILE)
    compile_allow(settings_allow, "settings (scrub_allow / RAG_SCRUB_ALLOW)")
    allow = AllowList(literals, settings_allow, ignored)
    for warning in ignored:
        log.info("%s", warning)  # shown by the index report and `codeseam scrub`
    log.debug("scrub allow-list: %d value(s), %d pattern(s)", len(allow.literals), len(allow.patterns))
    return allow


def _read_allow_file(path: Path) -> tuple[list[str], list[str]]:
    """(literal values, warnings) of one allow file; the file is opened without following a
    link and read up to ``MAX_ALLOW_BYTES``."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return [], []
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    if stat.S_ISLNK(st.st_mode):
        return [], [f"{ALLOW_FILE} is a link; ignored (an allow file must be a plain file in the repository)"]
    if not stat.S_ISREG(st.st_mode):
        return [], []
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            data = f.read(MAX_ALLOW_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    warnings = []
    if len(data) > MAX_ALLOW_BYTES:
        data = data[:MAX_ALLOW_BYTES].rsplit(b"\n", 1)[0]
        warnings.append(f"{ALLOW_FILE}: only its first {MAX_ALLOW_BYTES // 1024} KiB are read")
    literals = []
    for n, raw in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        value = raw.strip()
        if not value or value.startswith("#"):
            continue
        if len(value) < MIN_ALLOW_LITERAL:
            warnings.append(f"{ALLOW_FILE}:{n}: ignored: shorter than {MIN_ALLOW_LITERAL} characters "
                            "(an entry is one exact false-positive value)")
            continue
        if not any(ch.isalnum() for ch in value):
            warnings.append(f"{ALLOW_FILE}:{n}: ignored: no letter or digit (an entry is one exact "
                            "false-positive value, not a regex)")
            continue
        if any(sign in value for sign in _REGEX_SIGNS):
            warnings.append(f"{ALLOW_FILE}:{n}: read as an exact value, not a regex (regexes go in "
                            "your own scrub_allow / RAG_SCRUB_ALLOW)")
        literals.append(value)
    return literals, warnings
