"""A document-vector cache for the eval's indexes (SQLite, in the eval cache folder).

The index already reuses the vectors of unchanged chunks within one collection. When the
chunker's version changes, the eval's collection is rebuilt from scratch; most chunks'
``indexed_text`` is often unchanged, and re-embedding all of them with the bundled model
costs minutes. This wrapper keeps every document vector by (embedder id, SHA-256 of the
text), so a rebuild embeds only texts never seen before. Queries are not cached. The
vectors are the embedder's own, already normalised, stored as float32 bytes.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np


class CachedEmbedder:
    """Delegates to ``inner``; ``embed_documents`` looks in the cache first."""

    def __init__(self, inner: Any, path: str | Path) -> None:
        self.inner = inner
        self.hits = 0
        self.misses = 0
        self._db = sqlite3.connect(str(path))
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (embedder TEXT, key TEXT, dim INTEGER, "
                         "vec BLOB, PRIMARY KEY (embedder, key))")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        keys = [hashlib.sha256(t.encode("utf-8", "surrogatepass")).hexdigest() for t in texts]
        found = self._lookup(list(dict.fromkeys(keys)))
        todo = list(dict.fromkeys(k for k in keys if k not in found))
        if todo:
            first = {k: t for k, t in zip(keys, texts, strict=True)}
            vecs = self.inner.embed_documents([first[k] for k in todo])
            rows = [(self.inner.id, k, int(v.shape[0]), np.asarray(v, dtype=np.float32).tobytes())
                    for k, v in zip(todo, vecs, strict=True)]
            with self._db:
                self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)", rows)
            found.update({k: np.asarray(v, dtype=np.float32) for k, v in zip(todo, vecs, strict=True)})
        missed = set(todo)
        self.misses += len(todo)
        self.hits += sum(1 for k in keys if k not in missed)
        if not texts:
            return np.zeros((0, self.inner.dim), dtype=np.float32)
        return np.stack([found[k] for k in keys])

    def _lookup(self, keys: list[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for i in range(0, len(keys), 500):
            batch = keys[i:i + 500]
            marks = ",".join("?" * len(batch))
            for key, dim, blob in self._db.execute(
                    f"SELECT key, dim, vec FROM vectors WHERE embedder = ? AND key IN ({marks})",
                    [self.inner.id, *batch]):
                vec = np.frombuffer(blob, dtype=np.float32)
                if vec.shape[0] == dim:
                    out[key] = vec
        return out

    def close(self) -> None:
        self._db.close()
