"""Packing: consecutive units become chunks that fit the budget.

A *unit* is a span of bytes that must not be cut further (it fits the budget): a whole
definition, one statement of a definition too big for one chunk, a class header line, a
line of a window. Units tile their file: each starts where the previous one ends.

Two passes, both linear:

1. *segments*: every whole definition is a segment of its own; runs of other units
   with the same owner (the definition or scope they belong to) are packed greedily,
   balanced so a run of 2.1 budgets gives two halves rather than a full chunk and a crumb.
2. *merge small*: a segment under ``min_bytes`` joins a neighbour when the two fit:
   forward when it opens a definition (a class header, a signature) so the opening stays
   with what follows, else backward, else forward.

After the second pass, a chunk under ``min_bytes`` has no neighbour it could join
without going over the budget.
"""

from __future__ import annotations

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

    def __init__(self, start: int, end: int, owner: "Def | None", whole: "Def | None" = None):
        self.start = start
        self.end = end
        self.owner = owner
        self.whole = whole

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        w = f" whole={self.whole.path}" if self.whole else ""
        o = self.owner.path if self.owner else "<module>"
        return f"Unit({self.start}, {self.end}, owner={o}{w})"


Segment = list[Unit]


def pack_run(units: list[Unit], sizer: "Sizer") -> list[Segment]:
    """Pack contiguous units greedily into chunks that fit, balanced by size."""
    a, b = units[0].start, units[-1].end
    if len(units) == 1 or sizer.fits(a, b):
        return [units]
    parts = sizer.parts(a, b)
    target = sizer.size(a, b) / parts
    out: list[Segment] = []
    cur: Segment = [units[0]]
    for u in units[1:]:
        cs = cur[0].start
        if sizer.fits(cs, u.end) and (
            sizer.size(cs, u.end) <= target * 1.08 or sizer.size(cs, cur[-1].end) < target * 0.6
        ):
            cur.append(u)
        else:
            out.append(cur)
            cur = [u]
    out.append(cur)
    return out


def segments(units: list[Unit], sizer: "Sizer") -> list[Segment]:
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


def merge_small(segs: list[Segment], sizer: "Sizer") -> list[Segment]:
    """Pass 2: segments under min_bytes join a neighbour when the two fit."""
    out: list[Segment] = []
    pending: Segment | None = None
    n = len(segs)
    for i in range(n):
        seg = segs[i]
        if pending is not None:
            if sizer.fits(pending[0].start, seg[-1].end):
                seg = pending + seg
            else:
                out.append(pending)
            pending = None
        a, b = seg[0].start, seg[-1].end
        if sizer.small(a, b):
            nxt = segs[i + 1] if i + 1 < n else None
            forward_ok = nxt is not None and sizer.fits(a, nxt[-1].end)
            if forward_ok and _opens(seg):
                pending = seg
                continue
            if out and sizer.fits(out[-1][0].start, b):
                out[-1] = out[-1] + seg
                continue
            if forward_ok:
                pending = seg
                continue
        out.append(seg)
    if pending is not None:  # pragma: no cover - pending is always consumed by the next seg
        out.append(pending)
    return out


def pack(units: list[Unit], sizer: "Sizer") -> list[Segment]:
    """Units to chunks: segments, then small ones merged."""
    if not units:
        return []
    return merge_small(segments(units, sizer), sizer)
