"""Fusion of ranked lists, and de-duplication of overlapping spans.

Pure functions, checked against brute-force references (``tests/test_fusion.py``).

``rrf``: reciprocal rank fusion, ``score(d) = sum_i w_i / (rrf_k + rank_i(d))`` with 1-based
ranks; a document missing from a list contributes nothing from it. ``weighted``: each list's
scores are min-max normalised to 0..1 (a list with one distinct score maps to 1.0), then
``w_dense * dense + (1 - w_dense) * bm25``. Ties break by the order of first appearance
(dense list first), so results are stable.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T", bound=Hashable)


def rrf(rankings: Sequence[Sequence[T]], *, k: int = 60, weights: Sequence[float] | None = None) -> list[tuple[T, float]]:
    """Reciprocal rank fusion of ranked id lists, best first."""
    weights = weights or [1.0] * len(rankings)
    scores: dict[T, float] = {}
    for ranking, w in zip(rankings, weights, strict=True):
        for place, doc in enumerate(ranking, start=1):
            scores[doc] = scores.get(doc, 0.0) + w / (k + place)
    return _ordered(scores, rankings)


def weighted(scored: Sequence[Sequence[tuple[T, float]]], weights: Sequence[float]) -> list[tuple[T, float]]:
    """Weighted sum of min-max normalised scores, best first."""
    scores: dict[T, float] = {}
    for lst, w in zip(scored, weights, strict=True):
        if not lst:
            continue
        vals = [s for _, s in lst]
        lo, hi = min(vals), max(vals)
        for doc, s in lst:
            norm = 1.0 if hi == lo else (s - lo) / (hi - lo)
            scores[doc] = scores.get(doc, 0.0) + w * norm
    return _ordered(scores, [[d for d, _ in lst] for lst in scored])


def _ordered(scores: Mapping[T, float], rankings: Iterable[Sequence[T]]) -> list[tuple[T, float]]:
    first_seen: dict[T, int] = {}
    for ranking in rankings:
        for doc in ranking:
            first_seen.setdefault(doc, len(first_seen))
    return sorted(scores.items(), key=lambda item: (-item[1], first_seen[item[0]]))


@dataclass(frozen=True)
class Span:
    path: str
    start_line: int
    end_line: int


def dedupe(items: Sequence[T], span_of) -> list[T]:
    """Drop every item whose span overlaps a better-ranked item's span in the same file."""
    kept: list[T] = []
    taken: dict[str, list[tuple[int, int]]] = {}
    for item in items:
        s = span_of(item)
        ranges = taken.setdefault(s.path, [])
        if any(s.start_line <= e and b <= s.end_line for b, e in ranges):
            continue
        ranges.append((s.start_line, s.end_line))
        kept.append(item)
    return kept
