"""The bundled model (all-MiniLM-L6-v2, its files in src/codeseam/embed/models), for real:
the torch-free ONNX graph and its cache, its agreement with torch on code (wherever the
``st`` extra is installed: ``make test`` installs it), the exact token limit, the torch-free
build and query paths and the fallbacks."""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import numpy as np
import pytest

from codeseam.embed import make_embedder, prepare
from codeseam.embed.bundled import BundledEmbedder
from codeseam.embed.st import st_installed
from codeseam.errors import EmbeddingError
from codeseam.settings import Settings

pytestmark = pytest.mark.integration
needs_torch = pytest.mark.skipif(not st_installed(), reason="the st extra (torch) is not installed")

STDLIB = Path(sysconfig.get_paths()["stdlib"])
FILES = ["bisect.py", "heapq.py", "fnmatch.py", "base64.py", "csv.py", "gzip.py", "calendar.py"]
QUERY = "where is the retry delay computed?"


def code_chunks(emb: BundledEmbedder, lines_per_chunk: int = 25, limit: int = 40) -> list[str]:
    """Line windows of real stdlib files, shortened until they fit the model."""
    chunks = []
    for name in FILES:
        lines = (STDLIB / name).read_text(encoding="utf-8").split("\n")
        for start in range(0, len(lines), lines_per_chunk * 2):
            window = lines[start:start + lines_per_chunk]
            while window and emb.count_tokens("\n".join(window)) > emb.max_tokens:
                window = window[:-1]
            if "\n".join(window).strip():
                chunks.append("\n".join(window))
    return chunks[:limit]


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sum(a * b, axis=-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("data")


@pytest.fixture(scope="module")
def onnx_emb(data_dir) -> BundledEmbedder:
    emb = BundledEmbedder(data_dir / "models", threads=2)
    path = emb.prepare()  # writes the graph (once) and checks it against the reference vectors
    assert path is not None and path.is_file()
    return emb


@pytest.fixture(scope="module")
def torch_emb(data_dir) -> BundledEmbedder:
    if not st_installed():
        pytest.skip("the st extra (torch) is not installed")
    return BundledEmbedder(data_dir / "models", threads=2, document_engine="torch",
                           query_engine="torch")


def test_contract_values(onnx_emb):
    assert (onnx_emb.id, onnx_emb.dim, onnx_emb.max_tokens) == ("bundled:all-MiniLM-L6-v2", 384, 254)
    meta = json.loads((onnx_emb.prepare().parent / "meta.json").read_text())
    assert meta["pooling"] == "mean" and meta["min_cosine"] >= 0.9999 and meta["builder"] == "bert_onnx"


def test_onnx_matches_torch_on_code_chunks(onnx_emb, torch_emb):
    chunks = code_chunks(onnx_emb)
    assert len(chunks) == 40
    a = onnx_emb.embed_documents(chunks)
    b = torch_emb.embed_documents(chunks)
    assert onnx_emb.engine_in_use() == "onnx" and torch_emb.engine_in_use() == "torch"
    assert a.shape == b.shape == (len(chunks), 384)
    assert np.allclose(np.linalg.norm(a, axis=1), 1, atol=1e-5)
    assert cosines(a, b).min() >= 0.9999
    assert cosines(onnx_emb.embed_query(QUERY), torch_emb.embed_query(QUERY)) >= 0.9999
    assert onnx_emb.truncated == torch_emb.truncated == 0


def test_the_graph_gives_the_reference_vectors(onnx_emb):
    """The probe texts' vectors equal the torch vectors kept in minilm_reference.json (made
    by bench/minilm_reference.py), read here without the check that the build makes."""
    from codeseam.embed.onnx_cache import PROBES, REFERENCE

    ref = json.loads(REFERENCE.read_text())
    assert ref["probes"] == list(PROBES)
    ours = onnx_emb._encoder("document")(list(PROBES))
    assert cosines(ours, np.asarray(ref["vectors"])).min() >= 0.99999
    assert np.allclose(ours, ref["vectors"], atol=1e-4)


def test_count_tokens_matches_the_model_tokenizer(onnx_emb, torch_emb):
    from codeseam.embed.st import load_sentence_transformer

    hf = load_sentence_transformer(str(onnx_emb.model_dir)).tokenizer
    texts = code_chunks(onnx_emb, limit=20) + [(STDLIB / "bisect.py").read_text(), "", "naïve café 中文"]
    ours = onnx_emb.count_tokens_many(texts)
    theirs = [len(hf(t, add_special_tokens=False, truncation=False)["input_ids"]) for t in texts]
    assert ours == theirs
    assert [onnx_emb.count_tokens(t) for t in texts] == theirs
    assert max(ours) > 254  # the whole file is longer than the limit, and shows it


@pytest.mark.parametrize("engine", ["onnx", pytest.param("torch", marks=needs_torch)])
def test_the_limit_is_exact_and_truncation_is_reported(data_dir, onnx_emb, engine, caplog):
    emb = BundledEmbedder(data_dir / "models", document_engine=engine, query_engine=engine)
    word = "hello"
    assert emb.count_tokens(word) == 1 and emb.count_tokens(" ".join([word] * 300)) == 300
    at_limit = " ".join([word] * 253 + ["world"])  # 254 tokens, the last one read
    shorter = " ".join([word] * 254)
    over = at_limit + " tail words past the limit"
    with caplog.at_level(logging.WARNING, logger="codeseam.embed"):
        v = emb.embed_documents([at_limit, shorter])
        assert emb.truncated == 0 and not caplog.records
        assert cosines(v[0], v[1]) < 0.99999  # the 254th token changes the vector
        w = emb.embed_documents([over])[0]
    assert emb.truncated == 1
    assert any("1 of 1" in r.getMessage() and "254-token" in r.getMessage() for r in caplog.records)
    assert cosines(w, v[0]) > 0.99999  # the model read exactly the first 254 tokens


def test_prepare_from_settings_reuses_the_cache(data_dir, onnx_emb):
    onnx_file = onnx_emb.prepare()
    before = onnx_file.stat().st_mtime_ns
    # the fixture is the fp32 export, the settings' default precision (int8 has its own file)
    emb = prepare(Settings(data_dir=str(data_dir), embedding_threads=2, embedding_precision="fp32"))
    assert emb is make_embedder(Settings(data_dir=str(data_dir), embedding_threads=2, embedding_precision="fp32"))
    assert emb.prepare() == onnx_file and onnx_file.stat().st_mtime_ns == before
    assert len(list((data_dir / "models" / "onnx").iterdir())) == 1


def test_cold_query_process_uses_onnx_without_torch(data_dir, onnx_emb):
    code = textwrap.dedent(f"""
        import json, sys
        from codeseam.embed import make_embedder
        from codeseam.settings import Settings
        v = make_embedder(Settings(data_dir={str(data_dir)!r}, embedding_precision="fp32")).embed_query({QUERY!r})
        heavy = [m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules]
        print(json.dumps({{"v": v.tolist(), "heavy": heavy}}))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    got = json.loads(out.stdout)
    assert got["heavy"] == []
    assert np.allclose(got["v"], onnx_emb.embed_query(QUERY), atol=1e-5)


@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_a_fresh_process_builds_and_embeds_without_torch(tmp_path, onnx_emb, precision):
    """From an empty data folder, in a process where torch, transformers and
    sentence-transformers cannot be imported (as after a plain ``pip install codeseam``): the
    graph (and the int8 graph derived from it) is written and used, and gives the vectors of
    the module's embedder (same id, same vectors as the torch export did)."""
    code = textwrap.dedent(f"""
        import importlib.abc, json, sys
        class NoTorch(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("torch", "transformers", "sentence_transformers"):
                    raise ModuleNotFoundError(f"No module named {{name!r}}")
        sys.meta_path.insert(0, NoTorch())
        from codeseam.embed import make_embedder, prepare
        from codeseam.settings import Settings
        s = Settings(data_dir={str(tmp_path)!r}, embedding_precision={precision!r}, embedding_threads=2)
        emb = prepare(s)
        v = emb.embed_documents([{QUERY!r}])[0]
        heavy = [m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules]
        print(json.dumps({{"v": v.tolist(), "heavy": heavy, "id": emb.id}}))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    got = json.loads(out.stdout)
    assert got["heavy"] == []
    if precision == "fp32":
        assert got["id"] == "bundled:all-MiniLM-L6-v2"
        assert np.allclose(got["v"], onnx_emb.embed_documents([QUERY])[0], atol=1e-6)
    else:
        assert got["id"] == "bundled:all-MiniLM-L6-v2@int8-mm-keepffn2-r7"
        assert cosines(np.asarray(got["v"]), onnx_emb.embed_documents([QUERY])[0]) >= 0.99
    assert list(tmp_path.glob("models/onnx/*-f3/meta.json"))


def _blocked(modules: tuple[str, ...], body: str) -> subprocess.CompletedProcess:
    code = textwrap.dedent(f"""
        import importlib.abc, json, sys
        class Blocked(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in {modules!r}:
                    raise ModuleNotFoundError(f"No module named {{name!r}}")
        sys.meta_path.insert(0, Blocked())
    """) + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def test_int8_without_sympy_names_the_extra_and_a_derived_graph_needs_none(tmp_path, onnx_emb):
    """Deriving the int8 graph needs sympy (the int8 extra); without it the error names the
    extra. Once derived, the int8 graph runs without sympy and without torch."""
    body = f"""
        from codeseam.embed import prepare
        from codeseam.errors import EmbeddingError
        from codeseam.settings import Settings
        try:
            e = prepare(Settings(data_dir={str(tmp_path)!r}, embedding_precision="int8"))
            print(json.dumps({{"id": e.id, "v": e.embed_query("retry delay").tolist()}}))
        except EmbeddingError as exc:
            print(json.dumps({{"error": str(exc)}}))
    """
    no_sympy = json.loads(_blocked(("torch", "transformers", "sentence_transformers", "sympy"), body).stdout)
    assert "codeseam[int8]" in no_sympy["error"]
    derived = json.loads(_blocked(("torch", "transformers", "sentence_transformers"), body).stdout)
    again = json.loads(_blocked(("torch", "transformers", "sentence_transformers", "sympy"), body).stdout)
    assert derived["id"] == again["id"] == "bundled:all-MiniLM-L6-v2@int8-mm-keepffn2-r7"
    assert np.allclose(derived["v"], again["v"], atol=1e-6)


def test_without_torch_a_failed_build_is_a_clear_error(tmp_path, monkeypatch):
    import codeseam.embed.st as st

    monkeypatch.setattr(st, "st_installed", lambda: False)
    blocker = tmp_path / "models"
    blocker.write_text("a file where the cache folder should be")
    with pytest.raises(EmbeddingError, match="ONNX graph of all-MiniLM-L6-v2 is unavailable") as info:
        BundledEmbedder(blocker).embed_query(QUERY)
    assert "RAG_DATA_DIR" in info.value.hint


@needs_torch
def test_export_failure_falls_back_to_torch_with_a_warning(tmp_path, onnx_emb, caplog):
    blocker = tmp_path / "models"
    blocker.write_text("a file where the cache folder should be")
    emb = BundledEmbedder(blocker)
    with caplog.at_level(logging.WARNING, logger="codeseam.embed"):
        assert emb.prepare() is None
        q = emb.embed_query(QUERY)
    assert emb.engine_in_use("query") == "torch" == emb.engine_in_use("document")
    assert "using torch" in caplog.text and emb.onnx_failure
    assert cosines(q, onnx_emb.embed_query(QUERY)) >= 0.9999


def test_an_unusable_cached_export_is_exported_again(tmp_path, data_dir, onnx_emb, caplog):
    root = tmp_path / "models"
    shutil.copytree(data_dir / "models", root)
    broken = next(root.glob("onnx/*/model.onnx"))
    broken.write_bytes(b"not an onnx model")
    emb = BundledEmbedder(root)
    with caplog.at_level(logging.WARNING, logger="codeseam.embed"):
        q = emb.embed_query(QUERY)
    assert "exporting it again" in caplog.text and emb.engine_in_use("query") == "onnx"
    assert (broken.parent / "meta.json").is_file() and broken.stat().st_size > 1000
    assert cosines(q, onnx_emb.embed_query(QUERY)) >= 0.9999
