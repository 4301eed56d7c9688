"""The weak-evidence score (codeseam.evidence) and its calibration, on real Milvus Lite with the
fake embedder, and against brute-force references."""

from __future__ import annotations

import math
import subprocess
from itertools import pairwise

import pytest
from hypothesis import given, strategies as st

from codeseam import api
from codeseam.query import evidence
from codeseam.eval.calibrate import between, calibrate_abstain, calibrate_budget, calibrate_unseen, rates
from codeseam.settings import load_settings
from tests.support.fixtures import RETRY_PY


def test_query_words_are_bm25_tokens_without_stop_words():
    assert evidence.query_words("Fix `getUserById` for HTTP/2 in parse_json (v2)", {"fix", "for", "in"}) == \
        ["getuserbyid", "http", "parse", "json", "v2"]


def test_score_parts():
    assert evidence.rarest_count({}) == evidence.RARE_CAP
    assert evidence.rarest_count({"a": 3, "b": 0, "c": 50}) == 0
    assert evidence.evidence_score(None, 0.2, 0) is None
    s = evidence.evidence_score(0.5, 0.2, 3)
    assert s == pytest.approx(0.3 + evidence.LEXICAL_WEIGHT * math.log1p(3))
    assert evidence.evidence_score(0.5, 0.2, 100) == evidence.evidence_score(0.5, 0.2, evidence.RARE_CAP)
    assert evidence.null_level([0.1, 0.5, 0.2]) == 0.2 and evidence.null_level([]) == 0.0


def test_coverage_meets_word_forms_and_identifier_parts():
    text = "def compute_retry_delay(parseHeader):\n    return backoff"
    assert evidence.coverage(["retries", "headers", "delays", "zeppelin"], [text]) == 0.75
    assert evidence.coverage(["parse", "compute"], ["x", text]) == 1.0  # any of the texts
    assert evidence.coverage([], [text]) == 0.0 and evidence.coverage(["retry"], []) == 0.0
    table = {"x": {"en": 0.1, "coverage": 0.3}, "y": {"en": 0.1}}
    assert evidence.covered_score(0.4, ["retries", "zeppelin"], [text], "x", table) == pytest.approx(0.4 + 0.15)
    assert evidence.covered_score(0.4, ["retries"], [text], "y", table) == 0.4  # calibrated without the term
    assert evidence.covered_score(None, ["retries"], [text], "x", table) is None


def test_agreement_of_the_two_candidate_lists():
    a = ["x.py", "x.py", "y.py", "z.py", "u.py", "v.py", "w.py"]
    assert evidence.agreement(a, ["x.py", "q.py"]) == 1.0  # the same first file
    assert evidence.agreement(a, ["q.py", "x.py"]) == 0.5  # dense's first among BM25's first 5, not the other way
    assert evidence.agreement(a, ["w.py", "q.py"]) == 0.0  # w.py is dense's 6th file: past AGREE_TOP
    assert evidence.agreement(a, ["w.py"], top=6) == 0.5
    assert evidence.agreement(a, []) == 0.5 and evidence.agreement([], a) == 0.5  # one list only: no opinion
    table = {"x": {"en": 0.1, "coverage": 0.3, "agreement": 0.1}, "y": {"en": 0.1}}
    assert evidence.covered_score(0.4, [], [], "x", table, agree=1.0) == pytest.approx(0.5)
    assert evidence.covered_score(0.4, [], [], "y", table, agree=1.0) == 0.4  # calibrated without it
    assert evidence.covered_score(None, [], [], "x", table, agree=1.0) is None


_word = st.text("abcdefgh", min_size=2, max_size=8)


@given(st.lists(_word, max_size=6), st.lists(st.text("abcdefgh _ABC", max_size=40), max_size=4), st.text("abcd_XY "))
def test_coverage_is_a_share_that_more_text_never_lowers(words, texts, more):
    c = evidence.coverage(words, texts)
    assert 0.0 <= c <= 1.0
    assert evidence.coverage(words, [*texts, more]) >= c
    assert evidence.coverage(words, [*texts, " ".join(words)]) == (1.0 if words else 0.0)  # the words themselves


@given(st.lists(st.floats(-1, 1), min_size=1, max_size=30), st.lists(st.floats(-1, 1), min_size=1, max_size=15),
       st.floats(0, 0.5))
def test_budget_threshold_is_the_best_within_budget(pos, neg, budget):
    c = calibrate_budget(pos, neg, budget)
    a, f = rates(pos, neg, c.threshold)
    assert (a, f) == (c.abstain, c.false_weak)
    values = sorted(set(pos) | set(neg))
    feasible = [rates(pos, neg, between(lo, hi)) for lo, hi in pairwise(values)]
    feasible = [x for x in feasible if x[1] <= budget]
    if feasible:
        assert f <= budget and a == max(x[0] for x in feasible)


