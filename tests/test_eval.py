"""`codeseam eval` end to end on a tiny golden set over a fixture repo (tests/fixtures/eval):
real Milvus Lite, real tree-sitter, the fake embedder. BM25 metrics are asserted against
values worked out by hand (tests/fixtures/eval/README.md says why each query lands where
it does); the dense and hybrid numbers against the per-query ranks the run reports."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from codeseam.eval import metrics
from codeseam.eval.report import calibration, markdown, result_json, write_report
from codeseam.eval.runner import run_eval
from codeseam.settings import load_settings

FIX = Path(__file__).parent / "fixtures" / "eval"
GOLDEN = FIX / "golden.jsonl"
ROOT = FIX / "repo"
THRESHOLD = 0.15


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("eval")


@pytest.fixture(scope="module")
def settings(workdir):
    return load_settings({"data_dir": str(workdir / "data"), "embedding_backend": "fake",
                          "weak_threshold": THRESHOLD}, env={})


@pytest.fixture(scope="module")
def result(settings, workdir):
    return run_eval(GOLDEN, ROOT, settings=settings, cache_dir=workdir / "cache", ks=(1, 5))


def by_name(res, name):
    return next(r for r in res.results if r.name == name)


def test_bm25_ast_metrics_by_hand(result):
    # AST chunks: polygon_area 1-12, circle_perimeter 13-22, Vector 23-34, slugify_title 1-17,
    # wrap_paragraph 18-29. First-overlap ranks: sym-1 1, sym-2 1, prose-1 1, prose-2 1 (13-22
    # overlaps 1-20 but does not contain it), prose-3 none (other file), prose-4 none (same
    # file, other function).
    r = by_name(result, "bm25-ast")
    assert [(o.id, o.rank, o.whole_rank, o.file_rank) for o in r.outcomes] == [
        ("sym-1", 1, 1, 1), ("sym-2", 1, 1, 1), ("prose-1", 1, 1, 1), ("prose-2", 1, None, 1),
        ("prose-3", None, None, None), ("prose-4", None, None, 1), ("neg-1", None, None, None)]
    s = metrics.summarize(r.outcomes, (1, 5))
    o = s["overall"]
    assert o["recall@1"] == pytest.approx(4 / 6) and o["recall@5"] == pytest.approx(4 / 6)
    assert o["whole@1"] == pytest.approx(3 / 6) and o["file_recall@1"] == pytest.approx(5 / 6)
    assert o["mrr"] == pytest.approx(4 / 6)
    assert s["by_kind"]["symbol"]["mrr"] == 1.0
    assert s["by_kind"]["prose"]["recall@5"] == 0.5 and s["by_kind"]["prose"]["whole@5"] == 0.25
    assert r.outcomes[-1].results == ()  # no corpus word in the negative: BM25 returns nothing


def test_plain_bm25_window_baseline_by_hand(result):
    # each fixture file is under 2000 bytes: one window per file (lines 1-34 and 1-29), so a
    # query finds the whole file its words are in: every query but prose-3 at rank 1, whole.
    r = by_name(result, "bm25-window")
    assert [(o.rank, o.whole_rank) for o in r.outcomes] == [(1, 1)] * 4 + [(None, None), (1, 1), (None, None)]
    assert {h for o in r.outcomes for h in o.results} <= {("geometry.py", 1, 34), ("pkg/textutil.py", 1, 29)}
    s = metrics.summarize(r.outcomes, (1, 5))
    assert s["overall"]["mrr"] == pytest.approx(5 / 6) and s["overall"]["whole@1"] == pytest.approx(5 / 6)
    # no dense signal: no weak flag, so no abstain / false-weak rate
    assert s["negative"]["abstain"] is None and s["overall"]["false_weak"] is None
    assert result.indexes["bm25-baseline"]["chunks"] == 2


def test_every_variant_agrees_with_its_reported_hits(result):
    """Oracle: recompute each query's ranks from the hits the run returned."""
    gold = {q.id: q for q in result.queries}
    for r in result.results:
        assert r.skipped is None
        for o in r.outcomes:
            again = metrics.outcome(gold[o.id], o.results, o.weak, o.best_similarity, o.evidence)
            assert again == o
            assert len(o.results) <= metrics.CURVE_K
            if r.variant.calibrated:
                assert o.evidence is not None and o.weak == (o.evidence < THRESHOLD)


def test_dense_and_hybrid_find_the_symbols(result):
    for name in ("dense-ast", "hybrid-ast", "hybrid-window"):
        r = by_name(result, name)
        ranks = {o.id: o.rank for o in r.outcomes}
        assert ranks["sym-1"] is not None and ranks["sym-2"] is not None


