"""Repository paths stay inside the repository: the one place that decides it.

A repository is hostile input. A tracked folder can be swapped for a symlink to ``~/.aws``
after it was committed (git still lists its files under their old paths), a file can be
swapped for a link between listing and reading, and a folder of the repo can hold the
index's own data. Everything that classifies, reads or serves a repo path goes through here:

- ``Containment.folder_escape(rel)``: why the folders above ``rel`` do not lead to a real
  folder of the root (a symlinked folder on the way, pointing outside the root or inside
  it: never followed), or None; ``.folder(rel_dir)`` the same for a folder itself. Each
  folder is checked once (an ``lstat``, each folder above it being a real folder already;
  ``realpath`` for the message when it is a link) and cached for one pass.
- ``Containment.excluded(rel)``: the folder of ``rel`` that must never be indexed (the
  index's data dir), or None.
- ``open_contained(path, root)``: opens ``path`` without following a final symlink and
  without blocking, then checks what was opened, by the open file itself (``/proc/self/fd``
  where there is one, else ``realpath`` plus the same inode): a regular file whose real path
  lies inside ``root``. A link swapped in between a check and the open cannot win the race.

All of them are pure functions of the file system; they log nothing and raise only
``FileSkipped`` (``open_contained``).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable

from ..errors import FileSkipped
from . import rules

_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
_PROC_FD = "/proc/self/fd"


def inside(real: str, root: str) -> bool:
    """``real`` is ``root`` or lies under it (both absolute and resolved)."""
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def resolved(path: str | os.PathLike[str]) -> str:
    return os.path.realpath(os.path.expanduser(os.fspath(path)))


class Containment:
    """The folder checks of one root, cached per folder."""

    def __init__(self, root: str, exclude: Iterable[str | os.PathLike[str]] = ()) -> None:
        self.root = root = os.path.realpath(root)  # the repo's root as the file system has it
        self._folders: dict[str, tuple[str, str] | None] = {"": None}
        self.exclude: dict[str, str] = {}  # repo-relative folder ("." : the root) -> resolved path
        for path in exclude:
            real = resolved(path)
            if inside(real, root):
                self.exclude[os.path.relpath(real, root).replace(os.sep, "/")] = real

    def folder_escape(self, rel: str) -> tuple[str, str] | None:
        """None when every folder above ``rel`` is a real folder of the root; else
        ``(reason, detail)`` naming the first folder on the way that is a symlink and where
        it leads: ``symlink-escape`` outside the root, ``not-a-file`` inside it."""
        parts = rel.split("/")
        if any(p in ("", ".", "..") for p in parts):
            return rules.SYMLINK_ESCAPE, f"not a plain path inside the root: {rel!r}"
        return self.folder("/".join(parts[:-1]))

    def folder(self, rel_dir: str) -> tuple[str, str] | None:
        """``folder_escape`` for the folder ``rel_dir`` itself ("" is the root): None when it
        and every folder above it are real folders of the root."""
        chain = []  # rel_dir and the folders above it not judged yet, deepest first
        while rel_dir not in self._folders:
            chain.append(rel_dir)
            rel_dir = rel_dir.rpartition("/")[0]
        why = self._folders[rel_dir]
        for folder in reversed(chain):
            if why is None:  # the folder above is a real folder: one lstat tells about this one
                why = self._one(folder)
            self._folders[folder] = why
        return why

    def _one(self, folder: str) -> tuple[str, str] | None:
        full = os.path.join(self.root, folder)
        try:
            if not stat.S_ISLNK(os.lstat(full).st_mode):
                return None  # a folder (or gone, or a file: then nothing under it opens)
        except OSError:
            return None
        real = os.path.realpath(full)
        out = not inside(real, self.root)
        return (rules.SYMLINK_ESCAPE if out else rules.NOT_A_FILE,
                f"folder {folder}/ is a symlink to {real}{' (outside the root)' if out else ''}: not followed")

    def excluded(self, rel: str) -> str | None:
        """The data-dir folder (resolved) that ``rel`` lies in or is, else None."""
        for folder, real in self.exclude.items():
            if folder == "." or rel == folder or rel.startswith(folder + "/"):
                return real
        return None


def oserror_skip(path: str, exc: OSError) -> FileSkipped:
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return FileSkipped(path, rules.VANISHED, "deleted since it was listed")
    if exc.errno == errno.ELOOP:
        return FileSkipped(path, rules.NOT_A_FILE, "is a symlink: read its resolved target")
    if exc.errno in (errno.ENXIO, errno.EOPNOTSUPP):
        return FileSkipped(path, rules.NOT_A_FILE, exc.strerror or "not a regular file")
    return FileSkipped(path, rules.UNREADABLE, exc.strerror or str(exc))


def _opened_path(fd: int, path: str, st: os.stat_result) -> str | None:
    """The real path of the file open on ``fd``; None when it cannot be told for sure."""
    try:
        return os.readlink(f"{_PROC_FD}/{fd}")
    except OSError:
        pass
    real = os.path.realpath(path)  # no /proc: the path's target, if it is still the same file
    try:
        return real if os.path.samestat(os.stat(real), st) else None
    except OSError:
        return None


def open_contained(path: str, root: str | None = None, *,
                   same_as: os.stat_result | None = None) -> tuple[int, os.stat_result]:
    """Open ``path`` for reading: not through a final symlink, never blocking on a FIFO, a
    regular file, and (with ``root``, absolute and resolved) a file inside ``root``.

    ``same_as``: the stat of a file already checked to lie inside ``root`` (discovery's);
    when the opened file is that file (device and inode), it is not asked again where it is.

    Returns ``(fd, stat)``; raises FileSkipped (nothing left open): ``vanished``,
    ``unreadable``, ``not-a-file`` or ``symlink-escape``.
    """
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        raise oserror_skip(path, exc) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FileSkipped(path, rules.NOT_A_FILE, "not a regular file")
        if root is not None and not (same_as is not None and os.path.samestat(st, same_as)):
            real = _opened_path(fd, path, st)
            if real is None or not inside(real, root):
                raise FileSkipped(path, rules.SYMLINK_ESCAPE,
                                  f"resolves outside the root: {real or 'cannot tell where'}")
    except OSError as exc:
        os.close(fd)
        raise oserror_skip(path, exc) from None
    except FileSkipped:
        os.close(fd)
        raise
    return fd, st


__all__ = ["Containment", "inside", "open_contained", "resolved"]
