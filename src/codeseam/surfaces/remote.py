"""One owner of the index: the server file, and CLI commands that go through a running server.

A Milvus Lite file serves one process at a time. A server (``codeseam serve`` or
``codeseam mcp``) that holds it writes a small *server file* next to it,
``<index file>.server.json`` (mode 0600)::

    {"kind": "http", "pid": 4242, "url": "http://127.0.0.1:8765", "token_required": false, ...}
    {"kind": "mcp",  "pid": 4243, ...}                        # stdio: not reachable

and removes it on shutdown. The token itself is never written there.

``codeseam mcp`` started while an HTTP server holds the index serves its tools through that
server (:class:`RemoteService`).

``call(op, ...)`` runs one ``api`` operation for the CLI. When a live HTTP server holds the
index (its pid is alive and is the recorded holder of the index lock), the operation goes
through that server (:class:`RemoteIndex`, with ``RAG_SERVER_TOKEN`` when the server needs
one) and returns the same records as the local call. When the holder is an MCP server, which
cannot be reached, the ``IndexBusyError`` says so and what to do. A stale server file (its
process gone) is ignored.

When no server holds a Lite index and ``keepalive`` is above 0, ``call`` first starts a
keep-alive server (``keepalive.py``; it has ``"keepalive"`` and ``"socket"`` in the server
file) and goes through it. A server gone before it answered (an idle exit) is retried.
"""

from __future__ import annotations

import calendar
import contextlib
import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .. import errors
from ..errors import CodeseamError, ConfigError, FatalError, IndexBusyError
from ..settings import Settings
from . import daemon

log = logging.getLogger(__name__)

SUFFIX = ".server.json"
POLL_SECONDS = 0.3
FIRST_POLL_SECONDS = 0.02


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
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
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
                          str(data.get("log") or ""), str(data.get("fingerprint") or ""))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def live_server(settings: Settings) -> ServerInfo | None:
    """The server that holds this index right now, or None (no file, or a stale one)."""
    info = read_server_file(settings)
    if info is None or not alive(info.pid):
        return None
    return info if lock_holder(settings).get("pid") == info.pid else None


def lock_holder(settings: Settings) -> dict:
    """What the holder of this index's lock recorded ({} when nobody holds it)."""
    return daemon.lock_holder(Path(settings.resolved_milvus_uri).expanduser().resolve())


alive = _alive = daemon.alive


# -- routing the CLI ------------------------------------------------------------------------

RETRIES = 2  # a server that went away (idle exit) between finding it and asking it


def call(op: str, *args: Any, settings: Settings, **kwargs: Any) -> Any:
    """``api.<op>(*args, settings=settings, **kwargs)``, through the server that holds the index
    when there is one, starting a keep-alive server when allowed (see the module docstring)."""
    from . import keepalive

    for attempt in range(RETRIES + 1):
        info = live_server(settings)
        if info is not None and info.keepalive:
            info = keepalive.fit(settings, info, op, kwargs)
        if info is None and keepalive.wanted(settings, op, kwargs):
            info, why = keepalive.ensure(settings)
            if why:
                keepalive.say(f"codeseam: the keep-alive server did not start ({why}); opening the index directly")
        if info is None or info.kind != "http":
            from .. import api

            try:
                return getattr(api, op)(*args, settings=settings, **kwargs)
            except IndexBusyError:
                info = live_server(settings)  # a server may have started since
                if info is None:
                    raise
                if info.kind != "http":
                    raise mcp_busy_error(settings, info) from None
        where = f"unix:{info.socket}" if info.socket else info.url
        log.info("the index is held by the server at %s (pid %d): going through it", where, info.pid)
        try:
            with RemoteIndex(info, settings) as remote:
                return getattr(remote, op)(*args, **kwargs)
        except ServerGone:
            if attempt == RETRIES or not keepalive.wait_gone(settings, info, 15.0):
                raise
            log.info("the server (pid %d) went away before it answered; trying again", info.pid)
    raise AssertionError("unreachable")  # pragma: no cover


def http_client(info: ServerInfo, *, timeout: float, headers: dict[str, str] | None = None):
    """An httpx client for the server ``info``: over its unix socket when it has one."""
    return daemon.http_client(info.url, info.socket, timeout=timeout, headers=headers)


class ServerGone(IndexBusyError):
    """The server could not be reached, or hung up before it answered."""


def mcp_busy_error(settings: Settings, info: ServerInfo) -> IndexBusyError:
    since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(info.started)) if info.started else "?"
    return IndexBusyError(
        f"the index {settings.resolved_milvus_uri} is held by an MCP server (`codeseam mcp`, pid "
        f"{info.pid}, since {since}) that an MCP client such as Claude Code started; it talks over "
        "stdio, so the command line cannot reach it",
        hint=f"use its tools (search_code, get_status, index_repo, ...) from that client, or end that "
        f"client session (or `kill {info.pid}`) and retry; to share the index between agents and the "
        "command line, run `codeseam serve` first: `codeseam mcp` and the CLI then both go through it",
    )


# -- the client -------------------------------------------------------------------------------

