"""One long-lived service over one index, shared by the MCP and HTTP skins (an
``interface.IndexServer``, as ``owner.RemoteIndex`` is).

:class:`Service` owns an ``api.Index`` session, opened lazily and retried while another process
holds the index (so a server started while a CLI run indexes becomes useful once that run
ends), and adds background indexing jobs: ``start_index`` checks the path against the allowed
roots (``safety``) and returns a running :class:`~codeseam.jobs.Job` at once. A job is
``searchable`` once every file is keyword-searchable; it then waits (phase ``embedding``) while
the session's filler (``indexing/fill.py``) writes the vectors behind it, and ends when they are
complete. A second ``start_index`` of the repo a job runs for attaches to that job; one for
another repo is queued behind the running keyword phase (phase ``queued``; one keyword phase at a
time, while vectors fill in behind). A repo an earlier owner left unfinished (killed while
indexing or embedding) is resumed as a job when the index opens. Searches and answers go on
meanwhile (the session's lock shows each file before or after its update). ``ask_events`` streams an answer's
deltas, then the checked answer. Closing stops a running job at its next file (the next run
finishes it) and closes the index.
"""

from __future__ import annotations

import itertools
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import codec, safety
from .errors import (CodeseamError, ConfigError, FatalError, IndexBusyError, LLMUnavailableError, NotIndexedError,
                     StoreError)
from .interface import SearchRequest
from .jobs import Job, JobCancelled, UnknownJobError
from .records import Answer, RefsResult, SearchResult, Status
from .settings import Settings

if TYPE_CHECKING:  # pragma: no cover
    from .api import Index

log = logging.getLogger(__name__)

KEEP_JOBS = 20  # finished jobs remembered for get_status / GET /jobs/{id}
MAX_QUEUED = 8  # jobs waiting for their keyword phase; one more is an IndexBusyError
FOLLOW_SECONDS = 0.5  # how often a job in its embedding phase refreshes its counts


def _lite_identity(settings: Settings) -> tuple[int, int] | None:
    """(device, inode) of the Lite file, or None for a Milvus server; (0, 0) when it is gone."""
    if not settings.is_lite:
        return None
    try:
        st = os.stat(Path(settings.resolved_milvus_uri).expanduser())
    except OSError:
        return (0, 0)
    return (st.st_dev, st.st_ino)


class _ReaderLeft(Exception):
    """Raised into a streamed answer whose reader is gone."""


