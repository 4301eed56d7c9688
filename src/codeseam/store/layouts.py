"""Each file's chunk layout, read by primary key (a mixin of ``Store``).

Whole-definition expansion (``query.pieces.expand_pieces``) needs every chunk of a hit's file
with its symbol, kind and lines. Read from the chunk collection that is a ``path in [...]``
filter, which Milvus Lite answers by scanning every row: 22 ms of a 77 ms warm search at 100k
chunks, where a primary-key lookup takes about 1.4 ms (bench/results/rank-latency.md). So the
indexer writes each file's layout beside its chunks, as one row of the meta collection
(``kind = "layout"``, id ``layout:`` + the file's manifest id): ``[[chunk id, symbol, kind,
start line, end line], ...]`` in line order, with the file hash it was cut from.

The rows are an accelerator, never the truth. A file without one (an index written before
they existed, a file whose layout is over the meta row's 64 KB, a baseline index) is read from the chunk
collection as before, and a writer fills in the missing ones once (:meth:`Layouts.ensure_layouts`,
one scan of the repo's rows). A layout left stale by a crash between the chunk write and the
layout write lists ids that are gone: the expansion reads the chunks by id and keeps the hit
as it is when any is missing (``expand_pieces``). Nothing about the index's meta changes: an
older codeseam reading the same index ignores the rows.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..records import content_hash
from . import schema as sch
from .client import MilvusCalls
from .expr import all_of, eq, quotable
from .model import ChunkRow, StoredChunk, check_repo_id

log = logging.getLogger(__name__)

KIND = "layout"
MAX_VALUE_BYTES = 65_535  # the meta collection's ``value`` field
SPAN_FIELDS = ["id", "repo_id", "path", "symbol", "kind", "start_line", "end_line"]


def file_id(repo_id: str, path: str) -> str:
    """The primary key of a file's manifest row."""
    return content_hash("file", repo_id, path)


def layout_id(repo_id: str, path: str) -> str:
    """The meta row id of a file's layout (its manifest row's id, prefixed)."""
    return "layout:" + file_id(repo_id, path)


def encode_layout(file_hash: str, spans: Iterable[tuple[str, str, str, int, int]]) -> str:
    """The stored value for one file: ``spans`` are (chunk id, symbol, kind, start, end).
    A layout over the meta row's size is stored as a marker without its chunks (``"c":
    null``): the file is then read from its chunk rows."""
    ordered = sorted(spans, key=lambda s: (s[3], s[4]))
    value = json.dumps({"h": file_hash, "c": [list(s) for s in ordered]}, separators=(",", ":"),
                       ensure_ascii=False)
    if len(value.encode("utf-8")) <= MAX_VALUE_BYTES:
        return value
    return json.dumps({"h": file_hash, "c": None})


def decode_layout(repo_id: str, path: str, value: str) -> list[StoredChunk] | None:
    """The chunks (no text) of a stored layout, in line order; None for a too-large file's marker."""
    chunks = json.loads(value)["c"]
    if chunks is None:
        return None
    return [_span(repo_id, path, *c) for c in chunks]


