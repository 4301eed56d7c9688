"""The sentence-transformers backend. No model can be fetched here, so the code path runs
on the bundled model's directory given as a path, and the bge-m3 preset shows the clear
"not available offline" error."""

from __future__ import annotations

import numpy as np
import pytest

from codeseam.embed import make_embedder
from codeseam.embed.bundled import BundledEmbedder, bundled_model_dir
from codeseam.embed.st import PRESETS, SentenceTransformerEmbedder, resolve_model, st_installed
from codeseam.errors import EmbeddingError
from codeseam.settings import Settings

needs_torch = pytest.mark.skipif(not st_installed(), reason="the st extra (torch) is not installed")

TEXTS = [
    "def insort_right(a, x, lo=0, hi=None):\n    lo = bisect_right(a, x, lo, hi)\n    a.insert(lo, x)",
    "class Calendar:\n    def iterweekdays(self):\n        for i in range(self.firstweekday, 7):\n"
    "            yield i",
    "heap push pop",
]


def test_without_the_st_extra_the_backend_names_it(tmp_path, monkeypatch):
    import codeseam.embed.st as st

    monkeypatch.setattr(st, "st_installed", lambda: False)
    with pytest.raises(EmbeddingError, match="needs torch and sentence-transformers") as info:
        SentenceTransformerEmbedder("bge-m3")
    assert "codeseam[st]" in info.value.hint


@needs_torch
def test_presets_and_paths_resolve_without_loading(tmp_path):
    assert resolve_model("bge-m3") == PRESETS["bge-m3"] == "BAAI/bge-m3"
    assert resolve_model("intfloat/e5-small") == "intfloat/e5-small"
    assert resolve_model(str(tmp_path / ".." / tmp_path.name)) == str(tmp_path.resolve())
    emb = SentenceTransformerEmbedder("bge-m3")
    assert emb.id == "st:BAAI/bge-m3"


@needs_torch
@pytest.mark.integration
def test_model_by_path_meets_the_contract(tmp_path):
    path = bundled_model_dir()
    emb = make_embedder(Settings(embedding_backend="sentence-transformers",
                                 embedding_model=str(path), data_dir=str(tmp_path)))
    assert emb.id == f"st:{path.resolve()}"
    assert (emb.dim, emb.max_tokens) == (384, 254)
    vecs = emb.embed_documents(TEXTS)
    assert vecs.dtype == np.float32 and vecs.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1, atol=1e-5)
    # same weights as the bundled backend, so the same vectors (and token counts)
    ref = BundledEmbedder(tmp_path / "models", document_engine="torch", query_engine="torch")
    assert np.allclose(vecs, ref.embed_documents(TEXTS), atol=1e-5)
    assert [emb.count_tokens(t) for t in TEXTS] == [ref.count_tokens(t) for t in TEXTS]
    long = "token " * 400
    emb.embed_documents([long])
    assert emb.truncated == 1


@needs_torch
@pytest.mark.integration
def test_bge_m3_unavailable_offline_is_a_clear_error(tmp_path):
    emb = make_embedder(Settings(embedding_backend="sentence-transformers",
                                 embedding_model="bge-m3", data_dir=str(tmp_path)))
    with pytest.raises(EmbeddingError, match="not available offline") as info:
        emb.embed_query("anything")
    assert "BAAI/bge-m3" in str(info.value) and "hf download BAAI/bge-m3" in info.value.hint
    assert "Traceback" not in str(info.value)


@pytest.mark.integration
def test_a_folder_that_is_not_a_model_is_a_clear_error(tmp_path):
    (tmp_path / "notes.txt").write_text("not a model")
    emb = SentenceTransformerEmbedder(str(tmp_path), allow_download=False)
    with pytest.raises(EmbeddingError, match="is not a model directory"):
        _ = emb.dim
