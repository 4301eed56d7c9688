"""The single-process lock of a Milvus Lite file.

Milvus Lite serves one process at a time; a second one fails deep inside milvus-lite with
"Open local milvus failed". Before opening, codeseam takes an exclusive advisory lock
(``fcntl.flock``) on ``<db file>.lock`` and writes who holds it (pid, command line, start
time) into that file, so the next process can say who holds the index and what to do.
The kernel drops the lock when the holder exits, however it exits (SIGKILL included).
"""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import sys
import time
from pathlib import Path

from ..errors import IndexBusyError


class IndexLock:
    def __init__(self, db_path: Path) -> None:
        self.path = db_path.with_name(db_path.name + ".lock")
        self.db_path = db_path
        self._fd: int | None = None
        self.previous: dict | None = None  # what the last holder recorded (it may have died)

    def acquire(self, timeout: float = 0.0) -> IndexLock:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + max(timeout, 0.0)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = _read_holder(fd)
                    os.close(fd)
                    raise busy_error(self.db_path, holder) from None
                time.sleep(0.05)
        self.previous = _read_holder(fd)
        self._fd = fd
        self.note()
        return self

    def note(self, **extra: object) -> None:
        """(Re)write the holder record, with ``extra`` fields (such as the server pid)."""
        assert self._fd is not None
        info = {"pid": os.getpid(), "command": _command_line(), "started": time.time(), **extra}
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, json.dumps(info).encode(), 0)

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    @property
    def held(self) -> bool:
        return self._fd is not None


def holder_of(db_path: Path) -> dict | None:
    """Who holds the lock of ``db_path`` (as recorded by that process), or None."""
    lock = db_path.with_name(db_path.name + ".lock")
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return None
    try:
        return _read_holder(fd)
    finally:
        os.close(fd)


def busy_error(db_path: Path, holder: dict | None) -> IndexBusyError:
    if holder and holder.get("pid"):
        pid = holder["pid"]
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(holder.get("started", 0)))
        if pid == os.getpid():
            what, stop = f"this process (opened {since})", "close the store this process already holds"
        else:
            command = holder.get("command") or "?"
            what = f"process {pid} (`{command}`, since {since})"
            stop = ("stop it with `codeseam stop` (the CLI's keep-alive server)" if "--keepalive" in command
                    else f"wait for it to finish or stop it (`kill {pid}`)")
    else:
        what = "another process"
        stop = "wait for it to finish or stop it"
    return IndexBusyError(
        f"the index {db_path} is in use by {what}; Milvus Lite serves one process at a time",
        hint=f"{stop}; to search while it runs, ask the running `codeseam serve` / `codeseam mcp` "
        "instead, or use a Milvus server (RAG_MILVUS_URI=http://host:19530)",
    )


def _read_holder(fd: int) -> dict | None:
    try:
        data = os.pread(fd, 8192, 0)
        info = json.loads(data.decode("utf-8", "replace")) if data.strip() else None
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) else None


def _command_line() -> str:
    argv = [str(a) for a in (getattr(sys, "orig_argv", None) or sys.argv)]
    if len(argv) > 1 and os.path.basename(argv[0]).startswith("python") and not argv[1].startswith("-"):
        argv = argv[1:]  # `python /path/bin/codeseam index .` -> `codeseam index .`
    if argv:
        argv[0] = os.path.basename(argv[0])
    return shlex.join(argv)[:300]