class RemoteIndex:
    """The ``api`` operations over a running ``codeseam serve``, returning the same records."""

    def __init__(self, info: ServerInfo, settings: Settings, *, timeout: float = 120.0) -> None:
        import httpx

        self.info, self.settings = info, settings
        headers = {}
        if info.token_required:
            if not settings.server_token:
                raise ConfigError(
                    f"the codeseam server at {info.url} (pid {info.pid}) holds the index and needs a token",
                    hint="set RAG_SERVER_TOKEN to the server's token, or stop the server")
        if settings.server_token:
            headers["Authorization"] = f"Bearer {settings.server_token}"
        self._http = http_client(info, timeout=timeout, headers=headers)
        self.where = f"unix:{info.socket}" if info.socket else info.url

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "RemoteIndex":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- requests -------------------------------------------------------------------------
    def _request(self, method: str, url: str, **kw: Any) -> Any:
        import httpx

        try:
            response = self._http.request(method, url, **kw)
        except httpx.HTTPError as exc:
            gone = isinstance(exc, (httpx.ConnectError, httpx.RemoteProtocolError))
            raise (ServerGone if gone else IndexBusyError)(
                f"the codeseam server at {self.where} (pid {self.info.pid}) holds the index but "
                f"did not answer: {exc or type(exc).__name__}",
                hint=f"check that it runs, or stop it (`kill {self.info.pid}`) and retry") from None
        try:
            data = response.json()
        except ValueError:
            data = {"error": response.text[:300]}
        if response.is_success:
            return data
        raise error_from(response.status_code, data)

    # -- the api operations ---------------------------------------------------------------------
    def search(self, query: str, *, repo: str | None = None, path_glob: str | None = None,
               language: str | None = None, k: int | None = None, mode: str = "hybrid"):
        params = {"q": query, "repo": repo, "path": path_glob, "lang": language, "k": k, "mode": mode}
        data = self._request("GET", "/search", params={k_: v for k_, v in params.items() if v is not None})
        return search_result(data)

    def status(self):
        return status_record(self._request("GET", "/status")["index"])

    def remove(self, repo: str) -> int:
        from urllib.parse import quote

        return int(self._request("DELETE", f"/repos/{quote(repo, safe='')}")["removed_chunks"])

    def inspect(self, repo: str) -> dict[str, Any]:
        from urllib.parse import quote

        return self._request("GET", f"/repos/{quote(repo, safe='')}")

    def ask(self, question: str, *, repo: str | None = None, k: int | None = None,
            on_delta: Callable[[str], None] | None = None):
        from ..records import Answer, Citation

        try:
            data = self._request("POST", "/ask", json={"question": question, "repo": repo, "k": k},
                                 timeout=self.settings.llm_timeout * 4 + 60)
        except errors.LLMUnavailableError as exc:
            if self.info.keepalive:  # started with this shell's settings: the message is the whole story
                raise
            raise errors.LLMUnavailableError(
                f"the codeseam server at {self.info.url} (pid {self.info.pid}), which holds the index, "
                f"answers with its own settings: {exc.message}",
                hint=f"{exc.hint or ''}; then restart the server with those settings".lstrip("; ")) from None
        cites = tuple(Citation(c["n"], c["path"], c["start_line"], c["end_line"], c["symbol"])
                      for c in data["citations"])
        return Answer(question, data["text"], cites, bool(data["weak"]), tuple(data.get("notes", ())))

    def index(self, path: str, *, repo_id: str | None = None, progress: Callable[..., None] | None = None,
              dry_run: bool = False, rebuild: bool = False):
        from .. import api

        if dry_run:  # touches no index: runs here
            return api.index(path, repo_id=repo_id, settings=self.settings, dry_run=True)
        if rebuild:
            raise IndexBusyError(
                f"--rebuild drops the whole index, which the server at {self.info.url} (pid "
                f"{self.info.pid}) holds", hint=f"stop the server (`kill {self.info.pid}`), then rebuild")
        body = {"path": os.path.realpath(path), "repo_id": repo_id}
        job = self._request("POST", "/index", json=body)
        return self._follow(job, progress)

    def _follow(self, job: dict[str, Any], progress: Callable[..., None] | None):
        """Poll the job until it ends, feeding the CLI's progress callback; the run report.
        Ctrl-C stops the job in the server too (at its next file; the next run finishes it)."""
        try:
            return self._poll(job, progress)
        except KeyboardInterrupt:
            from urllib.parse import quote

            with contextlib.suppress(CodeseamError):
                self._request("DELETE", f"/jobs/{quote(job['id'], safe='')}", timeout=10.0)
                log.warning("stopped the indexing job %s in the server (pid %d); the next run finishes "
                            "what it left", job["id"], self.info.pid)
            raise

    def _poll(self, job: dict[str, Any], progress: Callable[..., None] | None):
        progress = progress or (lambda event, **f: None)
        total_sent, embedded = False, 0
        pause = FIRST_POLL_SECONDS  # short first: a no-op re-sync takes ~0.2 s in the server
        while True:
            if job.get("files_total") is not None and not total_sent:
                progress("files", total=job["files_total"])
                total_sent = True
            if total_sent:
                progress("file", path=job.get("current_file") or "", done=job.get("files_done", 0))
            if job.get("chunks_embedded", 0) > embedded:
                progress("embedded", count=job["chunks_embedded"] - embedded)
                embedded = job["chunks_embedded"]
            if job.get("state") != "running":
                break
            time.sleep(pause)
            pause = min(POLL_SECONDS, pause * 1.5)
            job = self._request("GET", f"/jobs/{job['id']}")
        if job["state"] != "done":
            raise FatalError(f"indexing through the server failed: {job.get('error')}", hint=job.get("hint"))
        return report_record(job["report"])


