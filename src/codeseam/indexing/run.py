"""One indexing run: discover → read → scrub → chunk → (enrich) → embed → store.

The order of writes follows the crash-safe protocol in ``plan.py``. Every file-level problem
becomes a ``Skip`` with a reason; store and embedder failures are fatal and the next run
repairs whatever the failed one left.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import faults
from ..chunk import chunk_file
from ..discover import Discovery, read_text
from ..discover.roles import HEAD_CHARS, SOURCE, file_role
from ..errors import FileSkipped
from .report import IndexReport, count_reasons
from ..records import Chunk, Skip, SourceFile
from .pipeline import make_budget, pipeline_fingerprint
from .backfill import PAGE, chosen_tiers, outside, pending_for
from .plan import PENDING, ManifestEntry, SyncPlan, chunk_row_id, plan_sync

if TYPE_CHECKING:
    from .moves import MovedVectors

log = logging.getLogger(__name__)

Progress = Callable[..., None]
BATCH_CHUNKS = 256  # chunks embedded and written per batch (one crash-safe write unit)


def _quiet(event: str, **fields: Any) -> None:
    pass


@dataclass
class _Prepared:
    file: SourceFile
    file_hash: str
    chunks: list[Chunk]


class IndexRun:
    """State of one run over one repo; ``run()`` does it.

    ``scope`` (the freshness path): only these paths are planned (the discovery holds those of
    them that are still indexable; the others are deleted), the rest of the manifest is left
    alone. ``stop_when()`` is asked after each written batch: when true the run ends there,
    cleanly (every written file is whole, the manifest agrees with the rows), and the paths
    it did not reach are in ``report.unfinished``.

    ``vectors`` (``all | source | none``; None: the repo's recorded choice, else ``all``) says
    which rows get dense vectors (``backfill.chosen_tiers``); the run records it. With
    ``defer_vectors`` (or while this process's filler works on the repo: ``store.filling``) the
    run ends when every file is keyword-searchable: the repo is left in state ``embedding``
    with ``report.chunks_pending`` rows waiting, for ``fill.VectorFiller`` to finish."""

    def __init__(self, store, embedder, settings, root: str, repo_id: str, *,
                 progress: Progress | None = None, write_guard=None, enricher=None,
                 scope: Collection[str] | None = None, stop_when: Callable[[], bool] | None = None,
                 vectors: str | None = None, defer_vectors: bool = False) -> None:
        self.store, self.embedder, self.settings = store, embedder, settings
        self.root, self.repo_id = root, repo_id
        self.progress = progress or _quiet
        self.write_guard = write_guard or contextlib.nullcontext
        self.enricher = enricher
        self.budget = make_budget(settings, embedder)
        self.report = IndexReport(repo_id=repo_id, root=root)
        self.allow: tuple[str, ...] = ()
        self.verifying = False  # stored rows were checked against the manifest in this run
        self.scope = None if scope is None else frozenset(scope)
        self.stop_when = stop_when
        self.moved: MovedVectors | None = None  # of the paths this run deletes
        if vectors is not None:
            chosen_tiers(vectors)  # a bad choice fails before anything is written
        self.vectors_asked = vectors
        self.choice = vectors or "all"  # set from the repo record by the run
        self.defer = defer_vectors or repo_id in getattr(store, "filling", ())

    # -- the run -------------------------------------------------------------------------
    def run(self, discovery: Discovery) -> IndexReport:
        """Do the run. An OSError on the way (a full disk, an I/O error) stops it as a
        StoreError with the repair hint: files are read through ``read_text``, which turns
        their own errors into skips, so what is left here is a failed write."""
        try:
            return self._run(discovery)
        except OSError as exc:
            from ..errors import StoreError
            from ..store.client import REPAIR_HINT

            where = f" ({exc.filename})" if exc.filename else ""
            raise StoreError(f"indexing stopped: {exc.strerror or exc}{where}", hint=REPAIR_HINT) from exc

    def _run(self, discovery: Discovery) -> IndexReport:
        t0 = time.perf_counter()
        if self.settings.scrub:  # a file named after a secret is skipped, every shown name redacted
            from .names import drop_secret_names

            discovery = drop_secret_names(discovery)
        self._absorb_discovery(discovery)
        from ..scrub import load_allow

        self.allow = load_allow(self.root, self.settings.scrub_allow) if self.settings.scrub else ()
        self.report.warnings.extend(getattr(self.allow, "ignored", ()))  # allow-file entries dropped
        fingerprint = pipeline_fingerprint(self.settings, self.budget, self.allow,
                                           self.enricher.fingerprint() if self.enricher else "")
        record = self.store.repo_records().get(self.repo_id) or {}
        self.choice = self.vectors_asked or record.get("vectors") or "all"
        self.report.vectors = self.choice
        plan = self._plan(discovery, record, fingerprint)
        self.report.files_unchanged = len(plan.unchanged)
        self.progress("plan", redo=len(plan.redo), check=len(plan.check), delete=len(plan.delete),
                      unchanged=len(plan.unchanged))
        if plan.is_noop and record.get("state") == "clean" and record.get("vectors", "all") == self.choice:
            self._finish(record, fingerprint, t0, touched=False)
            return self.report
        self.store.put_repo_record(self.repo_id, {**record, "root": self.root, "state": "syncing",
                                                  "files_total": len(discovery.files)})
        redo = list(plan.redo) + self._check(plan.check, self.store_manifest)
        if plan.delete and redo:  # a rename: the new path's chunks take the old rows' vectors
            from .moves import MovedVectors

            self.moved = MovedVectors(self.store, self.repo_id, plan.delete)
        self._redo(redo)  # keyword-searchable from here on
        if self.report.unfinished and self.moved:  # keep the old rows for the files not reached
            self.report.unfinished += plan.delete
        else:
            self._delete(plan.delete)  # after the new rows: a moved file is never missing
        self._narrow(record.get("vectors", "all"))
        if self.defer:  # keyword-searchable now: the vectors are the filler's
            self.report.chunks_pending = pending_for(self.store, self.repo_id, self.choice)
        else:
            self._backfill()  # dense vectors for the rows written without them
        self._finish(record, fingerprint, t0, touched=True)
        return self.report

    def _narrow(self, before: str) -> None:
        """A choice that embeds fewer rows than the recorded one makes the rows it leaves out
        keyword-only (a clean build with this choice has them so); a wider one only adds work
        for the backfill."""
        if len(chosen_tiers(self.choice)) >= len(chosen_tiers(before)):
            return
        where = outside(self.choice) or {}
        while True:
            with self.write_guard():
                if not self.store.clear_vectors(self.repo_id, PAGE, **where):
                    return

    def _absorb_discovery(self, d: Discovery) -> None:
        r = self.report
        r.files_seen = len(d.files)
        r.skips.extend(d.skips)
        r.warnings.extend(d.warnings)
        r.by_language = d.counts_by_language()
        self.progress("discover", files=len(d.files), skipped=len(d.skips))

    def _plan(self, d: Discovery, record: dict, fingerprint: str) -> SyncPlan:
        entries = self.store.file_entries(self.repo_id, None if self.scope is None else sorted(self.scope))
        self.store_manifest = {
            p: ManifestEntry(p, e.size, e.mtime_ns, e.file_hash, e.n_chunks) for p, e in entries.items()
        }
        # a repo this process's filler embeds is consistent (its keyword phase ended here); one
        # left "embedding" by another process may have lost a row to a cut-short rewrite
        waiting = record.get("state") == "embedding" and self.repo_id in getattr(self.store, "filling", ())
        interrupted = bool(record) and record.get("state") != "clean" and not waiting
        unclean = self.store.unclean and self.repo_id not in self.store.verified
        counts = hashes = None
        if interrupted or (entries and not record) or unclean:
            census = self.store.chunk_census(self.repo_id)
            if self.scope is not None:
                census = {p: c for p, c in census.items() if p in self.scope}
            counts = {p: sum(by_hash.values()) for p, by_hash in census.items()}
            hashes = {p: set(by_hash) for p, by_hash in census.items()}
            self.verifying = True
        changed = bool(record) and record.get("pipeline") not in (None, fingerprint)
        return plan_sync(d.files, self.store_manifest, pipeline_changed=changed, stored_counts=counts,
                         stored_hashes=hashes)

    def _finish(self, record: dict, fingerprint: str, t0: float, touched: bool) -> None:
        r = self.report
        r.by_reason = count_reasons(r.skips)
        r.truncated = getattr(self.embedder, "truncated", 0)
        if self.enricher is not None:
            r.enrich = self.enricher.stats()
        r.seconds = time.perf_counter() - t0
        waiting = self.report.chunks_pending > 0
        new = {**record, "root": self.root, "state": "embedding" if waiting else "clean", "pipeline": fingerprint,
               "last_sync": time.time(), "embedder": self.embedder.id, "vectors": self.choice}
        new.pop("files_total", None)
        null = record.get("null_similarity") or {}
        if not waiting and (null.get("embedder") != self.embedder.id or (touched and self.scope is None)):
            new["null_similarity"] = self._null_similarity()  # a scoped (query-time) sync keeps it
        lost = self._lost(record.get("lost") or {})
        new.pop("lost", None)
        if lost:
            new["lost"] = lost
        if self.scope is None:  # an index written before chunk layouts existed gets them once
            with self.write_guard():
                self.store.ensure_layouts(self.repo_id)
        if touched or new != record:
            self.store.put_repo_record(self.repo_id, new)
        if self.verifying:
            self.store.verified.add(self.repo_id)
        self.progress("done", report=r)

    def _null_similarity(self) -> dict:
        return null_similarity(self.store, self.embedder, self.repo_id, self.write_guard)

    def _lost(self, before: dict[str, str]) -> dict[str, str]:
        """Files that were indexed and could not be read as text any more (now binary,
        unreadable, too large): kept in the repo record, for ``status``, until they are
        indexed again or deleted."""
        skipped = {s.path: f"{s.reason}: {s.detail}" if s.detail else s.reason for s in self.report.skips}
        lost = {p: why for p, why in before.items() if self.scope is not None and p not in self.scope}
        lost.update({p: why for p, why in skipped.items() if p in self.store_manifest or p in before})
        return dict(sorted(lost.items())[:200])

    # -- deletes, checks -----------------------------------------------------------------
    def _delete(self, paths: Sequence[str]) -> None:
        if not paths:
            return
        with self.write_guard():
            self.store.delete_paths(self.repo_id, list(paths))
            self.store.delete_file_entries(self.repo_id, list(paths))
        self.report.files_deleted += len(paths)
        self.progress("deleted", files=len(paths))

    def _check(self, files: Sequence[SourceFile], manifest: dict[str, ManifestEntry]) -> list[SourceFile]:
        """Files whose stat changed: hash them; same content only refreshes the manifest."""
        from ..store import FileEntry

        redo, refresh = [], []
        for f in files:
            try:
                _, fhash = read_text(f.abs_path, max_file_bytes=self.settings.max_file_bytes, root=self.root)
            except FileSkipped:
                redo.append(f)  # redo reports the skip and drops the old rows
                continue
            old = manifest[f.path]
            if fhash == old.file_hash:
                refresh.append(FileEntry(self.repo_id, f.path, f.size, f.mtime_ns, fhash,
                                         old.n_chunks, time.time()))
            else:
                redo.append(f)
        if refresh:
            self.store.put_file_entries(refresh)
        self.report.files_unchanged += len(refresh)
        return redo

    # -- re-chunk, embed, write ------------------------------------------------------------
    def _redo(self, files: Sequence[SourceFile]) -> None:
        total = len(files)
        self.progress("files", total=total)
        reached = 0
        for batch in self._batches(files):
            self._write_batch(batch)
            reached = files.index(batch[-1].file, reached) + 1
            if self.stop_when is not None and reached < total and self.stop_when():
                self.report.unfinished = [f.path for f in files[reached:]]
                log.info("%s: stopped after %d of %d files (time is up); the rest is left for the next sync",
                         self.repo_id, reached, total)
                return

    def _batches(self, files: Sequence[SourceFile]) -> Iterator[list[_Prepared]]:
        batch: list[_Prepared] = []
        size = 0
        for i, f in enumerate(files, 1):
            prepared = self._prepare(f)
            self.progress("file", path=f.path, done=i)
            if prepared is None:
                continue
            batch.append(prepared)
            size += len(prepared.chunks)
            if size >= BATCH_CHUNKS:
                yield batch
                batch, size = [], 0
        if batch:
            yield batch

    def _prepare(self, f: SourceFile) -> _Prepared | None:
        try:
            text, fhash = read_text(f.abs_path, max_file_bytes=self.settings.max_file_bytes, root=self.root)
        except FileSkipped as exc:
            self.report.skips.append(Skip(f.path, exc.reason, exc.detail))
            if f.path in self.store_manifest:
                self._delete([f.path])
            return None
        if self.settings.scrub:
            text = self._scrub(f.path, text)
        faults.point("chunk")
        chunks = chunk_file(f.path, text, budget=self.budget, chunker=self.settings.chunker)
        role = file_role(f.path, text[:HEAD_CHARS])
        if role != SOURCE:
            chunks = [dataclasses.replace(c, role=role) for c in chunks]
        if self.enricher is not None:
            chunks = self.enricher.enrich_file(f.path, text, chunks, count_tokens=self.budget.count_tokens,
                                               max_tokens=self.budget.max_tokens)
        return _Prepared(f, fhash, chunks)

    def _scrub(self, path: str, text: str) -> str:
        from ..scrub import scrub_text

        result = scrub_text(text, allow=self.allow, path=path)
        if result.redactions:
            self.report.redactions += len(result.redactions)
            self.report.redacted_files += 1
            log.info("%s: %d redactions", path, len(result.redactions))
        return result.text

    def _vectors(self, chunks: list[Chunk]) -> list[Any]:
        """Stored vectors by chunk hash; None for a chunk without one (it is written
        keyword-only and embedded by the backfill), and for one the repo's vectors choice
        leaves keyword-only."""
        every, chunks = chunks, [c for c in chunks if self._embeds(c.role)]
        wanted = list({c.hash for c in chunks})
        known = self.store.vectors_by_hash(wanted) if wanted else {}
        self.report.chunks_reused += sum(1 for c in chunks if c.hash in known)
        todo = [c for c in {c.hash: c for c in chunks}.values() if c.hash not in known]
        if todo and self.moved:  # a renamed file's chunks: the old rows' vectors
            moved = self.moved.vectors(todo)
            known.update(moved)
            self.report.chunks_moved += len(moved)
            self.report.chunks_reused += sum(1 for c in chunks if c.hash in moved)
        return [known.get(c.hash) if self._embeds(c.role) else None for c in every]

    def _embeds(self, role: str) -> bool:
        return self.choice == "all" or (self.choice == "source" and role == SOURCE)

    def _backfill(self) -> None:
        from .backfill import backfill

        stats = backfill(self.store, self.embedder, self.repo_id, write_guard=self.write_guard,
                         progress=self.progress, vectors=self.choice)
        self.report.chunks_embedded += stats.embedded
        self.report.chunks_reused += stats.reused
        self.report.embed_seconds += stats.embed_seconds

    def _write_batch(self, batch: list[_Prepared]) -> None:
        from ..store import ChunkRow, FileEntry

        chunks = [c for p in batch for c in p.chunks]
        vectors = self._vectors(chunks)
        rows, it = [], iter(vectors)
        layouts: dict[str, tuple[str, list]] = {}
        for p in batch:
            mine = layouts.setdefault(p.file.path, (p.file_hash, []))[1]
            for ordinal, c in enumerate(p.chunks):
                mine.append(ChunkRow(chunk_row_id(self.repo_id, c.path, ordinal, c.hash),
                                     self.repo_id, p.file_hash, c, next(it)))
                rows.append(mine[-1])
        now = time.time()
        paths = [p.file.path for p in batch]
        pending = [FileEntry(self.repo_id, p.file.path, p.file.size, p.file.mtime_ns, p.file_hash,
                             PENDING, now) for p in batch]
        final = [FileEntry(self.repo_id, p.file.path, p.file.size, p.file.mtime_ns, p.file_hash,
                           len(p.chunks), now) for p in batch]
        with self.write_guard():
            self.store.put_file_entries(pending)
            self.store.delete_paths(self.repo_id, paths)
            if rows:  # on Lite every row of these paths was just deleted: a plain insert (no id is stored)
                self.store.insert_chunks(rows, replace=not getattr(self.store, "lite", False))
            self.store.put_layouts(self.repo_id, layouts)  # what a search reads to find a split definition's pieces
            self.store.put_file_entries(final)
        self.report.files_indexed += len(batch)
        self.report.chunks_written += len(rows)
        self.progress("written", files=len(batch), chunks=len(rows))


def null_similarity(store, embedder, repo_id: str, guard: Callable[[], Any] = contextlib.nullcontext) -> dict:
    """The repo's floor for the weak-evidence score (``evidence.measure_null``), as the repo
    record keeps it; measured when its vectors are complete."""
    from ..errors import NotIndexedError
    from ..query.evidence import measure_null

    try:
        with guard():  # reads between write batches, like a search
            value = measure_null(store, embedder, [repo_id])
    except NotIndexedError:  # nothing of the repo is stored (an empty repo)
        value = 0.0
    return {"embedder": embedder.id, "value": round(value, 6)}
