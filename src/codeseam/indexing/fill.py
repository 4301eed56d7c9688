"""The vectors behind the keyword phase: a long-lived index fills in the dense vectors of the
rows an indexing run wrote keyword-only, in the background, after the run has returned.

``codeseam index`` through an owner (keep-alive server, ``serve``, ``mcp``, ``watch``) returns
once every file is keyword-searchable (``IndexRun(defer_vectors=True)`` leaves the repo in
state ``embedding``); :class:`VectorFiller` then runs the dense backfill (``backfill.py``:
source files first, the repo's ``vectors`` choice honoured) one repo at a time in one thread.
Each page (read, embed, rewrite) holds the index's run lock, so an indexing run or a sync of
the same repo never interleaves with a page and goes between pages; its row rewrites hold the
read/write lock like every write. When a repo has every vector its choice asks for, its null
similarity is measured and its record becomes ``clean``.

Nothing is lost when the owner dies: the repo stays ``embedding`` in its record, and the next
owner that opens the index runs it again (``service.Service`` resumes such repos), the row
census of an interrupted run repairing a rewrite cut short. The rate (rows per second over
this fill) gives the estimate of the time left that ``status`` and searches show.

Pure heart: :func:`eta_seconds`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .backfill import BackfillStats, backfill, pending_for

log = logging.getLogger(__name__)

FILL_PAGE = 64  # rows per background page: the run lock is held for one page's embedding at most


def eta_seconds(pending: int, rows: int, seconds: float) -> float | None:
    """Seconds left for ``pending`` rows at the rate of ``rows`` rows in ``seconds`` (None
    before any row was done: no rate yet)."""
    if pending <= 0:
        return 0.0
    if rows <= 0 or seconds <= 0:
        return None
    return pending * seconds / rows


@dataclass
class Fill:
    """One repo's fill: what it has done so far."""

    repo_id: str
    started: float = field(default_factory=time.monotonic)
    stats: BackfillStats = field(default_factory=BackfillStats)
    error: str = ""

    def eta(self, pending: int) -> float | None:
        return eta_seconds(pending, self.stats.rows, time.monotonic() - self.started)

    def rate(self) -> float | None:
        seconds = time.monotonic() - self.started
        return self.stats.rows / seconds if self.stats.rows and seconds > 0 else None