class Service:
    """A server's view of one index: a lazily opened session plus background indexing jobs."""

    def __init__(self, settings: Settings, *, cwd: str | os.PathLike[str] | None = None,
                 on_open: Callable[[], None] | None = None, watch: bool = True, resume: bool = True) -> None:
        self.settings = settings
        self.watch = watch  # a long-lived owner watches its repos' files (fresh/watch.py)
        self.on_open = on_open  # called once the index is open (a server records itself)
        self.cwd = Path(os.path.realpath(cwd if cwd is not None else os.getcwd()))
        self._ix: Index | None = None
        self._open_lock = threading.Lock()
        self._jobs: dict[str, Job] = {}
        self._jobs_lock = threading.Lock()
        self._ids = itertools.count(1)
        self._threads: list[threading.Thread] = []
        self._closed = False
        self._identity: tuple[int, int] | None = None  # (device, inode) of the Lite file opened
        self.resume = resume  # finish the repos an earlier owner left unfinished, once open
        self._keyword_turn = threading.Lock()  # one job's keyword phase at a time

    # -- lifecycle -------------------------------------------------------------------------
    def open(self) -> Service:
        """Open the index now (creating an empty one if there is none)."""
        self.session()
        return self

    def session(self) -> Index:
        from . import api

        if self._closed:
            raise FatalError("the server is shutting down")
        with self._open_lock:
            if self._ix is not None and not self._ix.store.alive():
                self._drop_dead_index()
            if self._ix is None:
                self._ix = api.Index(self.settings, create=True)
                self._identity = _lite_identity(self.settings)
                log.info("opened the index at %s", self.settings.resolved_milvus_uri)
                if self.watch and self.settings.freshness != "off":
                    self._ix.refresher.enable_watching()
                if self.on_open is not None:
                    self.on_open()
                if self.resume:
                    self._resume(self._ix)
            elif self._identity is not None and _lite_identity(self.settings) != self._identity:
                raise StoreError(
                    f"the index file {self.settings.resolved_milvus_uri} was deleted or replaced while this "
                    "server held it: the rows it serves are no longer the index",
                    hint="stop this server (`codeseam stop`, or end `codeseam serve`), then index again")
            return self._ix

    def _resume(self, ix: Index) -> None:
        """Jobs for the repos an earlier owner left unfinished (state ``syncing`` or
        ``embedding``: killed while indexing or filling vectors): the next owner finishes them."""
        for repo_id, rec in sorted(ix.store.repo_records().items()):
            root = rec.get("root", "")
            if rec.get("state") in ("syncing", "embedding") and root and os.path.isdir(root):
                log.info("%s: its last run did not finish (%s): resuming it", repo_id, rec.get("state"))
                with self._jobs_lock:
                    self._new_job(root, repo_id, None)

    def _drop_dead_index(self) -> None:
        """The Milvus Lite process under the open index exited: close what is left, so the
        caller opens the index afresh (a server never answers 503 forever)."""
        ix, self._ix = self._ix, None
        log.warning("the Milvus Lite server process of %s stopped; reopening the index",
                    self.settings.resolved_milvus_uri)
        if ix is not None:
            try:
                ix.close()
            except CodeseamError as exc:
                log.warning("closing the dead index: %s", exc.message)

    @property
    def index_gone(self) -> bool:
        """The Lite file this server opened is no longer at its path (the data dir deleted)."""
        return self._identity is not None and _lite_identity(self.settings) != self._identity

    @property
    def is_open(self) -> bool:
        return self._ix is not None

    def store_state(self) -> str:
        """``up``, ``closed`` (not opened yet), or ``down: ...`` when the Milvus Lite process
        under the open index has exited (the next request reopens it) or the index's file is no
        longer at its path (the data dir deleted or replaced under the server)."""
        ix = self._ix
        if ix is None:
            return "closed"
        if self.index_gone:
            return "down: the index's Milvus Lite file was deleted or replaced; restart the server"
        if ix.store.alive():
            return "up"
        return "down: the Milvus Lite server process stopped; the next request reopens the index"

    def close(self, timeout: float = 30.0) -> None:
        """Stop a running job (at its next file), wait for it, then close the index."""
        self._closed = True
        for job in self.jobs():
            job.cancel.set()
        deadline = time.monotonic() + timeout
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))
        with self._open_lock:
            ix, self._ix = self._ix, None
        if ix is not None:
            ix.close()

    def __enter__(self) -> Service:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- safety ----------------------------------------------------------------------------
    def allowed_roots(self, records: dict[str, dict] | None = None) -> safety.AllowedRoots:
        records = self.session().store.repo_records() if records is None else records
        indexed = [rec.get("root", "") for rec in records.values()]
        return safety.AllowedRoots.build(self.settings.allowed_roots, indexed, self.cwd)

    # -- indexing jobs ---------------------------------------------------------------------
    def start_index(self, path: str, repo_id: str | None = None, vectors: str | None = None) -> Job:
        """Check ``path``, then index it in the background; returns the running job (the one
        already running for this repo, when there is one: the caller attaches to it)."""
        from .indexing.backfill import VECTORS
        from .api import default_repo_id

        repo_id = safety.check_repo_id(repo_id)
        if vectors is not None and vectors not in VECTORS:
            raise ConfigError(f"vectors must be one of {', '.join(VECTORS)}, not {vectors!r}",
                              hint="all (the default), source (only source files) or none (keyword-only)")
        records = self.session().store.repo_records()
        root = safety.check_index_path(path, self.allowed_roots(records), cwd=self.cwd)
        repo_id = repo_id or default_repo_id(str(root))
        known = records.get(repo_id, {}).get("root")
        if known and known != str(root):
            raise ConfigError(f"repo id {repo_id!r} already names {known}, not {root}",
                              hint="pass another repo_id to index this folder under another name")
        with self._jobs_lock:
            same = next((j for j in self.jobs() if j.running and j.repo_id == repo_id), None)
            if same is not None and (vectors is None or vectors == same.vectors) and not same.cancel.is_set():
                log.info("job %s already indexes %s: attaching", same.id, repo_id)
                return same  # a re-run attaches to the job that runs for its repo
            waiting = [j for j in self.jobs() if j.running and not j.searchable]
            if len(waiting) > MAX_QUEUED:
                raise IndexBusyError(f"{len(waiting)} indexing jobs are already waiting: {waiting[0].line()}",
                                     hint="wait for them to finish (get_status / GET /status), then retry")
            return self._new_job(str(root), repo_id, vectors, after=same)

    def _new_job(self, root: str, repo_id: str, vectors: str | None, after: Job | None = None) -> Job:
        """A job and its thread (the caller holds ``_jobs_lock``). ``after``: a job of the same
        repo asked for another vectors choice: this one runs once that one ended."""
        ahead = [j for j in self.jobs() if j.running and not j.searchable]
        job = Job(f"j{next(self._ids)}", root, repo_id, vectors=vectors)
        if ahead or after is not None:
            job.phase, job.queued_behind = "queued", (after or ahead[0]).id
        self._jobs[job.id] = job
        self._forget_old()
        thread = threading.Thread(target=self._run_job, args=(job, after), name=f"codeseam-{job.id}", daemon=True)
        self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()
        return job

    def _run_job(self, job: Job, after: Job | None = None) -> None:
        try:
            if after is not None:
                after.finished_event.wait()
            ix = self.session()
            with self._keyword_turn:  # one keyword phase at a time; vectors fill in behind
                job.phase, job.queued_behind = "starting", ""
                job.progress("starting")  # a job cancelled while it waited stops here
                report = ix.index(job.path, repo_id=job.repo_id, progress=job.progress, wait=False,
                                  vectors=job.vectors)
            job.report, job.chunks_pending, job.searchable = codec.report_json(report), report.chunks_pending, True
            if report.chunks_pending:
                self._follow_vectors(ix, job)
            job.state, job.phase = "done", "done"
        except JobCancelled as exc:
            job.state, job.error, job.hint = "cancelled", exc.message, exc.hint
        except CodeseamError as exc:
            job.state, job.error, job.hint = "failed", exc.message, exc.hint
        except Exception as exc:  # a job must end with a state, never vanish
            log.exception("indexing job %s failed unexpectedly", job.id)
            job.state, job.error = "failed", f"unexpected error: {type(exc).__name__}: {str(exc)[:300]}"
            job.hint = "see the server log (stderr)"
        finally:
            job.finished = time.time()
            job.finished_event.set()
            log.info("%s", job.line())

    def _follow_vectors(self, ix: Index, job: Job) -> None:
        """The job's embedding phase: its counts follow the filler until the repo's vectors are
        complete. A stopped job stops following; the filler goes on (it stops with the index)."""
        from .indexing.backfill import pending_for

        job.phase = "embedding"
        fill = ix.filler.fill(job.repo_id)
        before = fill.stats.rows if fill is not None else 0
        embedded = fill.stats.embedded if fill is not None else 0
        while not ix.filler.wait(job.repo_id, FOLLOW_SECONDS):
            job.progress("embedding")  # raises JobCancelled when stopped
            fill = ix.filler.fill(job.repo_id)
            if fill is None:
                continue
            with ix.lock:
                rec = ix.store.repo_records().get(job.repo_id) or {}
                job.chunks_pending = pending_for(ix.store, job.repo_id, rec.get("vectors") or "all")
            job.chunks_embedded = fill.stats.rows - before
            job.eta_seconds = fill.eta(job.chunks_pending)
        job.progress("embedding")  # stopped meanwhile (a shutdown): cancelled, whatever the filler did
        fill = ix.filler.fill(job.repo_id)
        if fill is not None and fill.error:
            raise FatalError(f"filling the vectors of {job.repo_id!r} failed: {fill.error}",
                             hint="run the index again; it finishes what this run left")
        job.chunks_pending, job.eta_seconds = 0, 0.0
        if fill is not None:
            job.chunks_embedded = fill.stats.rows - before
            if job.report is not None:
                job.report = {**job.report, "chunks_embedded": job.report.get("chunks_embedded", 0)
                              + fill.stats.embedded - embedded, "chunks_pending": 0}

    def _forget_old(self) -> None:
        done = [j for j in self._jobs.values() if not j.running]
        for j in done[: max(0, len(done) - KEEP_JOBS)]:
            del self._jobs[j.id]

    def running_job(self) -> Job | None:
        return next((j for j in list(self._jobs.values()) if j.running), None)

    def jobs(self) -> list[Job]:
        return list(self._jobs.values())

    def job(self, job_id: str) -> Job:
        try:
            return self._jobs[job_id]
        except KeyError:
            known = ", ".join(self._jobs) or "none"
            raise UnknownJobError(f"no indexing job {job_id!r} (known: {known})") from None

    def cancel(self, job_id: str) -> Job:
        """Stop a running job at its next file (the run is crash-safe: the next one finishes it)."""
        job = self.job(job_id)
        if job.running:
            job.stop_reason = "a client asked to stop it"
            job.cancel.set()
            log.info("job %s: stop requested", job.id)
        return job

    def wait(self, job_id: str, timeout: float | None = None) -> Job:
        job = self.job(job_id)
        job.finished_event.wait(timeout)
        return job

    # -- queries and management -------------------------------------------------------------
    def search(self, request: SearchRequest | str, /, **options: Any) -> SearchResult:
        ix = self.session()
        result = ix.search(SearchRequest.of(request, **options))
        if not result.hits:
            # While the very first job has not written its first batch, the index exists but
            # holds nothing: say so instead of answering an empty list.
            running = self.running_job()
            if running is not None and not any(v.get("chunks") for v in ix.store.stats().values()):
                raise NotIndexedError(f"nothing is searchable yet: {running.line()}",
                                      hint="wait until the job has written chunks (get_status), then search again")
        return result

    def refs(self, name: str, *, repo: str | None = None, kind: str | Sequence[str] | None = None,
             max_tokens: int | None = None) -> RefsResult:
        """Where ``name`` is defined and used (``api.Index.refs``)."""
        return self.session().refs(name, repo=repo or None, kind=kind or None, max_tokens=max_tokens)

    @property
    def llm_configured(self) -> bool:
        return bool(self.settings.llm_model.strip())

    def ask(self, request: SearchRequest | str, /, *, on_delta: Callable[[str], None] | None = None,
            **options: Any) -> Answer:
        require_llm(self.settings)
        request = SearchRequest.of(request, **options)
        return self.session().ask(request, on_delta=on_delta)

    def ask_events(self, request: SearchRequest | str, /, *, left: threading.Event | None = None,
                   **options: Any) -> Iterator[str | Answer]:
        """``ask`` as events for a streaming skin: each raw delta of the reply (a str) as
        it arrives, then the checked :class:`Answer`. The answer runs in a worker thread;
        its errors raise from the iterator, before the first event when the question fails
        before the reply starts (so an HTTP skin can still answer with an error status).
        Setting ``left`` (or closing the iterator) says the reader went away: the answer stops
        reading the LLM's reply at its next delta."""
        events: queue.SimpleQueue[Any] = queue.SimpleQueue()
        end = object()
        left = left or threading.Event()  # the reader went away (the HTTP client closed the stream)

        def deliver(delta: str) -> None:
            if left.is_set():
                raise _ReaderLeft  # stops reading the reply: the LLM call ends here
            events.put(delta)

        def run() -> None:
            try:
                events.put(self.ask(request, on_delta=deliver, **options))
            except _ReaderLeft:
                log.info("the client left a streamed answer: the LLM call stopped")
            except BaseException as exc:  # noqa: BLE001 - handed to the reading thread
                events.put(exc)
            events.put(end)

        threading.Thread(target=run, name="codeseam-ask", daemon=True).start()
        try:
            while (event := events.get()) is not end:
                if isinstance(event, BaseException):
                    raise event
                yield event
        finally:
            left.set()

    def remove(self, repo: str) -> int:
        running = next((j for j in self.jobs() if j.running and j.repo_id == repo), None)
        if running is not None:
            raise IndexBusyError(f"repo {repo!r} is being indexed right now ({running.line()})",
                                 hint="wait for the job to finish, then remove the repo")
        return self.session().remove(repo)

    def status(self) -> Status:
        return self.session().status()

    def repo_roots(self) -> dict[str, str]:
        """repo id -> the folder it was indexed from (the page's editor links)."""
        return {r: rec.get("root", "") for r, rec in self.session().store.repo_records().items()}

    def inspect(self, repo: str) -> dict[str, Any]:
        return self.session().inspect(repo)


# -- LLM and answers ------------------------------------------------------------------------

def require_llm(settings: Settings) -> None:
    """Fail before any retrieval when no chat model is configured (no network call)."""
    if not settings.llm_model.strip():
        raise LLMUnavailableError(
            "no LLM model is configured (RAG_LLM_MODEL is empty); `ask` needs one, `search` works without it",
            hint="set RAG_LLM_MODEL (e.g. RAG_LLM_MODEL=qwen2.5-coder:7b) and, unless it is Ollama on this "
                 "machine, RAG_LLM_BASE_URL (an OpenAI-compatible API root such as http://localhost:11434/v1)")
