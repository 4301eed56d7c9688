"""The dense backfill: vectors for chunk rows that were written keyword-only.

An indexing run writes every changed file's chunk rows first, without the vectors it does
not already have (``ChunkRow.dense = None``): chunking runs at megabytes per second and
embedding at tens of chunks per second, so BM25 can answer for the whole repository long
before the embedder is done. The backfill then walks the repo's keyword-only rows a page at
a time, embeds the texts whose vectors are not stored yet (by chunk hash), and rewrites the
rows with their vectors; dense search sees each row from then on.

Nothing here is held for the whole repository: a page of rows (``PAGE``) at a time. A run
killed in the middle keeps every page it rewrote; the next run's backfill picks up the rows
still without vectors, so nothing stored is embedded twice.

Pure heart: :func:`plan_page` (which texts a page must embed).
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from .. import faults
from ..errors import StoreError

PAGE = 512  # rows per backfill page: one embed call (sorted by length inside) and one rewrite


@dataclass
class BackfillStats:
    rows: int = 0  # rows that got their vector
    embedded: int = 0  # texts embedded (distinct chunk hashes)
    reused: int = 0  # rows that needed no embedding of their own (vector stored, or a twin's)
    embed_seconds: float = 0.0


def plan_page(rows: Sequence[Mapping[str, Any]], known: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(chunk hash, indexed text)`` to embed for a page: one per distinct hash that has no
    known vector, in the order the page first names it."""
    todo: dict[str, str] = {}
    for r in rows:
        h = r["chunk_hash"]
        if h not in known and h not in todo:
            todo[h] = r["indexed_text"]
    return list(todo.items())


def backfill(store, embedder, repo_id: str, *, write_guard: Callable[[], Any] | None = None,
             progress: Callable[..., None] | None = None, page: int = PAGE) -> BackfillStats:
    """Give every keyword-only row of ``repo_id`` its dense vector; returns what it did."""
    guard = write_guard or contextlib.nullcontext
    stats = BackfillStats()
    previous: list[str] = []
    if progress is not None:  # a count over the collection: only when someone shows it
        pending = store.pending_count(repo_id)
        if pending:
            progress("backfill", rows=pending)
    while True:
        rows = store.pending_rows(repo_id, page)
        if not rows:
            return stats
        ids = [r["id"] for r in rows]
        if ids == previous:  # the last rewrite did not land: never loop on it
            raise StoreError(f"the dense backfill of {repo_id!r} made no progress (rows {ids[:3]} "
                             "still have no vector after their rewrite)")
        previous = ids
        known: dict[str, Any] = dict(store.vectors_by_hash([r["chunk_hash"] for r in rows]))
        todo = plan_page(rows, known)
        if todo:
            faults.point("embed")
            t = time.perf_counter()
            vectors = embedder.embed_documents([text for _, text in todo])
            stats.embed_seconds += time.perf_counter() - t
            known.update({h: v for (h, _), v in zip(todo, vectors)})
        with guard():
            store.put_vectors(rows, [known[r["chunk_hash"]] for r in rows])
        stats.rows += len(rows)
        stats.embedded += len(todo)
        stats.reused += len(rows) - len(todo)
        if progress is not None:
            progress("embedded", count=len(rows))
