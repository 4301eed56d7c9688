"""Fusion and de-duplication checked against brute-force reference implementations."""
from __future__ import annotations

from hypothesis import given, settings, strategies as st

from codeseam.query.evidence import is_weak
from codeseam.query.fusion import Span, dedupe, rrf, weighted


def _reference_rrf(rankings, k, weights):
    docs = {d for r in rankings for d in r}
    out = {}
    for d in docs:
        total = 0.0
        for r, w in zip(rankings, weights, strict=True):
            for i in range(len(r)):
                if r[i] == d:
                    total += w / (k + i + 1)
        out[d] = total
    return out


def _reference_weighted(scored, weights):
    out = {}
    for lst, w in zip(scored, weights, strict=True):
        if not lst:
            continue
        lo = min(s for _, s in lst)
        hi = max(s for _, s in lst)
        for d, s in lst:
            out[d] = out.get(d, 0.0) + w * (1.0 if hi == lo else (s - lo) / (hi - lo))
    return out


rankings_st = st.lists(
    st.lists(st.integers(0, 30), unique=True, max_size=20), min_size=1, max_size=3
)


@settings(max_examples=300, deadline=None)
@given(rankings_st, st.integers(1, 100))
def test_rrf_matches_brute_force(rankings, k):
    weights = [1.0 + i for i in range(len(rankings))]
    fused = rrf(rankings, k=k, weights=weights)
    ref = _reference_rrf(rankings, k, weights)
    assert {d for d, _ in fused} == set(ref)
    for d, s in fused:
        assert abs(s - ref[d]) < 1e-12
    scores = [s for _, s in fused]
    assert scores == sorted(scores, reverse=True)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.dictionaries(st.integers(0, 30), st.floats(-5, 50, allow_nan=False), max_size=15),
        min_size=2, max_size=2,
    ),
    st.floats(0, 1),
)
def test_weighted_matches_brute_force(dicts, w):
    scored = [sorted(d.items(), key=lambda x: -x[1]) for d in dicts]
    fused = weighted(scored, [w, 1 - w])
    ref = _reference_weighted(scored, [w, 1 - w])
    assert {d for d, _ in fused} == set(ref)
    for d, s in fused:
        assert abs(s - ref[d]) < 1e-9


def test_rrf_ties_keep_first_seen_order():
    fused = rrf([["a", "b"], ["b", "a"]], k=60)
    assert [d for d, _ in fused] == ["a", "b"]


def test_dedupe_drops_overlaps_keeps_best():
    spans = [Span("a.py", 10, 20), Span("a.py", 15, 30), Span("b.py", 15, 30), Span("a.py", 21, 25),
             Span("a.py", 1, 10)]
    kept = dedupe(spans, lambda s: s)
    assert kept == [Span("a.py", 10, 20), Span("b.py", 15, 30), Span("a.py", 21, 25)]


def test_is_weak():
    assert is_weak(None, 0.3)
    assert is_weak(0.2, 0.3)
    assert not is_weak(0.3, 0.3)