class RemoteService:
    """What the MCP skin needs from a :class:`~codeseam.service.Service`, served by a running
    ``codeseam serve``: so that ``codeseam mcp`` started while the HTTP server holds the index
    goes through it too (jobs, safety checks and settings are the HTTP server's). A keep-alive
    server is pinged while this session lasts, so that it does not idle out under it."""

    def __init__(self, info: ServerInfo, settings: Settings, *, cwd: str | None = None) -> None:
        import threading

        self.info, self.settings = info, settings
        self.cwd = cwd or os.getcwd()
        self._remote = RemoteIndex(info, settings)
        self.llm_configured = bool(self._remote._request("GET", "/status").get("llm"))
        self._closed = threading.Event()
        if info.keepalive:
            threading.Thread(target=self._heartbeat, name="codeseam-heartbeat", daemon=True).start()

    def _heartbeat(self) -> None:
        every = max(0.2, min(60.0, self.info.keepalive / 3))
        while not self._closed.wait(every):
            with contextlib.suppress(CodeseamError):
                self._remote._request("GET", "/health", timeout=10.0)

    def open(self) -> "RemoteService":
        return self

    def close(self, timeout: float = 0.0) -> None:
        self._closed.set()
        self._remote.close()

    def start_index(self, path: str, repo_id: str | None = None):
        # relative to this server's folder; the HTTP server resolves and checks it
        full = path if os.path.isabs(os.path.expanduser(path)) else os.path.join(self.cwd, path)
        if self.info.keepalive:  # it trusts its socket's paths: check this server's allowed roots here
            from ..safety import AllowedRoots, check_index_path

            roots = AllowedRoots.build(self.settings.allowed_roots, [r.root for r in self.status().repos], self.cwd)
            full = str(check_index_path(full, roots, cwd=self.cwd))
        return _job(self._remote._request("POST", "/index", json={"path": full, "repo_id": repo_id}))

    def job(self, job_id: str):
        from urllib.parse import quote

        return _job(self._remote._request("GET", f"/jobs/{quote(job_id, safe='')}"))

    def jobs(self) -> list:
        return [_job(j) for j in self._remote._request("GET", "/status").get("jobs", ())]

    def search(self, query: str, **kwargs: Any):
        return self._remote.search(query, **kwargs)

    def ask(self, question: str, **kwargs: Any):
        return self._remote.ask(question, **kwargs)

    def remove(self, repo: str) -> int:
        return self._remote.remove(repo)

    def status(self):
        return self._remote.status()


def _job(data: dict[str, Any]):
    from ..service import Job

    names = {"id", "path", "repo_id", "state", "phase", "started", "finished", "files_total", "files_done",
             "chunks_embedded", "chunks_written", "current_file", "error", "hint", "report"}
    return Job(**{k: v for k, v in data.items() if k in names})


# -- JSON back to records ---------------------------------------------------------------------

def error_from(status: int, data: Any) -> CodeseamError:
    """The codeseam error a server's JSON error body describes (same class when known)."""
    data = data if isinstance(data, dict) else {}
    message = str(data.get("error") or f"the server answered HTTP {status}")
    cls = getattr(errors, str(data.get("type") or ""), None)
    if not (isinstance(cls, type) and issubclass(cls, CodeseamError)) or cls is errors.FileSkipped:
        cls = FatalError
    return cls(message, hint=data.get("hint") or None)


def search_result(data: dict[str, Any]):
    from ..records import Hit, SearchResult

    hits = tuple(Hit(h["repo"], h["path"], h["symbol"], h["kind"], h["language"], h["start_line"],
                     h["end_line"], h["score"], h["text"]) for h in data["hits"])
    return SearchResult(data["query"], bool(data["weak"]), hits, data.get("best_similarity"))


def status_record(data: dict[str, Any]):
    from ..api import RepoStatus, Status

    def when(stamp: str | None) -> float | None:
        return calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")) if stamp else None

    repos = tuple(RepoStatus(r["repo"], r["root"], r["files"], r["chunks"], when(r.get("last_sync")),
                             r["state"]) for r in data.get("repos", ()))
    return Status(data["uri"], data["collection"], data.get("embedder", ""), data.get("dim", 0),
                  data.get("chunker", ""), data.get("schema_version", 0), repos)


def report_record(data: dict[str, Any]):
    from ..indexer import IndexReport
    from ..records import Skip

    fields = dict(data)
    fields["skips"] = [Skip(s["path"], s["reason"], s.get("detail", "")) for s in data.get("skips", ())]
    return IndexReport(**fields)
