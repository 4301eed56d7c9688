"""The semble benchmark's format and metric in `codeseam eval`: the annotation loader, NDCG@10
checked against a brute-force reference of the benchmark's own rule, the report beside
published rows, and the eval's store memo (same results with and without it). Real Milvus
Lite, real tree-sitter, the fake embedder."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, strategies as st

from codeseam.errors import ConfigError
from codeseam.eval import metrics, semble
from codeseam.eval.golden import WHOLE_FILE_END, GoldSpan, load_golden
from codeseam.eval.suite import run_suite, suite_sets
from codeseam.settings import load_settings

CLOCK_PY = '''"""Time helpers."""


def parse_duration(text):
    """Parse '1h30m' into seconds."""
    total, num = 0, ""
    for ch in text:
        if ch.isdigit():
            num += ch
        else:
            total += int(num) * {"h": 3600, "m": 60, "s": 1}[ch]
            num = ""
    return total


def format_duration(seconds):
    """Seconds as '1h30m'."""
    h, rest = divmod(seconds, 3600)
    return f"{h}h{rest // 60}m"
'''
CALENDAR_PY = '''"""Calendar helpers."""


class Calendar:
    """Days of a month."""

    def days(self, year, month):
        return [d for d in range(1, 32)]


def is_leap(year):
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
'''


def _annotation(repo: str, tasks: list[dict]) -> dict:
    return {"repo": repo, "source": "test", "tasks": tasks}


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    base = tmp_path_factory.mktemp("semble")
    golden, corpora = base / "golden", base / "corpora"
    golden.mkdir()
    root = corpora / "timekit" / "src" / "timekit"  # the benchmark root is a subfolder
    root.mkdir(parents=True)
    (root / "clock.py").write_text(CLOCK_PY)
    (root / "calendar.py").write_text(CALENDAR_PY)
    tasks = [
        {"id": "timekit:0", "query": "parse a duration string into seconds", "category": "semantic",
         "relevant": [{"path": "clock.py", "start_line": None, "end_line": None}], "secondary": []},
        {"id": "timekit:1", "query": "Calendar", "category": "symbol",
         "relevant": [{"path": "src/timekit/calendar.py", "start_line": None, "end_line": None}],
         "secondary": [{"path": "src/timekit/clock.py", "start_line": 17, "end_line": 20}]},
        {"id": "timekit:2", "query": "how are leap years decided", "category": "architecture",
         "relevant": [{"path": "timekit/calendar.py", "start_line": 11, "end_line": 12}], "secondary": []},
    ]
    (golden / "timekit.json").write_text(json.dumps(_annotation("timekit", tasks)))
    (golden / "repos.json").write_text(json.dumps([{"name": "timekit"}]))
    published = {"systems": {"other": {"label": "x", "rows": {"timekit": {
        "ndcg10": 0.5, "by_category": {"semantic": 0.4, "symbol": 0.6, "architecture": 0.5}}}}}}
    (golden / "published.json").write_text(json.dumps(published))
    return golden, corpora


def test_the_loader_reads_targets_as_the_benchmark_does(bench):
    golden, _ = bench
    assert [p.name for p in suite_sets(golden)] == ["timekit.json"]  # published/repos are not sets
    qs = load_golden(golden / "timekit.json")
    assert [q.kind for q in qs] == ["semantic", "symbol", "architecture"]
    whole = qs[1].gold[0]
    assert whole.suffix and whole.whole_file and whole.end == WHOLE_FILE_END
    assert qs[1].gold[1] == GoldSpan("src/timekit/clock.py", "", 17, 20, suffix=True)
    # the path rule: either path ends with the other at a '/'
    assert metrics.same_file(("src/timekit/clock.py", 1, 3), qs[0].gold[0])
    assert not metrics.same_file(("src/timekit/xclock.py", 1, 3), qs[0].gold[0])
    assert metrics.same_file(("clock.py", 1, 3), GoldSpan("src/clock.py", "", 1, 9, suffix=True))
    assert not metrics.same_file(("clock.py", 1, 3), GoldSpan("src/clock.py", "", 1, 9))  # exact sets stay exact


def test_a_bad_annotation_is_a_config_error(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps({"repo": "x", "tasks": [{"query": "q", "relevant": []}]}))
    with pytest.raises(ConfigError, match="at least one relevant target"):
        load_golden(p)
    p.write_text(json.dumps({"repo": "x", "tasks": [{"query": "q", "relevant": [{"path": "a", "start_line": 5,
                                                                                  "end_line": 2}]}]}))
    with pytest.raises(ConfigError, match="start <= end"):
        load_golden(p)


def _reference_ndcg(results, targets, k=10):
    """The benchmark's own computation (benchmarks/metrics.py): per target its first matching
    rank; relevances[rank - 1] = 1 for each found rank <= k; DCG / ideal DCG of min(k, n)."""
    ranks = []
    for t in targets:
        for i, r in enumerate(results, 1):
            if metrics.overlaps(r, t):
                ranks.append(i)
                break
    rel = [0] * k
    for r in ranks:
        if 1 <= r <= k:
            rel[r - 1] = 1
    dcg = sum(x / math.log2(i + 2) for i, x in enumerate(rel))
    ideal = sum(1 / math.log2(i + 2) for i in range(min(k, len(targets))))
    return dcg / ideal


_paths = st.sampled_from(["a.py", "b.py", "src/c.py", "c.py"])
_results = st.lists(st.tuples(_paths, st.integers(1, 30)).map(lambda t: (t[0], t[1], t[1] + 5)), max_size=15)
_targets = st.lists(st.one_of(
    _paths.map(lambda p: GoldSpan(p, "", 1, WHOLE_FILE_END, suffix=True)),
    st.tuples(_paths, st.integers(1, 40)).map(lambda t: GoldSpan(t[0], "", t[1], t[1] + 2, suffix=True))),
    min_size=1, max_size=12)


@given(_results, _targets)
def test_ndcg_matches_the_benchmark_reference(results, targets):
    from codeseam.eval.golden import GoldQuery

    o = metrics.outcome(GoldQuery("q", "r", "q", "semantic", tuple(targets)), results, None, None)
    assert o.ndcg == pytest.approx(_reference_ndcg(results, targets))
    assert 0.0 <= o.ndcg <= 1.0


def test_suite_reports_ndcg_per_repo_and_category_beside_published(bench, tmp_path):
    golden, corpora = bench
    settings = load_settings({"embedding_backend": "fake", "data_dir": str(tmp_path / "d")}, env={})
    suite = run_suite(golden, corpora, variants="bm25-ast,hybrid-ast", settings=settings,
                      cache_dir=tmp_path / "cache")
    assert semble.is_semble_suite(suite)
    table = semble.variant_table(suite)
    outs = {vr.name: vr.outcomes for vr in suite.per_repo["timekit"].results}
    for name, per_repo in table.items():
        row = per_repo["timekit"]
        ndcgs = [o.ndcg for o in outs[name]]
        assert row["overall"] == pytest.approx(sum(ndcgs) / len(ndcgs))
        assert row["symbol"] == pytest.approx(outs[name][1].ndcg)
    md = semble.markdown(suite, title="t", golden_dir=golden)
    assert "other (published)" in md and "| timekit |" in md
    rows = {r["system"]: r for r in semble.summary_rows(table, semble.published_table(
        semble.load_published(golden), suite.repos), suite.repos)}
    assert rows["other"]["overall"] == 0.5 and rows["other"]["semantic"] == 0.4


def test_the_store_memo_changes_no_result(bench, tmp_path):
    """Every query through the memoised store and embedder equals the direct answer."""
    from codeseam import api
    from codeseam.eval.memo import MemoEmbedder, MemoStore
    from codeseam.query.retrieve import RetrieveOptions, retrieve
    from codeseam.store import Filters

    _, corpora = bench
    settings = load_settings({"embedding_backend": "fake", "data_dir": str(tmp_path / "d")}, env={})
    with api.Index(settings, create=True) as ix:
        ix.index(corpora / "timekit", repo_id="timekit")
        memo_store, memo_emb = MemoStore(ix.store), MemoEmbedder(ix.embedder)
        for q in ["parse a duration", "Calendar", "leap years", "Calendar"]:
            for mode in ("hybrid", "bm25", "dense"):
                for opts in (RetrieveOptions(), RetrieveOptions(expand=False, role_prior=False)):
                    direct = retrieve(ix.store, ix.embedder, settings, q, Filters(repos=("timekit",)), 10,
                                      mode=mode, options=opts)
                    memo = retrieve(memo_store, memo_emb, settings, q, Filters(repos=("timekit",)), 10,
                                    mode=mode, options=opts)
                    assert memo == direct
        assert memo_store.hits > memo_store.misses
