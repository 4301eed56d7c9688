"""The plain BM25 baseline's index: 2000-byte line windows, ``indexed_text`` = the text.

What people reach for first: fixed windows, BM25 over the raw text, the query as typed.
The windows are the window chunker's (``chunk_file(chunker="window")``: lines packed up to
``chunk_max_bytes`` bytes, about 64 tokens of overlap), with a byte budget only: no dense
vector is used, so no embedder's token limit applies. Each chunk's ``indexed_text`` is
replaced by its ``text``, dropping the header (path, symbol, identifier splits) that the
product puts there. Vectors come from the fake embedder, only because the collection
needs one.

Built straight into the store (the indexer always writes the chunker's header); rebuilt
only when its fingerprint (the chunks' hashes) changes.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from pathlib import Path

from ..chunk import CHUNKER_VERSION, Budget, chunk_file
from ..discover import discover, read_text
from ..errors import FileSkipped, IndexMismatchError
from ..records import Chunk, content_hash
from ..indexing.plan import chunk_row_id

log = logging.getLogger(__name__)

PLAIN_CHUNKER = f"window-plain:{CHUNKER_VERSION}"
FAKE_DIM = 64


def plain_chunks(path: str, text: str, max_bytes: int, min_bytes: int) -> list[Chunk]:
    """Baseline windows of one file, header-free (``indexed_text == text``)."""
    budget = Budget(max_bytes=max_bytes, min_bytes=min(min_bytes, max_bytes - 1))
    return [dataclasses.replace(c, indexed_text=c.text)
            for c in chunk_file(path, text, budget=budget, chunker="window")]


def plain_settings(settings, *, dense: bool = False):
    """Settings of a baseline index: the fake embedder for the BM25 baseline, the configured
    one (``dense``) for the hybrid baseline."""
    if dense:
        return settings.replace(chunker="window", enrich=False)
    return settings.replace(embedding_backend="fake", embedding_dim=FAKE_DIM, embedding_model="",
                            chunker="window", enrich=False)


def build_plain_index(settings, corpus_root: Path, repo_id: str,
                      progress: Callable[..., None] | None = None, *, embedder=None) -> dict:
    """Make the baseline collection of ``settings`` hold the corpus; returns a small report.
    ``embedder``: the one to embed with (default: the settings' own)."""
    from ..embed import make_embedder
    from ..scrub import load_allow, scrub_text
    from ..store import SCHEMA_VERSION, ChunkRow, IndexMeta

    embedder = embedder if embedder is not None else make_embedder(settings)
    meta = IndexMeta(embedder.id, embedder.dim, PLAIN_CHUNKER, SCHEMA_VERSION)
    found = discover(corpus_root, max_file_bytes=settings.max_file_bytes)
    allow = load_allow(found.root, settings.scrub_allow) if settings.scrub else ()
    chunks: list[Chunk] = []
    for f in found.files:
        try:
            text, _ = read_text(f.abs_path, max_file_bytes=settings.max_file_bytes)
        except FileSkipped as exc:
            log.warning("baseline: %s skipped (%s)", f.path, exc.reason)
            continue
        if settings.scrub:
            text = scrub_text(text, allow=allow, path=f.path).text
        chunks.extend(plain_chunks(f.path, text, settings.chunk_max_bytes, settings.chunk_min_bytes))
    fingerprint = content_hash(found.root, *(c.hash for c in chunks))
    store = _open(settings, meta)
    try:
        record = store.repo_records().get(repo_id) or {}
        if record.get("pipeline") == fingerprint and record.get("state") == "clean":
            return {"chunks": len(chunks), "embedded": 0, "rebuilt": False}
        store.remove_repo(repo_id)  # a run killed after this leaves no clean record: rebuilt next time
        before = getattr(embedder, "truncated", 0)
        vectors = embedder.embed_documents([c.indexed_text for c in chunks])
        ordinals: dict[str, int] = {}
        rows = []
        for c, v in zip(chunks, vectors, strict=True):
            n = ordinals[c.path] = ordinals.get(c.path, -1) + 1
            rows.append(ChunkRow(chunk_row_id(repo_id, c.path, n, c.hash), repo_id, "", c, v))
        for i in range(0, len(rows), 256):
            store.insert_chunks(rows[i:i + 256])
        store.put_repo_record(repo_id, {"root": found.root, "state": "clean", "pipeline": fingerprint})
        if progress:
            progress("baseline", chunks=len(rows))
        return {"chunks": len(chunks), "embedded": len(chunks), "rebuilt": True,
                "truncated": getattr(embedder, "truncated", 0) - before}
    finally:
        store.close()


def _open(settings, meta):
    from ..store import Store

    try:
        return Store.open(settings, expect=meta, create=True)
    except IndexMismatchError:
        log.info("eval baseline index was built differently; rebuilding it")
        return Store.open(settings, expect=meta, create=True, reset=True)
