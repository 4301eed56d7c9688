"""The embed stage without a real model: the protocol, the one normalisation point, the
fake embedder, over-long input reporting, the factory and lazy imports."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings as hsettings, strategies as st

from codeseam.embed import (BaseEmbedder, Embedder, FakeEmbedder, clear_cache, l2_normalise,
                            make_embedder)
from codeseam.embed.onnx_cache import OnnxExportError, model_files_hash, pooling_mode
from codeseam.errors import ConfigError, EmbeddingError
from codeseam.settings import Settings, load_settings

CODE = [
    "def retry_delay(attempt, base=0.5):\n    return base * 2 ** attempt",
    "def retry_delay(attempt, base=1.0):\n    return base * 3 ** attempt",
    "class JSONDecoder:\n    def raw_decode(self, s, idx=0):\n        return s[idx:]",
    "import os\nimport sys\n",
    "",
    "x" * 500,
    "SELECT name FROM users WHERE id = ?",
]

HEAVY = ("torch", "onnxruntime", "sentence_transformers", "tokenizers", "transformers")


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


# -- normalisation ----------------------------------------------------------------------
@given(st.lists(st.lists(st.floats(-1e6, 1e6, allow_nan=False, width=32), min_size=3, max_size=3),
                min_size=1, max_size=8))
def test_l2_normalise_gives_unit_rows_or_zero(rows):
    arr = np.array(rows, dtype=np.float32)
    out = l2_normalise(arr)
    assert out.dtype == np.float32 and out.shape == arr.shape
    norms = np.linalg.norm(out, axis=1)
    for row, norm in zip(arr, norms, strict=True):
        if np.linalg.norm(row) > 1e-6:
            assert abs(norm - 1) < 1e-5
        assert abs(norm - 1) < 1e-5 or norm == 0
    assert np.allclose(l2_normalise(out), out, atol=1e-6)  # idempotent


def test_zero_vector_stays_zero_not_nan():
    assert np.array_equal(l2_normalise(np.zeros((2, 4))), np.zeros((2, 4)))
    assert np.array_equal(l2_normalise(np.array([[1e-30, 0.0]])), np.zeros((1, 2)))
    assert l2_normalise(np.array([3.0, 4.0])).tolist() == pytest.approx([0.6, 0.8])


# -- the fake embedder ------------------------------------------------------------------
def test_fake_meets_the_contract():
    emb = FakeEmbedder(dim=32)
    assert isinstance(emb, Embedder)
    assert (emb.id, emb.dim, emb.max_tokens) == ("fake:32", 32, None)
    vecs = emb.embed_documents(CODE)
    assert vecs.dtype == np.float32 and vecs.shape == (len(CODE), 32)
    norms = np.linalg.norm(vecs, axis=1)
    assert np.allclose(norms[[i for i, t in enumerate(CODE) if t]], 1, atol=1e-6)
    assert emb.embed_documents([]).shape == (0, 32)
    q = emb.embed_query(CODE[2])
    assert q.shape == (32,) and np.allclose(q, vecs[2], atol=1e-6)


def test_fake_is_deterministic_across_processes():
    code = textwrap.dedent(f"""
        import json
        from codeseam.embed import FakeEmbedder
        print(json.dumps(FakeEmbedder(dim=16).embed_documents({CODE!r}).tolist()))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    other = np.array(json.loads(out.stdout), dtype=np.float32)
    assert np.allclose(other, FakeEmbedder(dim=16).embed_documents(CODE), atol=1e-7)


def test_fake_lexical_similarity():
    emb = FakeEmbedder(dim=256)
    v = emb.embed_documents(CODE)
    # the two retry_delay variants share most words and trigrams; the decoder shares little
    assert cos(v[0], v[1]) > cos(v[0], v[2]) + 0.2
    assert cos(v[0], v[1]) > cos(v[0], v[6]) + 0.2


@given(st.permutations(list(range(len(CODE)))), st.integers(1, 9))
@hsettings(max_examples=25, deadline=None)
def test_order_and_batch_size_do_not_change_vectors(perm, batch):
    ref = FakeEmbedder(dim=24).embed_documents(CODE)
    got = FakeEmbedder(dim=24, batch_size=batch).embed_documents([CODE[i] for i in perm])
    assert np.allclose(got, ref[perm], atol=1e-6)


@given(st.lists(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True), max_size=30),
       st.sampled_from([" ", "\n", "\t ", "  "]))
def test_fake_count_tokens_counts_words_and_punctuation(words, sep):
    emb = FakeEmbedder()
    assert emb.count_tokens(sep.join(words)) == len(words)
    assert emb.count_tokens(sep.join(w + "()" for w in words)) == 3 * len(words)


# -- over-long input --------------------------------------------------------------------
def test_over_long_input_is_counted_and_logged_never_silent(caplog):
    emb = FakeEmbedder(dim=64, max_tokens=10)
    short = "a b c d e"
    long1 = " ".join(f"w{i}" for i in range(25))
    long2 = " ".join(f"v{i}" for i in range(11))
    with caplog.at_level(logging.WARNING, logger="codeseam.embed"):
        vecs = emb.embed_documents([short, long1, long2])
    assert emb.truncated == 2
    warning = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warning) == 1 and "2 of 3" in warning[0].getMessage()
    assert "10-token" in warning[0].getMessage() and "25 tokens" in warning[0].getMessage()
    # what was read is the first max_tokens tokens, exactly as the model would
    prefix = " ".join(f"w{i}" for i in range(10))
    assert np.allclose(vecs[1], emb.embed_query(prefix), atol=1e-6)
    emb.embed_query(long1)
    assert emb.truncated == 3
    caplog.clear()
    emb.embed_documents([short, prefix])  # exactly at the limit: not truncated
    assert emb.truncated == 3 and not caplog.records