class Layouts:
    """Mixin of ``Store``: needs ``self._m``, ``self.names`` and ``self._rows_lock``."""

    # Store's (declared for the type checker: annotations only, nothing set here)
    _m: MilvusCalls
    names: sch.Names
    _rows_lock: Any

    def put_layouts(self, repo_id: str, files: Mapping[str, tuple[str, Sequence[ChunkRow]]]) -> None:
        """Record the layout of each file: ``files`` maps its path to its file hash and every
        chunk row just written for it (none for an empty file)."""
        self._write_layouts({(repo_id, path): (fhash, [(r.id, r.chunk.symbol, r.chunk.kind, r.chunk.start_line,
                                                        r.chunk.end_line) for r in rows])
                             for path, (fhash, rows) in files.items()})

    def _write_layouts(self, files: dict[tuple[str, str], tuple[str, list]]) -> None:
        put = []
        for (repo_id, path), (file_hash, spans) in files.items():
            check_repo_id(repo_id)
            put.append({"id": layout_id(repo_id, path), "kind": KIND, "repo_id": repo_id,
                        "value": encode_layout(file_hash, spans), "v": sch.DUMMY_VECTOR})
        if put:
            with self._rows_lock:
                self._m.upsert(self.names.meta, put, [len(r["value"]) + 128 for r in put])

    def delete_layouts(self, repo_id: str, paths: Sequence[str]) -> None:
        check_repo_id(repo_id)
        with self._rows_lock:
            self._m.delete_ids(self.names.meta, [layout_id(repo_id, p) for p in dict.fromkeys(paths)])

    def delete_repo_layouts(self, repo_id: str) -> None:
        check_repo_id(repo_id)
        with self._rows_lock:
            self._m.delete_where(self.names.meta, all_of(eq("kind", KIND), eq("repo_id", repo_id)))

    def chunk_spans(self, repo_id: str, paths: Sequence[str]) -> dict[str, list[StoredChunk]]:
        """Every chunk of each file with its symbol, kind and lines but no text (``text`` is
        ""), in line order per path: enough to find the pieces of a split definition. Read
        from the files' layout rows by primary key; a file without one from its chunk rows."""
        check_repo_id(repo_id)
        wanted = list(dict.fromkeys(paths))
        by_id = {layout_id(repo_id, p): p for p in wanted}
        out: dict[str, list[StoredChunk]] = {}
        for r in self._m.query_ids(self.names.meta, list(by_id), ["value"]):
            path = by_id[r["id"]]
            got = decode_layout(repo_id, path, r["value"])
            if got is not None:
                out[path] = got
        missing = [p for p in wanted if p not in out]
        if missing:
            out.update(self.scan_spans(repo_id, missing))
        return {p: out.get(p, []) for p in paths}

    def scan_spans(self, repo_id: str, paths: Sequence[str]) -> dict[str, list[StoredChunk]]:
        """:meth:`chunk_spans` read from the chunk rows (each query scans the collection on Lite)."""
        check_repo_id(repo_id)
        plain = sorted({p for p in paths if quotable(p)})
        out: dict[str, list[StoredChunk]] = {p: [] for p in paths}
        for r in self._m.query_paths(self.names.chunks, repo_id, plain, SPAN_FIELDS):
            out[r["path"]].append(_span(repo_id, r["path"], r["id"], r["symbol"], r["kind"], r["start_line"],
                                        r["end_line"]))
        for rows in out.values():
            rows.sort(key=lambda c: (c.start_line, c.end_line))
        return out

    def ensure_layouts(self, repo_id: str) -> int:
        """Write the layouts of the repo's files that have none (an index written before they
        existed): one scan of the repo's chunk rows, only when the counts say some are
        missing. Returns the number written."""
        check_repo_id(repo_id)
        ours = all_of(eq("kind", KIND), eq("repo_id", repo_id))
        repo = eq("repo_id", repo_id)
        if self._m.count(self.names.meta, ours) >= self._m.count(self.names.files, repo):
            return 0
        with self._rows_lock:
            stored = {r["id"] for r in self._m.query_all(self.names.meta, ours, ["id"])}
            hashes = {r["path"]: r["file_hash"] for r in self._m.query_all(self.names.files, repo,
                                                                            ["path", "file_hash"])}
        todo = {p: h for p, h in hashes.items() if layout_id(repo_id, p) not in stored}
        if not todo:
            return 0
        spans: dict[str, list] = {p: [] for p in todo}
        for r in self._m.query_all(self.names.chunks, repo, SPAN_FIELDS[2:]):
            if r["path"] in spans:
                spans[r["path"]].append((r["id"], r["symbol"], r["kind"], int(r["start_line"]), int(r["end_line"])))
        self._write_layouts({(repo_id, p): (todo[p], s) for p, s in spans.items()})
        log.info("wrote the chunk layouts of %d files of %s", len(todo), repo_id)
        return len(todo)


def _span(repo_id: str, path: str, chunk_id: str, symbol: str, kind: str, start: int, end: int) -> StoredChunk:
    """A chunk's place in its file, without its text."""
    return StoredChunk(id=chunk_id, repo_id=repo_id, path=path, language="", symbol=symbol, parent="", kind=kind,
                       start_line=int(start), end_line=int(end), text="", chunk_hash="", file_hash="")
