"""Start and stop the Milvus Lite server process for one ``.db`` file.

pymilvus starts milvus-lite through ``milvus_lite.server.Server``, which sleeps a fixed 0.5 s
after spawning the binary (see its source) and imports ``pkg_resources``. The binary has its
socket up well before that, so for milvus-lite 2.5.x codeseam spawns it the same way (same
arguments, same ``.<name>.lock`` protocol: the server exits when that lock is released,
which also happens when this process dies) and polls for the socket instead.

The lock is an open-file-description lock (Linux ``F_OFD_SETLK``) where there is one, not
the ``lockf`` record lock milvus-lite takes: the server's POSIX lock test sees both, but a
record lock belongs to the process and is released when the process closes *any* descriptor
of the file, so merely reading ``.<name>.lock`` (discovery sniffing a folder that holds the
data dir did) stopped the server. An OFD lock belongs to this one open file and ends only
when it is unlocked or closed (or the process dies). The spawn
returns at once, so the server boots while pymilvus is imported. Any other milvus-lite
version falls back to pymilvus' own path (``start_lite`` returns None).
"""

from __future__ import annotations

import fcntl
import importlib.util
import logging
import os
import re
import secrets
import socket as socketlib
import struct
import subprocess
import tempfile
import time
import weakref
from pathlib import Path
from typing import IO

from ..errors import ConfigError, IndexBusyError, StoreError

log = logging.getLogger(__name__)

_NAME = re.compile(r"^[a-zA-Z0-9.\-_]+$")


def check_lite_path(db_path: Path) -> None:
    """milvus-lite's own rules for the file name (checked late and obscurely by it)."""
    name = db_path.name
    if not name.endswith(".db") or not _NAME.match(name) or len(name) > 36:
        raise ConfigError(
            f"invalid Milvus Lite file name {name!r}: it must end in .db, use only letters, "
            "digits, '.', '-' and '_', and be at most 36 characters",
            hint="set RAG_MILVUS_URI to a path such as ~/codeseam/index.db",
        )


def _binary() -> Path | None:
    try:
        from importlib.metadata import version

        if not version("milvus-lite").startswith("2.5."):
            return None
        spec = importlib.util.find_spec("milvus_lite")
    except Exception:  # noqa: BLE001 - any doubt means: use pymilvus' own path
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    binary = Path(next(iter(spec.submodule_search_locations))) / "lib" / "milvus"
    return binary if binary.is_file() and os.access(binary, os.X_OK) else None


_OFD_SETLK = getattr(fcntl, "F_OFD_SETLK", None)
_FLOCK = "@hhqqi4x"  # struct flock: l_type, l_whence, l_start, l_len, l_pid (Linux, 64-bit off_t)


def lock_whole_file(fd: int, *, unlock: bool = False) -> None:
    """Lock (or unlock) all of ``fd``'s file, exclusive, without waiting: an OFD lock where
    the platform has one, else ``lockf``. Raises OSError when another holder has it."""
    if _OFD_SETLK is None:
        fcntl.lockf(fd, fcntl.LOCK_UN if unlock else fcntl.LOCK_EX | fcntl.LOCK_NB)
        return
    kind = fcntl.F_UNLCK if unlock else fcntl.F_WRLCK
    fcntl.fcntl(fd, _OFD_SETLK, struct.pack(_FLOCK, kind, os.SEEK_SET, 0, 0, 0))


