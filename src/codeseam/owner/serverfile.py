"""The server file next to a Milvus Lite index: who serves it, and whether that server is live.

``<index file>.server.json`` (mode 0600) records the server that holds the index (see the
package docstring); ``live_server`` trusts it only while its pid is alive and is the recorded
holder of the index lock. ``server_status`` is what ``codeseam status`` says about it.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..settings import Settings
from . import process

SUFFIX = ".server.json"


@dataclass(frozen=True)
class ServerInfo:
    kind: str  # http | mcp
    pid: int
    url: str = ""
    token_required: bool = False
    started: float = 0.0
    path: str = ""  # the server file
    socket: str = ""  # a unix socket to reach it by (keep-alive servers), else ``url``
    keepalive: float = 0.0  # > 0: a keep-alive server that exits after this many idle seconds
    log: str = ""  # its log file (keep-alive servers)
    fingerprint: str = ""  # digest of the settings it serves with (keepalive.fingerprint)
    watch: bool = False  # `codeseam watch`, serving the CLI on a unix socket while it syncs

    @property
    def where(self) -> str:
        """How to reach it, for people: its unix socket, else its URL."""
        return f"unix:{self.socket}" if self.socket else self.url


# -- the server file -------------------------------------------------------------------------

def server_file(settings: Settings) -> Path | None:
    """Where a server that holds this index records itself (None for a Milvus server URI)."""
    if not settings.is_lite:
        return None
    db = Path(settings.resolved_milvus_uri).expanduser().resolve()
    return db.with_name(db.name + SUFFIX)


def write_server_file(settings: Settings, kind: str, *, url: str = "", token_required: bool = False,
                      **extra: Any) -> Path | None:
    """Record this process as the server of the index; ``extra``: socket, keepalive, log,
    fingerprint (keep-alive servers)."""
    path = server_file(settings)
    if path is None:
        return None
    info = {"kind": kind, "pid": os.getpid(), "url": url, "token_required": token_required,
            "started": time.time(), "index": settings.resolved_milvus_uri, **extra}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)  # a leftover (or a planted link: unlink never follows it)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(info, f)
    os.replace(tmp, path)
    return path


def remove_server_file(settings: Settings) -> None:
    """Remove the server file if this process wrote it."""
    info = read_server_file(settings)
    if info is not None and info.pid == os.getpid():
        try:
            os.unlink(info.path)
        except OSError:
            pass


def read_server_file(settings: Settings) -> ServerInfo | None:
    path = server_file(settings)
    if path is None:
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return ServerInfo(str(data["kind"]), int(data["pid"]), str(data.get("url") or ""),
                          bool(data.get("token_required")), float(data.get("started") or 0), str(path),
                          str(data.get("socket") or ""), float(data.get("keepalive") or 0),
                          str(data.get("log") or ""), str(data.get("fingerprint") or ""), bool(data.get("watch")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


# -- the live server ---------------------------------------------------------------------------

def live_server(settings: Settings) -> ServerInfo | None:
    """The server that holds this index right now, or None (no file, or a stale one)."""
    info = read_server_file(settings)
    if info is None or not alive(info.pid):
        return None
    return info if lock_holder(settings).get("pid") == info.pid else None


def lock_holder(settings: Settings) -> dict:
    """What the holder of this index's lock recorded ({} when nobody holds it)."""
    return process.lock_holder(Path(settings.resolved_milvus_uri).expanduser().resolve())


alive = process.alive


def http_client(info: ServerInfo, *, timeout: float, headers: dict[str, str] | None = None):
    """An httpx client for the server ``info``: over its unix socket when it has one."""
    return process.http_client(info.url, info.socket, timeout=timeout, headers=headers)


# -- for `codeseam status` ---------------------------------------------------------------------

def describe(info: ServerInfo) -> dict[str, Any]:
    """The server that holds the index, for `codeseam status` (JSON-ready)."""
    kind = "keep-alive" if info.keepalive else "watch" if info.watch else "mcp" if info.kind == "mcp" else "serve"
    return {"kind": kind,
            "pid": info.pid, "url": info.where,
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(info.started)) if info.started else None,
            "idle_exit_seconds": info.keepalive or None, "log": info.log or None}


def status_line(info: ServerInfo) -> str:
    d = describe(info)
    since = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.started)) if info.started else "?"
    if info.keepalive:
        return (f"server:    keep-alive pid {info.pid} since {since} on {d['url']}; exits after "
                f"{info.keepalive:g} s idle, `codeseam stop` ends it now (log {info.log})")
    if info.kind == "mcp":
        return f"server:    codeseam mcp pid {info.pid} since {since} (stdio)"
    if info.watch:
        return f"server:    codeseam watch pid {info.pid} since {since} on {d['url']}"
    return f"server:    codeseam serve pid {info.pid} since {since} at {info.url}"


def server_status(settings: Settings) -> tuple[dict[str, Any] | None, str]:
    """``(JSON, line)`` about the server holding the index, for `codeseam status`."""
    info = live_server(settings)
    if info is not None:
        return describe(info), status_line(info)
    if not settings.is_lite:
        return None, "server:    none (a Milvus server: every command connects to it)"
    mode = (f"the next command starts a keep-alive server ({settings.keepalive:g} s idle exit)"
            if settings.keepalive > 0 else "keep-alive off (RAG_KEEPALIVE=0): each command opens the index")
    return None, f"server:    none; {mode}"
