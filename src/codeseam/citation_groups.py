"""Citation groups in one line of an answer: where they are, which numbers they hold, and the
line with its invalid numbers removed (``answer.py``'s citation rule, points 1 to 3), plus the
patterns that mark code fences, reasoning and a model-written source list. Shared by the check
of a whole reply (``answer.py``) and of a streamed one (``answer_stream.py``); pure."""

from __future__ import annotations

import re

THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.S | re.I)
OPEN_THINK = re.compile(r"<think>(?!.*</think>)", re.S | re.I)  # reasoning still going on
FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)")
_GROUP = re.compile(
    r"\[\^?\s*(?:(?:sources?|refs?)\s*:?\s*)?"
    r"(\d{1,6}(?:\s*[-\u2013]\s*\d{1,6})?(?:\s*[,;]\s*\d{1,6}(?:\s*[-\u2013]\s*\d{1,6})?)*)"
    r"\s*\](?!\()",
    re.I,
)
_RANGE = re.compile(r"\s*(\d+)\s*(?:[-\u2013]\s*(\d+))?\s*")
OWN_LIST = re.compile(
    r"^\s*(?:#{1,6}\s*)?[*_]{0,2}(?:sources|references|citations)(?: used)?[*_]{0,2}\s*"
    r"(?::[*_]{0,2}.*|$)", re.I)
_MAX_RANGE = 50


def _numbers(spec: str) -> list[int] | None:
    out: list[int] = []
    for part in re.split(r"[,;]", spec):
        m = _RANGE.fullmatch(part)
        if m is None:
            return None
        lo = int(m.group(1))
        hi = int(m.group(2) or lo)
        if hi < lo or hi - lo > _MAX_RANGE:
            return None
        out.extend(range(lo, hi + 1))
    return out


_Group = tuple[int, int, list[int], bool]  # start, end, numbers, glued to an identifier


def _find_groups(line: str, n_sources: int) -> list[_Group]:
    """Citation groups on one line, code spans and indexing like ``args[0]`` excluded."""
    protected = [m.span() for m in _CODE_SPAN.finditer(line)]
    found: list[_Group] = []
    last_end, last_cite = -1, False
    for m in _GROUP.finditer(line):
        if any(a <= m.start() < b for a, b in protected):
            continue
        nums = _numbers(m.group(1))
        prev = line[m.start() - 1] if m.start() else " "
        chained = prev == "]" and last_end == m.start() and last_cite
        glued = (prev.isalnum() or prev in "_)]") and not chained
        ok = nums is not None and (not glued or all(1 <= n <= n_sources for n in nums))
        if prev == "]" and last_end == m.start() and not last_cite:
            ok = False  # the next index of ``x[9][1]``
        last_end, last_cite = m.end(), ok
        if ok:
            found.append((m.start(), m.end(), nums or [], glued))
    return found


def _merge_runs(line: str, groups: list[_Group]) -> list[_Group]:
    """Merge groups separated only by spaces (``[1] [3]``, ``[1][3]``) into one."""
    runs: list[_Group] = []
    for start, end, nums, glued in groups:
        if runs and not glued and not runs[-1][3] and not line[runs[-1][1]:start].strip():
            s, _, prev, _ = runs[-1]
            runs[-1] = (s, end, prev + nums, False)
        else:
            runs.append((start, end, list(nums), glued))
    return runs


def rewrite_line(line: str, n_sources: int) -> tuple[str, set[int], set[int]]:
    """Canonicalise valid groups, drop invalid numbers; return (line, valid, invalid)."""
    runs = _merge_runs(line, _find_groups(line, n_sources))
    if not runs:
        return line, set(), set()
    valid: set[int] = set()
    invalid: set[int] = set()
    out, pos, removed = "", 0, False
    for start, end, nums, glued in [*runs, (len(line), len(line), None, False)]:
        seg = line[pos:start]
        if removed:  # glue the text around a removed group back together
            if not out.strip():
                seg = seg.lstrip(" \t")
            elif seg[:1].isalnum():
                seg = " " + seg
        out += seg
        if nums is None:
            break
        if glued:  # counted, but left as written: it may be code after all
            valid.update(nums)
            out, pos, removed = out + line[start:end], end, False
            continue
        good = sorted({n for n in nums if 1 <= n <= n_sources})
        invalid.update(n for n in nums if not 1 <= n <= n_sources)
        valid.update(good)
        removed = not good
        if good:
            out += "[" + ", ".join(map(str, good)) + "]"
        elif out.strip():
            out = out.rstrip(" \t")
        pos = end
    return out, valid, invalid
