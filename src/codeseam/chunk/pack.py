"""Packing: consecutive units become chunks that fit the budget.

A *unit* is a span of bytes that must not be cut further (it fits the budget): a whole
definition, one statement of a definition too big for one chunk, a class header line, a
line of a window. Units tile their file: each starts where the previous one ends.

Two passes, both linear:

1. *segments*: every whole definition is a segment of its own; runs of other units
   with the same owner (the definition or scope they belong to) are packed greedily,
   balanced so a run of 2.1 budgets gives two halves rather than a full chunk and a crumb.
2. *merge small*: a segment under ``min_bytes`` joins a neighbour when the two fit,
   small neighbours first (so crumbs pool together instead of swelling a big chunk), and
   forward when it opens a definition (a class header, a signature) so the opening stays
   with what follows.

After the second pass, a chunk under ``min_bytes`` has no neighbour it could join
without going over the budget.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .budget import Sizer
    from .definitions import Def


class Unit:
    """A span ``[start, end)`` of the file's bytes that stays in one chunk.

    ``owner`` is the innermost definition the span belongs to (None: the module);
    ``whole`` is set when the span is a whole definition (then ``owner`` is the scope
    that holds it).
    """

    __slots__ = ("start", "end", "owner", "whole")

    def __init__(self, start: int, end: int, owner: Def | None, whole: Def | None = None):
        self.start = start
        self.end = end
        self.owner = owner
        self.whole = whole

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        w = f" whole={self.whole.path}" if self.whole else ""
        o = self.owner.path if self.owner else "<module>"
        return f"Unit({self.start}, {self.end}, owner={o}{w})"


Segment = list[Unit]


def pack_run(units: list[Unit], sizer: Sizer) -> list[Segment]:
    """Pack contiguous units greedily into chunks that fit, balanced by size: each chunk
    aims at the remaining size divided by the chunks still needed.

    In token mode a chunk's tokens are estimated as the sum over its units (each unit is
    counted once; word-piece counts add up across line breaks) and every chunk is then
    checked exactly, dropping units from its end in the rare case the estimate was low.
    """
    a, b = units[0].start, units[-1].end
    if len(units) == 1 or sizer.fits(a, b):
        return [units]
    token_mode = sizer.limit_tokens is not None
    toks = [sizer.tokens(u.start, u.end) for u in units] if token_mode else None
    ratio = sum(toks) / (b - a) if toks else 0.0
    est = sizer.estimate
    out: list[Segment] = []
    i, n = 0, len(units)
    while i < n:
        cs = units[i].start
        remaining = est(cs, b, ratio)
        target = remaining / max(1, math.ceil(remaining - 1e-9))
        j = i
        cur = toks[i] if toks else 0
        while j + 1 < n:
            end = units[j + 1].end
            grown = est(cs, end, ratio)
            if grown > target:  # stop where the size is closest to the target
                now = est(cs, units[j].end, ratio)
                if grown - target > target - now and now >= target * 0.5:
                    break
            nxt = cur + toks[j + 1] if toks else 0
            if not sizer.fits_estimate(cs, end, nxt):
                break
            cur = nxt
            j += 1
        while token_mode and j > i and not sizer.fits_sum(cs, units[j].end, cur):
            cur -= toks[j]  # type: ignore[index]
            j -= 1  # the estimate was near the limit and low: the exact count decides
        out.append(units[i:j + 1])
        i = j + 1
    return out


def segments(units: list[Unit], sizer: Sizer) -> list[Segment]:
    """Pass 1: whole definitions alone, runs of loose units (same owner) packed."""
    out: list[Segment] = []
    i, n = 0, len(units)
    while i < n:
        u = units[i]
        if u.whole is not None:
            out.append([u])
            i += 1
            continue
        j = i + 1
        owner = u.owner
        while j < n and units[j].whole is None and units[j].owner is owner:
            j += 1
        out.extend(pack_run(units[i:j], sizer))
        i = j
    return out


def _opens(seg: Segment) -> bool:
    """Does the segment open a split definition (its header or signature)?"""
    for u in seg:
        owner = u.owner
        if u.whole is None and owner is not None and u.start == owner.start:
            return True
    return False


def _summing_fits(sizer: Sizer, segs: list[Segment]):
    """Token mode: does ``data[a:b]`` fit, where ``a`` and ``b`` are segment bounds?
    Sums the exact counts of the segments between them (split at line starts)."""
    starts = {seg[0].start: seg[-1].end for seg in segs}

    def fits(a: int, b: int) -> bool:
        total, pos = 0, a
        while pos < b:
            end = starts.get(pos)
            if end is None or end > b:
                return sizer.fits(a, b)
            total += sizer.tokens(pos, end)
            pos = end
        return sizer.fits_sum(a, b, total)

    return fits


ROUTINES = frozenset({"function", "method"})


def _routine(u: Unit) -> Def | None:
    """The outermost function or method ``u`` lies inside (a piece of it, or a definition
    nested in it), or None (module or class level)."""
    found = None
    d = u.owner
    while d is not None:
        if d.kind in ROUTINES:
            found = d
        d = d.parent
    return found


def _routines(seg: Segment) -> frozenset:
    return frozenset(id(r) for r in map(_routine, seg) if r is not None)


def merge_small(segs: list[Segment], sizer: Sizer) -> list[Segment]:
    """Pass 2: segments under min_bytes join a neighbour when the two fit and lie inside the
    same routines (a piece of a split function joins only other pieces of it: the head of one
    method never rides with the tail of the one before, which would cite the wrong symbol and
    keep either from being returned whole).

    Preference: an opening (class header, signature) joins what follows (a class header the
    first piece of its first method too); else a small neighbour before, a small neighbour
    after, any neighbour before, any after. A chunk left under min_bytes could not join either
    neighbour within the budget, or crosses a routine's boundary to do it.
    """
    out: list[Segment] = []
    pending: Segment | None = None
    small = sizer.small
    # token mode: the sum of the segments' counts, trusted with a margin
    fits = sizer.fits if sizer.limit_tokens is None else _summing_fits(sizer, segs)
    n = len(segs)
    for i in range(n):
        seg = segs[i]
        if pending is not None:
            seg = pending + seg  # checked to fit before it was set aside
            pending = None
        a, b = seg[0].start, seg[-1].end
        if small(a, b):
            prev = out[-1] if out else None
            nxt = segs[i + 1] if i + 1 < n else None
            mine = _routines(seg)
            after = _routines(nxt) if nxt is not None else frozenset()
            back = prev is not None and _routines(prev) == mine and fits(prev[0].start, b)
            fwd = nxt is not None and fits(a, nxt[-1].end)
            if fwd and _opens(seg) and mine <= after:  # an opening stays with what follows
                pending = seg
                continue
            fwd = fwd and after == mine  # a piece of a routine joins pieces of it only
            if back and small(prev[0].start, prev[-1].end):  # type: ignore[index]
                out[-1] = prev + seg  # type: ignore[operator]
                continue
            if fwd and small(nxt[0].start, nxt[-1].end):  # type: ignore[index]
                pending = seg
                continue
            if back:
                out[-1] = prev + seg  # type: ignore[operator]
                continue
            if fwd:
                pending = seg
                continue
        out.append(seg)
    return out


def pack(units: list[Unit], sizer: Sizer) -> list[Segment]:
    """Units to chunks: segments, then small ones merged."""
    if not units:
        return []
    return merge_small(segments(units, sizer), sizer)