class VectorFiller:
    """The background dense backfill of one open index (``api.Index.filler``)."""

    def __init__(self, store, embedder, *, lock: Any, run_lock: Any, page: int = FILL_PAGE) -> None:
        self.store, self.embedder, self.page = store, embedder, page
        self.lock, self.run_lock = lock, run_lock  # rows read/write; one indexing run at a time
        self._queue: list[str] = []  # repos waiting, the first being filled
        self._fills: dict[str, Fill] = {}  # the current or last fill of each repo
        self._cv = threading.Condition()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- what callers ask ------------------------------------------------------------------
    def want(self, repo_id: str) -> None:
        """Fill ``repo_id``'s missing vectors (queued behind the repos already waiting)."""
        with self._cv:
            if self._stop.is_set():
                return
            self.store.filling.add(repo_id)
            if repo_id not in self._queue:
                self._queue.append(repo_id)
                self._fills[repo_id] = Fill(repo_id)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="codeseam-vectors", daemon=True)
                self._thread.start()

    def forget(self, repo_id: str) -> None:
        """Stop filling ``repo_id`` (it is being removed); the caller holds the run lock, so no
        page of it is in flight."""
        with self._cv:
            if repo_id in self._queue:
                self._queue.remove(repo_id)
            self.store.filling.discard(repo_id)
            self._cv.notify_all()

    def busy(self, repo_id: str | None = None) -> bool:
        with self._cv:
            return bool(self._queue) if repo_id is None else repo_id in self._queue

    def fill(self, repo_id: str) -> Fill | None:
        return self._fills.get(repo_id)

    def wait(self, repo_id: str, timeout: float | None = None) -> bool:
        """Wait until ``repo_id`` is no longer being filled; True when it is not."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cv:
            while repo_id in self._queue:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cv.wait(left)
            return True

    def wait_for(self, repo_id: str, report) -> None:
        """Wait until ``repo_id`` is filled, adding what the filler embedded meanwhile to
        ``report`` (an ``IndexReport`` whose run deferred its vectors); a failed fill raises."""
        fill = self.fill(repo_id)
        before = fill.stats.embedded if fill is not None else 0
        self.wait(repo_id)
        fill = self.fill(repo_id)
        if fill is not None:
            report.chunks_embedded += fill.stats.embedded - before
            if fill.error:
                from ..errors import StoreError

                raise StoreError(f"filling the vectors of {repo_id!r} failed: {fill.error}",
                                 hint="run the index again; it finishes what this run left")
        report.chunks_pending = 0

    def eta(self, repos: Sequence[str], records: Mapping[str, Mapping[str, Any]]) -> float | None:
        """Seconds until the vectors of ``repos`` are complete at the rates measured here (None:
        one of them is not being filled by this filler, or it has no page done yet)."""
        total = 0.0
        for r in repos:
            fill = self.fill(r) if self.busy(r) else None
            if fill is None:
                return None
            with self.lock:
                left = fill.eta(pending_for(self.store, r, records[r].get("vectors") or "all"))
            if left is None:
                return None
            total += left
        return round(total, 1) if repos else None

    def close(self, timeout: float = 30.0) -> None:
        """Stop after the page in flight (the repo stays ``embedding``: the next owner goes on)."""
        self._stop.set()
        with self._cv:
            self._cv.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)

    # -- the thread ------------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.is_set():
            with self._cv:
                if not self._queue:
                    return
                repo_id = self._queue[0]
                fill = self._fills.setdefault(repo_id, Fill(repo_id))
                if not fill.stats.rows:  # the rate counts from its first page, not from its queueing
                    fill.started = time.monotonic()
            try:
                self._fill(repo_id, fill)
            except Exception as exc:  # noqa: BLE001 - the repo stays "embedding"; the next sync repairs it
                fill.error = f"{type(exc).__name__}: {str(exc)[:300]}"
                log.warning("%s: filling the vectors failed (%s); the next index run finishes them",
                            repo_id, fill.error)
            with self._cv:
                if self._queue and self._queue[0] == repo_id and not self._stop.is_set():
                    self._queue.pop(0)
                    self.store.filling.discard(repo_id)
                self._cv.notify_all()

    def _fill(self, repo_id: str, fill: Fill) -> None:
        def stop() -> bool:
            return self._stop.is_set() or repo_id not in self._queue

        t = time.perf_counter()
        while not stop():
            record = self.store.repo_records().get(repo_id) or {}
            stats = backfill(self.store, self.embedder, repo_id, write_guard=lambda: self.lock,
                             page_guard=lambda: self.run_lock, stop=stop, page=self.page,
                             vectors=record.get("vectors") or "all", progress=_counter(fill.stats))
            fill.stats.embedded += stats.embedded
            fill.stats.reused += stats.reused
            fill.stats.embed_seconds += stats.embed_seconds
            if stop() or self._complete(repo_id):
                break
        if not stop():
            log.info("%s: vectors complete (%d rows, %d embedded, %.1fs)", repo_id, fill.stats.rows,
                     fill.stats.embedded, time.perf_counter() - t)

    def _complete(self, repo_id: str) -> bool:
        """Every vector the repo's choice asks for is written: measure its null similarity and
        mark it clean; False when rows wait again (a run wrote some since the last page)."""
        from .run import null_similarity

        with self.run_lock:
            record = self.store.repo_records().get(repo_id)
            if not record or record.get("state") != "embedding":
                return True  # removed, or a run that was not deferred finished it
            if pending_for(self.store, repo_id, record.get("vectors") or "all"):
                return False  # rows written since the last page: the loop takes them next
            null = null_similarity(self.store, self.embedder, repo_id, lambda: self.lock)
            with self.lock:
                self.store.put_repo_record(repo_id, {**record, "state": "clean", "null_similarity": null})
            return True


def _counter(stats: BackfillStats) -> Callable[..., None]:
    def progress(event: str, **f: Any) -> None:
        if event == "embedded":
            stats.rows += f.get("count", 0)

    return progress

