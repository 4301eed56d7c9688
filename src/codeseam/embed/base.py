"""The ``Embedder`` protocol and the one place where vectors are L2-normalised.

Backends subclass :class:`BaseEmbedder` and implement only ``_embed_batch`` (raw vectors,
any scale) and ``count_tokens``. Everything every backend must do the same way lives here:
empty input, batching (texts sorted by length so a batch pads little), the shape and
finiteness check, the over-long-input warning and counter, and normalisation.

Over-long input: the pipeline cuts chunks to fit ``max_tokens``; if a longer text still
arrives, the model reads only its first ``max_tokens`` tokens. That is never silent: a
warning with the count is logged and ``embedder.truncated`` grows by the number of texts
cut, so the pipeline can report it.
"""

from __future__ import annotations

import logging
import os
import re
from typing import Any, Protocol, runtime_checkable
from collections.abc import Sequence

import numpy as np

from ..errors import EmbeddingError

log = logging.getLogger(__name__)

# Word pieces for backends without a known tokenizer: words, numbers, single punctuation.
_ROUGH_TOKEN = re.compile(r"\w+|[^\w\s]")


@runtime_checkable
class Embedder(Protocol):
    """What the rest of codeseam codes against."""

    id: str  # stable identity stored in the index

    # read-only: a backend may hold them as class attributes or compute them (properties)
    @property
    def dim(self) -> int: ...

    @property
    def max_tokens(self) -> int | None: ...  # content tokens that fit (no special tokens); None if unknown

    def count_tokens(self, text: str) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length, as float32. The only normalisation in codeseam.

    A row without direction (zero, e.g. an empty text under the fake embedder, or a norm
    below 1e-12) becomes all zeros rather than NaN.
    """
    out = np.asarray(vectors, dtype=np.float32)
    if out.ndim == 1:
        return l2_normalise(out[None, :])[0]
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms = np.where(norms > 1e-12, norms, np.float32(np.inf))
    return (out / norms).astype(np.float32, copy=False)


def rough_token_count(text: str) -> int:
    """Words and punctuation marks: a tokenizer-free stand-in for word pieces."""
    return len(_ROUGH_TOKEN.findall(text))


def resolve_threads(threads: int = 0) -> int:
    """``threads`` if positive, else the number of CPU cores this process may use."""
    if threads > 0:
        return threads
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class BaseEmbedder:
    """Shared behaviour of every backend; see the module docstring."""

    id: str = ""
    dim: int = 0
    max_tokens: int | None = None
    batch_size: int = 32

    def __init__(self) -> None:
        self.truncated = 0  # texts longer than max_tokens seen so far (cut by the model)

    # -- to implement -----------------------------------------------------------------
    def _tokens(self) -> Any:
        """The model's token counter (``tokens.TokenCounter``); ``None``: no tokenizer, so
        counts are a rough estimate. Backends with a tokenizer override this."""
        return None

    def count_tokens(self, text: str) -> int:
        counter = self._tokens()
        return counter.count(text) if counter is not None else rough_token_count(text)

    def count_tokens_many(self, texts: Sequence[str]) -> list[int]:
        """Token counts of many texts (one batch call when the backend has a tokenizer)."""
        counter = self._tokens()
        return counter.count_many(texts) if counter is not None else [self.count_tokens(t) for t in texts]

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        """Raw (unnormalised) vectors of one batch, shape (len(texts), dim)."""
        raise NotImplementedError

    def _embed_query_raw(self, text: str) -> np.ndarray:
        """Raw vector of one query; a backend may use a faster path than for documents."""
        return self._embed_batch([text])

    # -- the contract -----------------------------------------------------------------
    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """float32 (n, dim), L2-normalised, in the order of ``texts``."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        lengths = self._check_lengths(texts)
        order = sorted(range(len(texts)), key=lambda i: -lengths[i])
        parts = []
        for start in range(0, len(order), self.batch_size):
            idx = order[start:start + self.batch_size]
            parts.append(self._checked(self._embed_batch([texts[i] for i in idx]), len(idx)))
        out = np.empty((len(texts), parts[0].shape[1]), dtype=np.float32)
        out[order] = np.concatenate(parts)
        return l2_normalise(out)

    def embed_query(self, text: str) -> np.ndarray:
        """float32 (dim,), L2-normalised."""
        self._check_lengths([text])
        return l2_normalise(self._checked(self._embed_query_raw(text), 1))[0]

    # -- helpers ----------------------------------------------------------------------
    def _check_lengths(self, texts: list[str]) -> list[int]:
        """Token counts (or char lengths when the limit is unknown); warn about long texts."""
        if self.max_tokens is None:
            return [len(t) for t in texts]
        counts = self.count_tokens_many(texts)
        over = [c for c in counts if c > self.max_tokens]
        if over:
            self.truncated += len(over)
            log.warning(
                "%d of %d text(s) exceed the %d-token limit of %s (longest: %d tokens); "
                "the model reads only the first %d tokens of each (%d truncated so far)",
                len(over), len(texts), self.max_tokens, self.id, max(over),
                self.max_tokens, self.truncated,
            )
        return counts

    def _checked(self, raw: np.ndarray, n: int) -> np.ndarray:
        arr = np.asarray(raw, dtype=np.float32)
        if arr.ndim != 2 or arr.shape[0] != n or (self.dim and arr.shape[1] != self.dim):
            raise EmbeddingError(
                f"{self.id} returned vectors of shape {arr.shape}, expected ({n}, {self.dim})"
            )
        if not np.isfinite(arr).all():
            raise EmbeddingError(f"{self.id} returned non-finite values (NaN or inf)")
        return arr

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.id} dim={self.dim} max_tokens={self.max_tokens}>"