# -- the base class guards backends -----------------------------------------------------
class _Broken(BaseEmbedder):
    id, dim = "broken:4", 4

    def __init__(self, result):
        super().__init__()
        self.result = result

    def _embed_batch(self, texts):
        return self.result(len(texts))


@pytest.mark.parametrize("result,needle", [
    (lambda n: np.ones((n, 3)), "shape"),
    (lambda n: np.ones((n + 1, 4)), "shape"),
    (lambda n: np.full((n, 4), np.nan), "non-finite"),
])
def test_bad_backend_output_is_an_embedding_error(result, needle):
    with pytest.raises(EmbeddingError, match=needle):
        _Broken(result).embed_documents(["a", "b"])


# -- the factory ------------------------------------------------------------------------
def test_make_embedder_caches_one_instance_per_configuration(tmp_path):
    clear_cache()
    s = Settings(embedding_backend="fake", embedding_dim=48, data_dir=str(tmp_path))
    a, b = make_embedder(s), make_embedder(s.replace())
    assert a is b and a.id == "fake:48" and a.dim == 48
    assert make_embedder(s.replace(embedding_dim=0)).id == "fake:64"
    assert make_embedder(Settings(embedding_backend="fake", data_dir=str(tmp_path))).dim == 64


@pytest.mark.parametrize("backend,model,default", [
    ("bundled", "", 8),  # bench/results/embed-batch.md: the fastest on two kinds of CPU
    ("e5", "", 8),  # the same page's e5 section
    ("openai", "m", 32),  # texts per HTTP request
    ("fake", "", 32),
])
def test_batch_size_is_the_backends_own_unless_set(tmp_path, backend, model, default):
    clear_cache()
    s = Settings(embedding_backend=backend, embedding_model=model, data_dir=str(tmp_path))
    assert s.embedding_batch == 0
    assert make_embedder(s).batch_size == default
    assert make_embedder(s.replace(embedding_batch=5)).batch_size == 5


def test_batch_size_from_the_environment_and_its_bounds(tmp_path):
    s = load_settings({"data_dir": str(tmp_path)}, env={"RAG_EMBEDDING_BATCH": "16"})
    assert s.embedding_batch == 16
    with pytest.raises(ConfigError, match="embedding_batch"):
        load_settings({"data_dir": str(tmp_path), "embedding_batch": -1}, env={})


@pytest.mark.parametrize("changes,error,needle", [
    ({"embedding_backend": "bundled", "embedding_model": "bge-m3"}, ConfigError, "one model"),
    ({"embedding_backend": "sentence-transformers"}, ConfigError, "needs embedding_model"),
    ({"embedding_backend": "openai"}, ConfigError, "needs a model"),
])
def test_bad_embedding_settings_stop_with_clear_errors(tmp_path, changes, error, needle):
    with pytest.raises(error, match=needle) as info:
        make_embedder(Settings(data_dir=str(tmp_path), **changes))
    assert info.value.hint


def test_importing_and_building_loads_no_model_library(tmp_path):
    code = textwrap.dedent(f"""
        import sys
        from codeseam.embed import make_embedder
        from codeseam.settings import Settings
        for backend, model in [("bundled", ""), ("sentence-transformers", "bge-m3"),
                               ("openai", "m"), ("fake", "")]:
            e = make_embedder(Settings(embedding_backend=backend, embedding_model=model,
                                       data_dir={str(tmp_path)!r}))
            assert e.id
        print(",".join(m for m in {HEAVY!r} if m in sys.modules))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


# -- ONNX cache helpers (no export here; the real export is in test_embed_bundled.py) ----
def _model_dir(tmp_path, pooling):
    d = tmp_path / "m"
    (d / "1_Pooling").mkdir(parents=True)
    (d / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    ]))
    (d / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    (d / "weights.bin").write_bytes(b"\0" * 1000)
    return d


@pytest.mark.parametrize("config,mode", [
    ({"pooling_mode_mean_tokens": True, "pooling_mode_cls_token": False}, "mean"),
    ({"pooling_mode_cls_token": True}, "cls"),
    ({"pooling_mode_max_tokens": True, "pooling_mode_mean_tokens": False}, "max"),
    ({"pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": True}, None),
    ({"pooling_mode_weightedmean_tokens": True}, None),
])
def test_pooling_mode_follows_the_pooling_config(tmp_path, config, mode):
    d = _model_dir(tmp_path, config)
    if mode is None:
        with pytest.raises(OnnxExportError):
            pooling_mode(d)
    else:
        assert pooling_mode(d) == mode


def test_model_hash_is_content_based_and_memoised(tmp_path):
    d = _model_dir(tmp_path, {"pooling_mode_mean_tokens": True})
    memo = tmp_path / "hashes.json"
    first = model_files_hash(d)
    assert model_files_hash(d, memo) == first and memo.is_file()
    assert model_files_hash(d, memo) == first  # from the memo
    (d / "weights.bin").write_bytes(b"\1" * 1000)  # same size, new content (and mtime)
    changed = model_files_hash(d, memo)
    assert changed != first and changed == model_files_hash(d)
