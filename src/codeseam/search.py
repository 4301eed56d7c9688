"""Query side: retrieval per signal, fusion, de-duplication and the weak-evidence note.

Pure hearts: ``rrf``, ``weighted``, ``dedupe``, ``bm25_query``, ``is_weak``. ``retrieve`` runs
them over a store and an embedder.

Fusion
    ``rrf``: reciprocal rank fusion, ``score(d) = sum_i w_i / (rrf_k + rank_i(d))`` with
    1-based ranks; a document missing from a list contributes nothing from it.
    ``weighted``: each list's scores are min-max normalised to 0..1 (a list with one
    distinct score maps to 1.0), then ``w_dense * dense + (1 - w_dense) * bm25``.
    Ties break by the order of first appearance (dense list first), so results are stable.

Weak evidence
    A result is *weak* when the best dense cosine similarity among the retrieved chunks is
    below the embedder's calibrated threshold: the index holds nothing close to the query,
    so ``ask`` abstains instead of guessing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Hashable, Iterable, Mapping, Sequence, TypeVar

T = TypeVar("T", bound=Hashable)

MODES = ("hybrid", "dense", "bm25")


def rrf(rankings: Sequence[Sequence[T]], *, k: int = 60, weights: Sequence[float] | None = None) -> list[tuple[T, float]]:
    """Reciprocal rank fusion of ranked id lists, best first."""
    weights = weights or [1.0] * len(rankings)
    scores: dict[T, float] = {}
    for ranking, w in zip(rankings, weights):
        for rank, doc in enumerate(ranking, start=1):
            scores[doc] = scores.get(doc, 0.0) + w / (k + rank)
    return _ordered(scores, rankings)


def weighted(scored: Sequence[Sequence[tuple[T, float]]], weights: Sequence[float]) -> list[tuple[T, float]]:
    """Weighted sum of min-max normalised scores, best first."""
    scores: dict[T, float] = {}
    for lst, w in zip(scored, weights):
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


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def bm25_query(query: str) -> str:
    """The text sent to BM25: the query plus the word splits of its identifiers
    (``parse_json`` → ``parse_json parse json``), matching the identifier splits that the
    chunker puts in ``indexed_text``."""
    from .chunk import split_identifier

    extra: list[str] = []
    for ident in _IDENT.findall(query):
        parts = split_identifier(ident)
        if len(parts) > 1:
            extra.extend(parts)
    return f"{query} {' '.join(extra)}" if extra else query


def is_weak(best_similarity: float | None, threshold: float) -> bool:
    return best_similarity is None or best_similarity < threshold


# -- retrieval over a store ------------------------------------------------------------------

# Calibrated weak-evidence thresholds (best dense cosine below it = weak), per embedder id.
# Measured by `codeseam eval` on the golden sets; see bench/results/eval.md.
WEAK_THRESHOLDS: dict[str, float] = {}
DEFAULT_WEAK_THRESHOLD = 0.0


def weak_threshold(settings, embedder_id: str) -> float:
    if settings.weak_threshold >= 0:
        return settings.weak_threshold
    return WEAK_THRESHOLDS.get(embedder_id, DEFAULT_WEAK_THRESHOLD)


def retrieve(store, embedder, settings, query: str, filters, k: int, *, mode: str = "hybrid",
             lock=None):
    """Dense and/or BM25 retrieval from the one collection, fused, de-duplicated, top k."""
    import contextlib

    from .records import Hit, SearchResult

    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    depth = max(4 * k, 40)
    qvec = embedder.embed_query(query)
    with lock or contextlib.nullcontext():
        dense = store.dense_search(qvec, depth, filters)
        sparse = store.bm25_search(bm25_query(query), depth, filters) if mode != "dense" else []
    best = max((c.score for c in dense), default=None)
    ranked = _rank(dense, sparse, mode, settings)
    kept = dedupe(ranked, lambda pair: Span(pair[0].path, pair[0].start_line, pair[0].end_line))[:k]
    hits = tuple(
        Hit(c.repo_id, c.path, c.symbol, c.kind, c.language, c.start_line, c.end_line, float(s), c.text)
        for c, s in kept
    )
    threshold = weak_threshold(settings, embedder.id)
    return SearchResult(query=query, weak=is_weak(best, threshold), hits=hits, best_similarity=best)


def _rank(dense, sparse, mode: str, settings):
    by_id = {c.id: c for c in [*sparse, *dense]}
    if mode == "dense":
        return [(c, c.score) for c in dense]
    if mode == "bm25":
        return [(c, c.score) for c in sparse]
    if settings.fusion == "weighted":
        w = settings.dense_weight
        fused = weighted([[(c.id, c.score) for c in dense], [(c.id, c.score) for c in sparse]], [w, 1 - w])
    else:
        fused = rrf([[c.id for c in dense], [c.id for c in sparse]], k=settings.rrf_k)
    return [(by_id[i], s) for i, s in fused]
