"""Line windows: the fallback for files without a usable grammar, and the baseline.

``window_chunks(..., overlap_tokens=0)`` is an exact cover: lines packed into windows
that fit the budget, balanced so the last window is not a crumb; concatenating the
texts gives the file back. With ``overlap_tokens > 0`` (the eval's baseline, like the
classic "512-token chunks" with ~64 tokens of overlap) each window starts a few lines
before the previous one ended, so texts overlap and the exact-cover invariant does not
hold (by design).

A single line longer than the budget (minified code) is cut at UTF-8 character
boundaries, preferring a space or punctuation in the second half of the piece.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .budget import Budget, Sizer
from .pack import Segment, Unit, pack

if TYPE_CHECKING:
    from ..records import Chunk
    from .definitions import Def

# Bytes per token when an overlap given in tokens is applied in byte mode (code averages
# about 3-4 bytes per word piece).
BYTES_PER_TOKEN = 4
# The baseline chunker's overlap, in tokens.
BASELINE_OVERLAP_TOKENS = 64

_BREAK_BYTES = b" \t\r,;})]>"


def _char_start(data: bytes, pos: int, floor: int) -> int:
    """The UTF-8 character boundary at or before ``pos`` and above ``floor``; when the
    character holding ``pos`` starts at ``floor``, the boundary after it."""
    p = pos
    while p > floor and (data[p] & 0xC0) == 0x80:
        p -= 1
    if p > floor:
        return p
    p = pos
    while p < len(data) and (data[p] & 0xC0) == 0x80:
        p += 1
    return p


def cut_long(data: bytes, a: int, b: int, sizer: Sizer) -> list[tuple[int, int]]:
    """Cut ``data[a:b]`` (one long line) into pieces that fit, at character boundaries."""
    pieces: list[tuple[int, int]] = []
    pos = a
    while pos < b:
        if sizer.fits(pos, b):
            pieces.append((pos, b))
            break
        end = min(b, pos + sizer.max_bytes)
        if not sizer.fits(pos, end):  # token mode: largest prefix that fits
            lo, hi = pos + 1, end
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if sizer.fits(pos, _char_start(data, mid, pos)):
                    lo = mid
                else:
                    hi = mid - 1
            end = lo
        if end < b:
            end = _char_start(data, end, pos)
            half = pos + (end - pos) // 2
            best = max(data.rfind(bytes([c]), half, end) for c in _BREAK_BYTES)
            if best >= half:
                end = best + 1
        pieces.append((pos, end))
        pos = end
    return pieces


def line_units(data: bytes, lo: int, hi: int, sizer: Sizer, owner: Def | None) -> list[Unit]:
    """Lines of ``data[lo:hi]`` as units; lines longer than the budget are cut."""
    units: list[Unit] = []
    pos = lo
    find = data.find
    fits = sizer.fits
    while pos < hi:
        nl = find(b"\n", pos, hi)
        end = hi if nl < 0 else nl + 1
        if fits(pos, end):
            units.append(Unit(pos, end, owner))
        else:
            units.extend(Unit(s, e, owner) for s, e in cut_long(data, pos, end, sizer))
        pos = end
    return units


def _overlap_size(sizer: Sizer, a: int, b: int, overlap_tokens: int) -> bool:
    """Is ``data[a:b]`` within the overlap allowance?"""
    if sizer.limit_tokens is None:
        return b - a <= overlap_tokens * BYTES_PER_TOKEN
    return b - a <= overlap_tokens or sizer.tokens(a, b) <= overlap_tokens


def overlapping_segments(units: list[Unit], sizer: Sizer, overlap_tokens: int) -> list[Segment]:
    """Greedy full windows; each next window re-reads about ``overlap_tokens`` of lines."""
    segs: list[Segment] = []
    i, n = 0, len(units)
    token_mode = sizer.limit_tokens is not None
    while i < n:
        j = i
        cs = units[i].start
        cur = sizer.tokens(cs, units[i].end) if token_mode else 0
        while j + 1 < n:  # token counts summed per line, then checked exactly
            nxt = cur + sizer.tokens(units[j + 1].start, units[j + 1].end) if token_mode else 0
            if not sizer.fits_estimate(cs, units[j + 1].end, nxt):
                break
            cur = nxt
            j += 1
        while token_mode and j > i and not sizer.fits(cs, units[j].end):
            j -= 1
        segs.append(units[i:j + 1])
        if j == n - 1:
            break
        k = j + 1
        while k - 1 > i and _overlap_size(sizer, units[k - 1].start, units[j].end, overlap_tokens):
            k -= 1
        i = k
    return segs


def window_segments(data: bytes, sizer: Sizer, overlap_tokens: int = 0) -> list[Segment]:
    units = line_units(data, 0, len(data), sizer, None)
    if overlap_tokens <= 0:
        return pack(units, sizer)
    return overlapping_segments(units, sizer, overlap_tokens)


def window_chunks(path: str, text: str, *, budget: Budget, overlap_tokens: int = 0) -> list[Chunk]:
    """Line windows of ``text`` (kind ``window``), each within the budget.

    ``overlap_tokens=0``: an exact cover (the fallback for files without a usable
    grammar). ``overlap_tokens>0``: the baseline; windows overlap by about that many
    tokens (bytes / 4 in byte mode), so their texts overlap.
    """
    from .assemble import FileInfo, build_chunks
    from .languages import language_label

    if not text:
        return []
    data = text.encode("utf-8", "surrogatepass")
    sizer = Sizer(data, budget)
    segs = window_segments(data, sizer, overlap_tokens)
    info = FileInfo(path=path, language=language_label(path), imports=[], doc=False, window=True)
    return build_chunks(info, data, segs, budget)
