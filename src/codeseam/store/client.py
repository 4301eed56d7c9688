"""A thin wrapper over ``pymilvus.MilvusClient``: bounded retries, Milvus failures as
``StoreError``, primary-key paging past Milvus' 16,384-row query window, batched writes.

pymilvus retries a failed RPC up to 75 times with back-off (minutes when the server is
gone); every call here passes a small ``retry_times`` instead.
"""

from __future__ import annotations

import logging
import os
from contextlib import contextmanager
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from .. import faults
from ..errors import REPAIR_HINT, CodeseamError, StoreError
from .expr import all_of, eq, is_in, literal

log = logging.getLogger(__name__)

MAX_WINDOW = 16_384  # Milvus' cap on limit (+offset) of a query or search
WRITE_ROWS = 512
WRITE_BYTES = 16 << 20
DELETE_IDS = 1_000
PATHS_PER_QUERY = 256  # paths in one ``path in [...]`` filter
IDS_PER_QUERY = 256  # primary keys in one ``id in [...]`` filter


# MilvusClient methods that do not pass ``retry_times`` on (pymilvus 2.5 ``insert``): without a
# deadline a dead Lite server (a full disk) is retried with back-off for hours.
_DROPS_RETRY_TIMES = frozenset({"insert"})
CALL_DEADLINE = 30


FULL_DISK_BYTES = 64 << 20  # less free space than this where the index lives: call the disk full


def dead_lite_hint(db_path: str) -> str:
    """What to do when the Lite server process died: the disk is named only when it is full."""
    import shutil

    try:
        full = shutil.disk_usage(os.path.dirname(db_path) or ".").free < FULL_DISK_BYTES
    except OSError:
        full = False
    first = "the disk holding the index is full: free space, then " if full else ""
    return (f"{first}run the command again: the index is reopened (a running server reopens it on "
            "its next request), and `codeseam index PATH` repairs what a failed write left behind")


class MilvusCalls:
    """The calls the store makes, each mapped onto StoreError on failure."""

    page = MAX_WINDOW  # rows per primary-key page (tests lower it)

    def __init__(self, client: Any, *, retry_times: int, where: str,
                 alive: Callable[[], bool] | None = None, log_tail: Callable[[], str] | None = None) -> None:
        self.client = client
        self.retry_times = retry_times
        self.where = where
        self._alive = alive
        self._log_tail = log_tail

    # -- errors ------------------------------------------------------------------------------
    @contextmanager
    def errors(self, what: str) -> Iterator[None]:
        import grpc
        from pymilvus.exceptions import MilvusException

        try:
            yield
        except CodeseamError:
            raise
        except (MilvusException, grpc.RpcError) as exc:
            raise self._error(what, exc) from exc

    def alive(self) -> bool:
        """False once the Milvus Lite server process this store started has exited."""
        return self._alive is None or self._alive()

    def _error(self, what: str, exc: BaseException) -> StoreError:
        text = str(getattr(exc, "message", "") or exc).replace("\n", " ")
        hint = REPAIR_HINT
        if not self.alive():
            tail = self._log_tail() if self._log_tail else ""
            text = "the Milvus Lite server process stopped" + (f": {tail[-300:]}" if tail else "")
            hint = dead_lite_hint(self.where)
        elif "connect" in text.lower() or "unavailable" in text.lower():
            text = f"cannot reach Milvus ({text[:200]})"
        return StoreError(f"Milvus failed to {what} ({self.where}): {text[:400]}", hint=hint)

    def call(self, what: str, method: str, *args: Any, **kwargs: Any) -> Any:
        if method in _DROPS_RETRY_TIMES:  # bounded by a deadline instead (whole seconds: pymilvus'
            kwargs.setdefault("timeout", CALL_DEADLINE)  # retry loop only reads an int timeout)
        with self.errors(what):
            return getattr(self.client, method)(*args, retry_times=self.retry_times, **kwargs)

    # -- reads -------------------------------------------------------------------------------
    def query(self, collection: str, expr: str, fields: Sequence[str],
              limit: int | None = MAX_WINDOW) -> list[dict]:
        extra = {} if limit is None else {"limit": limit}
        return self.call(f"query {collection}", "query", collection, filter=expr,
                         output_fields=list(fields), **extra)

    def query_all(self, collection: str, expr: str, fields: Sequence[str]) -> Iterator[dict]:
        """Every row matching ``expr``, paged by primary key (Milvus returns the smallest
        ``limit`` matching keys in key order)."""
        last: str | None = None
        out = list(dict.fromkeys(["id", *fields]))
        while True:
            page_expr = expr if last is None else all_of(expr, f"id > {literal(last)}")
            rows = self.query(collection, page_expr, out, limit=self.page)
            yield from rows
            if len(rows) < self.page:
                return
            last = max(r["id"] for r in rows)

    def query_paths(self, collection: str, repo_id: str, paths: Sequence[str], fields: Sequence[str]) -> Iterator[dict]:
        """Every row of ``repo_id`` whose ``path`` is one of ``paths`` (each a quotable literal:
        the caller leaves out what no literal can say), ``PATHS_PER_QUERY`` paths a query (on
        Lite each query scans the collection)."""
        for i in range(0, len(paths), PATHS_PER_QUERY):
            yield from self.query_all(collection, all_of(eq("repo_id", repo_id),
                                                         is_in("path", paths[i:i + PATHS_PER_QUERY])), fields)

    def query_ids(self, collection: str, ids: Sequence[str], fields: Sequence[str], where: str = "") -> Iterator[dict]:
        """The rows whose primary key is one of ``ids`` (quotable literals) and that match
        ``where``, ``IDS_PER_QUERY`` keys a query, in no particular order."""
        for i in range(0, len(ids), IDS_PER_QUERY):
            yield from self.query(collection, all_of(is_in("id", ids[i:i + IDS_PER_QUERY]), where), fields)

    def count(self, collection: str, expr: str) -> int:
        rows = self.query(collection, expr, ["count(*)"], limit=None)
        return int(rows[0]["count(*)"]) if rows else 0

    def exists(self, collection: str, expr: str) -> bool:
        return bool(self.query(collection, expr, ["id"], limit=1))

    # -- writes ------------------------------------------------------------------------------
    def upsert(self, collection: str, rows: Sequence[dict], sizes: Sequence[int] | None = None,
               point: str = "write", method: str = "upsert") -> None:
        """Write ``rows`` in batches; ``method="insert"`` when the ids are known not to be stored
        (Milvus Lite's upsert pays for a delete even then: ~0.4 s per call at 75k rows)."""
        batch: list[dict] = []
        size = 0
        for i, row in enumerate(rows):
            n = sizes[i] if sizes is not None else 0
            if batch and (len(batch) >= WRITE_ROWS or size + n > WRITE_BYTES):
                faults.point(point)
                self.call(f"write to {collection}", method, collection, batch)
                batch, size = [], 0
            batch.append(row)
            size += n
        if batch:
            faults.point(point)
            self.call(f"write to {collection}", method, collection, batch)

    def delete_ids(self, collection: str, ids: Sequence[str]) -> None:
        for i in range(0, len(ids), DELETE_IDS):
            faults.point("delete")
            self.call(f"delete from {collection}", "delete", collection,
                      filter=is_in("id", ids[i:i + DELETE_IDS]))

    def delete_where(self, collection: str, expr: str) -> None:
        faults.point("delete")
        self.call(f"delete from {collection}", "delete", collection, filter=expr)
