"""Weak-evidence threshold from score distributions (pure).

A query is flagged *weak* when its best dense similarity is below the threshold ``t``.
For a set of positive and negative queries' best similarities:

- abstain(t)    = share of negatives with ``s < t`` (want high);
- false_weak(t) = share of positives with ``s < t`` (want low);
- balanced accuracy(t) = (abstain(t) + 1 - false_weak(t)) / 2.

``calibrate`` picks the ``t`` that maximises balanced accuracy: the outcome only changes
where ``t`` crosses an observed score, so the candidates are the gaps between consecutive
distinct scores; among equally good gaps the widest wins, and ``t`` is its midpoint (the
value farthest from every observed score, so small shifts on other code change little).
When no threshold does better than chance (balanced accuracy 0.5), the threshold is the
lowest score: nothing is flagged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise


@dataclass(frozen=True)
class Calibration:
    threshold: float
    abstain: float
    false_weak: float
    balanced_accuracy: float
    gap: tuple[float, float]  # the scores either side of the threshold
    n_pos: int
    n_neg: int


def between(lo: float, hi: float) -> float:
    """The threshold for the gap between two neighbouring scores: its middle, which flags ``lo``
    and not ``hi`` (weak is ``score < t``); ``hi`` itself where the two are adjacent floats and
    the middle rounds down to ``lo`` (``-1.0`` and ``-0.9999999999999999``)."""
    t = (lo + hi) / 2
    return t if t > lo else hi


def rates(pos: Sequence[float], neg: Sequence[float], t: float) -> tuple[float, float]:
    """(abstain on negatives, false-weak on positives) at threshold ``t``."""
    abstain = sum(1 for s in neg if s < t) / len(neg) if neg else 0.0
    false_weak = sum(1 for s in pos if s < t) / len(pos) if pos else 0.0
    return abstain, false_weak


def calibrate(pos: Sequence[float], neg: Sequence[float]) -> Calibration:
    """The balanced-accuracy-maximising threshold (see the module doc)."""
    if not pos or not neg:
        raise ValueError("calibration needs positive and negative scores")
    values = sorted(set(pos) | set(neg))
    best: tuple[float, float, float, float] | None = None  # (ba, width, lo, hi)
    for lo, hi in pairwise(values):
        t = between(lo, hi)
        a, f = rates(pos, neg, t)
        key = ((a + 1 - f) / 2, hi - lo, lo, hi)
        if best is None or key[:2] > best[:2]:
            best = key
    if best is None or best[0] <= 0.5:  # nothing beats flagging nothing: never flag
        v = values[0]
        best = (0.5, 0.0, v, v)
    ba, _, lo, hi = best
    t = between(lo, hi)
    a, f = rates(pos, neg, t)
    return Calibration(threshold=t, abstain=a, false_weak=f, balanced_accuracy=ba, gap=(lo, hi),
                       n_pos=len(pos), n_neg=len(neg))


def sensitivity(pos: Sequence[float], neg: Sequence[float], thresholds: Sequence[float]) -> list[dict]:
    """Rates at each threshold (how much the choice matters)."""
    out = []
    for t in thresholds:
        a, f = rates(pos, neg, t)
        out.append({"threshold": round(t, 4), "abstain": a, "false_weak": f,
                    "balanced_accuracy": (a + 1 - f) / 2})
    return out


def calibrate_budget(pos: Sequence[float], neg: Sequence[float], max_false_weak: float) -> Calibration:
    """The threshold that flags the most negatives while flagging at most ``max_false_weak``
    of the positives: the middle of the gap below the first positive score that would push
    the false-weak rate over the budget (the widest such gap on ties)."""
    if not pos or not neg:
        raise ValueError("calibration needs positive and negative scores")
    values = sorted(set(pos) | set(neg))
    best: tuple[float, float, float, float] | None = None  # (abstain, width, lo, hi)
    for lo, hi in pairwise(values):
        a, f = rates(pos, neg, between(lo, hi))
        if f <= max_false_weak and (best is None or (a, hi - lo) > best[:2]):
            best = (a, hi - lo, lo, hi)
    if best is None:
        v = values[0]
        best = (0.0, 0.0, v, v)
    _, _, lo, hi = best
    t = between(lo, hi)
    a, f = rates(pos, neg, t)
    return Calibration(threshold=t, abstain=a, false_weak=f, balanced_accuracy=(a + 1 - f) / 2, gap=(lo, hi),
                       n_pos=len(pos), n_neg=len(neg))


def calibrate_abstain(pos: Sequence[float], neg: Sequence[float], min_abstain: float) -> Calibration:
    """The lowest threshold that flags at least ``min_abstain`` of the negatives (so the fewest
    positives are flagged for that): the middle of the gap just above the negative score that
    reaches the share."""
    if not pos or not neg:
        raise ValueError("calibration needs positive and negative scores")
    values = sorted(set(pos) | set(neg))
    for lo, hi in pairwise(values):
        a, _ = rates(pos, neg, between(lo, hi))
        if a >= min_abstain:
            t = between(lo, hi)
            a, f = rates(pos, neg, t)
            return Calibration(threshold=t, abstain=a, false_weak=f, balanced_accuracy=(a + 1 - f) / 2,
                               gap=(lo, hi), n_pos=len(pos), n_neg=len(neg))
    t = values[-1] + 1e-9
    a, f = rates(pos, neg, t)
    return Calibration(threshold=t, abstain=a, false_weak=f, balanced_accuracy=(a + 1 - f) / 2,
                       gap=(values[-1], values[-1]), n_pos=len(pos), n_neg=len(neg))


def calibrate_unseen(pos: Sequence[float], neg: Sequence[float], target: float) -> Calibration:
    """The lowest threshold expected to flag at least ``target`` of *new* negatives.

    ``calibrate_abstain`` flags ``target`` of the negatives it is given, fewer of new ones: a
    threshold just above the k-th lowest of n negative scores flags a new negative (from the
    same distribution, whatever it is) with probability k / (n + 1), the expected coverage of
    an order statistic. Calibrated at 80% on 37 negatives it flags 30 and expects 30 / 38 =
    0.789 of new ones. This flags k = ceil(target * (n + 1)) of them (31 of 37 for 80%; all of
    them when there are too few negatives to promise the target)."""
    import math

    if not pos or not neg:
        raise ValueError("calibration needs positive and negative scores")
    k = min(len(neg), math.ceil(target * (len(neg) + 1) - 1e-9))
    return calibrate_abstain(pos, neg, k / len(neg))
