"""Good results in seconds (issue 43): an index in a long-lived session returns once every file
is keyword-searchable and its filler writes the vectors behind it (indexing/fill.py); a repo's
vectors choice (``--vectors all | source | none``) is recorded, shown and changed with only the
missing work. Real Milvus Lite in temp dirs and real git repos; only the embedder is the fake
(wrapped here to count its calls, or to hold them until the test lets them go)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from codeseam import api
from codeseam.indexing.fill import eta_seconds
from codeseam.settings import load_settings
from tests.test_crash import git
from tests.test_partial import WORD, make_repo


def settings_for(data: Path):
    return load_settings({"embedding_backend": "fake", "data_dir": str(data)}, env={"RAG_CONFIG": "/dev/null"})


class Counting:
    """The session's embedder, counting the texts it embeds; ``gate`` (an Event) holds every
    ``embed_documents`` call until it is set."""

    def __init__(self, inner, gate: threading.Event | None = None) -> None:
        self.inner, self.gate = inner, gate
        self.texts: list[str] = []

    def embed_documents(self, texts):
        if self.gate is not None:
            assert self.gate.wait(120), "the test never let the embedder go"
        self.texts.extend(texts)
        return self.inner.embed_documents(texts)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def counting(ix: api.Index, gate: threading.Event | None = None) -> Counting:
    wrapped = Counting(ix.embedder, gate)
    ix.embedder = wrapped  # index runs and the filler (made on first use) embed through it
    return wrapped


def rows(ix: api.Index, repo: str) -> dict[str, dict]:
    """Every stored field of every chunk row of ``repo`` by id (the vector rounded), plus the
    manifest: what two builds must agree on."""
    from codeseam.store.expr import eq

    got = ix.store._m.query(ix.store.names.chunks, eq("repo_id", repo), ["*"], limit=16_000)
    out = {}
    for r in got:
        row = {k: v for k, v in r.items() if k != "sparse"}
        row["dense"] = tuple(round(float(x), 5) for x in row["dense"])
        out[row["id"]] = row
    out["files"] = {p: e.file_hash for p, e in ix.store.file_entries(repo).items()}  # type: ignore[assignment]
    return out


def one_shot(root: Path, data: Path, vectors: str | None = None) -> dict[str, dict]:
    api.index(root, settings=settings_for(data), vectors=vectors)
    with api.Index(settings_for(data)) as ix:
        return rows(ix, "proj")


def test_a_vectors_choice_takes_its_tiers_and_leaves_the_rest_keyword_only():
    from codeseam.indexing.backfill import chosen_tiers, outside, tiers

    assert chosen_tiers("all") == tiers() and chosen_tiers("none") == []
    assert chosen_tiers("source") == [("source", {"roles": ["source"]})]
    assert outside("all") is None and outside("none") == {} and outside("source") == {"other_than": ["source"]}
    with pytest.raises(ValueError, match="vectors must be one of"):
        chosen_tiers("some")


def test_eta_is_the_pending_rows_at_the_measured_rate():
    assert eta_seconds(100, 50, 10.0) == pytest.approx(20.0)
    assert eta_seconds(0, 0, 0.0) == 0.0
    assert eta_seconds(10, 0, 3.0) is None  # no page done yet: no rate, no guess


def test_index_without_wait_is_searchable_at_once_and_the_filler_completes_it(tmp_path: Path):
    root = make_repo(tmp_path / "proj")
    clean = one_shot(root, tmp_path / "clean")
    gate = threading.Event()
    with api.Index(settings_for(tmp_path / "data"), create=True) as ix:
        embedder = counting(ix, gate)
        report = ix.index(root, wait=False)  # returns while every embed call is held
        assert report.chunks_pending > 0 and report.chunks_embedded == 0 and embedder.texts == []
        found = ix.search(WORD, k=3)
        assert found.hits and found.hits[0].path == "word.py", found
        assert found.partial and found.signals == ("bm25",)
        assert found.progress is not None and found.progress.chunks_embedded == 0
        status = {r.repo_id: r for r in ix.status().repos}["proj"]
        assert status.state == "embedding" and status.vectors_pending == report.chunks_pending
        gate.set()
        assert ix.filler.wait("proj", 120)
        done = ix.search(WORD, k=3)
        assert not done.partial and "dense" in done.signals
        assert {r.repo_id: r for r in ix.status().repos}["proj"].state == "clean"
        assert rows(ix, "proj") == clean
        assert len(embedder.texts) == len(set(embedder.texts))  # nothing embedded twice


def test_a_run_while_the_filler_works_defers_and_wait_blocks_until_complete(tmp_path: Path):
    root = make_repo(tmp_path / "proj")
    clean_dir = tmp_path / "clean"
    gate = threading.Event()
    with api.Index(settings_for(tmp_path / "data"), create=True) as ix:
        counting(ix, gate)
        ix.index(root, wait=False)
        (root / "extra.py").write_text("def extra_helper(x):\n    return x + 1\n")
        git(root, "add", "-A")
        threading.Timer(0.5, gate.set).start()
        report = ix.index(root)  # wait=True: the filler owns the repo's vectors; this waits for them
        assert report.files_indexed == 1 and report.chunks_pending == 0
        assert ix.store.repo_records()["proj"]["state"] == "clean"
        got = rows(ix, "proj")
    assert got == one_shot(root, clean_dir)


def test_closing_mid_fill_leaves_an_index_the_next_session_finishes_exactly(tmp_path: Path):
    root = make_repo(tmp_path / "proj")
    clean = one_shot(root, tmp_path / "clean")
    gate = threading.Event()
    data = tmp_path / "data"
    with api.Index(settings_for(data), create=True) as ix:
        counting(ix, gate)
        ix.index(root, wait=False)
        fill = ix.filler.fill("proj")
        assert fill is not None
        gate.set()
        deadline = threading.Event()
        while fill.stats.rows < 64 and not deadline.wait(0.05):  # at least one page written
            pass
    with api.Index(settings_for(data)) as ix:  # closed mid-fill: still waiting, still searchable
        assert ix.store.repo_records()["proj"]["state"] == "embedding"
        assert ix.search(WORD, k=3).partial
        embedder = counting(ix)
        report = ix.index(root)
        assert report.files_indexed == 0 and report.chunks_written == 0
        assert 0 < len(embedder.texts) < len(clean) - 1  # only the rows still waiting
        assert rows(ix, "proj") == clean


def test_vectors_none_is_keyword_only_complete_and_not_weak(tmp_path: Path):
    root = make_repo(tmp_path / "proj")
    data = tmp_path / "data"
    with api.Index(settings_for(data), create=True) as ix:
        embedder = counting(ix)
        report = ix.index(root, vectors="none")
        assert report.vectors == "none" and report.chunks_pending == 0
        assert [t for t in embedder.texts] == []  # the null-similarity probes are queries, not documents
        status = {r.repo_id: r for r in ix.status().repos}["proj"]
        assert (status.state, status.vectors, status.vectors_pending) == ("clean", "none", 0)
        found = ix.search(f"{WORD} handler request", k=3)
        assert not found.partial and found.signals == ("bm25",)
        assert found.hits[0].path == "word.py" and not found.weak
        assert ix.search("quantum flux capacitor", k=3).weak  # BM25 alone still says when nothing fits
        again = ix.index(root)  # a later sync keeps the recorded choice
        assert again.vectors == "none" and embedder.texts == []


def test_changing_the_vectors_choice_does_only_the_missing_work(tmp_path: Path):
    root = make_repo(tmp_path / "proj")
    (root / "tests").mkdir()
    (root / "tests" / "test_word.py").write_text(f"def test_{WORD}():\n    assert {WORD}_handler\n")
    (root / "README.md").write_text(f"# proj\n\nThe {WORD} handler answers requests.\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "more")
    data = tmp_path / "data"
    with api.Index(settings_for(data), create=True) as ix:
        embedder = counting(ix)
        ix.index(root, vectors="none")
        assert embedder.texts == []
        roles = {r["id"]: r["role"] for r in rows(ix, "proj").values() if "role" in r}
        assert {"source", "test", "docs"} <= set(roles.values())

        ix.index(root, vectors="source")
        source = set(embedder.texts)
        assert source and all("test_word" not in t and "# proj" not in t for t in source)
        got = rows(ix, "proj")
        assert all(r["embedded"] == (r["role"] == "source") for k, r in got.items() if k != "files")

        embedder.texts.clear()
        ix.index(root)  # no --vectors: the recorded choice (source) stands
        assert embedder.texts == []
        ix.index(root, vectors="all")
        assert embedder.texts and not set(embedder.texts) & source  # only the rows not embedded yet
        assert {r.repo_id: r for r in ix.status().repos}["proj"].vectors == "all"
        full = rows(ix, "proj")

        embedder.texts.clear()
        ix.index(root, vectors="source")  # narrowing embeds nothing; the non-source rows go keyword-only
        assert embedder.texts == []
        narrowed = rows(ix, "proj")
    assert full == one_shot(root, tmp_path / "clean-all")
    assert narrowed == one_shot(root, tmp_path / "clean-source", vectors="source")