class LiteServer:
    """A running milvus-lite binary serving ``db_path`` on a unix socket."""

    def __init__(self, db_path: Path, binary: Path) -> None:
        self.db_path = db_path
        lock_path = db_path.with_name(f".{db_path.name}.lock")
        lock_fd = open(lock_path, "a")  # noqa: SIM115 - held until stop()
        try:
            lock_whole_file(lock_fd.fileno())
        except OSError:
            lock_fd.close()
            raise IndexBusyError(
                f"the index {db_path} is open in another program (Milvus Lite lock {lock_path} is held)",
                hint="stop the other program, or use a Milvus server (RAG_MILVUS_URI)",
            ) from None
        sweep_stale_sockets(db_path.name)
        self.socket = Path(tempfile.gettempdir()) / f"codeseam-{secrets.token_hex(6)}-{db_path.name}.sock"
        lib = str(binary.parent)
        env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH")}
        old = os.environ.get("LD_LIBRARY_PATH", "")
        env["LD_LIBRARY_PATH"] = env["DYLD_LIBRARY_PATH"] = f"{lib}:{old}" if old else lib
        # the binary aborts ("basic_string: construction from null") when HOME is unset, as it
        # is under MCP clients that start servers with a minimal environment
        env.setdefault("HOME", str(db_path.parent))
        self._log: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - read on failure
        args = [str(binary), str(db_path), f"unix:{self.socket}", os.environ.get("LOG_LEVEL", "ERROR"),
                str(lock_path)]
        self.proc = subprocess.Popen(args, env=env, cwd=str(db_path.parent), stdin=subprocess.DEVNULL,
                                     stdout=self._log, stderr=self._log)
        self._finalizer = weakref.finalize(self, _stop, self.proc, lock_fd, self.socket, self._log)

    @property
    def uri(self) -> str:
        return f"unix:{self.socket}"

    def wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while not self.socket.exists():
            if self.proc.poll() is not None:
                detail = self.log_tail()
                self.stop()
                raise StoreError(f"Milvus Lite could not open {self.db_path} (exit code "
                                 f"{self.proc.returncode}){': ' + detail if detail else ''}")
            if time.monotonic() > deadline:
                self.stop()
                raise StoreError(f"Milvus Lite did not start within {timeout:.0f} s for {self.db_path}")
            time.sleep(0.005)

    def log_tail(self, n: int = 600) -> str:
        try:
            self._log.seek(0)
            return self._log.read().decode("utf-8", "replace")[-n:].strip()
        except (OSError, ValueError):
            return ""

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        self._finalizer()


def sweep_stale_sockets(db_name: str) -> int:
    """Remove this user's Milvus Lite sockets for ``db_name`` that nothing listens on any
    more: a process killed with SIGKILL never unlinks its socket. A socket that accepts a
    connection belongs to a live server and is kept. Returns how many were removed."""
    removed = 0
    for path in Path(tempfile.gettempdir()).glob(f"codeseam-*-{db_name}.sock"):
        try:
            if path.lstat().st_uid != os.getuid():
                continue
            with socketlib.socket(socketlib.AF_UNIX, socketlib.SOCK_STREAM) as probe:
                probe.settimeout(0.5)
                probe.connect(str(path))
        except ConnectionRefusedError:
            try:
                path.unlink()
                removed += 1
            except OSError:
                pass
        except OSError:
            continue  # gone meanwhile, or not ours to judge
    return removed


def _stop(proc: subprocess.Popen, lock_fd: IO[str], socket: Path, log_file: IO[bytes]) -> None:
    # Releasing the lock tells the server to shut down (the milvus-lite protocol).
    try:
        lock_whole_file(lock_fd.fileno(), unlock=True)
    finally:
        lock_fd.close()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        log.warning("Milvus Lite did not stop within 10 s; killing it")
        proc.kill()
        proc.wait(timeout=5)
    try:
        socket.unlink()
    except OSError:
        pass
    log_file.close()


def wait_gone(pid: object, db_path: Path, timeout: float = 10.0) -> None:
    """Wait for a server left by a dead holder to exit (it does soon after its parent dies,
    when it sees the lock released), so two servers never share the file."""
    if not isinstance(pid, int):
        return
    deadline = time.monotonic() + timeout
    while _serving(pid, db_path):
        if time.monotonic() > deadline:
            raise StoreError(f"an old Milvus Lite server (pid {pid}) still serves {db_path}",
                             hint=f"stop it (`kill {pid}`) and retry")
        time.sleep(0.01)


def _serving(pid: int, db_path: Path) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            if f.read().rsplit(b")", 1)[-1].split()[0] == b"Z":
                return False
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return str(db_path).encode() in f.read()
    except OSError:
        return False


def start_lite(db_path: Path) -> LiteServer | None:
    """Spawn the server for ``db_path`` (returns at once), or None to use pymilvus' path."""
    binary = _binary()
    return LiteServer(db_path, binary) if binary is not None else None
