"""``Store``: the one chunk collection (plus manifest and meta) behind every index command.

Lifecycle: :meth:`Store.open` takes the Lite lock, starts Milvus Lite (or connects to a
server), checks the index meta against ``expect`` and loads the collections; ``close``
(or the context manager) undoes that. Writes are upserts by deterministic id, so repeating
one is harmless. Retrieval returns :class:`StoredChunk` lists; fusion is the caller's.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import NotIndexedError
from ..records import ROLES, content_hash
from ..settings import Settings
from . import schema as sch
from . import setup
from .client import IDS_PER_QUERY
from .connect import Connection, connect
from .expr import all_of, eq, is_in, like_prefix, quotable
from .layouts import Layouts, file_id
from .pending import PendingRows
from .retrieval import Retrieval, stored as _stored
from .model import (ChunkRow, FileEntry, IndexMeta, StoredChunk, check_chunk_id, check_repo_id, check_varchar,
                    check_vectors)

log = logging.getLogger(__name__)

HASHES_PER_QUERY = 256


def _repo_key(repo_id: str) -> str:
    return "repo:" + content_hash(repo_id)


class Store(Retrieval, PendingRows, Layouts):
    """An open index. Use :meth:`open`; the constructor is internal."""

    def __init__(self, conn: Connection, collection: str) -> None:
        self._conn = conn
        self._m = conn.calls
        self.names = sch.Names.of(collection)
        self.uri = conn.uri
        self.location = conn.location  # the Lite file, or the server URI: where the index lives
        self.server = conn.server  # Milvus server with partition key and HNSW
        self.lite = conn.lite  # a Milvus Lite file, held by this process
        self.meta: IndexMeta | None = None
        self._known: set[str] = set()  # repos seen; grows, refreshed on a miss
        # The previous holder of this Lite file died without closing it: its last writes may
        # be unfinished, so the next indexing run of each repo checks rows against the manifest.
        self.unclean = conn.unclean
        self.verified: set[str] = set()  # repos checked since this store was opened
        # repos whose missing vectors a background filler of this process writes (indexing/fill.py):
        # their rows agree with the manifest while they wait, and a sync of them defers its vectors
        self.filling: set[str] = set()
        # Milvus Lite's upsert deletes the old row before it inserts the new one: a reader in
        # between sees neither ("nothing is indexed yet" in the middle of a re-sync). Reads and
        # writes of repo records and manifest entries take turns on this lock.
        self._rows_lock = threading.RLock()
        # (embedder id, repo) -> null similarity measured at search time (evidence.null_for)
        self.null_cache: dict[tuple[str, str], float] = {}

    # -- lifecycle ---------------------------------------------------------------------------
    @classmethod
    def open(cls, settings: Settings, *, expect: IndexMeta | None, create: bool,
             reset: bool = False, lock_timeout: float = 0.0) -> Store:
        """Open the index of ``settings``.

        ``create=True`` (indexing) creates a missing index with meta ``expect``; otherwise a
        missing index raises NotIndexedError. An existing index whose meta differs from
        ``expect`` raises IndexMismatchError naming the rebuild command. ``reset=True`` drops
        the index first. On Lite another holder raises IndexBusyError (after waiting up to
        ``lock_timeout`` seconds).
        """
        if create and expect is None:
            raise ValueError("Store.open(create=True) needs expect=IndexMeta(...)")
        store = cls(connect(settings, create=create, lock_timeout=lock_timeout), settings.collection)
        try:
            store._prepare(expect, create=create, reset=reset)
        except BaseException:
            store.close()
            raise
        return store

    @classmethod
    def drop(cls, settings: Settings, *, lock_timeout: float = 0.0) -> None:
        """Delete the whole index (all repos). Nothing to do when there is none."""
        if settings.is_lite and not Path(settings.resolved_milvus_uri).expanduser().exists():
            return
        with cls(connect(settings, create=False, lock_timeout=lock_timeout), settings.collection) as store:
            setup.drop_all(store._m, store.names)

    def close(self) -> None:
        self._conn.close()

    def alive(self) -> bool:
        """False once the Milvus Lite process of this store has exited (a server: True)."""
        return self._m.alive()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _prepare(self, expect: IndexMeta | None, *, create: bool, reset: bool) -> None:
        if reset:
            setup.drop_all(self._m, self.names)
        meta = setup.read_meta(self._m, self.names, self.location)
        if meta is None:
            if not create:
                raise NotIndexedError("nothing is indexed yet", hint="run `codeseam index PATH`")
            assert expect is not None
            setup.create_all(self._m, self.names, expect, server=self.server)
            meta = expect
        elif expect is not None and meta != expect:
            raise setup.mismatch_error(meta, expect, self.location, self.repo_records(), lite=self.lite)
        elif create:  # a writer brings an older index's BM25 parameters up to date (readers search it as built)
            setup.ensure_bm25(self._m, self.names)
        self.meta = meta
        setup.load_all(self._m, self.names)

    # -- manifest and repo records ------------------------------------------------------------
    def file_entries(self, repo_id: str, paths: Sequence[str] | None = None) -> dict[str, FileEntry]:
        """The manifest of a repo (only ``paths`` when given: a scoped sync)."""
        check_repo_id(repo_id)
        with self._rows_lock:
            if paths is None:
                rows = list(self._m.query_all(self.names.files, eq("repo_id", repo_id), sch.FILE_FIELDS))
            else:
                plain = [p for p in dict.fromkeys(paths) if quotable(p)]
                wanted = set(paths)
                if wanted - set(plain):  # a name no literal can say: read the whole manifest
                    rows = [r for r in self._m.query_all(self.names.files, eq("repo_id", repo_id), sch.FILE_FIELDS)
                            if r["path"] in wanted]
                else:
                    rows = list(self._m.query_paths(self.names.files, repo_id, plain, sch.FILE_FIELDS))
        return {r["path"]: FileEntry(r["repo_id"], r["path"], int(r["size"]), int(r["mtime_ns"]),
                                     r["file_hash"], int(r["n_chunks"]), float(r["indexed_at"]))
                for r in rows}

    def put_file_entries(self, entries: Sequence[FileEntry]) -> None:
        rows = []
        for e in entries:
            check_repo_id(e.repo_id)
            check_varchar("path", e.path)
            check_varchar("file_hash", e.file_hash)
            rows.append({"id": file_id(e.repo_id, e.path), "repo_id": e.repo_id, "path": e.path,
                         "size": int(e.size), "mtime_ns": int(e.mtime_ns), "file_hash": e.file_hash,
                         "n_chunks": int(e.n_chunks), "indexed_at": float(e.indexed_at),
                         "v": sch.DUMMY_VECTOR})
        with self._rows_lock:
            self._m.upsert(self.names.files, rows)

    def delete_file_entries(self, repo_id: str, paths: Sequence[str]) -> None:
        check_repo_id(repo_id)
        with self._rows_lock:
            self._m.delete_ids(self.names.files, [file_id(repo_id, p) for p in dict.fromkeys(paths)])
            self.delete_layouts(repo_id, paths)

    def repo_records(self) -> dict[str, dict]:
        with self._rows_lock:
            rows = self._m.query(self.names.meta, eq("kind", "repo"), ["repo_id", "value"])
        records = {r["repo_id"]: json.loads(r["value"]) for r in rows}
        self._known |= set(records)
        return records

    def put_repo_record(self, repo_id: str, record: dict) -> None:
        check_repo_id(repo_id)
        value = json.dumps(record, sort_keys=True)
        check_varchar("text", value)
        with self._rows_lock:
            self._m.upsert(self.names.meta, [{"id": _repo_key(repo_id), "kind": "repo", "repo_id": repo_id,
                                              "value": value, "v": sch.DUMMY_VECTOR}])
        self._remember(repo_id)
        self.null_cache.clear()

    # -- chunks ------------------------------------------------------------------------------
    def insert_chunks(self, rows: Sequence[ChunkRow], *, replace: bool = True) -> None:
        """Upsert by id. Rows are validated first: Milvus Lite neither checks VARCHAR lengths
        nor keeps the old rows of a failed upsert. ``replace=False``: a plain insert, for a caller
        that has just deleted every row of these rows' paths under its write lock (no id can be
        stored), saving Lite the delete an upsert always pays."""
        assert self.meta is not None
        zero = [0.0] * self.meta.dim  # a keyword-only row (dense=None): see ChunkRow
        vectors = check_vectors([zero if r.dense is None else r.dense for r in rows], self.meta.dim,
                                "chunk rows")
        dicts, sizes = [], []
        for row, vector in zip(rows, vectors, strict=True):
            c = row.chunk
            check_repo_id(row.repo_id)
            check_chunk_id(row.id)
            values: dict[str, Any] = {"id": row.id, "repo_id": row.repo_id, "path": c.path, "language": c.language,
                                      "symbol": c.symbol, "parent": c.parent, "kind": c.kind, "role": c.role,
                                      "text": c.text, "indexed_text": c.indexed_text, "file_hash": row.file_hash,
                                      "chunk_hash": c.hash}
            for field, value in values.items():
                check_varchar(field, value)
            values.update(start_line=int(c.start_line), end_line=int(c.end_line), dense=vector)
            values[sch.EMBEDDED] = row.dense is not None
            dicts.append(values)
            sizes.append(len(c.text) + len(c.indexed_text) + 4 * self.meta.dim + 256)
        self._m.upsert(self.names.chunks, dicts, sizes, point="insert", method="upsert" if replace else "insert")
        for repo_id in {r.repo_id for r in rows}:
            self._remember(repo_id)

    def delete_paths(self, repo_id: str, paths: Sequence[str]) -> int:
        """Delete every chunk row of ``(repo_id, path)`` for ``paths``; returns rows deleted."""
        check_repo_id(repo_id)
        ids = self._ids_of_paths(repo_id, list(dict.fromkeys(paths)))
        self._m.delete_ids(self.names.chunks, ids)
        return len(ids)

    def _ids_of_paths(self, repo_id: str, paths: list[str]) -> list[str]:
        repo = eq("repo_id", repo_id)
        plain = [p for p in paths if quotable(p)]
        odd = set(paths) - set(plain)  # newline in the name: no literal can say it
        ids = [r["id"] for r in self._m.query_paths(self.names.chunks, repo_id, plain, ["path"])]
        for path in odd:
            expr = all_of(repo, like_prefix("path", path))
            ids += [r["id"] for r in self._m.query_all(self.names.chunks, expr, ["path"]) if r["path"] == path]
        return ids

    def chunk_paths(self, repo_id: str) -> dict[str, int]:
        """path -> number of chunk rows stored for it (to find half-written files)."""
        check_repo_id(repo_id)
        rows = self._m.query_all(self.names.chunks, eq("repo_id", repo_id), ["path"])
        return dict(Counter(r["path"] for r in rows))

    def chunk_census(self, repo_id: str) -> dict[str, dict[str, int]]:
        """path -> {file hash: chunk rows} over every stored row of a repo (to check the rows
        against the manifest: counts, and which file version they came from)."""
        check_repo_id(repo_id)
        census: dict[str, dict[str, int]] = {}
        for r in self._m.query_all(self.names.chunks, eq("repo_id", repo_id), ["path", "file_hash"]):
            by_hash = census.setdefault(r["path"], {})
            by_hash[r["file_hash"]] = by_hash.get(r["file_hash"], 0) + 1
        return census

    def chunks_by_ids(self, ids: Sequence[str]) -> list[StoredChunk]:
        """The chunks with these ids, in the order given (missing ones left out)."""
        return list(self._fetch_in_order([i for i in ids if i and quotable(i)]))

    def present_roles(self, repo_ids: Sequence[str] = ()) -> list[str]:
        """The file roles that have chunks (in ``repo_ids``, or anywhere), in ``ROLES`` order."""
        for r in repo_ids:
            check_repo_id(r)
        repos = is_in("repo_id", sorted(set(repo_ids))) if repo_ids else None
        return [role for role in ROLES if self._m.exists(self.names.chunks, all_of(repos, eq("role", role)))]

    def vectors_by_hash(self, chunk_hashes: Sequence[str]) -> dict[str, list[float]]:
        """Stored dense vectors by chunk hash, to reuse the embeddings of unchanged chunks."""
        wanted = [h for h in dict.fromkeys(chunk_hashes) if h and quotable(h)]
        found: dict[str, list[float]] = {}
        for i in range(0, len(wanted), HASHES_PER_QUERY):
            expr = all_of(is_in("chunk_hash", wanted[i:i + HASHES_PER_QUERY]), sch.DENSE_READY)
            for r in self._m.query(self.names.chunks, expr, ["chunk_hash", "dense"]):
                found.setdefault(r["chunk_hash"], [float(x) for x in r["dense"]])
        return found

    def chunk_texts(self, repo_id: str, paths: Sequence[str]) -> list[dict]:
        """``{"id", "path", "language", "symbol", "text"}`` of every chunk row of ``paths`` (to
        find the vectors of a renamed file's chunks before its old rows are deleted)."""
        check_repo_id(repo_id)
        plain = [p for p in dict.fromkeys(paths) if quotable(p)]
        return list(self._m.query_paths(self.names.chunks, repo_id, plain, ["path", "language", "symbol", "text"]))

    def vectors_by_id(self, ids: Sequence[str]) -> dict[str, list[float]]:
        """Stored dense vectors of the chunk rows ``ids``."""
        wanted = [i for i in dict.fromkeys(ids) if quotable(i)]
        rows = self._m.query_ids(self.names.chunks, wanted, ["dense"], sch.DENSE_READY)  # never a placeholder
        return {r["id"]: [float(x) for x in r["dense"]] for r in rows}

    def remove_repo(self, repo_id: str) -> int:
        """Delete a repo's chunks, manifest and record; returns the chunk rows deleted."""
        check_repo_id(repo_id)
        repo = eq("repo_id", repo_id)
        n = self._m.count(self.names.chunks, repo)
        self._m.delete_where(self.names.chunks, repo)
        self._m.delete_where(self.names.files, repo)
        self.delete_repo_layouts(repo_id)
        self._m.delete_ids(self.names.meta, [_repo_key(repo_id)])
        self._known.discard(repo_id)
        if self._conn.lite:  # the deleted rows' text out of the file's free pages
            from .atrest import vacuum

            self.flush()
            vacuum(Path(self._conn.location))
        return n

    def iter_chunks(self, repo_id: str) -> Iterator[StoredChunk]:
        """Every chunk of a repo, sorted by (path, start_line). Unknown repo: NotIndexedError."""
        check_repo_id(repo_id)
        self._ensure_known((repo_id,))
        keys = sorted((r["path"], int(r["start_line"]), r["id"]) for r in
                      self._m.query_all(self.names.chunks, eq("repo_id", repo_id), ["path", "start_line"]))
        return self._fetch_in_order([k[2] for k in keys])

    def _fetch_in_order(self, ids: list[str]) -> Iterator[StoredChunk]:
        for i in range(0, len(ids), IDS_PER_QUERY):  # a batch at a time: iter_chunks streams a whole repo
            batch = ids[i:i + IDS_PER_QUERY]
            rows = {r["id"]: r for r in self._m.query_ids(self.names.chunks, batch, sch.CHUNK_FIELDS)}
            yield from (_stored(rows[x]) for x in batch if x in rows)

    def stats(self) -> dict[str, dict]:
        """repo -> {"files": n, "chunks": n} for every repo with a record or a manifest."""
        with self._rows_lock:
            repos = set(self.repo_records())
            repos |= {r["repo_id"] for r in self._m.query_all(self.names.files, 'id != ""', ["repo_id"])}
            files = {r: self._m.count(self.names.files, eq("repo_id", r)) for r in repos}
        return {r: {"files": files[r], "chunks": self._m.count(self.names.chunks, eq("repo_id", r))}
                for r in sorted(repos)}

    def flush(self) -> None:
        for name in self.names.all():
            self._m.call(f"flush {name}", "flush", name)

    # -- known repos (a filter on an unknown repo is an error, never an empty list) ------------
    def _remember(self, repo_id: str) -> None:
        self._known.add(repo_id)

    def _ensure_known(self, repos: Iterable[str]) -> None:
        missing = [r for r in repos if r not in self._known]
        if missing:
            self.repo_records()
            missing = [r for r in missing if r not in self._known and not self._has_chunks(r)]
        if missing:
            names = ", ".join(sorted(self._known)) or "none"
            raise NotIndexedError(f"repo {missing[0]!r} is not indexed (indexed: {names})",
                                  hint=f"run `codeseam index PATH --repo-id {missing[0]}`")

    def _has_chunks(self, repo_id: str) -> bool:
        if self._m.exists(self.names.chunks, eq("repo_id", repo_id)):
            self._known.add(repo_id)
            return True
        return False

    def _ensure_any(self) -> None:
        if self._known or self.repo_records() or self._m.exists(self.names.chunks, 'id != ""'):
            return
        raise NotIndexedError("nothing is indexed yet", hint="run `codeseam index PATH`")
