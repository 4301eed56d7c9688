"""A golden suite (one set per repository, each over its whole corpus): `run_suite`, the
per-repository tables and `codeseam eval FOLDER`. Real Milvus Lite, real tree-sitter, the
fake embedder; the oracle is each set run alone with `run_eval`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from codeseam.eval import metrics
from codeseam.eval.runner import run_eval
from codeseam.eval.suite import group, per_repo_rows, run_suite, suite_json, write_suite_report
from codeseam.errors import ConfigError
from codeseam.settings import load_settings

FIX = Path(__file__).parent / "fixtures" / "eval"
VARIANTS = "bm25-ast,hybrid-ast,bm25-window,hybrid-lines"
BETA_PY = '''"""Time helpers."""


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
BETA_TEST = "from clock import parse_duration\n\n\ndef test_parse_duration():\n    assert parse_duration('1h') == 3600\n"


@pytest.fixture(scope="module")
def suite_dirs(tmp_path_factory):
    base = tmp_path_factory.mktemp("suite")
    golden, corpora = base / "golden", base / "corpora"
    golden.mkdir()
    shutil.copytree(FIX / "repo", corpora / "alpha")
    lines = [json.loads(x) for x in (FIX / "golden.jsonl").read_text().splitlines() if x.strip()]
    (golden / "alpha.jsonl").write_text("".join(json.dumps({**r, "repo": "alpha", "id": "alpha-" + r["id"]}) + "\n"
                                                for r in lines))
    (corpora / "beta" / "tests").mkdir(parents=True)
    (corpora / "beta" / "clock.py").write_text(BETA_PY)
    (corpora / "beta" / "tests" / "test_clock.py").write_text(BETA_TEST)
    beta = [
        {"id": "beta-c01", "repo": "beta", "query": "parse duration strings into seconds", "kind": "commit",
         "gold": [{"path": "clock.py", "symbol": "parse_duration", "start": 4, "end": 14}]},
        {"id": "beta-c02", "repo": "beta", "query": "format_duration drops the seconds", "kind": "commit",
         "gold": [{"path": "clock.py", "symbol": "format_duration", "start": 17, "end": 20}]},
        {"id": "beta-n1", "repo": "beta", "query": "render a gantt chart", "kind": "negative", "gold": []},
    ]
    (golden / "beta.jsonl").write_text("".join(json.dumps(r) + "\n" for r in beta))
    (golden / "notes.txt").write_text("not a set\n")
    return base, golden, corpora


@pytest.fixture(scope="module")
def settings(suite_dirs):
    return load_settings({"data_dir": str(suite_dirs[0] / "data"), "embedding_backend": "fake",
                          "weak_threshold": 0.15}, env={})


@pytest.fixture(scope="module")
def suite(suite_dirs, settings):
    base, golden, corpora = suite_dirs
    return run_suite(golden, corpora, variants=VARIANTS, settings=settings, cache_dir=base / "cache", ks=(1, 5))


def test_pooled_equals_each_set_run_alone(suite, suite_dirs, settings):
    base, golden, corpora = suite_dirs
    assert suite.repos == ["alpha", "beta"]
    alone = {repo: run_eval(golden / f"{repo}.jsonl", corpora / repo, variants=VARIANTS, settings=settings,
                            cache_dir=base / f"alone-{repo}", corpus="all", ks=(1, 5)) for repo in suite.repos}
    pooled = suite.pooled
    assert [q.id for q in pooled.queries] == [q.id for r in alone.values() for q in r.queries]
    for i, vr in enumerate(pooled.results):
        assert vr.skipped is None
        expected = [o for r in alone.values() for o in r.results[i].outcomes]
        assert [(o.id, o.rank, o.whole_rank, o.results) for o in vr.outcomes] == \
            [(o.id, o.rank, o.whole_rank, o.results) for o in expected]


def test_whole_corpus_is_indexed_with_roles(suite):
    beta = suite.per_repo["beta"]
    assert beta.corpus == "all"
    hits = {h[0] for vr in beta.results for o in vr.outcomes for h in o.results}
    assert "tests/test_clock.py" in hits  # the corpus is the whole tree, tests included


def test_per_repo_rows_match_metrics(suite):
    head, rows, data = per_repo_rows(suite)
    assert head[:4] == ["variant", "alpha MRR@10", "alpha R@5", "alpha whole@5"]
    assert [r[0] for r in rows] == VARIANTS.split(",")
    for i, vr in enumerate(suite.pooled.results):
        for repo in suite.repos:
            outs = suite.per_repo[repo].results[i].outcomes
            kind = "commit"  # the pooled set has commit queries: the headline is on them
            g = metrics.group_metrics([o for o in outs if o.kind == kind], (1, 5, 10))
            assert data[vr.name][repo]["mrr@10"] == g["mrr@10"]
        assert data[vr.name]["all"] == {**{c: group(vr.outcomes, "commit", (1, 5, 10))[c]
                                            for c in ("mrr@10", "recall@5", "whole@5")}, "n": 2}


def test_plain_hybrid_baseline_has_a_dense_signal(suite):
    vr = next(r for r in suite.pooled.results if r.name == "hybrid-lines")
    assert vr.variant.calibrated and all(o.weak is not None for o in vr.outcomes)
    bm = next(r for r in suite.pooled.results if r.name == "bm25-window")
    assert all(o.weak is None for o in bm.outcomes)


def test_suite_report_keeps_every_query(suite, settings, suite_dirs):
    out = suite_dirs[0] / "report"
    paths = write_suite_report(suite, out, settings=settings)
    assert sorted(p.name for p in paths) == ["eval-kinds.png", "eval-recall.png", "eval.json", "eval.md"]
    data = json.loads((out / "eval.json").read_text())
    assert data["repos"] == ["alpha", "beta"] and data["headline_kind"] == "commit"
    ids = [q["id"] for q in data["variants"]["hybrid-ast"]["queries"]]
    assert ids == [q.id for q in suite.pooled.queries]
    md = (out / "eval.md").read_text()
    assert "## Per repository" in md and "| beta | hybrid-lines |" in md and "| all | bm25-ast |" in md
    assert suite_json(suite)["per_repo"]["bm25-ast"]["beta"]["n"] == 2


def test_suite_errors(suite_dirs, settings, tmp_path):
    base, golden, corpora = suite_dirs
    with pytest.raises(ConfigError, match="no corpus folder"):
        run_suite(golden, tmp_path, settings=settings, cache_dir=tmp_path / "c")
    with pytest.raises(ConfigError, match="holds no"):
        run_suite(tmp_path, corpora, settings=settings, cache_dir=tmp_path / "c")
    with pytest.raises(ConfigError, match="for repo 'gamma'"):
        run_suite(golden, corpora, settings=settings, cache_dir=tmp_path / "c", repos=["gamma"])


def test_cli_eval_suite(suite_dirs, monkeypatch, capsys):
    from codeseam.surfaces.cli import main

    base, golden, corpora = suite_dirs
    monkeypatch.setenv("RAG_CONFIG", str(base / "none.toml"))
    (base / "none.toml").write_text("")
    monkeypatch.setenv("RAG_DATA_DIR", str(base / "data"))
    monkeypatch.setenv("RAG_EMBEDDING_BACKEND", "fake")
    out = base / "cli-out"
    try:
        main(["eval", str(golden), "--root", str(corpora), "--variants", "bm25-ast", "--repos", "beta",
              "--out", str(out), "--cache-dir", str(base / "cli-cache")])
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "| beta | bm25-ast | 2 |" in captured.out and "| all | bm25-ast | 2 |" in captured.out
    assert json.loads((out / "eval.json").read_text())["repos"] == ["beta"]
