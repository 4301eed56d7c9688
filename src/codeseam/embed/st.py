"""The sentence-transformers backend: any model by name or local path (torch, CPU).

``embedding_model`` is a Hugging Face model name, a local directory, or a preset
(``bge-m3`` -> ``BAAI/bge-m3``, 1024-d, multilingual). A model that is neither a local
directory nor in the Hugging Face cache is only fetched when the environment allows it
(``HF_HUB_OFFLINE``/``TRANSFORMERS_OFFLINE`` unset); otherwise loading fails with an
``EmbeddingError`` that says how to make the model available.

Needs the ``st`` extra (``pip install 'codeseam[st]'``: torch, transformers,
sentence-transformers); without it, using this backend stops with an error naming the extra.
``load_sentence_transformer`` is also the bundled backend's optional torch engine, so both
see the same weights. It drops the model's own
``Normalize`` module: backends return raw vectors and ``base.l2_normalise`` is the one
normalisation point.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigError, EmbeddingError
from .base import BaseEmbedder, resolve_threads

log = logging.getLogger(__name__)

PRESETS = {"bge-m3": "BAAI/bge-m3"}

_MODELS: dict[tuple[str, bool], Any] = {}
_LOCK = threading.Lock()


ST_EXTRA_HINT = "pip install 'codeseam[st]' (torch, transformers, sentence-transformers)"


def st_installed() -> bool:
    """True when sentence-transformers (and so torch) can be imported."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("sentence_transformers", "torch"))


def offline_env() -> bool:
    """True when the environment forbids fetching models."""
    truthy = ("1", "true", "yes", "on")
    return any(os.environ.get(k, "").strip().lower() in truthy
               for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def resolve_model(name: str) -> str:
    """A preset's model name, a local directory as an absolute path, else ``name``."""
    name = PRESETS.get(name, name)
    path = Path(name).expanduser()
    return str(path.resolve()) if path.is_dir() else name


def set_torch_threads(threads: int) -> None:
    import torch

    torch.set_num_threads(resolve_threads(threads))


def load_sentence_transformer(ref: str, *, threads: int = 0, local_files_only: bool = True) -> Any:
    """A cached (one per process) SentenceTransformer on CPU, without its Normalize module."""
    key = (ref, local_files_only)
    with _LOCK:
        if key not in _MODELS:
            _MODELS[key] = _load(ref, local_files_only)
    set_torch_threads(threads)
    return _MODELS[key]


def _load(ref: str, local_files_only: bool) -> Any:
    if not st_installed():
        raise EmbeddingError("the sentence-transformers backend needs torch and sentence-transformers, "
                             "which are not installed", hint=ST_EXTRA_HINT)
    try:
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # library code never draws on the terminal
        model = SentenceTransformer(ref, device="cpu", local_files_only=local_files_only)
    except Exception as exc:  # noqa: BLE001 - missing model, bad directory, broken weights ...: one clear error
        where = "is not a model directory" if Path(ref).exists() else "is not available offline"
        raise EmbeddingError(
            f"sentence-transformers model {ref!r} {where}: {type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else ''}",
            hint="point embedding_model at a local model directory, or fetch it once on a "
                 f"machine with network (`hf download {ref}`) and copy the Hugging Face cache",
        ) from None
    for name, module in list(model._modules.items()):
        if type(module).__name__ == "Normalize":
            del model._modules[name]
    model.eval()
    return model


class SentenceTransformerEmbedder(BaseEmbedder):
    """Any sentence-transformers model; loaded on first use, once per process."""

    def __init__(self, model: str, *, threads: int = 0, batch_size: int = 32,
                 allow_download: bool | None = None) -> None:
        super().__init__()
        if not model:
            raise ConfigError("the sentence-transformers backend needs embedding_model",
                                 hint=f"set RAG_EMBEDDING_MODEL to a name, a path or a preset "
                                      f"({', '.join(PRESETS)})")
        if not st_installed():
            raise EmbeddingError("the sentence-transformers backend needs torch and sentence-transformers, "
                                 "which are not installed", hint=ST_EXTRA_HINT)
        self.ref = resolve_model(model)
        self.id = f"st:{self.ref}"
        self.threads = threads
        self.batch_size = batch_size
        self.local_files_only = offline_env() if allow_download is None else not allow_download
        self._counter: Any = None

    @property
    def model(self) -> Any:
        return load_sentence_transformer(self.ref, threads=self.threads,
                                         local_files_only=self.local_files_only)

    @property
    def dim(self) -> int:  # type: ignore[override]
        m = self.model
        get = getattr(m, "get_embedding_dimension", None) or m.get_sentence_embedding_dimension
        return int(get())

    @property
    def max_tokens(self) -> int | None:  # type: ignore[override]
        m = self.model
        if not m.max_seq_length:
            return None
        return int(m.max_seq_length) - int(m.tokenizer.num_special_tokens_to_add(pair=False))

    def _tokens(self) -> Any:
        if self._counter is None:
            from .tokens import TokenCounter

            backend = getattr(self.model.tokenizer, "backend_tokenizer", None)
            if backend is None:
                raise EmbeddingError(f"{self.id}: only models with a fast tokenizer are supported")
            from tokenizers import Tokenizer

            # a private copy: transformers reconfigures its backend tokenizer on every call
            self._counter = TokenCounter(Tokenizer.from_str(backend.to_str()))
        return self._counter

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        return self.model.encode(texts, batch_size=len(texts), show_progress_bar=False,
                                 convert_to_numpy=True, normalize_embeddings=False)
