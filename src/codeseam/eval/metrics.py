"""Retrieval metrics as pure functions (``golden/README.md``, "Metrics to report").

A result is a line range ``(path, start, end)``, 1-based inclusive. Against a query's gold
ranges ``G`` (any one of them is a correct answer):

- *overlap*: same path and ``r.start <= g.end and g.start <= r.end``;
- *contains whole*: same path and ``r.start <= g.start and r.end >= g.end``;
- *same file*: same path.

Per query we keep the 1-based rank of the first result that overlaps (``rank``), contains a
whole gold range (``whole_rank``) and lies in a gold file (``file_rank``); every metric is
a function of those ranks:

- Recall@k = 1 if ``rank <= k``; whole@k = 1 if ``whole_rank <= k``;
  file-Recall@k = 1 if ``file_rank <= k``;
- MRR = mean of ``1 / rank`` over the queries, 0 when ``rank`` is over the cutoff:
  ``mrr`` uses the top 20 (the issue), ``mrr@10`` the top 10 (the golden README);
- abstain rate = share of negatives flagged weak; false-weak rate = share of positives
  flagged weak.

- NDCG@10 (the semble benchmark's metric, for sets whose gold are several targets that all
  count): each gold range is a target, found at the rank of the first result that overlaps
  it; DCG sums ``1 / log2(rank + 1)`` over the distinct ranks at which targets are found
  (ranks <= 10), the ideal DCG puts ``min(10, targets)`` at ranks 1..n. For a set whose gold
  lists alternatives (any one is the answer) it is reported but means less than MRR.

Averages are macro (over queries), per kind and overall (all non-negative queries).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .golden import GoldQuery, GoldSpan

Result = tuple[str, int, int]  # (path, start_line, end_line)

CURVE_K = 20  # Recall@k curves for k = 1..CURVE_K
MRR_CUTOFF = 20
MRR10_CUTOFF = 10
OVERALL = "overall"
KIND_ORDER = ("symbol", "prose", "prose-tr", "prose-de")


NDCG_K = 10


def path_matches(path: str, g: GoldSpan) -> bool:
    """Same path; for a ``suffix`` gold (the semble benchmark's rule) either path may end
    with the other at a ``/``."""
    if path == g.path:
        return True
    return g.suffix and (path.endswith("/" + g.path) or g.path.endswith("/" + path))


def overlaps(r: Result, g: GoldSpan) -> bool:
    return path_matches(r[0], g) and r[1] <= g.end and g.start <= r[2]


def contains_whole(r: Result, g: GoldSpan) -> bool:
    return path_matches(r[0], g) and r[1] <= g.start and r[2] >= g.end


def same_file(r: Result, g: GoldSpan) -> bool:
    return path_matches(r[0], g)


def ndcg(target_ranks: Sequence[int | None], k: int = NDCG_K) -> float | None:
    """NDCG@k from each target's first rank (module doc); None for no target."""
    if not target_ranks:
        return None
    found = {r for r in target_ranks if r is not None and r <= k}
    dcg = sum(1.0 / math.log2(r + 1) for r in found)
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(k, len(target_ranks)) + 1))
    return dcg / ideal


def first_rank(results: Sequence[Result], gold: Sequence[GoldSpan], match) -> int | None:
    """1-based rank of the first result that ``match``es any gold range, or None."""
    for rank, r in enumerate(results, 1):
        if any(match(r, g) for g in gold):
            return rank
    return None


@dataclass(frozen=True)
class Outcome:
    """What one variant returned for one query, reduced to ranks (plus the hits, to trace)."""

    id: str
    kind: str
    negative: bool
    rank: int | None
    whole_rank: int | None
    file_rank: int | None
    weak: bool | None  # None: the variant has no calibrated dense signal
    best_similarity: float | None
    results: tuple[Result, ...]
    evidence: float | None = None  # the score the weak flag was decided on (None: the similarity)
    target_ranks: tuple[int | None, ...] = ()  # per gold range, the first overlapping rank

    @property
    def ndcg(self) -> float | None:
        return ndcg(self.target_ranks)

    @property
    def weak_score(self) -> float | None:
        """What calibration thresholds: the evidence score, else the best similarity."""
        return self.evidence if self.evidence is not None else self.best_similarity


