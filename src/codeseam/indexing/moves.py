"""Vectors for files that moved: a renamed file's chunks keep their embeddings.

A chunk's hash covers its ``indexed_text``, whose header starts with the file's path, so a
renamed file's chunks get new hashes and would all be embedded again. When a sync deletes
paths and indexes new ones (a rename, a folder moved, a branch switch), the deleted paths'
rows are read first (``MovedVectors``), and a new chunk whose text, language and symbol equal
a deleted row's takes that row's vector instead of being embedded.

The trade-off, said plainly: such a vector was computed with the old path in its header. The
row's ``indexed_text`` (and so BM25, which Milvus derives from it) carries the new path at
once; the dense vector keeps the old path's words until the chunk itself changes or the index
is rebuilt (``codeseam index --rebuild``). The path is one line of a header of several, beside
the code, so the vector moves little; re-embedding a moved tree costs minutes per thousand
chunks on a laptop CPU.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..records import Chunk, content_hash


def move_key(text: str, language: str, symbol: str) -> str:
    return content_hash("moved", language, symbol, text)


class MovedVectors:
    """The vectors of the chunk rows of ``paths`` (being deleted), by chunk text."""

    def __init__(self, store: Any, repo_id: str, paths: Sequence[str]) -> None:
        self.store = store
        self._ids: dict[str, str] = {}
        for row in store.chunk_texts(repo_id, paths) if paths else ():
            self._ids.setdefault(move_key(row["text"], row["language"], row["symbol"]), row["id"])

    def __bool__(self) -> bool:
        return bool(self._ids)

    def vectors(self, chunks: Sequence[Chunk]) -> dict[str, list[float]]:
        """chunk hash -> vector, for the ``chunks`` whose text a deleted row had."""
        want = {}
        for c in chunks:
            row = self._ids.get(move_key(c.text, c.language, c.symbol))
            if row is not None:
                want[c.hash] = row
        if not want:
            return {}
        found = self.store.vectors_by_id(list(set(want.values())))
        return {h: found[row] for h, row in want.items() if row in found}
