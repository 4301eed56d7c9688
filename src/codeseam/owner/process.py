"""Process plumbing for the servers that own an index: is a pid alive, who holds the index
lock, an HTTP client over TCP or a unix socket, a listening TCP socket or a private unix socket,
a spawn lock, the last error in a server's log. Nothing here knows about settings or the server
file (``serverfile.py``) or about when to start a server (``keepalive.py``); only the standard
library (and ``errors``) is imported at module level, so the CLI's path through a running server
stays light.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import ConfigError


def alive(pid: int) -> bool:
    """Is process ``pid`` running (a zombie, ended but not yet reaped, is not)?"""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[-1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


def lock_holder(db: Path) -> dict[str, Any]:
    """What the holder of the index lock of ``db`` recorded (as ``store.lock.holder_of`` reads
    it, without importing ``codeseam.store``, which a CLI call through a server never needs),
    or {} when nobody holds it (the holder empties the record when it lets go)."""
    try:
        with open(db.with_name(db.name + ".lock"), "rb") as fh:
            data = fh.read(8192)
        info = json.loads(data.decode("utf-8", "replace")) if data.strip() else {}
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


def http_client(url: str, sock: str = "", *, timeout: float, headers: dict[str, str] | None = None):
    """An httpx client for a server at ``url``, or over the unix socket ``sock`` when given."""
    import httpx

    if sock:
        return httpx.Client(base_url="http://localhost", transport=httpx.HTTPTransport(uds=sock),
                            headers=headers, timeout=timeout, trust_env=False)
    return httpx.Client(base_url=url, headers=headers, timeout=timeout, trust_env=False)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (connections wait in the backlog until served)."""
    plain = host.strip("[]")
    family = socket.AF_INET6 if ":" in plain else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((plain, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}",
                          hint="pick another --port (0 picks a free one)") from None
    return sock


def local_url(host: str, port: int) -> str:
    """The URL this machine's CLI uses to reach a server bound to ``host``."""
    plain = host.strip("[]")
    if plain in ("0.0.0.0", ""):
        plain = "127.0.0.1"
    elif plain == "::":
        plain = "::1"
    return f"http://[{plain}]:{port}" if ":" in plain else f"http://{plain}:{port}"


def private_dir(path: Path) -> Path:
    """Create ``path`` (mode 0700) or check that an existing one is this user's; make it private."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = path.lstat()
    if path.is_symlink() or not path.is_dir() or st.st_uid != os.getuid():
        raise OSError(f"refusing to use {path} for a server socket: not a folder owned by this user")
    if st.st_mode & 0o077:
        os.chmod(path, 0o700)
    return path


def bind_unix(path: Path) -> socket.socket:
    """A listening unix socket at ``path`` (mode 0600, in a 0700 folder). A leftover socket file
    is replaced: the caller holds the index, so no live server uses it."""
    private_dir(path.parent)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        sock.bind(str(path))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    finally:
        os.umask(old)
    return sock


@contextlib.contextmanager
def file_lock(path: Path, timeout: float) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (waiting up to ``timeout`` s, else TimeoutError)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(str(path)) from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # closing drops the lock


def terminate(proc: Any, timeout: float = 10.0) -> None:
    """SIGTERM the child ``proc`` (a Popen), SIGKILL it if it lingers, reap it."""
    import subprocess

    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout)


def last_error(path: Path) -> str:
    """The last ``error:`` line (and its hint) of a server log, or its last line."""
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, fh.seek(0, os.SEEK_END) - 4096))
            lines = fh.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return "no log"
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].startswith("error: "):
            return " ".join(x.strip() for x in lines[i:i + 2])[7:]
    return (lines[-1].strip() if lines else "") or "no output"
