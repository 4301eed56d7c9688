"""The keep-alive owner of a Milvus Lite index, started by the CLI when it needs one.

Opening a Lite file loads it into the Lite server process (1.5 s at 10k chunks, 14 s at 100k:
bench/results/store.md), so with ``keepalive`` (``RAG_KEEPALIVE``, seconds) above 0 a CLI command
that finds no server holding a Lite index starts ``codeseam -v serve --keepalive --idle-exit
<keepalive>`` detached (``spawn``) and goes through it (``route.call``). That server holds the
index like ``codeseam serve`` (``hold.Holder``), records itself in the server file (with
``keepalive``, ``socket``, ``log``, ``fingerprint``), listens on a unix socket in a private 0700
folder (``socket_path``: only this user reaches it, so no token, and paths are trusted like the
CLI's own), logs to ``<index>.keepalive.log``, runs with the caller's settings whole
(``server_env``), and exits after ``keepalive`` idle seconds with no indexing job; ``codeseam
stop`` ends it, ``codeseam status`` shows it. Racing CLI calls take turns on a spawn lock; a
server that does not come up (``SPAWN_TIMEOUT``) is stopped and the CLI opens the index itself;
a server started with other settings (``fingerprint``) is replaced once it is idle.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import logging
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import IndexBusyError
from ..settings import Settings
from . import process
from .serverfile import ServerInfo, alive, http_client, live_server, lock_holder, read_server_file

if TYPE_CHECKING:  # pragma: no cover
    import subprocess

log = logging.getLogger(__name__)

# Ops of ``route.call`` that may start a server (an existing index, or `index` creating one; not
# "rebuild", which drops the index here).
OPS = frozenset({"search", "refs", "status", "ask", "index", "remove", "inspect"})
SPAWN_TIMEOUT = 120.0  # s: a 100k-chunk index loads in ~15 s here; a busy machine takes longer
STOP_TIMEOUT = 40.0  # s: a stopping server finishes the request at hand, stops a job at its next file
LOG_MAX_BYTES = 1 << 20  # the log is rotated to <log>.1 past this size when a server starts
UNIX_PATH_MAX = 100  # sun_path holds 108 bytes on Linux (104 on macOS); keep a margin
# Settings that do not change what the server answers: the keep-alive server trusts its own
# socket's paths (allowed_roots) and needs no token; how long it lives is its own business.
UNFINGERPRINTED = frozenset({"keepalive", "server_token", "allowed_roots"})


class SpawnFailed(Exception):
    """The keep-alive server did not come up; the message says why."""


# -- where things live -----------------------------------------------------------------------

def db_path(settings: Settings) -> Path:
    return Path(settings.resolved_milvus_uri).expanduser().resolve()


def log_path(settings: Settings) -> Path:
    db = db_path(settings)
    return db.with_name(db.name + ".keepalive.log")


def spawn_lock_path(settings: Settings) -> Path:
    db = db_path(settings)
    return db.with_name(db.name + ".spawn.lock")


def socket_path(settings: Settings) -> Path:
    """The server's unix socket: ``<index dir>/.codeseam-run/<index>.sock`` (a 0700 folder), or
    under ``$TMPDIR/codeseam-<uid>/`` when that path is too long for a unix socket."""
    db = db_path(settings)
    near = db.parent / ".codeseam-run" / f"{db.name}.sock"
    if len(os.fsencode(near)) <= UNIX_PATH_MAX:
        return near
    import tempfile

    digest = hashlib.sha256(os.fsencode(db)).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"codeseam-{os.getuid()}" / f"{digest}.sock"


# -- settings ----------------------------------------------------------------------------------

def enabled(settings: Settings) -> bool:
    return settings.keepalive > 0 and settings.is_lite


def wanted(settings: Settings, op: str) -> bool:
    """Should ``route.call(op, ...)`` start a keep-alive server when none holds the index?
    Not for a rebuild (``op == "rebuild"``: it runs here), not to read an index that does not
    exist (the direct path says "nothing indexed yet" without creating one)."""
    if not enabled(settings) or op not in OPS:
        return False
    return op == "index" or db_path(settings).exists()


def fingerprint(settings: Settings) -> str:
    """A digest of the settings that decide what a server answers (secrets included, so a
    changed key counts; only the digest is written down)."""
    values = {f.name: getattr(settings, f.name) for f in dataclasses.fields(settings)
              if f.name not in UNFINGERPRINTED}
    values["data_path"] = str(settings.data_path)
    blob = json.dumps(values, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:24]


def server_env(settings: Settings) -> dict[str, str]:
    """This process's environment with the settings whole (``settings.child_env``), so that the
    server's settings equal the caller's, CLI flags and config file included."""
    from ..settings import child_env

    env = child_env(settings)
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    return env


# -- starting one -----------------------------------------------------------------------------

def ensure(settings: Settings, *, timeout: float = SPAWN_TIMEOUT) -> tuple[ServerInfo | None, str]:
    """The server that holds the index, starting a keep-alive one if none does.

    Returns ``(info, "")``, or ``(None, why)`` when the caller should open the index itself;
    ``why`` is empty when that is simply right (another process, not a server, holds the
    index: the direct path names it)."""
    info = live_server(settings)
    if info is not None:
        return info, ""
    try:
        with process.file_lock(spawn_lock_path(settings), timeout):
            info = live_server(settings)  # the process that held the spawn lock started one
            if info is not None:
                return info, ""
            if held_by_another(settings):
                return None, ""
            proc = spawn(settings)
            try:
                return wait_ready(settings, proc, time.monotonic() + timeout), ""
            except SpawnFailed as exc:
                process.terminate(proc)
                return None, str(exc)
    except TimeoutError:
        return None, f"another codeseam process has been starting it for over {timeout:.0f} s"
    except OSError as exc:
        return None, f"cannot start it: {exc.strerror or exc}"


def held_by_another(settings: Settings) -> bool:
    """Does a live process hold the index lock (a CLI run, an indexer, a closing server)?"""
    pid = lock_holder(settings).get("pid")
    return isinstance(pid, int) and pid != os.getpid() and alive(pid)


def spawn(settings: Settings) -> subprocess.Popen:
    """Start ``codeseam serve --keepalive`` detached (own session, stdio to the log file), in this
    process's folder: a relative data dir or index path means the same index to both."""
    import subprocess

    path = log_path(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        if path.stat().st_size > LOG_MAX_BYTES:
            os.replace(path, path.with_name(path.name + ".1"))
    cmd = [sys.executable, "-m", "codeseam.surfaces.cli", "-v", "serve", "--keepalive",
           "--idle-exit", f"{settings.keepalive:g}"]
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        os.write(fd, f"--- {stamp} keep-alive server started by pid {os.getpid()}\n".encode())
        proc = subprocess.Popen(cmd, env=server_env(settings), cwd=os.getcwd(),
                                stdin=subprocess.DEVNULL, stdout=fd, stderr=fd, start_new_session=True,
                                close_fds=True)
    finally:
        os.close(fd)
    log.info("started a keep-alive server for %s (pid %d, idle exit after %g s, log %s)",
             settings.resolved_milvus_uri, proc.pid, settings.keepalive, path)
    return proc


def wait_ready(settings: Settings, proc: subprocess.Popen, deadline: float) -> ServerInfo:
    """Wait until ``proc`` has written the server file and answers ``/health``."""
    started = time.monotonic()
    while True:
        info = read_server_file(settings)
        if info is not None and info.pid == proc.pid and health(info) is not None:
            proc.returncode = 0  # detached: this process never waits for it (no ResourceWarning)
            return info
        code = proc.poll()
        if code is not None:
            raise SpawnFailed(f"it exited with code {code}: {process.last_error(log_path(settings))}")
        if time.monotonic() > deadline:
            raise SpawnFailed(f"it did not answer within {time.monotonic() - started:.0f} s "
                              f"(log: {log_path(settings)})")
        time.sleep(0.02)


def health(info: ServerInfo, timeout: float = 5.0) -> dict | None:
    """The server's ``GET /health`` (``job``: the running indexing job's id), or None when it
    does not answer."""
    import httpx

    try:
        with http_client(info, timeout=timeout) as http:
            response = http.get("/health")
            return response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None


# -- serving a call ------------------------------------------------------------------------------

def fit(settings: Settings, info: ServerInfo, op: str) -> ServerInfo | None:
    """The keep-alive server ``info`` if it may serve this call; None once it was stopped
    (``op == "rebuild"``: ``index --rebuild`` drops the index it holds; other settings, when it
    is idle)."""
    if op == "rebuild":
        reason = "--rebuild drops the whole index"
    elif info.fingerprint == fingerprint(settings):
        return info
    elif (health(info, 10.0) or {}).get("job"):
        say(f"codeseam: the keep-alive server (pid {info.pid}) runs an indexing job and was started "
             "with other settings; its settings apply until it exits (`codeseam stop` ends it)")
        return info
    else:
        reason = "it was started with other settings"
    log.info("stopping the keep-alive server (pid %d): %s", info.pid, reason)
    if not stop(settings, info):
        raise IndexBusyError(f"the keep-alive server (pid {info.pid}) holds the index and did not stop "
                             f"({reason})", hint=f"`kill {info.pid}`, then retry")
    return None


def say(message: str) -> None:
    """A note for the person who ran the command (the server did not start, other settings)."""
    notify(message)


# Where ``say`` sends its notes: logged by default; the CLI sets this to echo them on stderr.
notify: Callable[[str], None] = functools.partial(log.warning, "%s")


# -- stopping one ------------------------------------------------------------------------------

def stop(settings: Settings, info: ServerInfo, *, timeout: float = STOP_TIMEOUT) -> bool:
    """SIGTERM the server ``info`` and wait until it no longer holds the index."""
    try:
        os.kill(info.pid, signal.SIGTERM)
    except ProcessLookupError:
        return True
    return wait_gone(settings, info, timeout)


def wait_gone(settings: Settings, info: ServerInfo, timeout: float) -> bool:
    """Wait until the server ``info`` is gone: its process ended, or it released the index and
    removed its server file (a stopping server closes the index first, then the file)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(info.pid):
            return True
        holder = lock_holder(settings)
        current = read_server_file(settings)
        if holder.get("pid") != info.pid and (current is None or current.pid != info.pid):
            return True
        time.sleep(0.05)
    return False
