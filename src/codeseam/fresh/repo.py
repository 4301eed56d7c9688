"""What the refresher knows of one repo, and the pure-ish helpers of its sync."""

from __future__ import annotations

import bisect
import os
import threading
from dataclasses import dataclass, field
from typing import Any

from .scan import StatScan, walk_new
from .watch import Watcher

FULL_SYNC_MIN = 2000  # dirty paths above this (and above half the manifest): discover the whole tree


@dataclass
class RepoFresh:
    """What the refresher knows of one repo."""

    repo_id: str
    root: str
    mode: str = "scan"  # watch | scan | missing
    note: str = ""  # why not watched, or what failed
    dirty: set[str] = field(default_factory=set)
    full: bool = False  # discover the whole tree at the next sync
    rescan: bool = True  # stat-scan before trusting the dirty set (at start, after a watcher failure)
    watcher: Watcher | None = None
    watch_refused: bool = False  # watching was tried and is impossible here
    scan: StatScan | None = None
    manifest: dict[str, tuple[int, int]] | None = None
    sorted_paths: list[str] = field(default_factory=list)
    is_git: bool | None = None
    last_sync: dict[str, Any] | None = None
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False)

    @property
    def pending(self) -> bool:
        return bool(self.dirty) or self.full

    def describe(self) -> dict[str, Any]:
        return {"mode": self.mode, "note": self.note, "pending": len(self.dirty) + (1 if self.full else 0),
                "last_sync": self.last_sync}


@dataclass
class Query:
    """One query's freshness: its deadline, the repos in scope, the notes for the result."""

    repos: list[RepoFresh]
    deadline: float
    notes: list[str] = field(default_factory=list)


def readable_again(root: str, rel: str, max_file_bytes: int) -> bool:
    """Would discovery index ``root/rel`` now (a file that left the index unreadable or
    binary)? Only when its folders are real folders of the root and the file lies inside it."""
    from ..discover.contain import Containment
    from ..discover.reading import sniff

    if Containment(root).folder_escape(rel) is not None:
        return False
    path = os.path.join(root, rel)
    if os.path.islink(path):
        path = os.path.realpath(path)
    try:
        size = os.stat(path).st_size
    except OSError:
        return False
    return size <= max_file_bytes and sniff(path, size, root) is None


def load_manifest(store, st: RepoFresh, paths: set[str] | None = None) -> None:
    """The manifest's signatures, whole, or refreshed for ``paths`` (after a scoped sync:
    its cost does not grow with the repo)."""
    if paths is None or st.manifest is None:
        entries = store.file_entries(st.repo_id)
        st.manifest = {p: (e.size, e.mtime_ns) for p, e in entries.items()}
        st.sorted_paths = sorted(st.manifest)
    else:
        entries = store.file_entries(st.repo_id, sorted(paths))
        for p in paths:
            if st.manifest.pop(p, None) is not None and p not in entries:
                del st.sorted_paths[bisect.bisect_left(st.sorted_paths, p)]
        for p, e in entries.items():
            if p not in st.manifest:
                bisect.insort(st.sorted_paths, p)
            st.manifest[p] = (e.size, e.mtime_ns)


def expand(st: RepoFresh, paths: set[str]) -> set[str]:
    """Dirty paths as files: a folder (new, or deleted/renamed with indexed files under it)
    stands for every file in it, on disk and in the manifest."""
    from ..discover.contain import Containment

    out = set()
    contain = Containment(st.root)
    for p in paths:
        full = os.path.join(st.root, p)
        if os.path.isdir(full) and contain.folder(p) is None:  # a symlinked folder is never listed
            out |= walk_new(st.root, p)
        else:
            out.add(p)
        prefix = p + "/"
        i = bisect.bisect_left(st.sorted_paths, prefix)
        while i < len(st.sorted_paths) and st.sorted_paths[i].startswith(prefix):
            out.add(st.sorted_paths[i])
            i += 1
    return out


def too_many(st: RepoFresh, scope: set[str]) -> bool:
    """Discover the whole tree instead: ignore files changed, or most of the tree did."""
    from ..discover.subset import is_ignore_file

    n = len(st.manifest or ())
    return any(map(is_ignore_file, scope)) or (len(scope) > FULL_SYNC_MIN and len(scope) > n // 2)


def is_git(st: RepoFresh) -> bool:
    """Does discovery list this root through git (asked once per repo)?"""
    if st.is_git is None:
        from ..discover.listing import _git, _root_is_git_ignored

        proc = _git(st.root, "rev-parse", "--is-inside-work-tree")
        st.is_git = bool(proc is not None and proc.returncode == 0 and proc.stdout.strip() == b"true"
                         and not _root_is_git_ignored(st.root))
    return st.is_git
