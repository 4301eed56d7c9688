"""The store's records and the limits every row is checked against before it is written.

Milvus Lite does not enforce VARCHAR ``max_length`` and a failed upsert there has already
deleted the old rows of its ids, so rows are validated here, in Python, before any write.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import ConfigError, StoreError
from ..records import Chunk

# Bump when the collections' fields, analyzer or index types change.
SCHEMA_VERSION = 4  # 2: dense metric IP on unit vectors (was COSINE); 3: a role per chunk;
# 4: an ``embedded`` flag per chunk row (keyword-only rows until the dense backfill)

# VARCHAR limits in UTF-8 bytes (Milvus' own ceiling is 65,535).
MAX_TEXT_BYTES = 65_535
LIMITS: dict[str, int] = {
    "id": 512,
    "repo_id": 256,
    "path": 4096,
    "language": 64,
    "symbol": 2048,
    "parent": 2048,
    "kind": 32,
    "role": 32,
    "text": MAX_TEXT_BYTES,
    "indexed_text": MAX_TEXT_BYTES,
    "file_hash": 128,
    "chunk_hash": 128,
}

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# Milvus' hybrid search re-queries its hits with an id expression it does not escape.
_BAD_ID = re.compile(r"[\x00-\x1f\x7f'\"\\]")


@dataclass(frozen=True)
class IndexMeta:
    """What an index was built with; a mismatch on open asks for a rebuild."""

    embedder_id: str
    dim: int
    chunker_version: str
    schema_version: int

    def differences(self, other: IndexMeta) -> list[str]:
        """Human lines naming each field where ``self`` (the index) differs from ``other``."""
        names = {"embedder_id": "embedder", "dim": "dimension", "chunker_version": "chunker version",
                 "schema_version": "schema version"}
        return [f"{label}: index has {getattr(self, f)!r}, current is {getattr(other, f)!r}"
                for f, label in names.items() if getattr(self, f) != getattr(other, f)]


@dataclass(frozen=True)
class FileEntry:
    """One row of the file manifest: what was indexed for ``(repo_id, path)``."""

    repo_id: str
    path: str
    size: int
    mtime_ns: int
    file_hash: str
    n_chunks: int
    indexed_at: float


@dataclass(frozen=True)
class ChunkRow:
    """A chunk ready to write: ``id`` is deterministic (given by the caller, upsert key).

    ``dense=None`` writes a keyword-only row: BM25 finds it at once, dense search never does
    (it is stored with a zero vector and ``embedded = false``) until its vector is put in
    by the dense backfill (``Store.put_vectors``)."""

    id: str
    repo_id: str
    file_hash: str
    chunk: Chunk
    dense: Sequence[float] | None


@dataclass(frozen=True)
class StoredChunk:
    """A chunk as read back; ``score`` is cosine (dense), BM25, RRF, or 0 outside a search."""

    id: str
    repo_id: str
    path: str
    language: str
    symbol: str
    parent: str
    kind: str
    start_line: int
    end_line: int
    text: str
    chunk_hash: str
    file_hash: str
    score: float = 0.0
    role: str = "source"


@dataclass(frozen=True)
class Filters:
    """Search filters: repos (exact, any of), a path glob (gitignore syntax), a language,
    roles (any of; ``discover.roles.ROLES``)."""

    repos: tuple[str, ...] = ()
    path_glob: str | None = None
    language: str | None = None
    roles: tuple[str, ...] = ()


# -- validation ------------------------------------------------------------------------------

def check_repo_id(repo_id: str) -> str:
    """A repo id is a name: non-empty, no control characters, at most 256 UTF-8 bytes."""
    if not isinstance(repo_id, str) or not repo_id.strip():
        raise ConfigError(f"invalid repo id {repo_id!r}: it must be a non-empty name")
    if _CONTROL.search(repo_id):
        raise ConfigError(f"invalid repo id {repo_id!r}: control characters are not allowed")
    check_varchar("repo_id", repo_id)
    return repo_id


def check_chunk_id(chunk_id: str) -> None:
    if not chunk_id or _BAD_ID.search(chunk_id):
        raise StoreError(f"invalid chunk id {chunk_id!r}: it must be non-empty, without quotes, "
                         "backslashes or control characters (use a hash)")
    check_varchar("id", chunk_id)


def check_varchar(field: str, value: str, limit: int | None = None) -> None:
    limit = LIMITS[field] if limit is None else limit
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise StoreError(f"{field} {value[:80]!r} is not valid UTF-8 text and cannot be stored") from None
    if size > limit:
        raise StoreError(
            f"{field} is {size} bytes, over the store's limit of {limit} bytes ({value[:60]!r}...)",
            hint="chunks are capped at a few KB by the chunker; this row was not written",
        )


def check_vector(vector: Sequence[float], dim: int, what: str) -> list[float]:
    """A unit-length (or all-zero) vector of ``dim`` floats, as a list."""
    return check_vectors([vector], dim, what)[0]


def check_vectors(vectors: Sequence[Sequence[float]], dim: int, what: str) -> list[list[float]]:
    """Unit-length (or all-zero) vectors of ``dim`` floats, as lists. Inner product is the
    dense metric, which equals cosine only for unit vectors: anything else is refused."""
    import numpy as np

    if not len(vectors):
        return []
    try:
        arr = np.asarray([np.asarray(v, dtype=np.float32) for v in vectors])
    except ValueError:
        arr = None
    if arr is None or arr.ndim != 2 or arr.shape[1] != dim:
        bad = next(len(v) for v in vectors if len(v) != dim)
        raise StoreError(f"{what}: vector has {bad} dimensions, the index has {dim}")
    norms = np.linalg.norm(arr, axis=1)
    off = ~(np.isfinite(norms) & ((np.abs(norms - 1.0) < 1e-3) | (norms < 1e-12)))
    if off.any():
        i = int(np.argmax(off))
        raise StoreError(f"{what}: vector {i} has length {norms[i]:.4f}, not 1: vectors must be "
                         "L2-normalised (by the embedder) before they are stored or searched")
    return arr.tolist()