def test_rerun_reuses_the_index_and_gives_the_same_report(result, settings, workdir):
    again = run_eval(GOLDEN, ROOT, settings=settings, cache_dir=workdir / "cache", ks=(1, 5))
    for spec, rep in again.run["index_report"].items():
        assert rep["embedded"] == 0, spec
    assert result_json(again, settings=settings) == result_json(result, settings=settings)
    assert markdown(again) == markdown(result)


def test_a_rebuilt_index_takes_its_vectors_from_the_vector_cache(result, settings, workdir):
    import shutil

    shutil.copytree(workdir / "cache", workdir / "cache-copy", ignore=shutil.ignore_patterns("eval.db*", ".eval.db*"))
    again = run_eval(GOLDEN, ROOT, settings=settings, cache_dir=workdir / "cache-copy", ks=(1, 5),
                     variants="hybrid-ast")
    report = again.run["index_report"]["ast"]
    assert report["embedded"] == 5 and report["vector_cache"] == {"hits": 5, "misses": 0}
    assert [o.results for o in again.results[0].outcomes] == [o.results for o in by_name(result, "hybrid-ast").outcomes]


def test_corpus_is_exactly_the_gold_files(result, workdir):
    corpus = workdir / "cache" / "corpus"
    files = sorted(p.relative_to(corpus).as_posix() for p in corpus.rglob("*") if p.is_file())
    assert files == ["geometry.py", "pkg/textutil.py"]
    assert (ROOT / "geometry.py").read_bytes() == (corpus / "geometry.py").read_bytes()
    assert not any(p.name.endswith(".db") for p in (workdir / "data").rglob("*"))  # user index untouched


def test_report_files(result, settings, workdir):
    paths = write_report(result, workdir / "out", settings=settings)
    names = sorted(p.name for p in paths)
    assert names == ["eval-kinds.png", "eval-recall.png", "eval.json", "eval.md"]
    data = json.loads((workdir / "out" / "eval.json").read_text())
    q = data["variants"]["bm25-ast"]["queries"][3]
    assert q == {"id": "prose-2", "kind": "prose", "rank": 1, "whole_rank": None, "file_rank": 1,
                 "weak": q["weak"], "best_similarity": q["best_similarity"], "evidence": q["evidence"],
                 "hits": q["hits"]}
    assert q["hits"][0] == "geometry.py:13-22"
    md = (workdir / "out" / "eval.md").read_text()
    assert "| bm25-ast | 0.667 | 0.667 | 0.500 | 0.500 |" in md
    for p in paths:
        if p.suffix == ".png":
            assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_calibration_section(result):
    data, md = calibration(result, "hybrid-ast")
    pos, neg = metrics.similarity_split(by_name(result, "hybrid-ast").outcomes)
    assert data["n_pos"] == len(pos) == 6 and data["n_neg"] == len(neg) == 1
    assert data["abstain"] == (sum(s < data["threshold"] for s in neg) / len(neg))
    assert "balanced accuracy" in md


def test_enriched_variant_without_llm_is_skipped_cleanly(settings, workdir):
    s = settings.replace(llm_model="")
    res = run_eval(GOLDEN, ROOT, settings=s, cache_dir=workdir / "cache", variants="plain,enriched", ks=(5,))
    plain, enriched = res.results
    assert plain.skipped is None and plain.outcomes
    assert enriched.skipped and "LLM" in enriched.skipped and not enriched.outcomes
    assert "Skipped: `hybrid-ast-enriched`" in markdown(res)


def test_cli_eval(settings, workdir, monkeypatch, capsys):
    from codeseam.surfaces.cli import main

    monkeypatch.setenv("RAG_CONFIG", str(workdir / "none.toml"))
    (workdir / "none.toml").write_text("")
    monkeypatch.setenv("RAG_DATA_DIR", str(workdir / "data"))
    monkeypatch.setenv("RAG_EMBEDDING_BACKEND", "fake")
    out = workdir / "cli-out"
    assert run_cli(main, ["eval", str(GOLDEN), "--root", str(ROOT), "--k", "1,5", "--variants",
                          "bm25-ast,bm25-window", "--out", str(out), "--cache-dir", str(workdir / "cli-cache")]) == 0
    captured = capsys.readouterr()
    assert "| bm25-ast | 0.667 |" in captured.out
    assert (out / "eval.json").exists() and (out / "eval-recall.png").exists()
    assert run_cli(main, ["eval", str(GOLDEN), "--root", str(ROOT), "--variants", "hybrid-ast+bogus",
                          "--cache-dir", str(workdir / "cli-cache")]) == 1
    assert "unknown option +bogus" in capsys.readouterr().err


def run_cli(main, args) -> int:
    try:
        main(args)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0
