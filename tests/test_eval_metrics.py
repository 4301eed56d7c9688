"""Eval building blocks as pure functions: golden loader, metrics, calibration, variants.

Metric values are worked out by hand in the comments; properties are checked against
brute-force definitions straight from the golden README.
"""
from __future__ import annotations

import json
from itertools import pairwise

import pytest
from hypothesis import given, settings, strategies as st

from codeseam.errors import ConfigError
from codeseam.eval import metrics
from codeseam.eval.calibrate import calibrate, rates, sensitivity
from codeseam.eval.golden import GoldQuery, GoldSpan, gold_paths, load_golden
from codeseam.eval.variants import PLAIN_OPTIONS, DEFAULT_VARIANTS, parse_variant, parse_variants, specs_of


def q(id_, kind, *gold):
    return GoldQuery(id_, "r", "text", kind, tuple(GoldSpan(p, "", a, b) for p, a, b in gold))


# -- golden loader ------------------------------------------------------------------------

def test_load_golden_ignores_extra_keys_and_blank_lines(tmp_path):
    p = tmp_path / "g.jsonl"
    p.write_text(json.dumps({"id": "a", "repo": "x", "query": "q", "kind": "symbol", "commit": "abc",
                             "gold": [{"path": "a/b.py", "symbol": "f", "start": 3, "end": 9, "note": 1}]})
                 + "\n\n" + json.dumps({"id": "n", "query": "q2", "kind": "negative", "gold": []}) + "\n")
    qs = load_golden(p)
    assert [x.id for x in qs] == ["a", "n"]
    assert qs[0].gold == (GoldSpan("a/b.py", "f", 3, 9),)
    assert qs[1].negative and qs[1].repo == "golden"
    assert gold_paths(qs) == ["a/b.py"]


@pytest.mark.parametrize("line, message", [
    ("not json", "not JSON"),
    ('{"id": "a", "query": "q", "kind": "symbol", "gold": []}', "at least one gold"),
    ('{"id": "a", "query": "q", "kind": "negative", "gold": [{"path": "a.py", "start": 1, "end": 2}]}',
     "negative"),
    ('{"id": "a", "query": "q", "kind": "prose", "gold": [{"path": "../a.py", "start": 1, "end": 2}]}',
     "relative"),
    ('{"id": "a", "query": "q", "kind": "prose", "gold": [{"path": "a.py", "start": 5, "end": 2}]}',
     "start <= end"),
    ('{"id": "a", "query": "", "kind": "prose", "gold": []}', "'query'"),
])
def test_load_golden_rejects_bad_records(tmp_path, line, message):
    p = tmp_path / "g.jsonl"
    p.write_text(line + "\n")
    with pytest.raises(ConfigError, match=message):
        load_golden(p)


def test_load_golden_rejects_duplicate_ids(tmp_path):
    rec = json.dumps({"id": "a", "query": "q", "kind": "negative", "gold": []})
    p = tmp_path / "g.jsonl"
    p.write_text(rec + "\n" + rec + "\n")
    with pytest.raises(ConfigError, match="duplicate id"):
        load_golden(p)


def test_the_dev_set_loads_with_its_documented_counts():
    from pathlib import Path

    path = Path("/work/shared/golden/stdlib-dev.jsonl")
    if not path.exists():
        pytest.skip("stdlib-dev golden set not present")
    qs = load_golden(path)
    counts = {}
    for x in qs:
        counts[x.kind] = counts.get(x.kind, 0) + 1
    assert counts == {"symbol": 16, "prose": 36, "prose-tr": 8, "prose-de": 8, "negative": 12}
    assert len(gold_paths(qs)) == 18


# -- metrics, by hand ---------------------------------------------------------------------

def test_match_rules():
    g = GoldSpan("a.py", "f", 10, 20)
    assert metrics.overlaps(("a.py", 20, 30), g) and metrics.overlaps(("a.py", 1, 10), g)
    assert not metrics.overlaps(("a.py", 21, 30), g) and not metrics.overlaps(("b.py", 10, 20), g)
    assert metrics.contains_whole(("a.py", 10, 20), g) and metrics.contains_whole(("a.py", 1, 99), g)
    assert not metrics.contains_whole(("a.py", 11, 30), g)
    assert metrics.same_file(("a.py", 500, 501), g)