def outcome(query: GoldQuery, results: Sequence[Result], weak: bool | None,
            best_similarity: float | None, evidence: float | None = None) -> Outcome:
    results = tuple((str(p), int(a), int(b)) for p, a, b in results)
    g = query.gold
    return Outcome(
        id=query.id, kind=query.kind, negative=query.negative,
        rank=first_rank(results, g, overlaps), whole_rank=first_rank(results, g, contains_whole),
        file_rank=first_rank(results, g, same_file), weak=weak,
        best_similarity=None if best_similarity is None else float(best_similarity),
        results=results, evidence=None if evidence is None else float(evidence),
        target_ranks=tuple(first_rank(results, (t,), overlaps) for t in g),
    )


def hit_at(rank: int | None, k: int) -> float:
    return 1.0 if rank is not None and rank <= k else 0.0


def reciprocal_rank(rank: int | None, cutoff: int = MRR_CUTOFF) -> float:
    return 1.0 / rank if rank is not None and rank <= cutoff else 0.0


def _mean(values: Iterable[float]) -> float | None:
    vals = list(values)
    return sum(vals) / len(vals) if vals else None


def _rate(flags: Sequence[bool | None]) -> float | None:
    if not flags or any(f is None for f in flags):
        return None
    return sum(1.0 for f in flags if f) / len(flags)


def group_metrics(outcomes: Sequence[Outcome], ks: Sequence[int]) -> dict:
    """Metrics over positive outcomes (one group: a kind, or overall)."""
    out: dict = {"n": len(outcomes)}
    for k in ks:
        out[f"recall@{k}"] = _mean(hit_at(o.rank, k) for o in outcomes)
        out[f"whole@{k}"] = _mean(hit_at(o.whole_rank, k) for o in outcomes)
        out[f"file_recall@{k}"] = _mean(hit_at(o.file_rank, k) for o in outcomes)
    out["mrr"] = _mean(reciprocal_rank(o.rank, MRR_CUTOFF) for o in outcomes)
    out["mrr@10"] = _mean(reciprocal_rank(o.rank, MRR10_CUTOFF) for o in outcomes)
    out["ndcg@10"] = _mean(o.ndcg for o in outcomes if o.ndcg is not None)
    out["false_weak"] = _rate([o.weak for o in outcomes])
    return out


def curve(outcomes: Sequence[Outcome], attr: str = "rank", kmax: int = CURVE_K) -> list[float]:
    """[metric@1, ..., metric@kmax] for the rank attribute ``attr``."""
    if not outcomes:
        return []
    return [sum(hit_at(getattr(o, attr), k) for o in outcomes) / len(outcomes) for k in range(1, kmax + 1)]


def kinds_in(outcomes: Sequence[Outcome]) -> list[str]:
    """Positive kinds present, in the usual order, then any others alphabetically."""
    present = {o.kind for o in outcomes if not o.negative}
    return [k for k in KIND_ORDER if k in present] + sorted(present - set(KIND_ORDER))


def summarize(outcomes: Sequence[Outcome], ks: Sequence[int]) -> dict:
    """Per-kind and overall metrics, the negatives' abstain rate, and Recall@k curves."""
    positives = [o for o in outcomes if not o.negative]
    negatives = [o for o in outcomes if o.negative]
    by_kind = {kind: group_metrics([o for o in positives if o.kind == kind], ks) for kind in kinds_in(outcomes)}
    return {
        OVERALL: group_metrics(positives, ks),
        "by_kind": by_kind,
        "negative": {"n": len(negatives), "abstain": _rate([o.weak for o in negatives])},
        "curve": {"recall": curve(positives, "rank"), "whole": curve(positives, "whole_rank"),
                  "file_recall": curve(positives, "file_rank")},
    }


def similarity_split(outcomes: Sequence[Outcome]) -> tuple[list[float], list[float]]:
    """(positives', negatives') weak scores (evidence, else best similarity), for threshold
    calibration."""
    pos = [o.weak_score for o in outcomes if not o.negative and o.weak_score is not None]
    neg = [o.weak_score for o in outcomes if o.negative and o.weak_score is not None]
    return pos, neg
