"""``codeseam watch``: keep an index current as files change, not only at query time.

``follow`` turns a refresher's watchers on and syncs each change set as it arrives (a watched
repo), or after a time-boxed stat scan every ``SCAN_EVERY`` seconds (a repo that cannot be
watched: the fallback, said in the events). Each sync is one ``IndexRun`` that stops between
write batches once ``stop`` is set, so stopping never leaves a file half-written: what was not
reached is synced by the next run.

Events for the caller (``on_event(kind, repo, data)``): ``sync`` (data: the run report),
``mode`` (data: the repo's freshness description, when it changes: watched, not watched and
why, folder missing), ``error`` (data: the message; the sync is retried later).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection
from typing import Any

log = logging.getLogger(__name__)

SCAN_EVERY = 2.0  # seconds between stat scans of the repos that are not watched
SCAN_BOX = 1.0  # seconds a stat scan may take before it resumes next time
QUIET = 0.2  # seconds without a change before a burst (a checkout) is synced


def follow(refresher: Any, on_event: Callable[[str, str, Any], None], stop: threading.Event, *,
           repo_ids: Collection[str] | None = None, scan_every: float = SCAN_EVERY) -> None:
    """Sync the repos (all indexed ones, or ``repo_ids``) until ``stop`` is set."""
    refresher.watching = True
    modes: dict[str, tuple[str, str]] = {}
    next_scan = 0.0
    while not stop.is_set():
        records = refresher.ix.store.repo_records()
        states = [refresher.state(r, rec) for r, rec in sorted(records.items())
                  if repo_ids is None or r in repo_ids]
        for st in states:
            mode = (st.mode, st.note)
            if modes.get(st.repo_id) != mode:
                modes[st.repo_id] = mode
                on_event("mode", st.repo_id, st.describe())
        now = time.monotonic()
        if now >= next_scan:
            for st in states:
                refresher.collect(st, now + SCAN_BOX, records.get(st.repo_id))
            next_scan = now + scan_every
        todo = [st for st in states if st.pending and st.mode != "missing"]
        if todo:
            _settle(refresher, stop)
        for st in todo:
            if stop.is_set():
                break
            with refresher.ix.index_lock:
                report = refresher.sync(st, stop_when=stop.is_set)
            if report is not None:
                on_event("sync", st.repo_id, report)
            elif st.note.startswith("the last sync failed"):
                on_event("error", st.repo_id, st.note)
                stop.wait(scan_every)  # a failing store: do not spin
        if not any(st.pending for st in states):
            with refresher.changed:
                if not stop.is_set():
                    refresher.changed.wait(timeout=max(0.05, next_scan - time.monotonic()))


def _settle(refresher: Any, stop: threading.Event) -> None:
    """Wait until no change came for ``QUIET`` seconds (at most a few seconds): a checkout of
    thousands of files is then one sync, not dozens."""
    deadline = time.monotonic() + 5.0
    while not stop.is_set() and time.monotonic() < deadline:
        with refresher.changed:
            if not refresher.changed.wait(timeout=QUIET):
                return


def wake(refresher: Any) -> None:
    """Wake a ``follow`` loop (after setting its stop event)."""
    with refresher.changed:
        refresher.changed.notify_all()
