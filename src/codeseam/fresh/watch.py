"""Watching a repo's files: a watchfiles watcher per repo feeding a dirty set.

Library choice: ``watchfiles`` (Rust ``notify`` underneath: inotify on Linux, FSEvents on
macOS, ReadDirectoryChangesW on Windows) gives batched, debounced change sets from a thread of
its own, so there is no polling loop here. Its documented low-level ``RustNotify`` is used
rather than the ``watch()`` generator because its constructor returns once the watches are in
place: changes after that are never missed, and the caller scans once for what changed before.

One weakness is handled here: on Linux, ``notify`` skips folders silently when the inotify
watch limit is reached (``fs.inotify.max_user_watches``; measured: with the limit at 0 the
watcher starts and reports nothing). So after starting, and again when folders are created,
the watches of the watcher's inotify descriptor (``/proc/self/fdinfo``) are counted against the
folders under the root; too few means the limit was reached, and the repo falls back to the
stat scan with that reason. Network file systems (NFS, SMB, 9p, sshfs ...) deliver no events
for changes made elsewhere, so they are not watched either.

A change reaches the dirty set some milliseconds after the write (the watcher groups changes
until they settle), so a search made right after an edit, in the same breath, could miss it.
``fence()`` closes that gap: the query waits until a ``watch()`` call that began after it has
returned (the kernel queues an event when the write returns, and that call hands over
everything collected): ~1.5 ticks (~8 ms) when nothing changed. (watchfiles' stop event cannot
serve: a stopped call drops what it collected, measured.) The loop's ticks cost ~0.6% of a core
per watched repo when idle.

``changed_paths`` (pure) turns a change set into repo-relative paths for the dirty set.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from watchfiles._rust_notify import RustNotify

log = logging.getLogger(__name__)

DEBOUNCE_MS = 50  # a burst of changes (a save, a checkout) arrives as one set
STEP_MS = 5  # how often the watcher's loop looks at what notify collected (no file system access)
TICK_MS = 1  # a watch() call without changes returns at its first step: fences need a fresh call
FENCE_TIMEOUT = 0.25  # s a query waits for the watcher to hand over what it holds
NETWORK_FS = frozenset({"nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "afs", "ceph", "glusterfs", "lustre",
                        "fuse.sshfs", "fuse.rclone", "fuse.s3fs", "davfs", "fuse.davfs2", "fuse.gcsfuse"})
LIMIT_HINT = ("raise it (`sudo sysctl fs.inotify.max_user_watches=524288`), or keep big ignored folders "
              "(node_modules, .venv) out of the repo folder")
_start_lock = threading.Lock()  # watchers start one at a time: their inotify descriptor is found by diffing


class WatchUnavailable(Exception):
    """This folder cannot be watched; the message says why (for `status`)."""


def changed_paths(root: str, changes: Iterable[tuple[int, str]]) -> set[str]:
    """Repo-relative paths of a change set, without anything under ``.git/`` (a checkout
    reports the working-tree files it changes; git's own files say nothing more)."""
    prefix = root.rstrip(os.sep) + os.sep
    out = set()
    for _, path in changes:
        if not path.startswith(prefix):
            continue
        rel = path[len(prefix):].replace(os.sep, "/")
        if rel == ".git" or rel.startswith(".git/") or "/.git/" in f"/{rel}":
            continue
        out.add(rel)
    return out


def filesystem_type(path: str) -> str:
    """The file system type of the mount holding ``path`` (Linux ``/proc/self/mounts``), or ""."""
    try:
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as fh:
            mounts = [line.split() for line in fh]
    except OSError:
        return ""
    real = os.path.realpath(path)
    best, kind = "", ""
    for parts in mounts:
        if len(parts) < 3:
            continue
        point = parts[1].replace("\\040", " ")
        inside = real == point or real.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, kind = point, parts[2]
    return kind


def count_folders(root: str) -> int:
    """Folders under ``root``, itself included (symlinked folders not followed), as the
    watcher watches them."""
    n = 0
    stack = [root]
    while stack:
        folder = stack.pop()
        n += 1
        try:
            with os.scandir(folder) as it:
                for e in it:
                    try:
                        if e.is_dir(follow_symlinks=False):
                            stack.append(e.path)
                    except OSError:
                        continue
        except OSError:
            continue
    return n


def _inotify_fds() -> set[int]:
    out: set[int] = set()
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return out
    for name in names:
        try:
            if os.readlink(f"/proc/self/fd/{name}") == "anon_inode:inotify":
                out.add(int(name))
        except OSError:
            continue
    return out


def watch_count(fd: int) -> int | None:
    """Watches held by the inotify descriptor ``fd`` (None when that cannot be read)."""
    try:
        with open(f"/proc/self/fdinfo/{fd}", encoding="ascii", errors="replace") as fh:
            return sum(1 for line in fh if line.startswith("inotify wd:"))
    except OSError:
        return None


class Watcher:
    """Watches ``root`` recursively; ``on_change(paths)`` gets each debounced set of
    repo-relative changed paths, ``on_failure(reason)`` is called once if watching stops."""

    def __init__(self, root: str, on_change: Callable[[set[str]], None],
                 on_failure: Callable[[str], None]) -> None:
        self.root = root
        self.on_change, self.on_failure = on_change, on_failure
        self._stop = threading.Event()
        self._fences: list[tuple[int, threading.Event]] = []  # (call number to wait for, event)
        self._fence_lock = threading.Lock()
        self._calls = 0  # watch() calls started
        self._notify: RustNotify | None = None
        self._fd: int | None = None
        self._thread: threading.Thread | None = None
        self.failed = ""

    def start(self) -> None:
        """Start watching, or raise WatchUnavailable with the reason."""
        kind = filesystem_type(self.root)
        if kind in NETWORK_FS:
            raise WatchUnavailable(f"{self.root} is on a network file system ({kind}): changes made on "
                                   "other machines send no events")
        try:
            from watchfiles._rust_notify import RustNotify
        except ImportError as exc:  # pragma: no cover - a dependency
            raise WatchUnavailable(f"watchfiles is not installed ({exc})") from None
        with _start_lock:
            before = _inotify_fds()
            try:
                self._notify = RustNotify([self.root], False, False, 300, True, True)
            except (OSError, RuntimeError) as exc:
                raise WatchUnavailable(f"the watcher did not start: {exc}") from None
            new = _inotify_fds() - before
            self._fd = next(iter(new)) if len(new) == 1 else None
        problem = self.watch_shortfall()
        if problem:
            self._close()
            raise WatchUnavailable(problem)
        self._thread = threading.Thread(target=self._loop, name=f"codeseam-watch-{os.path.basename(self.root)}",
                                        daemon=True)
        self._thread.start()

    def watch_shortfall(self) -> str:
        """Why the watches do not cover the tree ("" when they do, or cannot be counted)."""
        if self._fd is None:
            return ""
        held = watch_count(self._fd)
        if held is None:
            return ""
        needed = count_folders(self.root)
        if held >= needed:
            return ""
        return (f"the inotify watch limit is reached: {held} of the {needed} folders under {self.root} "
                f"could be watched (fs.inotify.max_user_watches); {LIMIT_HINT}")

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive() and not self.failed

    def fence(self) -> threading.Event | None:
        """Ask the loop to hand over every change it holds now; the event is set once it did
        (None when this watcher no longer runs)."""
        if not self.alive:
            return None
        done = threading.Event()
        with self._fence_lock:
            self._fences.append((self._calls + 1, done))  # the next call to start began after now
        return done

    def _loop(self) -> None:
        try:
            while not self._stop.is_set():
                with self._fence_lock:
                    self._calls += 1
                    call = self._calls
                notify = self._notify
                assert notify is not None  # start() set it; only _close(), after this loop, clears it
                result = notify.watch(DEBOUNCE_MS, STEP_MS, TICK_MS, self._stop)
                if result == "stop":
                    break
                if isinstance(result, set) and not self._handle(result):
                    return
                self._release(call)
        except Exception as exc:  # noqa: BLE001 - the repo falls back to the stat scan
            self._fail(f"the watcher stopped: {exc}")
        finally:
            self._release(None)
            self._close()

    def _release(self, call: int | None) -> None:
        """Set the fences that waited for ``call`` (or every one: the loop ends)."""
        with self._fence_lock:
            done = [e for n, e in self._fences if call is None or n <= call]
            self._fences = [(n, e) for n, e in self._fences if call is not None and n > call]
        for e in done:
            e.set()

    def _handle(self, changes: set) -> bool:
        """Pass a change set on; False when watching has to stop (see ``_fail``)."""
        paths = changed_paths(self.root, changes)
        if paths:
            self.on_change(paths)
        if any(os.path.isdir(os.path.join(self.root, p)) for p in paths):
            problem = self.watch_shortfall()  # new folders: did they all get a watch?
            if problem:
                self._fail(problem)
                return False
        if not os.path.isdir(self.root):
            self._fail(f"the repo folder {self.root} no longer exists")
            return False
        return True

    def _fail(self, reason: str) -> None:
        if not self._stop.is_set() and not self.failed:
            self.failed = reason
            log.warning("%s: %s; falling back to the stat scan", self.root, reason)
            self.on_failure(reason)

    def _close(self) -> None:
        notify, self._notify = self._notify, None
        if notify is not None:
            try:
                notify.close()
            except Exception:  # noqa: BLE001 - closing a dead watcher
                pass

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        else:
            self._close()
