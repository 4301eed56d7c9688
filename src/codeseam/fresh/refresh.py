"""Bringing repos up to date before a query, and keeping them up to date in owners.

A :class:`Refresher` belongs to one open :class:`~codeseam.api.Index`. Per repo it keeps a
dirty set, fed by a watcher (``watch.py``, in long-lived owners) or by a time-boxed stat scan
(``scan.py``, everywhere else, and where watching is impossible), and a mode for ``status``:
``watch``, ``scan`` (with the reason when watching was wanted) or ``missing`` (the folder is
gone: nothing is deleted, hits say so).

Per query (``begin`` ... ``finish``; setting ``freshness``): ``sync`` re-indexes the dirty
paths of the repos in scope (``discover.subset`` + a scoped ``IndexRun``; a full discovery
when ignore files changed or most of the tree did), stopping between write batches when the
query's ``freshness_budget`` is spent; every hit is then checked against its file
(``hits.py``), and a stale one's file is synced and the search repeated once while budget is
left. ``check`` only checks and flags; ``off`` does neither. What a query could not finish an
owner finishes in the background (``catch-up``); a one-shot command leaves it to the next.
Write batches hold the index's lock, so a search sees each file old or new, never mixed.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import CodeseamError
from ..records import SearchResult
from .hits import check_hits
from .repo import Query, RepoFresh, expand, is_git, load_manifest, readable_again, too_many
from .scan import StatScan
from .watch import Watcher, WatchUnavailable

log = logging.getLogger(__name__)

SCAN_SHARE = 0.5  # of the query's budget, at most, for a stat scan
DIRTY_CAP = 100_000  # dirty paths above this: forget them, discover the whole tree


class Refresher:
    def __init__(self, ix: Any, *, watch: bool = False) -> None:
        self.ix = ix
        self.watching = watch
        self._repos: dict[str, RepoFresh] = {}
        self._lock = threading.RLock()
        self._closed = threading.Event()
        self._query_syncs = 0
        self._catchup: threading.Thread | None = None
        self.changed = threading.Condition()  # notified on each watcher change set (codeseam watch)

    @property
    def settings(self):
        return self.ix.settings

    # -- repo states -------------------------------------------------------------------------
    def enable_watching(self, records: dict[str, dict] | None = None) -> None:
        """Watch every indexed repo from now on (long-lived owners)."""
        self.watching = True
        for repo_id, record in (records if records is not None else self.ix.store.repo_records()).items():
            self.state(repo_id, record)

    def state(self, repo_id: str, record: dict) -> RepoFresh:
        root = record.get("root", "")
        with self._lock:
            st = self._repos.get(repo_id)
            if st is None or st.root != root:
                if st is not None and st.watcher is not None:
                    st.watcher.stop()
                st = self._repos[repo_id] = RepoFresh(repo_id, root)
        with st.lock:
            if not root or not os.path.isdir(root):
                if st.mode != "missing":
                    if st.watcher is not None:
                        st.watcher.stop()
                    st.watcher, st.mode = None, "missing"
                st.note = f"the repo folder {root or '?'} no longer exists: its files stay in the index as they " \
                          f"were; restore the folder, or `codeseam remove {repo_id}`"
                return st
            if st.mode == "missing":  # it is back
                st.mode, st.note, st.full, st.watch_refused = "scan", "", True, False
            if self.watching and st.watcher is None and not st.watch_refused:
                self._start_watch(st)
        return st

    def _start_watch(self, st: RepoFresh) -> None:
        watcher = Watcher(st.root, lambda paths: self._dirty(st, paths), lambda why: self._watch_failed(st, why))
        try:
            watcher.start()
        except WatchUnavailable as exc:
            st.mode, st.note, st.watch_refused = "scan", f"not watched: {exc}", True
            log.warning("%s: %s; each query stat-scans it instead", st.repo_id, exc)
            return
        st.watcher, st.mode, st.note, st.rescan = watcher, "watch", "", True

    def _not_index_data(self, st: RepoFresh, paths: set[str]) -> set[str]:
        """``paths`` less those in the index's own data dir (its writes are no repo change)."""
        from ..discover.contain import Containment

        contain = Containment(st.root, self.settings.private_dirs)
        return {p for p in paths if contain.excluded(p) is None} if contain.exclude else paths

    def _dirty(self, st: RepoFresh, paths: set[str]) -> None:
        from ..discover.subset import is_ignore_file

        paths = self._not_index_data(st, paths)
        if not paths:
            return
        with st.lock:
            if any(map(is_ignore_file, paths)):
                st.full = True
            st.dirty |= paths
            if len(st.dirty) > DIRTY_CAP:
                st.dirty.clear()
                st.full = True
        with self.changed:
            self.changed.notify_all()

    def _watch_failed(self, st: RepoFresh, why: str) -> None:
        with st.lock:
            st.watcher, st.rescan, st.watch_refused = None, True, True
            st.mode, st.note = ("missing" if not os.path.isdir(st.root) else "scan"), f"not watched: {why}"
        with self.changed:
            self.changed.notify_all()

    def status(self, repo_id: str, record: dict) -> dict[str, Any]:
        """``{"mode", "note", "pending", "last_sync"}`` of a repo, for ``status``."""
        st = self._repos.get(repo_id)
        if st is not None or self.watching:
            st = self.state(repo_id, record)  # notices a folder that went or came back
            out = st.describe()
        elif not record.get("root") or not os.path.isdir(record["root"]):
            out = {"mode": "missing", "note": f"the repo folder {record.get('root') or '?'} no longer exists",
                   "pending": 0, "last_sync": None}
        else:
            out = {"mode": "scan", "note": "no watcher in a one-shot command: each search stat-scans the repo",
                   "pending": 0, "last_sync": None}
        if self.settings.freshness == "off":
            out["mode"], out["note"] = "off", "freshness is off: searches answer from the index as it is"
        lost = record.get("lost") or {}
        if lost:
            shown = "; ".join(f"{p} ({why})" for p, why in sorted(lost.items())[:5]) + (" ..." if len(lost) > 5 else "")
            out["note"] = "; ".join(x for x in (out["note"], f"{len(lost)} indexed files left the index, no longer "
                                                             f"readable as text: {shown}") if x)
        return out

    # -- finding changes --------------------------------------------------------------------
    def collect(self, st: RepoFresh, deadline: float | None, record: dict | None = None) -> None:
        """Add what changed on disk to the dirty set: a stat scan unless a watcher runs (after
        its start-up scan); and files that left the index unreadable, once readable again."""
        if st.mode == "missing":
            return
        for path in (record or {}).get("lost") or ():
            if readable_again(st.root, path, self.settings.max_file_bytes):
                with st.lock:
                    st.dirty.add(path)
        if st.mode == "watch" and not st.rescan:
            return
        with st.lock:
            if st.manifest is None:
                load_manifest(self.ix.store, st)
            assert st.manifest is not None  # load_manifest sets it
            if st.scan is None:
                if record is None:
                    record = self.ix.store.repo_records().get(st.repo_id, {})
                st.scan = StatScan(st.root, st.manifest, float(record.get("last_sync") or 0.0))
            result = st.scan.run(deadline)
            st.dirty |= self._not_index_data(st, result.changed | result.added)
            if result.complete:
                st.rescan = False

    # -- a query ----------------------------------------------------------------------------
    def begin(self, repo_ids: Iterable[str], records: dict[str, dict]) -> Query:
        """Before retrieval: find the changes of the repos in scope and, in sync mode, write
        them within the budget."""
        budget = self.settings.freshness_budget
        q = Query([], time.monotonic() + budget)
        if self.settings.freshness == "off":
            return q
        q.repos = [self.state(r, records[r]) for r in repo_ids if r in records]
        self._fence(q.repos)
        scan_deadline = time.monotonic() + budget * SCAN_SHARE
        for st in q.repos:
            self.collect(st, scan_deadline, records.get(st.repo_id))
        if self.settings.freshness == "sync":
            self._sync_within(q, [st for st in q.repos if st.pending])
        return q

    def finish(self, q: Query, result: SearchResult, again: Callable[[], SearchResult]) -> SearchResult:
        """After retrieval: check every hit against its file; in sync mode a stale hit's file
        is synced and the search repeated once, while the budget lasts."""
        if self.settings.freshness == "off":
            return result
        checked = self.check(result)
        stale = [h for h in checked.hits if h.stale]
        if stale and self.settings.freshness == "sync" and time.monotonic() < q.deadline:
            by_repo = {st.repo_id: st for st in q.repos}
            todo = []
            for h in stale:
                st = by_repo.get(h.repo)
                if st is not None and st.mode != "missing":
                    with st.lock:
                        st.dirty.add(h.path)
                    todo.append(st)
            if todo and self._sync_within(q, list({id(s): s for s in todo}.values())):
                checked = self.check(again())
        for st in q.repos:
            q.notes += self._notes(st)
        return dataclasses.replace(checked, notes=tuple(dict.fromkeys([*checked.notes, *q.notes])))

    def check(self, result: SearchResult) -> SearchResult:
        roots = {st.repo_id: st.root for st in self._repos.values()}
        missing = {h.repo for h in result.hits} - set(roots)
        if missing:
            records = self.ix.store.repo_records()
            roots.update({r: records.get(r, {}).get("root", "") for r in missing})
        hits = check_hits(result.hits, roots, max_file_bytes=self.settings.max_file_bytes,
                          scrub_for=self._scrubber)
        return dataclasses.replace(result, hits=hits)

    def _fence(self, states: list[RepoFresh]) -> None:
        """Wait until each watcher has handed over the changes made before this query."""
        from .watch import FENCE_TIMEOUT

        fences = [f for f in (st.watcher.fence() for st in states if st.watcher is not None) if f is not None]
        deadline = time.monotonic() + FENCE_TIMEOUT
        for done in fences:
            done.wait(max(0.0, deadline - time.monotonic()))

    def _scrubber(self, root: str):
        if not self.settings.scrub:
            return None
        from ..scrub import load_allow, scrub_text

        allow = load_allow(root, self.settings.scrub_allow)
        return lambda text, path: scrub_text(text, allow=allow, path=path).text

    def _notes(self, st: RepoFresh) -> list[str]:
        if st.mode == "missing":
            return [f"{st.repo_id}: {st.note}"]
        if st.pending:
            n = "all" if st.full else str(len(st.dirty))
            why = ("freshness is check: nothing is written" if self.settings.freshness == "check"
                   else "not synced within the query's budget; hits are checked against the files")
            return [f"{st.repo_id}: {n} changed paths not in the index yet{_named(st)} ({why})"]
        return []

    # -- syncing ------------------------------------------------------------------------------
    def _sync_within(self, q: Query, todo: list[RepoFresh]) -> bool:
        """Sync ``todo`` before ``q.deadline`` if the index can be had; True when it ran."""
        if not todo:
            return False
        lock = self.ix.index_lock
        busy = lock.locked() and self._query_syncs == 0  # a job or a catch-up: do not wait for it
        if busy or not lock.acquire(timeout=max(0.0, q.deadline - time.monotonic())):
            q.notes.append("an indexing run holds the index: hits are checked against the files")
            return False
        self._query_syncs += 1
        try:
            for st in todo:
                self.sync(st, stop_when=lambda: time.monotonic() > q.deadline)
        finally:
            self._query_syncs -= 1
            lock.release()
        if self.watching and any(st.pending for st in todo):
            self.catch_up()
        return True

    def catch_up(self) -> None:
        """Finish the pending syncs in the background (owners), one at a time."""
        with self._lock:
            if self._closed.is_set() or (self._catchup is not None and self._catchup.is_alive()):
                return
            self._catchup = threading.Thread(target=self._catch_up, name="codeseam-catch-up", daemon=True)
            self._catchup.start()

    def _catch_up(self) -> None:
        while not self._closed.is_set():
            todo = [st for st in list(self._repos.values()) if st.pending and st.mode != "missing"]
            if not todo:
                return
            with self.ix.index_lock:
                for st in todo:
                    self.sync(st, stop_when=self._closed.is_set)

    def sync(self, st: RepoFresh, *, stop_when: Callable[[], bool] | None = None):
        """Write the dirty paths of ``st`` (the caller holds the index lock). Returns the run's
        report, or None when there was nothing to do or it failed (the note says why)."""
        from ..discover import discover
        from ..indexing.run import IndexRun

        with st.lock:
            paths, full = set(st.dirty), st.full
            st.dirty.clear()
            st.full = False
        if not (paths or full) or not os.path.isdir(st.root):
            return None
        ix, started = self.ix, time.time()
        try:
            record = ix.store.repo_records().get(st.repo_id)
            if record is None:  # removed meanwhile
                return None
            if st.manifest is None:
                load_manifest(self.ix.store, st)
            assert st.manifest is not None  # load_manifest sets it
            store = ix.store
            # a repo whose vectors this process is filling has every file's keyword rows: its
            # manifest is whole, so a change needs a scoped sync, not a whole discovery
            settled = record.get("state") == "clean" or (record.get("state") == "embedding"
                                                         and st.repo_id in store.filling)
            full = (full or not settled or (store.unclean and st.repo_id not in store.verified))
            scope = None if full else expand(st, paths)
            if scope is not None and too_many(st, scope):
                scope = None
            if scope is None:
                discovery = discover(st.root, max_file_bytes=self.settings.max_file_bytes,
                                     exclude=self.settings.private_dirs)
            else:
                from ..discover.subset import discover_paths

                discovery = discover_paths(st.root, scope, known=st.manifest, is_git=is_git(st),
                                           max_file_bytes=self.settings.max_file_bytes,
                                           exclude=self.settings.private_dirs)
            enricher = ix._enricher()
            try:
                run = IndexRun(store, ix.embedder, self.settings, st.root, st.repo_id, write_guard=lambda: ix.lock,
                               enricher=enricher, scope=scope, stop_when=stop_when)
                report = run.run(discovery)
            finally:
                if enricher is not None:
                    enricher.close()
        except CodeseamError as exc:
            with st.lock:
                st.dirty |= paths
                st.full |= full
            st.note = f"the last sync failed: {exc.message}"
            log.warning("%s: sync failed: %s", st.repo_id, exc)
            return None
        with st.lock:
            st.dirty |= set(report.unfinished)
            if st.note.startswith("the last sync failed"):
                st.note = ""
        load_manifest(self.ix.store, st, scope)
        assert st.manifest is not None  # load_manifest sets it
        if st.scan is not None:
            if scope is None:
                st.scan.reset(st.manifest, started)
            else:
                st.scan.update(st.manifest, scope)
        st.last_sync = {"at": started, "files": report.files_indexed + report.files_deleted,
                        "chunks_embedded": report.chunks_embedded, "seconds": round(report.seconds, 3),
                        "left": len(report.unfinished)}
        return report

    # -- lifecycle ------------------------------------------------------------------------------
    def close(self, timeout: float = 30.0) -> None:
        """Stop the watchers and a catch-up (at its next batch)."""
        self._closed.set()
        with self._lock:
            states = list(self._repos.values())
        for st in states:
            if st.watcher is not None:
                st.watcher.stop()
        if self._catchup is not None:
            self._catchup.join(timeout)
        with self.changed:
            self.changed.notify_all()


NAMED = 3  # a note names this many of the changed paths


def _named(st: RepoFresh) -> str:
    """``: a.py, b/c.py and 4 more`` for the changed paths of ``st`` (none for a whole resync)."""
    if st.full or not st.dirty:
        return ""
    from ..indexing.names import redacted_names

    paths = sorted(st.dirty)
    shown = paths[:NAMED]
    redacted = redacted_names(shown)  # a name shaped like a secret is shown redacted, as everywhere
    more = f" and {len(paths) - NAMED} more" if len(paths) > NAMED else ""
    return ": " + ", ".join(redacted.get(p, p) for p in shown) + more
