"""The scrub engine: run the rules over a text, resolve overlaps, apply the allow-list,
and replace each secret by ``[REDACTED:<kind>]`` without changing the line count."""

from __future__ import annotations

import bisect
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError
from ..records import Redaction
from .formats import file_spans
from .rules import RULES, Rule, Span

log = logging.getLogger(__name__)

ALLOW_FILE = ".codeseamallow"


@dataclass(frozen=True)
class ScrubResult:
    text: str
    redactions: tuple[Redaction, ...]


def placeholder(kind: str) -> str:
    return f"[REDACTED:{kind}]"


def compile_allow(allow: Sequence[str], source: str = "allow-list") -> tuple[re.Pattern[str], ...]:
    """Compile allow patterns; a bad one is a ConfigError that names it and its source."""
    out = []
    for pattern in allow:
        try:
            out.append(re.compile(pattern))
        except re.error as exc:
            raise ConfigError(f"invalid allow pattern {pattern!r} in {source}: {exc}") from None
    return tuple(out)


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
    ``text.count("\n")`` never changes and line numbers stay valid. ``allow`` holds regexes of
    known false positives: a match is left alone when an allow pattern is found
    (``re.search``) in the matched text or in the whole line where the match starts. Each
    ``Redaction`` carries the 1-based line where its match starts, the kind, the rule that
    found it and a masked preview, never the secret. A credential file is also read by its
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
    patterns = compile_allow(allow) if allow else ()
    pieces: list[str] = []
    redactions: list[Redaction] = []
    pos = counted = line_start = 0
    line, line_end, line_allowed = 1, -1, False
    for s in _resolve(spans):
        line += text.count("\n", counted, s.start)
        line_start = max(line_start, text.rfind("\n", counted, s.start) + 1)
        counted = s.start
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


def load_allow(root: str | Path, settings_allow: Sequence[str] = ()) -> tuple[str, ...]:
    """Allow patterns from ``<root>/.codeseamallow`` (one regex per line; blank lines and
    lines starting with ``#`` are ignored) followed by ``settings_allow`` (config / env).

    Every pattern is compiled once here, so a bad one stops the run with a ConfigError that
    names the file and line. Duplicates are dropped, order kept.
    """
    patterns: list[str] = []
    path = Path(root) / ALLOW_FILE
    if path.is_file():
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read {path}: {exc}") from None
        for n, raw in enumerate(lines, 1):
            pattern = raw.strip()
            if not pattern or pattern.startswith("#"):
                continue
            compile_allow([pattern], f"{path}:{n}")
            patterns.append(pattern)
    compile_allow(settings_allow, "settings (scrub_allow / RAG_SCRUB_ALLOW)")
    patterns.extend(settings_allow)
    log.debug("scrub allow-list: %d pattern(s)", len(patterns))
    return tuple(dict.fromkeys(patterns))
