"""Incremental, crash-safe sync: what to do with each file, decided by a pure function.

The protocol (carried out by ``run.IndexRun`` over the store's primitives) keeps one invariant:

    every path that has chunk rows in the index has an entry in the file manifest.

Writes for a batch of changed files happen in this order:

1. put *pending* manifest entries (``n_chunks = -1``) for the batch;
2. delete the batch paths' old chunk rows;
3. insert the new chunk rows (ids are deterministic, so a repeated insert is an upsert);
4. put the final manifest entries (file hash, size, mtime, chunk count).

Deleted files: delete their chunk rows, then their manifest entries. A run killed at any
point therefore leaves, at worst, pending entries (or final entries whose chunk rows were not
all written). The next run treats pending entries as changed files, and when the previous
run did not finish (the repo record says ``syncing``, or there is no record) it also compares
each entry with the rows actually stored, by count and by file hash: any disagreement is
re-done. The result is exact agreement with a clean build.

That last check also runs when the previous holder of a Milvus Lite file died without closing
it (its record stays in the lock file): should the store ever lose writes it acknowledged
(it did not in any SIGKILL trial measured), the repo record could say ``clean`` while rows
are missing, or the manifest could name a file version whose rows never landed; comparing
row counts and file hashes per path finds both. A clean close costs no check.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from ..records import SourceFile

PENDING = -1


@dataclass(frozen=True)
class ManifestEntry:
    """What the manifest remembers about one indexed file (the store's FileEntry shape)."""

    path: str
    size: int
    mtime_ns: int
    file_hash: str
    n_chunks: int


@dataclass(frozen=True)
class SyncPlan:
    """What a run must do. ``check`` files changed signature and must be read and hashed
    (unchanged content then only refreshes the manifest); ``redo`` files are re-chunked for
    sure (new, pending, inconsistent, or the pipeline changed); ``delete`` paths lost their
    file; ``unchanged`` cost nothing."""

    redo: tuple[SourceFile, ...] = ()
    check: tuple[SourceFile, ...] = ()
    delete: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    reasons: Mapping[str, str] = field(default_factory=dict)

    @property
    def is_noop(self) -> bool:
        return not (self.redo or self.check or self.delete)


def plan_sync(
    files: Sequence[SourceFile],
    manifest: Mapping[str, ManifestEntry],
    *,
    pipeline_changed: bool = False,
    stored_counts: Mapping[str, int] | None = None,
    stored_hashes: Mapping[str, Collection[str]] | None = None,
) -> SyncPlan:
    """Decide per file: unchanged, check (stat differs), redo, or delete.

    ``stored_counts`` (path -> chunk rows actually in the store) is given when the previous
    run did not finish; then any count that disagrees with the manifest forces a redo, and
    stored paths missing from the manifest are deleted. ``stored_hashes`` (path -> the file
    hashes its stored rows carry) adds one more check: rows of another file version than the
    manifest's force a redo too.
    """
    redo: list[SourceFile] = []
    check: list[SourceFile] = []
    unchanged: list[str] = []
    reasons: dict[str, str] = {}
    seen: set[str] = set()
    for f in files:
        seen.add(f.path)
        entry = manifest.get(f.path)
        reason = _redo_reason(f, entry, pipeline_changed, stored_counts, stored_hashes)
        if reason is not None:
            redo.append(f)
            reasons[f.path] = reason
        elif entry is not None and (entry.size, entry.mtime_ns) != (f.size, f.mtime_ns):
            check.append(f)
            reasons[f.path] = "stat changed"
        else:
            unchanged.append(f.path)
    gone = set(manifest) - seen
    if stored_counts is not None:
        gone |= set(stored_counts) - seen
    for path in gone:
        reasons[path] = "deleted"
    return SyncPlan(tuple(redo), tuple(check), tuple(sorted(gone)), tuple(unchanged), reasons)


def _redo_reason(
    f: SourceFile,
    entry: ManifestEntry | None,
    pipeline_changed: bool,
    stored_counts: Mapping[str, int] | None,
    stored_hashes: Mapping[str, Collection[str]] | None = None,
) -> str | None:
    if entry is None:
        return "new"
    if entry.n_chunks == PENDING:
        return "interrupted"
    if pipeline_changed:
        return "pipeline changed"
    if stored_counts is not None and stored_counts.get(f.path, 0) != entry.n_chunks:
        return "inconsistent"
    if stored_hashes is not None and set(stored_hashes.get(f.path, ())) - {entry.file_hash}:
        return "inconsistent"
    return None


def chunk_row_id(repo_id: str, path: str, ordinal: int, chunk_hash: str) -> str:
    """Deterministic primary key: re-inserting the same chunk is an upsert, never a duplicate."""
    from ..records import content_hash

    return content_hash(repo_id, path, str(ordinal), chunk_hash)
