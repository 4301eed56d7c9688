"""A deterministic, fast embedder for unit tests: no model, no torch.

A text's vector is a signed hashed bag of its words plus the character trigrams of each
word, so texts that share words or word parts get similar vectors (enough for retrieval
tests to mean something). Hashing uses CRC-32, so vectors are the same in every process.
Tokens are words and punctuation marks; with ``max_tokens`` set, only the first
``max_tokens`` tokens count, as a real model's truncation would.
"""

from __future__ import annotations

import re
import zlib

import numpy as np

from .base import BaseEmbedder

_TOKEN = re.compile(r"\w+|[^\w\s]")


class FakeEmbedder(BaseEmbedder):
    def __init__(self, dim: int = 64, max_tokens: int | None = None, batch_size: int = 32) -> None:
        super().__init__()
        if dim < 2:
            raise ValueError("FakeEmbedder needs dim >= 2")
        self.dim = dim
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self.id = f"fake:{dim}"

    def count_tokens(self, text: str) -> int:
        return len(_TOKEN.findall(text))

    def _features(self, text: str) -> list[str]:
        tokens = _TOKEN.findall(text.lower())
        if self.max_tokens is not None:
            tokens = tokens[: self.max_tokens]
        feats: list[str] = []
        for tok in tokens:
            feats.append("w:" + tok)
            padded = f"<{tok}>"
            feats.extend("t:" + padded[i:i + 3] for i in range(len(padded) - 2))
        return feats

    def _vector(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dim, dtype=np.float32)
        for feat in self._features(text):
            h = zlib.crc32(feat.encode("utf-8", "surrogatepass"))
            weight = 2.0 if feat.startswith("w:") else 1.0
            vec[h % self.dim] += weight if (h >> 31) & 1 else -weight
        return vec

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        return np.stack([self._vector(t) for t in texts])