def test_outcome_ranks_by_hand():
    query = q("x", "prose", ("a.py", 10, 20), ("b.py", 5, 6))
    results = [("c.py", 1, 50), ("a.py", 30, 40), ("a.py", 15, 18), ("b.py", 1, 9)]
    o = metrics.outcome(query, results, weak=False, best_similarity=0.5)
    # rank 2 is a.py but past the range; rank 3 overlaps a.py 10-20 without containing it;
    # rank 4 contains b.py 5-6 whole.
    assert (o.rank, o.whole_rank, o.file_rank) == (3, 4, 2)


def test_summary_by_hand():
    outs = [
        # symbol: rank 1 (whole at 1); rank 3 (whole never); prose: rank 12; none at all
        metrics.Outcome("s1", "symbol", False, 1, 1, 1, False, 0.7, ()),
        metrics.Outcome("s2", "symbol", False, 3, None, 2, True, 0.3, ()),
        metrics.Outcome("p1", "prose", False, 12, 12, 1, False, 0.6, ()),
        metrics.Outcome("p2", "prose", False, None, None, None, False, 0.5, ()),
        metrics.Outcome("n1", "negative", True, None, None, None, True, 0.2, ()),
        metrics.Outcome("n2", "negative", True, None, None, None, False, 0.55, ()),
    ]
    s = metrics.summarize(outs, (1, 5, 10))
    o = s["overall"]
    assert o["n"] == 4
    assert o["recall@1"] == 0.25 and o["recall@5"] == 0.5 and o["recall@10"] == 0.5
    assert o["whole@1"] == 0.25 and o["whole@10"] == 0.25
    assert o["file_recall@1"] == 0.5 and o["file_recall@5"] == 0.75
    # MRR over the top 20: (1 + 1/3 + 1/12 + 0) / 4; MRR@10 drops the rank-12 hit
    assert o["mrr"] == pytest.approx((1 + 1 / 3 + 1 / 12) / 4)
    assert o["mrr@10"] == pytest.approx((1 + 1 / 3) / 4)
    assert o["false_weak"] == 0.25
    assert s["by_kind"]["symbol"]["mrr"] == pytest.approx((1 + 1 / 3) / 2)
    assert s["by_kind"]["prose"]["recall@10"] == 0.0
    assert s["negative"] == {"n": 2, "abstain": 0.5}
    assert s["curve"]["recall"][:3] == [0.25, 0.25, 0.5] and s["curve"]["recall"][11] == 0.75
    assert list(s["by_kind"]) == ["symbol", "prose"]


def test_rates_are_none_without_a_weak_signal():
    outs = [metrics.Outcome("s", "symbol", False, 1, 1, 1, None, None, ()),
            metrics.Outcome("n", "negative", True, None, None, None, None, None, ())]
    s = metrics.summarize(outs, (5,))
    assert s["overall"]["false_weak"] is None and s["negative"]["abstain"] is None


ranks = st.one_of(st.none(), st.integers(1, 30))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(ranks, ranks), min_size=1, max_size=30), st.integers(1, 20))
def test_metrics_match_brute_force_definitions(pairs, k):
    outs = [metrics.Outcome(str(i), "prose", False, a, b, a, None, None, ()) for i, (a, b) in enumerate(pairs)]
    s = metrics.summarize(outs, (k,))["overall"]
    n = len(pairs)
    assert s[f"recall@{k}"] == pytest.approx(sum(1 for a, _ in pairs if a is not None and a <= k) / n)
    assert s[f"whole@{k}"] == pytest.approx(sum(1 for _, b in pairs if b is not None and b <= k) / n)
    assert s["mrr"] == pytest.approx(sum(1 / a for a, _ in pairs if a is not None and a <= 20) / n)
    c = metrics.curve(outs)
    assert len(c) == 20 and all(x <= y for x, y in pairwise(c))
    assert c[k - 1] == pytest.approx(s[f"recall@{k}"])


# -- calibration --------------------------------------------------------------------------

def test_calibrate_separable_picks_the_middle_of_the_gap():
    c = calibrate([0.6, 0.7, 0.8], [0.2, 0.3, 0.4])
    assert c.threshold == pytest.approx(0.5)
    assert (c.abstain, c.false_weak, c.balanced_accuracy) == (1.0, 0.0, 1.0)
    assert c.gap == (0.4, 0.6)


