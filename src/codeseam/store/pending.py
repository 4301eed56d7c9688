"""Keyword-only chunk rows and the dense backfill's store side (a mixin of ``Store``).

A chunk row written with ``ChunkRow.dense = None`` holds a zero vector and ``embedded =
false``: Milvus' BM25 indexes its ``indexed_text`` at once, and dense search filters it out
(``schema.DENSE_READY``), so it is never returned as a near match. The backfill reads such
rows back a page at a time (every stored field, so a rewrite keeps the row as it was) and
rewrites them with their vectors (``embedded = true``). Rewrites are upserts by the same id:
a repeated one is harmless, and one cut short by a crash leaves a row missing, which the
next run's row census finds (``indexing/plan.py``).
"""

from __future__ import annotations

from typing import Any
from collections.abc import Mapping, Sequence

from . import schema as sch
from .expr import all_of, eq, is_in, literal
from .client import MilvusCalls
from .model import IndexMeta, check_repo_id, check_vectors


class PendingRows:
    """Mixin of ``Store``: needs ``self._m``, ``self.names`` and ``self.meta``."""

    # Store's (declared for the type checker: annotations only, nothing set here)
    _m: MilvusCalls
    names: sch.Names
    meta: IndexMeta | None

    def pending_rows(self, repo_id: str, limit: int, roles: Sequence[str] | None = None,
                     other_than: Sequence[str] = ()) -> list[dict[str, Any]]:
        """Up to ``limit`` chunk rows of ``repo_id`` without their dense vector (smallest ids
        first), with every stored field; only rows whose file role is in ``roles`` (when
        given) and not in ``other_than``."""
        check_repo_id(repo_id)
        return self._m.query(self.names.chunks, all_of(eq("repo_id", repo_id), sch.DENSE_PENDING,
                                                       _roles(roles, other_than)), ["*"], limit=limit)

    def put_vectors(self, rows: Sequence[Mapping[str, Any]], vectors: Sequence[Sequence[float]]) -> None:
        """Rewrite rows read by :meth:`pending_rows` with their unit vectors."""
        assert self.meta is not None
        if len(rows) != len(vectors):
            raise ValueError(f"{len(rows)} rows but {len(vectors)} vectors")
        checked = check_vectors(vectors, self.meta.dim, "backfill vectors")
        out, sizes = [], []
        for row, vector in zip(rows, checked, strict=True):
            new = {k: v for k, v in row.items() if k not in sch.DERIVED_FIELDS}
            new["dense"] = vector
            new[sch.EMBEDDED] = True
            out.append(new)
            sizes.append(len(new.get("text", "")) + len(new.get("indexed_text", "")) + 4 * self.meta.dim + 256)
        self._m.upsert(self.names.chunks, out, sizes, point="insert")

    def clear_vectors(self, repo_id: str, limit: int, roles: Sequence[str] | None = None,
                      other_than: Sequence[str] = ()) -> int:
        """Make up to ``limit`` embedded rows of ``repo_id`` (of those roles) keyword-only again
        (zero vector, ``embedded`` false): a repo whose vectors choice narrowed (``--vectors``).
        Returns how many rows were rewritten (0: none is left)."""
        assert self.meta is not None
        check_repo_id(repo_id)
        rows = self._m.query(self.names.chunks, all_of(eq("repo_id", repo_id), sch.DENSE_READY,
                                                       _roles(roles, other_than)), ["*"], limit=limit)
        out, sizes = [], []
        for row in rows:
            new = {k: v for k, v in row.items() if k not in sch.DERIVED_FIELDS}
            new["dense"] = [0.0] * self.meta.dim
            new[sch.EMBEDDED] = False
            out.append(new)
            sizes.append(len(new.get("text", "")) + len(new.get("indexed_text", "")) + 4 * self.meta.dim + 256)
        if out:
            self._m.upsert(self.names.chunks, out, sizes, point="insert")
        return len(out)

    def pending_count(self, repo_id: str, roles: Sequence[str] | None = None,
                      other_than: Sequence[str] = ()) -> int:
        """Chunk rows of ``repo_id`` still without their dense vector (of those roles)."""
        check_repo_id(repo_id)
        return self._m.count(self.names.chunks, all_of(eq("repo_id", repo_id), sch.DENSE_PENDING,
                                                       _roles(roles, other_than)))

    def dense_progress(self, repo_id: str) -> dict[str, int]:
        """How far indexing of ``repo_id`` has got: files with their chunk rows written,
        chunk rows, and chunk rows with their dense vector."""
        check_repo_id(repo_id)
        repo = eq("repo_id", repo_id)
        return {"files": self._m.count(self.names.files, all_of(repo, "n_chunks >= 0")),
                "chunks": self._m.count(self.names.chunks, repo),
                "embedded": self._m.count(self.names.chunks, all_of(repo, sch.DENSE_READY))}


def _roles(roles: Sequence[str] | None, other_than: Sequence[str]) -> str | None:
    parts = [is_in("role", roles) if roles is not None else None,
             # "not (role in [...])" is not supported by Milvus Lite 2.5.1; "not in" is
             f"role not in [{', '.join(literal(r) for r in other_than)}]" if other_than else None]
    return all_of(*parts) if any(parts) else None
