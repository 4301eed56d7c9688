"""The stat scan: what changed in a repo since it was synced, without a file watcher.

Where no watcher runs (a one-shot command, a network file system, a watch limit reached), a
query finds changes by comparing the disk with the manifest:

- every indexed file is stat'ed: a different ``(size, mtime_ns)``, or no file, marks it;
- every folder that holds indexed files (and each one above it) is stat'ed: a folder whose
  mtime is newer than the last sync had an entry created, deleted or renamed in it, so it is
  listed, and what it holds that the manifest does not (a file, or a new folder, walked) is a
  candidate new file. Whether a candidate is indexed at all (ignore rules, binary, ...) is
  decided afterwards by discovery (``discover.subset``).

The scan is time-boxed: ``run(deadline)`` stops when the deadline passes and the next run
resumes where it stopped, so a query on a huge tree pays a bounded time and the tree is
still covered over a few queries (every hit is checked against its file anyway).
"""

from __future__ import annotations

import bisect
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..discover import rules
from ..discover.contain import Containment

MTIME_SLACK_NS = 2_000_000_000  # folder mtimes this close to the last sync are looked at again
CHECK_EVERY = 256  # stats between two looks at the clock
# Folders never walked for new files: git's own, and the heavy ones ignored by default.
PRUNED = frozenset({*rules.ALWAYS_SKIPPED_NAMES, *(p.rstrip("/") for p in rules.DEFAULT_IGNORES
                                                   if p.endswith("/"))})


@dataclass
class ScanResult:
    changed: set[str] = field(default_factory=set)  # indexed paths whose file changed or left
    added: set[str] = field(default_factory=set)  # candidate new files (not in the manifest)
    complete: bool = True  # the whole repo was covered (a cycle ended)
    files: int = 0  # files stat'ed in this run
    folders: int = 0  # folders stat'ed in this run
    seconds: float = 0.0


def folders_of(paths: Mapping[str, object] | set[str]) -> list[str]:
    """Every folder that holds one of ``paths`` and each one above it, root (``""``) first."""
    dirs = {""}
    for path in paths:
        parent = path.rpartition("/")[0]
        while parent and parent not in dirs:
            dirs.add(parent)
            parent = parent.rpartition("/")[0]
    return sorted(dirs, key=lambda d: (d.count("/") + bool(d), d))


class StatScan:
    """The scan state of one repo: the manifest's signatures and where a cut scan resumes."""

    def __init__(self, root: str, signatures: Mapping[str, tuple[int, int]], since: float) -> None:
        self.root = root
        self._contain = Containment(root)
        self.reset(signatures, since)

    def reset(self, signatures: Mapping[str, tuple[int, int]], since: float) -> None:
        """New manifest signatures (after a sync) and the wall-clock time they are valid from."""
        self.signatures = dict(signatures)
        self.paths = sorted(self.signatures)
        self.folders = folders_of(self.signatures)
        self.known_folders = set(self.folders)
        self.since_ns = int(since * 1e9) - MTIME_SLACK_NS
        self._cursor = 0  # position in paths + folders where the next run starts
        self._cycle_start = time.time()

    def update(self, signatures: Mapping[str, tuple[int, int]], paths: set[str]) -> None:
        """After a scoped sync: the new signatures of ``paths`` (gone when not in ``signatures``)."""
        for p in paths:
            if p in signatures:
                if p not in self.signatures:
                    bisect.insort(self.paths, p)
                self.signatures[p] = signatures[p]
            elif self.signatures.pop(p, None) is not None:
                del self.paths[bisect.bisect_left(self.paths, p)]
        for folder in folders_of({p for p in paths if p in signatures}):
            if folder not in self.known_folders:
                self.known_folders.add(folder)
                self.folders.append(folder)

    def run(self, deadline: float | None = None) -> ScanResult:
        """Scan until done or until ``time.monotonic()`` passes ``deadline``."""
        t0 = time.perf_counter()
        out = ScanResult()
        self._contain = Containment(self.root)  # folder checks, fresh each run
        items = len(self.paths) + len(self.folders)
        if self._cursor == 0:
            self._cycle_start = time.time()
        i = self._cursor
        while i < items:
            if i < len(self.paths):
                self._file(self.paths[i], out)
            else:
                self._folder(self.folders[i - len(self.paths)], out, deadline)
            i += 1
            if deadline is not None and i % CHECK_EVERY == 0 and time.monotonic() > deadline:
                break
        out.complete = i >= items
        self._cursor = 0 if out.complete else i
        if out.complete:  # the next cycle looks only at folders changed since this one began
            self.since_ns = int(self._cycle_start * 1e9) - MTIME_SLACK_NS
        out.seconds = time.perf_counter() - t0
        return out

    def _file(self, path: str, out: ScanResult) -> None:
        out.files += 1
        try:
            st = os.stat(os.path.join(self.root, path))
        except OSError:
            out.changed.add(path)  # gone, or unreadable: the sync decides
            return
        if (st.st_size, st.st_mtime_ns) != self.signatures[path]:
            out.changed.add(path)

    def _folder(self, rel: str, out: ScanResult, deadline: float | None) -> None:
        out.folders += 1
        if rel and self._contain.folder(rel) is not None:
            return  # swapped for a symlink: never listed (its files are reported changed by _file)
        full = os.path.join(self.root, rel) if rel else self.root
        try:
            st = os.stat(full)
        except OSError:
            return  # its files are reported gone one by one
        if st.st_mtime_ns < self.since_ns:
            return
        prefix = rel + "/" if rel else ""
        for name, is_dir in _entries(full):
            child = prefix + name
            if is_dir:
                if child not in self.known_folders and name not in PRUNED:
                    out.added |= walk_new(self.root, child, deadline)
            elif child not in self.signatures:
                out.added.add(child)


def _entries(folder: str) -> list[tuple[str, bool]]:
    try:
        with os.scandir(folder) as it:
            out = []
            for e in it:
                try:
                    out.append((e.name, e.is_dir(follow_symlinks=False)))
                except OSError:
                    continue
            return out
    except OSError:
        return []


def walk_new(root: str, rel: str, deadline: float | None = None, limit: int = 100_000) -> set[str]:
    """Every file under the new folder ``rel`` (iterative, no symlinked folders, pruned names
    skipped); stops at ``limit`` files or the deadline."""
    found: set[str] = set()
    stack = [rel]
    while stack and len(found) < limit:
        folder = stack.pop()
        for name, is_dir in _entries(os.path.join(root, folder)):
            child = f"{folder}/{name}"
            if is_dir:
                if name not in PRUNED:
                    stack.append(child)
            else:
                found.add(child)
        if deadline is not None and time.monotonic() > deadline:
            break
    return found