def test_calibrate_overlapping_by_hand():
    pos = [0.30, 0.50, 0.60, 0.70]
    neg = [0.20, 0.40, 0.55]
    # t in (0.40, 0.50]: abstain 2/3, false-weak 1/4 -> BA 0.708; t in (0.55, 0.60]: abstain 1,
    # false-weak 2/4 -> BA 0.75; t in (0.20, 0.30]: 1/3, 0 -> 0.667. Best: (0.55, 0.60) -> 0.575
    c = calibrate(pos, neg)
    assert c.threshold == pytest.approx(0.575)
    assert c.balanced_accuracy == pytest.approx(0.75)
    assert rates(pos, neg, c.threshold) == (1.0, 0.5)


scores = st.integers(-1000, 1000).map(lambda i: i / 1000)


@settings(max_examples=150, deadline=None)
@given(st.lists(scores, min_size=1, max_size=15), st.lists(scores, min_size=1, max_size=15))
def test_calibrate_is_optimal_over_all_observed_cuts(pos, neg):
    c = calibrate(pos, neg)
    cuts = sorted(set(pos) | set(neg))
    candidates = [x + 1e-9 for x in cuts] + [cuts[0] - 1]
    best = max((a + 1 - f) / 2 for a, f in (rates(pos, neg, t) for t in candidates))
    assert c.balanced_accuracy >= best - 1e-12 or len(cuts) == 1


def test_sensitivity_rows():
    rows = sensitivity([0.6], [0.4], [0.3, 0.5, 0.7])
    assert [(r["abstain"], r["false_weak"]) for r in rows] == [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0)]


# -- variants -----------------------------------------------------------------------------

def test_variant_names():
    v = parse_variant("hybrid-ast+rrf20")
    assert v.mode == "hybrid" and v.spec.chunker == "ast" and dict(v.settings) == {"fusion": "rrf", "rrf_k": 20}
    w = parse_variant("hybrid-window-enriched+w0.7+depth80+frag")
    assert w.spec.enrich and dict(w.settings) == {"fusion": "weighted", "dense_weight": 0.7}
    assert dict(w.options) == {"depth": 80, "merge": False}
    base = parse_variant("bm25-window")
    assert base.spec.plain and not base.calibrated
    assert dict(base.options) == PLAIN_OPTIONS  # the query as typed, no prior, no ranking stack
    assert dict(parse_variant("hybrid-ast+sat1+coh0+path0.3+decl0+rare+noforms+nochg").options) == {
        "saturation": 1.0, "coherence": 0.0, "path_weight": 0.3, "decl_weight": 0.0, "rare_exempt": True,
        "forms": False, "strip_change": False}
    assert not parse_variant("dense-window").spec.plain
    lines = parse_variant("hybrid-lines")
    assert lines.spec.plain and lines.spec.dense and lines.calibrated and lines.spec.key == "plain-baseline"
    assert parse_variant("bm25-lines").spec == base.spec  # BM25 over plain windows needs no vectors
    lev = parse_variant("hybrid-ast+norole+def0.5+kind+symb1+noise+chg+expand+rw0.6+t0.3+wk0.2")
    assert dict(lev.options) == {"role_prior": False, "def_weight": 0.5, "kind_prior": True, "symbol_bonus": 1.0,
                                 "strip_noise": True, "strip_change": True, "expand": True, "weak_dense_weight": 0.2}
    assert dict(lev.settings) == {"fusion": "rrf", "dense_weight": 0.6, "weak_threshold": 0.3}
    with pytest.raises(ConfigError, match="unknown option"):
        parse_variant("hybrid-ast+file1")  # a lever measured and dropped (bench/results/rank-ablation.md)
    assert dict(parse_variant("hybrid-ast+symhard").options) == {"symbol_bonus": None}


def test_variant_lists_and_axes():
    assert [v.name for v in parse_variants(None)] == list(DEFAULT_VARIANTS)
    assert [v.name for v in parse_variants("plain,enriched")] == ["hybrid-ast", "hybrid-ast-enriched"]
    assert [v.name for v in parse_variants("dense,bm25,window")] == ["dense-window", "bm25-window"]
    vs = parse_variants("hybrid-ast,default")
    assert vs[0].name == "hybrid-ast" and len(vs) == len(DEFAULT_VARIANTS)
    assert len(specs_of(parse_variants("default"))) == 3  # baseline, window, ast


@pytest.mark.parametrize("bad", ["hybrid-ast-x", "fuzzy-ast", "hybrid-ast+zz", "hybrid-ast+w1.5", "ast-hybrid"])
def test_bad_variant_names_are_config_errors(bad):
    with pytest.raises(ConfigError):
        parse_variants(bad)
