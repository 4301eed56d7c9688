"""The OpenAI-compatible embedding backend against real HTTP servers on 127.0.0.1."""

from __future__ import annotations

import socket
import time

import numpy as np
import pytest

from codeseam.embed import clear_cache, l2_normalise, make_embedder
from codeseam.embed.openai import OpenAIEmbedder
from codeseam.errors import EmbeddingError
from codeseam.settings import Settings
from tests.support.fake_openai import hashed_vector

TEXTS = [f"def handler_{i}(request): return response {i}" + " pad" * i for i in range(8)]


def expected(texts, dim):
    return l2_normalise(np.array([hashed_vector(t, dim) for t in texts], dtype=np.float32))


def embed_requests(server):
    return [r for r in server.requests if r["path"].endswith("/embeddings")]


def test_vectors_batches_and_order(fake_openai):
    emb = OpenAIEmbedder(fake_openai.base_url, "nomic-embed-text", batch_size=3)
    vecs = emb.embed_documents(TEXTS)
    assert vecs.dtype == np.float32 and vecs.shape == (8, fake_openai.dim)
    assert np.allclose(vecs, expected(TEXTS, fake_openai.dim), atol=1e-6)  # order kept
    reqs = embed_requests(fake_openai)
    assert [len(r["body"]["input"]) for r in reqs] == [3, 3, 2]
    assert sorted(t for r in reqs for t in r["body"]["input"]) == sorted(TEXTS)
    assert all(r["body"]["model"] == "nomic-embed-text" for r in reqs)
    q = emb.embed_query("find the request handler")
    assert np.allclose(q, expected(["find the request handler"], fake_openai.dim)[0], atol=1e-6)


def test_dim_is_discovered_or_checked(fake_openai):
    emb = OpenAIEmbedder(fake_openai.base_url, "m")
    assert emb.dim == fake_openai.dim  # one probe request
    assert len(embed_requests(fake_openai)) == 1
    emb.embed_documents(TEXTS[:2])
    assert emb.dim == fake_openai.dim and len(embed_requests(fake_openai)) == 2
    wrong = OpenAIEmbedder(fake_openai.base_url, "m", dim=fake_openai.dim + 1)
    assert wrong.dim == fake_openai.dim + 1  # taken from settings, no request
    with pytest.raises(EmbeddingError, match="expected"):
        wrong.embed_documents(TEXTS[:1])


def test_factory_settings_and_api_key(fake_openai, tmp_path):
    clear_cache()
    s = Settings(embedding_backend="openai", embedding_base_url=fake_openai.base_url + "/",
                 embedding_model="m1", embedding_api_key="sk-test-123", embedding_batch=5,
                 data_dir=str(tmp_path))
    emb = make_embedder(s)
    assert emb.id == f"openai:{fake_openai.base_url}#m1"
    assert emb.embed_documents(TEXTS).shape == (8, fake_openai.dim)
    reqs = embed_requests(fake_openai)
    assert len(reqs) == 2
    assert all(r["headers"].get("Authorization") == "Bearer sk-test-123" for r in reqs)


def test_server_errors_are_retried_then_reported(fake_openai):
    fake_openai.embedding_status = 503
    emb = OpenAIEmbedder(fake_openai.base_url, "m", attempts=3, backoff=0.01)
    with pytest.raises(EmbeddingError, match="after 3 attempt") as info:
        emb.embed_documents(["a"])
    assert "503" in str(info.value) and info.value.hint
    assert len(embed_requests(fake_openai)) == 3


def test_client_errors_are_not_retried_and_key_never_leaks(fake_openai):
    fake_openai.embedding_status = 401
    emb = OpenAIEmbedder(fake_openai.base_url, "m", api_key="sk-secret-xyz", attempts=4,
                         backoff=0.01)
    with pytest.raises(EmbeddingError, match="401") as info:
        emb.embed_query("a")
    assert len(embed_requests(fake_openai)) == 1
    assert "sk-secret-xyz" not in str(info.value)


def test_a_server_that_never_answers_times_out_with_retries():
    with socket.socket() as sock:  # accepts connections (backlog) but never replies
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
        emb = OpenAIEmbedder(url, "m", timeout=0.2, attempts=2, backoff=0.01)
        start = time.monotonic()
        with pytest.raises(EmbeddingError, match="after 2 attempt"):
            emb.embed_query("a")
        assert time.monotonic() - start < 5


def test_nothing_listening_is_a_clear_error():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: connection refused
    emb = OpenAIEmbedder(f"http://127.0.0.1:{port}/v1", "m", attempts=2, backoff=0.01)
    with pytest.raises(EmbeddingError, match="127.0.0.1"):
        emb.embed_documents(["a"])


@pytest.mark.parametrize("body,n,needle", [
    ({"data": [{"index": 0}]}, 1, "unusable"),
    ({"nothing": 1}, 1, "unusable"),
    ({"data": [{"index": 0, "embedding": [1, 2]}, {"index": 1, "embedding": [1]}]}, 2, "unusable"),
    ({"data": [{"index": 0, "embedding": [1.0, 2.0]}]}, 2, "1 vector"),
])
def test_malformed_responses_are_embedding_errors(body, n, needle):
    with pytest.raises(EmbeddingError, match=needle):
        OpenAIEmbedder("http://127.0.0.1:9/v1", "m")._vectors(body, n)