@given(st.lists(st.floats(-1, 1), min_size=1, max_size=30), st.lists(st.floats(-1, 1), min_size=1, max_size=15),
       st.floats(0, 1))
def test_abstain_threshold_is_the_lowest_that_reaches_the_share(pos, neg, share):
    """Brute force over every gap: the chosen threshold flags at least ``share`` of the
    negatives when any threshold can, and no lower gap does."""
    c = calibrate_abstain(pos, neg, share)
    assert rates(pos, neg, c.threshold) == (c.abstain, c.false_weak)
    values = sorted(set(pos) | set(neg))
    gaps = [between(lo, hi) for lo, hi in pairwise(values)]
    reaching = [t for t in gaps if rates(pos, neg, t)[0] >= share]
    if reaching:
        assert c.abstain >= share and c.threshold == min(reaching)


@given(st.lists(st.floats(-1, 1), min_size=1, max_size=30),
       st.lists(st.floats(-1, 1), min_size=1, max_size=40, unique=True), st.floats(0.05, 0.95))
def test_unseen_threshold_flags_the_fewest_negatives_that_promise_the_share(pos, neg, target):
    """k flagged of n distinct negatives: the least k with k / (n + 1) >= target (all n when
    even that falls short), at the lowest threshold that flags k."""
    c = calibrate_unseen(pos, neg, target)
    n, k = len(neg), round(c.abstain * len(neg))
    assert k / (n + 1) >= target or k == n
    assert (k - 1) / (n + 1) < target
    assert c == calibrate_abstain(pos, neg, k / n)


def test_adjacent_scores_still_have_a_threshold_between_them():
    """Two negatives one float apart: the middle of their gap rounds down to the lower one, so
    it would flag neither; ``between`` gives the upper one, which flags the lower alone (found
    by hypothesis in CI: target 0.25 of 2 negatives flagged both)."""
    lo, hi = -1.0, -0.9999999999999999
    assert (lo + hi) / 2 == lo and between(lo, hi) == hi
    assert calibrate_unseen([0.0], [lo, hi], 0.25).abstain == 0.5
    assert between(0.0, 1.0) == 0.5


def test_unseen_threshold_keeps_its_promise_on_new_negatives():
    """The oracle: negatives drawn from one distribution, the threshold calibrated on 37 of
    them; over many draws, the share of *new* negatives it flags is at least the target (the
    plain rule, ``calibrate_abstain``, flags 0.798 here: its threshold sits between the 30th
    and 31st of 37)."""
    import random

    rng = random.Random(7)
    pos = [rng.gauss(1.0, 0.3) for _ in range(200)]
    unseen, plain = [], []
    for _ in range(3000):
        neg = [rng.gauss(0.0, 0.3) for _ in range(37)]
        new = [rng.gauss(0.0, 0.3) for _ in range(40)]
        for rule, out in ((calibrate_unseen, unseen), (calibrate_abstain, plain)):
            t = rule(pos, neg, 0.8).threshold
            out.append(sum(s < t for s in new) / len(new))
    assert sum(unseen) / len(unseen) >= 0.8
    assert sum(plain) / len(plain) < sum(unseen) / len(unseen)


@pytest.fixture
def indexed(isolated_env):
    root = isolated_env / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "retry.py").write_text(RETRY_PY)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    s = load_settings({"embedding_backend": "fake"})
    api.index(root, settings=s)
    return root, s


def test_the_null_similarity_is_recorded_and_used(indexed):
    root, s = indexed
    with api.Index(s) as ix:
        record = ix.store.repo_records()["proj"]
        null = record["null_similarity"]
        assert null["embedder"] == ix.embedder.id
        assert null["value"] == pytest.approx(evidence.measure_null(ix.store, ix.embedder, ["proj"]), abs=1e-6)
        assert evidence.null_for(ix.store, ix.embedder, ["proj"]) == pytest.approx(null["value"])
        assert ix.store.null_cache == {}  # read from the record, nothing measured
        counts = ix.store.term_counts(["retry", "zeppelin", "delay"], ["proj"], cap=8)
        assert counts["zeppelin"] == 0 and counts["retry"] >= 1
        result = ix.search("compute_retry_delay jitter")
        want = evidence.evidence_score(result.best_similarity, null["value"],
                                       evidence.rarest_count(ix.store.term_counts(["compute", "retry", "delay",
                                                                                   "jitter"], ["proj"])))
        assert result.evidence == pytest.approx(want)


def test_a_record_without_it_is_measured_once_and_cached(indexed):
    root, s = indexed
    with api.Index(s) as ix:
        rec = dict(ix.store.repo_records()["proj"])
        rec.pop("null_similarity")
        ix.store.put_repo_record("proj", rec)
        value = evidence.null_for(ix.store, ix.embedder, ["proj"])
        assert ix.store.null_cache == {(ix.embedder.id, "proj"): value}
        assert evidence.null_for(ix.store, ix.embedder, []) == value  # all repos: the same one


