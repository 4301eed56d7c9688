"""The dense backfill: vectors for chunk rows that were written keyword-only.

An indexing run writes every changed file's chunk rows first, without the vectors it does
not already have (``ChunkRow.dense = None``): chunking runs at megabytes per second and
embedding at tens of chunks per second, so BM25 can answer for the whole repository long
before the embedder is done. The backfill then walks the repo's keyword-only rows a page at
a time, embeds the texts whose vectors are not stored yet (by chunk hash), and rewrites the
rows with their vectors; dense search sees each row from then on.

Vectors where they matter first: the backfill takes the rows by their file's role (stored per
chunk) in ``ROLE_ORDER``: source files first, then tests, docs, examples, then the rest
(benchmarks, build files, config, changelogs, fixtures, generated code), so dense search
covers the code that most questions are about soonest. Within a tier, rows go in id order.

Nothing here is held for the whole repository: a page of rows (``PAGE``) at a time. A run
killed in the middle keeps every page it rewrote; the next run's backfill picks up the rows
still without vectors (source first again), so nothing stored is embedded twice.

Vectors by choice (``--vectors``, recorded per repo as ``vectors`` in its repo record):
``all`` (the default) embeds every row, ``source`` only the rows of source files (the
``source`` tier), ``none`` nothing (a keyword-only repo). :func:`chosen_tiers` is the order
for a choice; rows outside it stay keyword-only and are never counted as waiting.

In a long-lived owner the backfill runs behind the keyword phase (``fill.VectorFiller``):
``page_guard`` is held around each page (read, embed, rewrite), so an indexing run that
deletes or rewrites rows never interleaves with a page, and ``stop`` ends it between pages.

Pure heart: :func:`plan_page` (which texts a page must embed) and :func:`tiers` (in which
order the roles are taken).
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Any
from collections.abc import Callable, Mapping, Sequence

from .. import faults
from ..errors import StoreError

PAGE = 512  # rows per backfill page: one embed call (sorted by length inside) and one rewrite
# the roles (discover/roles.py) whose rows get their vectors first, in this order; every other
# role after them, together
ROLE_ORDER = ("source", "test", "docs", "example")
VECTORS = ("all", "source", "none")  # the choices of ``--vectors``


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


def tiers(order: Sequence[str] | None = None) -> list[tuple[str, dict[str, Any]]]:
    """``(name, pending_rows filter)`` per tier: one per role of ``order`` (default
    ``ROLE_ORDER``), then the rest. An empty ``order`` is one tier of every row in id order
    (the order before roles were used: bench/bench_source_first.py measures both)."""
    order = ROLE_ORDER if order is None else order
    out: list[tuple[str, dict[str, Any]]] = [(role, {"roles": [role]}) for role in order]
    return out + [("other", {"other_than": list(order)})]


def chosen_tiers(vectors: str = "all") -> list[tuple[str, dict[str, Any]]]:
    """The tiers a repo's vectors choice embeds: every tier for ``all``, the source tier for
    ``source``, none for ``none``."""
    if vectors not in VECTORS:
        raise ValueError(f"vectors must be one of {', '.join(VECTORS)}, not {vectors!r}")
    every = tiers()
    return every if vectors == "all" else every[:1] if vectors == "source" else []


def outside(vectors: str) -> dict[str, Any] | None:
    """The row filter (``roles``/``other_than``) of the rows a choice leaves keyword-only:
    None for ``all`` (no row), ``{}`` for ``none`` (every row)."""
    chosen_tiers(vectors)
    return None if vectors == "all" else {"other_than": ["source"]} if vectors == "source" else {}


def pending_for(store, repo_id: str, vectors: str = "all") -> int:
    """Rows of ``repo_id`` that still wait for the vector its choice gives them."""
    return sum(store.pending_count(repo_id, **where) for _, where in chosen_tiers(vectors))


def backfill(store, embedder, repo_id: str, *, write_guard: Callable[[], Any] | None = None,
             progress: Callable[..., None] | None = None, page: int = PAGE, vectors: str = "all",
             page_guard: Callable[[], Any] | None = None, stop: Callable[[], bool] | None = None) -> BackfillStats:
    """Give every keyword-only row of ``repo_id`` that its ``vectors`` choice embeds its dense
    vector, source files first (``ROLE_ORDER``); returns what it did. ``stop()`` true between
    pages ends it there (the rest waits for the next backfill)."""
    stats = BackfillStats()
    chosen = chosen_tiers(vectors)
    if progress is not None and chosen:  # a count over the collection: only when someone shows it
        pending = pending_for(store, repo_id, vectors)
        if pending:
            progress("backfill", rows=pending)
    for tier, where in chosen:
        _backfill_tier(store, embedder, repo_id, where, stats, write_guard or contextlib.nullcontext,
                       progress, page, page_guard or contextlib.nullcontext, stop or (lambda: False))
        if progress is not None:
            progress("backfill_tier", tier=tier, rows=stats.rows)
        if stop is not None and stop():
            break
    return stats


def _backfill_tier(store, embedder, repo_id: str, where: dict[str, Any], stats: BackfillStats,
                   guard: Callable[[], Any], progress: Callable[..., None] | None, page: int,
                   page_guard: Callable[[], Any], stop: Callable[[], bool]) -> None:
    previous: list[str] = []
    while not stop():
        with page_guard():
            rows = _page(store, embedder, repo_id, where, stats, guard, page, previous)
        if not rows:
            return
        previous = rows
        if progress is not None:
            progress("embedded", count=len(rows))


def _page(store, embedder, repo_id: str, where: dict[str, Any], stats: BackfillStats,
          guard: Callable[[], Any], page: int, previous: list[str]) -> list[str]:
    """One page: read, embed what is not stored, rewrite; the ids it rewrote ([]: none left)."""
    rows = store.pending_rows(repo_id, page, **where)
    if not rows:
        return []
    ids = [r["id"] for r in rows]
    if ids == previous:  # the last rewrite did not land: never loop on it
        raise StoreError(f"the dense backfill of {repo_id!r} made no progress (rows {ids[:3]} "
                         "still have no vector after their rewrite)")
    known: dict[str, Any] = dict(store.vectors_by_hash([r["chunk_hash"] for r in rows]))
    todo = plan_page(rows, known)
    if todo:
        faults.point("embed")
        t = time.perf_counter()
        vectors = embedder.embed_documents([text for _, text in todo])
        stats.embed_seconds += time.perf_counter() - t
        known.update({h: v for (h, _), v in zip(todo, vectors, strict=True)})
    with guard():
        store.put_vectors(rows, [known[r["chunk_hash"]] for r in rows])
    stats.rows += len(rows)
    stats.embedded += len(todo)
    stats.reused += len(rows) - len(todo)
    return ids
