"""Searchable while indexing (issue 16): every written file is BM25-searchable before it is
embedded, the result says it is partial, dense hits join as the backfill proceeds, and a
killed first index resumes without embedding again what it stored. Real Milvus Lite, real
git repos and the real CLI (killed with SIGKILL); only the embedder is the fake."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codeseam import api
from codeseam.indexing.backfill import PAGE, plan_page
from codeseam.settings import load_settings
from tests.test_crash import big_file_text, clean_build, compare, git, index_run, inspect_api, run_env

WORD = "zanzibarquux"  # in one file only, so a BM25 hit on it comes from that file


def make_repo(root: Path) -> Path:
    """Two files of generated functions (more chunk rows than one backfill page) and a small
    file that holds WORD."""
    (root / "gen").mkdir(parents=True)
    (root / "gen" / "many.py").write_text(big_file_text())
    (root / "gen" / "more.py").write_text(big_file_text("_more"))
    (root / "word.py").write_text(f"def {WORD}_handler(request):\n    \"\"\"Handle a {WORD} request.\"\"\"\n"
                                  "    return request.body\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "tree")
    return root


def test_plan_page_embeds_each_unknown_hash_once():
    rows = [{"chunk_hash": h, "indexed_text": f"text {h}"} for h in ["a", "b", "a", "c", "b"]]
    assert plan_page(rows, {"b": [1.0]}) == [("a", "text a"), ("c", "text c")]
    assert plan_page(rows, {"a": [1.0], "b": [1.0], "c": [1.0]}) == []


def test_search_during_first_index_is_partial_then_complete(tmp_path: Path, isolated_env):
    root = make_repo(tmp_path / "proj")
    settings = load_settings({"embedding_backend": "fake"})
    seen: dict[str, object] = {}
    with api.open_index(settings, create=True) as ix:

        def progress(event: str, **fields) -> None:
            if event == "written":  # the last one before the backfill: nothing embedded yet
                seen["keyword"] = ix.search(WORD, k=3)
                seen["keyword-dense"] = ix.search(WORD, k=3, mode="dense")
            elif event == "embedded" and "first-page" not in seen:
                seen["first-page"] = ix.search(WORD, k=3)

        report = ix.index(root, progress=progress)
        done = ix.search(WORD, k=3)

    kw = seen["keyword"]
    assert kw.partial and kw.signals == ("bm25",)
    assert kw.hits and kw.hits[0].path == "word.py"
    assert kw.progress.repos == ("proj",) and kw.progress.chunks_embedded == 0
    assert kw.progress.files_indexed == kw.progress.files_total == 3
    assert kw.progress.chunks > 0
    dense_only = seen["keyword-dense"]
    assert dense_only.partial and dense_only.hits == () and dense_only.signals == ()

    page = seen["first-page"]  # one backfill page has its vectors: dense joins
    assert page.partial and set(page.signals) == {"bm25", "dense"}
    assert page.progress.chunks_embedded == PAGE < page.progress.chunks

    assert not done.partial and done.progress is None and set(done.signals) == {"bm25", "dense"}
    assert done.hits[0].path == "word.py"
    assert report.chunks_embedded == report.chunks_written == kw.progress.chunks > PAGE
    with api.open_index(settings) as ix:
        assert ix.store.dense_progress("proj")["embedded"] == report.chunks_written


def test_killed_first_index_resumes_without_embedding_again(tmp_path: Path):
    root = make_repo(tmp_path / "proj")
    data = tmp_path / "data"
    clean = clean_build(root, tmp_path / "clean", "proj")

    killed = index_run(root, data, faults="embed:2=kill")  # killed before the 2nd backfill page
    assert killed.killed, killed.stderr[-500:]
    settings = load_settings({"embedding_backend": "fake", "data_dir": str(data)},
                             env={"RAG_CONFIG": "/dev/null"})
    with api.open_index(settings) as ix:
        stored = ix.store.dense_progress("proj")
        partial = ix.search(WORD, k=3)
        pending = {r["chunk_hash"] for r in ix.store.pending_rows("proj", 16_000)}
    assert stored["files"] == 3 and stored["embedded"] == PAGE < stored["chunks"]
    assert partial.partial and partial.hits and partial.hits[0].path == "word.py"

    again = index_run(root, data)
    assert again.rc == 0, again.stderr[-2000:]
    report = json.loads(again.stdout)
    # the rows written before the kill are not written again, nor their vectors embedded again
    assert report["files_indexed"] == 0 and report["chunks_written"] == 0
    assert report["chunks_embedded"] == len(pending) == stored["chunks"] - stored["embedded"]
    assert compare(inspect_api(data, "proj"), clean) == {}
    with api.open_index(settings) as ix:
        assert ix.store.dense_progress("proj")["embedded"] == stored["chunks"]
        assert not ix.search(WORD, k=3).partial


@pytest.mark.parametrize("point", ["insert:4=killchild", "insert:5=kill"])
def test_a_backfill_stopped_by_a_dead_store_or_a_kill_is_repaired_exactly(tmp_path: Path, point: str):
    """Chunk-row upserts of this tree: 1-2 the big file's keyword rows, 3 the small file's,
    4 and 5 the two backfill pages. The Milvus Lite server killed before the first page's
    rewrite (the run fails with a store error), or the run killed before the second's: the
    next run leaves exactly a clean build, every row with its vector."""
    root = make_repo(tmp_path / "proj")
    data = tmp_path / "data"
    clean = clean_build(root, tmp_path / "clean", "proj")
    stopped = index_run(root, data, faults=point)
    assert stopped.rc != 0, stopped.stdout[-500:]
    again = index_run(root, data)
    assert again.rc == 0, again.stderr[-2000:]
    assert compare(inspect_api(data, "proj"), clean) == {}
    settings = load_settings({"embedding_backend": "fake", "data_dir": str(data)},
                             env={"RAG_CONFIG": run_env(data)["RAG_CONFIG"]})
    with api.open_index(settings) as ix:
        p = ix.store.dense_progress("proj")
        assert p["embedded"] == p["chunks"] > PAGE


def test_tiers_take_source_first_then_tests_docs_examples_then_the_rest():
    from codeseam.indexing.backfill import ROLE_ORDER, tiers
    from codeseam.records import ROLES

    got = tiers()
    assert [name for name, _ in got] == ["source", "test", "docs", "example", "other"]
    assert got[0][1] == {"roles": ["source"]} and got[-1][1] == {"other_than": list(ROLE_ORDER)}
    assert set(ROLE_ORDER) < set(ROLES)  # every role lands in exactly one tier


def test_the_backfill_embeds_source_files_first(tmp_path: Path, isolated_env):
    """A repository whose test files have more chunk rows than a backfill page, beside a small
    source file, docs, an example and a build file. Invariant at every backfill page: once a
    row of a later tier (test < docs < example < the rest) has its vector, every row of each
    earlier tier has one; and the source rows are complete after the first page."""
    from codeseam.indexing.backfill import tiers

    root = tmp_path / "proj"
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_gen.py").write_text(big_file_text("_t"))
    (root / "tests" / "test_more.py").write_text(big_file_text("_u"))
    (root / "pkg").mkdir()
    (root / "pkg" / "core.py").write_text(f"def {WORD}(x):\n    \"\"\"The product's code.\"\"\"\n    return x\n")
    (root / "docs").mkdir()
    (root / "docs" / "guide.md").write_text("# Guide\n\nHow to use the core function.\n")
    (root / "examples").mkdir()
    (root / "examples" / "demo.py").write_text(big_file_text("_e"))  # ids interleave with the tests'
    (root / "setup.py").write_text("from setuptools import setup\n\nsetup(name='proj')\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "tree")
    settings = load_settings({"embedding_backend": "fake"})
    names = [name for name, _ in tiers()]
    totals: dict[str, int] = {}
    snapshots: list[dict[str, int]] = []
    with api.open_index(settings, create=True) as ix:

        def pending() -> dict[str, int]:
            return {name: ix.store.pending_count("proj", **where) for name, where in tiers()}

        def progress(event: str, **fields) -> None:
            if event == "backfill":
                totals.update(pending())
            elif event == "embedded":
                snapshots.append(pending())

        ix.index(root, progress=progress)
    assert all(totals[n] > 0 for n in names) and totals["test"] > PAGE and totals["example"] > 100
    assert len(snapshots) >= 3 and snapshots[-1] == dict.fromkeys(names, 0)
    assert snapshots[0]["source"] == 0 and snapshots[0]["test"] > 0  # source first, tests still waiting
    for snap in snapshots:
        for i, later in enumerate(names):
            if snap[later] < totals[later]:  # this tier has started
                assert all(snap[earlier] == 0 for earlier in names[:i]), (later, snap)
