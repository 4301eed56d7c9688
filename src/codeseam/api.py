"""The composition root: the one place that wires the stages together.

Two ways in:

- module functions for one-shot use (the CLI, scripts)::

      codeseam.index("path/to/repo")
      codeseam.search("where is the retry delay computed?", k=8)

- a long-lived :class:`Index` session for servers (MCP, HTTP), which keeps the store open and
  the model loaded, and serialises writes against reads so that a search never sees a file
  half-replaced (each write batch and each search's store calls hold one lock: a changed
  file is seen in its old state or its new state, never a mix).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import ConfigError, NotIndexedError
from .interface import SearchRequest
from .records import Answer, RefsResult, RepoStatus, SearchResult, Status
from .settings import Settings, load_settings

if TYPE_CHECKING:  # pragma: no cover
    from .fresh import Refresher
    from .indexing.fill import VectorFiller

log = logging.getLogger(__name__)


def default_repo_id(root: str) -> str:
    name = Path(root).name or "repo"
    return re.sub(r"[^\w.\-]+", "-", name)[:200] or "repo"


def _settings(settings: Settings | None) -> Settings:
    return settings if settings is not None else load_settings()


class Index:
    """An open index: store + embedder + settings. Use as a context manager."""

    def __init__(self, settings: Settings | None = None, *, create: bool = False, warm: bool = True) -> None:
        """``warm``: load the model in the background while the index opens (off for the
        one-shot commands that never embed: status, remove, inspect)."""
        from .embed import make_embedder
        from .indexing.pipeline import chunker_id
        from .store import SCHEMA_VERSION, IndexMeta, Store

        self.settings = _settings(settings)
        self.embedder = make_embedder(self.settings)
        self.meta = IndexMeta(self.embedder.id, self.embedder.dim, chunker_id(self.settings), SCHEMA_VERSION)
        if warm:
            _prepare_meanwhile(self.embedder)  # the model loads while Milvus Lite loads the index
        self.store = Store.open(self.settings, expect=self.meta, create=create)
        self.lock = threading.RLock()
        self.index_lock = threading.Lock()  # one indexing run at a time per process
        self._refresher: Refresher | None = None
        self._filler: VectorFiller | None = None

    @property
    def refresher(self) -> Refresher:
        """The freshness of this session's queries (fresh/refresh.py); long-lived owners turn
        its watchers on (``refresher.enable_watching()``)."""
        if self._refresher is None:
            from .fresh import Refresher

            self._refresher = Refresher(self)
        return self._refresher

    @property
    def filler(self) -> VectorFiller:
        """The background dense backfill of this session (indexing/fill.py): ``index(...,
        wait=False)`` hands it the repo's missing vectors."""
        if self._filler is None:
            from .indexing.fill import VectorFiller

            self._filler = VectorFiller(self.store, self.embedder, lock=self.lock, run_lock=self.index_lock)
        return self._filler

    # -- lifecycle ---------------------------------------------------------------------
    def close(self) -> None:
        if self._filler is not None:
            self._filler.close()  # after its page in flight; the repo stays "embedding" for the next owner
        if self._refresher is not None:
            self._refresher.close()
        self.store.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- indexing ----------------------------------------------------------------------
    def index(self, path: str | os.PathLike[str], *, repo_id: str | None = None,
              progress: Callable[..., None] | None = None, wait: bool = True, vectors: str | None = None):
        """Index (or re-sync) the repository at ``path``; its ``IndexReport``.

        ``wait`` (the default): return when every chunk has the vector the repo's choice gives
        it. ``wait=False``: return when every file is keyword-searchable; this session's
        filler (``filler``) embeds the rest in the background, source files first, while the
        session stays open (``report.chunks_pending`` rows; closed before, the next session
        that indexes or serves the repo finishes them). ``vectors``: ``all | source | none``
        (None: the repo's recorded choice, else all), recorded in the index."""
        from .discover import discover
        from .indexing.run import IndexRun

        started = time.perf_counter()
        discovery = discover(os.fspath(path), max_file_bytes=self.settings.max_file_bytes,
                             exclude=self.settings.private_dirs)
        repo_id = repo_id or default_repo_id(discovery.root)
        self._check_root(repo_id, discovery.root)
        enricher = self._enricher(progress)
        try:
            with self.index_lock:
                run = IndexRun(self.store, self.embedder, self.settings, discovery.root, repo_id,
                               progress=progress, write_guard=lambda: self.lock, enricher=enricher,
                               vectors=vectors, defer_vectors=not wait)
                report = run.run(discovery)
        finally:
            if enricher is not None:
                enricher.close()
        if report.chunks_pending:  # deferred, or this session's filler works on the repo
            self.filler.want(repo_id)
            if wait:
                self.filler.wait_for(repo_id, report)
        report.seconds = time.perf_counter() - started  # discovery included
        return report

    def _enricher(self, progress=None):
        if not self.settings.enrich:
            return None
        from .enrich import Enricher

        return Enricher.from_settings(self.settings, progress=progress)

    def _check_root(self, repo_id: str, root: str) -> None:
        record = self.store.repo_records().get(repo_id)
        if record and record.get("root") and record["root"] != root:
            raise ConfigError(
                f"repo id {repo_id!r} already names {record['root']}, not {root}",
                hint="pass --repo-id to index this folder under another name",
            )

    # -- queries -----------------------------------------------------------------------
    def search(self, request: SearchRequest | str, /, **options: Any) -> SearchResult:
        """The hits of ``request`` (or of the query ``request`` with ``options``, the request's
        fields): every hit checked against its file, ``partial`` while a repo in scope is indexed."""
        from .chunk.languages import language_key
        from .fit import FIT_K, fit_result
        from .query.search import search
        from .store import Filters

        request = SearchRequest.of(request, **options)
        k = request.k if request.k is not None else FIT_K if request.max_tokens is not None else self.settings.k
        records = self.store.repo_records()
        repos = self._known_repos(request.repo, records)
        filters = Filters(repos=repos, path_glob=request.path_glob,
                          language=language_key(request.language) if request.language else None,
                          roles=request.role)
        fresh = self.refresher.begin(repos or tuple(records), records)  # bring the repos up to date

        def run() -> SearchResult:
            return search(self.store, self.embedder, self.settings, request.query, filters, k, mode=request.mode,
                          lock=self.lock, scope=repos or tuple(records), files=request.files)

        result = self.refresher.finish(fresh, run(), run)  # every hit checked against its file
        if not result.hits and (filters.language or filters.path_glob or filters.roles):
            self._check_filters(filters)
        result = self._mark_partial(result, repos or tuple(records), records)
        return result if request.max_tokens is None else fit_result(result, request.max_tokens)

    def _mark_partial(self, result: SearchResult, repos: tuple[str, ...],
                      records: dict[str, dict]) -> SearchResult:
        """A search while a repo in scope is being indexed, or whose last run did not finish,
        says so, and how far indexing has got (``partial``)."""
        import dataclasses

        from .records import IndexProgress

        unfinished = tuple(r for r in repos if records.get(r, {}).get("state") != "clean")
        if not unfinished:
            return result
        with self.lock:
            counts = [self.store.dense_progress(r) for r in unfinished]
        progress = IndexProgress(
            unfinished, sum(c["files"] for c in counts),
            sum(max(int(records[r].get("files_total") or 0), c["files"])
                for r, c in zip(unfinished, counts, strict=True)),
            sum(c["chunks"] for c in counts), sum(c["embedded"] for c in counts),
            self._eta([r for r in unfinished if records[r].get("state") == "embedding"], records))
        return dataclasses.replace(result, partial=True, progress=progress)

    def _eta(self, repos: Sequence[str], records: dict[str, dict]) -> float | None:
        """Seconds until the vectors of ``repos`` are complete (``VectorFiller.eta``)."""
        return None if self._filler is None else self._filler.eta(repos, records)

    def _check_filters(self, filters) -> None:
        """A search that found nothing under a language, role or path filter: when no indexed
        file passes the filter, say so (an error, never an empty list), with what is indexed."""
        from .chunk.languages import language_label
        from .store.expr import compile_glob

        repos = filters.repos or tuple(self.store.repo_records())
        paths = [p for r in repos for p in self.store.file_entries(r)]
        where = f"in repo {repos[0]!r}" if len(filters.repos) == 1 else "in the index"
        if filters.language:
            label_of = {p: language_label(p) for p in paths}
            paths = [p for p in paths if label_of[p] == filters.language]
            if not paths:
                labels = ", ".join(sorted(set(label_of.values()))) or "none"
                raise NotIndexedError(
                    f"no file {where} is in language {filters.language!r} (indexed: {labels})",
                    hint="filter by one of those names (file extensions such as py or ts work too)")
        if filters.roles and not set(filters.roles) & set(self.store.present_roles(filters.repos)):
            present = ", ".join(self.store.present_roles(filters.repos)) or "none"
            raise NotIndexedError(
                f"no file {where} has the role {' or '.join(filters.roles)} (indexed roles: {present})",
                hint="filter by one of those roles, or drop --role")
        if filters.path_glob and not any(map(compile_glob(filters.path_glob).match, paths)):
            also = f" in language {filters.language!r}" if filters.language else ""
            raise NotIndexedError(
                f"no file {where}{also} matches the path glob {filters.path_glob!r}",
                hint="globs use gitignore syntax on repo-relative paths: 'src/**', '*.py', 'pkg/*/util.go'")

    def ask(self, request: SearchRequest | str, /, *, on_delta: Callable[[str], None] | None = None,
            **options: Any) -> Answer:
        """An answer to the question ``request`` with checked citations to the hits it finds; no
        LLM call when they are weak or none."""
        from .answer import answer_question
        from .fresh import sendable, with_notes
        from .llm import ChatClient, LLMConfig

        request = SearchRequest.of(request, **options)
        result = self.search(request)
        hits, notes = sendable(result.hits)  # stale text never reaches the model unsaid
        if result.weak or not hits:
            return with_notes(answer_question(request.query, hits, None, weak=True), notes)  # type: ignore[arg-type]
        with ChatClient(LLMConfig.from_settings(self.settings)) as client:
            return with_notes(answer_question(request.query, hits, client, weak=False, on_delta=on_delta), notes)

    def refs(self, name: str, *, repo: str | None = None, kind: str | Sequence[str] | None = None,
             max_tokens: int | None = None) -> RefsResult:
        """Where ``name`` (``Type.method``, ``pkg::name``) is defined and used, in code, at the
        files' current lines (``references/``); fresh like search. ``max_tokens``: only the
        references that fit (``fit.fit_refs``), ``left_out`` counting the rest."""
        from .fit import fit_refs
        from .references.find import check_kinds, find_references, scrubber
        from .references.names import parse_name
        from .safety import check_max_tokens

        parsed, kinds, max_tokens = parse_name(name), check_kinds(kind), check_max_tokens(max_tokens)
        records = self.store.repo_records()
        repos = self._known_repos(repo, records) or tuple(records)
        fresh = self.refresher.begin(repos, records)  # changed files are synced (or read) first
        pending = {}
        for st in fresh.repos:
            with st.lock:
                pending[st.repo_id] = set(st.dirty)
        result = find_references(
            self.store, parsed, roots={r: records[r].get("root", "") for r in repos}, pending=pending,
            full=[st.repo_id for st in fresh.repos if st.full], kinds=kinds,
            max_file_bytes=self.settings.max_file_bytes, scrub_for=scrubber(self.settings), lock=self.lock)
        done = self.refresher.finish(fresh, SearchResult(name, False, ()), lambda: SearchResult(name, False, ()))
        busy = [f"{r}: being indexed (or its last run did not finish): files not written yet are not searched"
                for r in repos if records[r].get("state") != "clean"]
        result = dataclasses.replace(result, notes=(*result.notes, *done.notes, *busy))
        return result if max_tokens is None else fit_refs(result, max_tokens)

    def _known_repos(self, repo: str | None, known: dict[str, dict] | None = None) -> tuple[str, ...]:
        known = self.store.repo_records() if known is None else known
        if not known:
            raise NotIndexedError("nothing is indexed yet", hint="run `codeseam index PATH`")
        if repo is None:
            return ()
        if repo not in known:
            names = ", ".join(sorted(known)) or "none"
            raise NotIndexedError(f"repo {repo!r} is not indexed (indexed: {names})",
                                  hint=f"run `codeseam index PATH --repo-id {repo}`")
        return (repo,)

    # -- management --------------------------------------------------------------------
    def remove(self, repo: str) -> int:
        self._known_repos(repo)
        with self.index_lock:  # no indexing run nor a page of the filler in flight
            if self._filler is not None:
                self._filler.forget(repo)
            with self.lock:
                return self.store.remove_repo(repo)

    def status(self) -> Status:
        from collections import Counter

        from .chunk.languages import language_label

        records = self.store.repo_records()
        stats = self.store.stats()

        def languages(repo: str) -> tuple[tuple[str, int], ...]:
            counts = Counter(language_label(p) for p in self.store.file_entries(repo))
            return tuple(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

        from .indexing.backfill import pending_for

        fresh = {r: self.refresher.status(r, rec) for r, rec in records.items()}
        pending = {r: pending_for(self.store, r, rec.get("vectors") or "all") if rec.get("state") != "clean" else 0
                   for r, rec in records.items()}
        repos = tuple(
            RepoStatus(r, rec.get("root", ""), stats.get(r, {}).get("files", 0),
                       stats.get(r, {}).get("chunks", 0), rec.get("last_sync"), rec.get("state", "?"),
                       languages(r), tuple(self.store.present_roles([r])),
                       freshness=fresh[r]["mode"], freshness_note=fresh[r]["note"],
                       vectors=rec.get("vectors") or "all", vectors_pending=pending[r],
                       eta_seconds=self._eta([r], records) if pending[r] else None)
            for r, rec in sorted(records.items())
        )
        m = self.meta
        return Status(self.settings.resolved_milvus_uri, self.settings.collection, m.embedder_id,
                      m.dim, m.chunker_version, m.schema_version, repos)

    def inspect(self, repo: str) -> dict[str, Any]:
        self._known_repos(repo)
        rows = [
            {"path": c.path, "start_line": c.start_line, "end_line": c.end_line, "symbol": c.symbol,
             "kind": c.kind, "role": c.role, "chunk_hash": c.chunk_hash}
            for c in self.store.iter_chunks(repo)
        ]
        files = {p: e.file_hash for p, e in sorted(self.store.file_entries(repo).items())}
        return {"repo": repo, "files": files, "chunks": rows}


def _prepare_meanwhile(embedder) -> None:
    """Load the embedding model in a background thread. Opening a Lite index waits seconds
    for the Lite process to load every row (bench/results/lite-load.md), the model load is a
    second or so of this process's own CPU: done side by side, the first search after a cold
    start pays the longer of the two, not their sum. Only an already exported model is loaded
    so (``warm``): an export is never started for a command that may not embed. A failure
    here is only logged: the first real use raises it again."""
    warm = getattr(embedder, "warm", None)
    if warm is None:
        return

    def run() -> None:
        try:
            warm()
        except Exception as exc:  # noqa: BLE001 - reported by the first real use
            log.debug("embedder prepare failed in the background: %s", exc)

    threading.Thread(target=run, name="codeseam-embedder-prepare", daemon=True).start()


# -- one-shot functions ------------------------------------------------------------------

def open_index(settings: Settings | None = None, *, create: bool = False) -> Index:
    return Index(settings, create=create)


def index(path: str | os.PathLike[str], *, repo_id: str | None = None, settings: Settings | None = None,
          progress: Callable[..., None] | None = None, dry_run: bool = False, rebuild: bool = False,
          vectors: str | None = None):
    """Index (or incrementally re-sync) the repository at ``path``; returns an IndexReport.

    One-shot: it returns when every vector is written (the index is closed after it, so there
    is no one to fill them in later; ``Index.index(..., wait=False)`` in a session that stays
    open returns at keyword-complete). ``vectors``: ``all | source | none`` (see ``Index.index``)."""
    settings = _settings(settings)
    if dry_run:
        from .discover import discover
        from .indexing.report import dry_run as _dry_run

        root = discover(os.fspath(path), max_file_bytes=settings.max_file_bytes,
                        exclude=settings.private_dirs).root
        return _dry_run(root, repo_id or default_repo_id(root), settings)
    if rebuild:
        from .store import Store

        Store.drop(settings)
    with Index(settings, create=True) as ix:
        return ix.index(path, repo_id=repo_id, progress=progress, vectors=vectors)


def search(request: SearchRequest | str, /, *, settings: Settings | None = None, **options: Any) -> SearchResult:
    with Index(settings) as ix:
        return ix.search(request, **options)


def ask(request: SearchRequest | str, /, *, settings: Settings | None = None,
        on_delta: Callable[[str], None] | None = None, **options: Any) -> Answer:
    with Index(settings) as ix:
        return ix.ask(request, on_delta=on_delta, **options)


def refs(name: str, *, repo: str | None = None, kind: str | Sequence[str] | None = None,
         max_tokens: int | None = None, settings: Settings | None = None) -> RefsResult:
    """Where ``name`` is defined and used (see ``Index.refs``)."""
    with Index(settings, warm=False) as ix:
        return ix.refs(name, repo=repo, kind=kind, max_tokens=max_tokens)


def remove(repo: str, *, settings: Settings | None = None) -> int:
    with Index(settings, warm=False) as ix:
        return ix.remove(repo)


def status(settings: Settings | None = None) -> Status:
    with Index(settings, warm=False) as ix:
        return ix.status()


def inspect(repo: str, *, settings: Settings | None = None) -> dict[str, Any]:
    with Index(settings, warm=False) as ix:
        return ix.inspect(repo)