def test_the_coverage_term_counts_with_the_weight_the_embedder_was_calibrated_with(indexed, monkeypatch):
    """The evidence of a calibrated embedder adds ``coverage_weight * coverage`` of the query's
    words in the first results; fusion and the hits do not move (they read the score without it)."""
    root, s = indexed
    q = "compute the retry delay with jitter"
    plain = api.search(q, settings=s)
    monkeypatch.setitem(evidence.WEAK_THRESHOLDS, "fake:64", {"en": 0.0, "other": 0.0, "coverage": 0.5})
    with api.Index(s) as ix:
        assert ix.embedder.id == "fake:64"
    covered = api.search(q, settings=s)
    words = evidence.query_words(q, evidence_stop())
    share = evidence.coverage(words, [h.path + "\n" + h.text for h in covered.hits[:evidence.COVERAGE_TOP]])
    assert share > 0
    assert covered.evidence == pytest.approx(plain.evidence + 0.5 * share)
    assert [(h.path, h.start_line) for h in covered.hits] == [(h.path, h.start_line) for h in plain.hits]
    flagged = api.search(q, settings=s.replace(weak_threshold=plain.evidence + 0.5 * share + 0.01))
    passed = api.search(q, settings=s.replace(weak_threshold=plain.evidence + 0.01))
    assert flagged.weak and not passed.weak  # the term decides, where it is the difference


def test_the_agreement_term_reads_the_two_candidate_lists_and_moves_no_hit(indexed, monkeypatch):
    """A calibrated embedder's evidence adds ``agreement_weight * agreement`` of the dense and BM25
    candidates (as the store returns them for this query); the hits stay where they were."""
    from codeseam.query.analysis import bm25_query, strip_noise, with_forms
    from codeseam.query.retrieve import DEPTH
    from codeseam.store import Filters

    root, s = indexed
    q = "compute the retry delay with jitter"
    plain = api.search(q, settings=s)
    monkeypatch.setitem(evidence.WEAK_THRESHOLDS, "fake:64", {"en": 0.0, "other": 0.0, "agreement": 0.5})
    agreed = api.search(q, settings=s)
    with api.Index(s) as ix:
        filters = Filters(repos=("proj",))
        dense = ix.store.dense_search(ix.embedder.embed_query(q), DEPTH, filters)
        sparse = ix.store.bm25_search(with_forms(bm25_query(strip_noise(q, frozenset({"proj"})))), DEPTH, filters)
    want = evidence.agreement((c.path for c in dense), (c.path for c in sparse))
    assert dense and sparse and want == 1.0  # both lists: an opinion (0.5 is the no-opinion value)
    assert agreed.evidence == pytest.approx(plain.evidence + 0.5 * want)
    assert [(h.path, h.start_line) for h in agreed.hits] == [(h.path, h.start_line) for h in plain.hits]


def evidence_stop():
    from codeseam.query.analysis import NOISE_WORDS
    from codeseam.query.rank import CHANGE_WORDS

    return NOISE_WORDS | CHANGE_WORDS


def test_weak_follows_the_threshold_on_the_evidence(indexed):
    root, s = indexed
    strong = api.search("compute_retry_delay", settings=s)
    weak = api.search("compute_retry_delay", settings=s.replace(weak_threshold=strong.evidence + 0.01))
    assert not strong.weak and weak.weak and weak.evidence == pytest.approx(strong.evidence)


def test_the_weak_threshold_follows_the_query_language_and_fusion_does_not():
    """The abstain threshold is per embedder and language group; the one fusion reads is the
    embedder's own, whatever the language; a threshold in the settings decides both."""
    from codeseam.query.evidence import FAR_THRESHOLDS, WEAK_THRESHOLDS, far_threshold, weak_threshold
    from codeseam.settings import Settings

    s = Settings()
    eid = "bundled:all-MiniLM-L6-v2"
    assert weak_threshold(s, eid, "en") == WEAK_THRESHOLDS[eid]["en"]
    assert weak_threshold(s, eid, "tr") == weak_threshold(s, eid, "de") == WEAK_THRESHOLDS[eid]["other"]
    assert weak_threshold(s, eid, "tr") < weak_threshold(s, eid, "en")
    assert far_threshold(s, eid) == FAR_THRESHOLDS[eid]
    assert weak_threshold(s, "fake:64") == far_threshold(s, "fake:64") == float("-inf")  # nobody calibrated it
    fixed = Settings(weak_threshold=0.3)
    assert weak_threshold(fixed, eid, "tr") == weak_threshold(fixed, eid, "en") == far_threshold(fixed, eid) == 0.3
