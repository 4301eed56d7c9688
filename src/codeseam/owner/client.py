"""HTTP clients for the server that holds an index, returning the same records as the local API.

:class:`RemoteIndex` runs the ``api`` operations over a running ``codeseam serve`` (or the
CLI's keep-alive server) for ``route.call``; :class:`RemoteService` is what the MCP skin needs
from a :class:`~codeseam.service.Service`, so that ``codeseam mcp`` started while an HTTP
server holds the index goes through it. The rest turns the server's JSON back into records
and errors. httpx and the record modules are imported only when used.
"""

from __future__ import annotations

import calendar
import contextlib
import json
import logging
import os
import time
from typing import Any, Callable

from .. import errors
from ..errors import CodeseamError, ConfigError, FatalError, IndexBusyError
from ..settings import Settings
from .serverfile import ServerInfo, http_client

log = logging.getLogger(__name__)

POLL_SECONDS = 0.3
FIRST_POLL_SECONDS = 0.02


class ServerGone(IndexBusyError):
    """The server could not be reached, or hung up before it answered."""


# -- the client -------------------------------------------------------------------------------

class RemoteIndex:
    """The ``api`` operations over a running ``codeseam serve``, returning the same records."""

    def __init__(self, info: ServerInfo, settings: Settings, *, timeout: float = 120.0) -> None:
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
            raise self._gone(exc) from None
        data = _json_or_text(response)
        if response.is_success:
            return data
        raise error_from(response.status_code, data)

    def _gone(self, exc: Exception) -> IndexBusyError:
        import httpx

        gone = isinstance(exc, (httpx.ConnectError, httpx.RemoteProtocolError))
        return (ServerGone if gone else IndexBusyError)(
            f"the codeseam server at {self.info.where} (pid {self.info.pid}) holds the index but "
            f"did not answer: {exc or type(exc).__name__}",
            hint=f"check that it runs, or stop it (`kill {self.info.pid}`) and retry")

    # -- the api operations ---------------------------------------------------------------------
    def search(self, query: str, *, repo: str | None = None, path_glob: str | None = None,
               language: str | None = None, k: int | None = None, mode: str = "hybrid",
               role: str | None = None):
        from ..safety import check_k, check_query, check_roles

        query, k = check_query(query), check_k(k)  # the messages of the direct path, not the server's 422
        roles = ",".join(check_roles(role)) or None
        params = {"q": query, "repo": repo, "path": path_glob, "lang": language, "k": k, "mode": mode,
                  "role": roles}
        data = self._request("GET", "/search", params={k_: v for k_, v in params.items() if v is not None})
        return search_result(data)

    def status(self):
        return status_record(self._request("GET", "/status")["index"])

    def refs(self, name: str, *, repo: str | None = None, kind: str | None = None):
        from ..references.model import refs_result

        params = {"name": name, "repo": repo, "kind": kind}
        return refs_result(self._request("GET", "/refs", params={k: v for k, v in params.items() if v is not None}))

    def remove(self, repo: str) -> int:
        from urllib.parse import quote

        return int(self._request("DELETE", f"/repos/{quote(repo, safe='')}")["removed_chunks"])

    def inspect(self, repo: str) -> dict[str, Any]:
        from urllib.parse import quote

        return self._request("GET", f"/repos/{quote(repo, safe='')}")

    def ask(self, question: str, *, repo: str | None = None, k: int | None = None,
            on_delta: Callable[[str], None] | None = None):
        """The server's answer; with ``on_delta`` streamed (``"stream": true``), each delta
        passed on as it arrives."""
        from ..safety import check_k, check_query

        body = {"question": check_query(question), "repo": repo, "k": check_k(k)}
        timeout = self.settings.llm_timeout * 4 + 60
        try:
            if on_delta is None:
                return answer_record(question, self._request("POST", "/ask", json=body, timeout=timeout))
            return self._ask_stream({**body, "stream": True}, on_delta, timeout)
        except errors.LLMUnavailableError as exc:
            if self.info.keepalive:  # started with this shell's settings: the message is the whole story
                raise
            raise errors.LLMUnavailableError(
                f"the codeseam server at {self.info.url} (pid {self.info.pid}), which holds the index, "
                f"answers with its own settings: {exc.message}",
                hint=f"{exc.hint or ''}; then restart the server with those settings".lstrip("; ")) from None

    def _ask_stream(self, body: dict[str, Any], on_delta: Callable[[str], None], timeout: float):
        """Read ``POST /ask`` NDJSON lines: deltas, then the answer (or an error line)."""
        import httpx

        shown = False
        try:
            with self._http.stream("POST", "/ask", json=body, timeout=timeout) as response:
                if not response.is_success:
                    response.read()
                    raise error_from(response.status_code, _json_or_text(response))
                for line in response.iter_lines():
                    data = json.loads(line) if line.strip() else {}
                    if "delta" in data:
                        shown = True
                        on_delta(data["delta"])
                    elif data.get("done"):
                        return answer_record(body["question"], data)
                    elif "error" in data:
                        raise error_from(int(data.get("status") or 500), data)
        except (httpx.HTTPError, ValueError) as exc:
            if not shown and isinstance(exc, (httpx.ConnectError, httpx.RemoteProtocolError)):
                raise self._gone(exc) from None  # nothing shown yet: route.call may retry
            raise errors.LLMResponseError(
                f"the answer from the codeseam server at {self.info.where} broke off: "
                f"{exc or type(exc).__name__}", hint="ask again") from None
        raise errors.LLMResponseError(
            f"the answer from the codeseam server at {self.info.where} ended before it was complete",
            hint="ask again; the server's log may say more")

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

    def refs(self, name: str, **kwargs: Any):
        return self._remote.refs(name, **kwargs)

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


def _json_or_text(response: Any) -> Any:
    try:
        return response.json()
    except ValueError:
        return {"error": response.text[:300]}


def answer_record(question: str, data: dict[str, Any]):
    from ..records import Answer, Citation

    cites = tuple(Citation(c["n"], c["path"], c["start_line"], c["end_line"], c["symbol"])
                  for c in data["citations"])
    return Answer(question, data["text"], cites, bool(data["weak"]), tuple(data.get("notes", ())))


def search_result(data: dict[str, Any]):
    from ..records import Hit, IndexProgress, SearchResult

    hits = tuple(Hit(h["repo"], h["path"], h["symbol"], h["kind"], h["language"], h["start_line"],
                     h["end_line"], h["score"], h["text"], h.get("role", "source"), bool(h.get("stale")),
                     h.get("current_lines", [h["start_line"], h["end_line"]]) is not None, h.get("note") or "")
                 for h in data["hits"])
    p = data.get("progress")
    progress = None if not p else IndexProgress(tuple(p["repos"]), p["files_indexed"], p["files_total"],
                                                 p["chunks"], p["chunks_embedded"])
    return SearchResult(data["query"], bool(data["weak"]), hits, data.get("best_similarity"),
                        evidence=data.get("evidence"), partial=bool(data.get("partial")), progress=progress,
                        signals=tuple(data.get("signals", ())), notes=tuple(data.get("notes", ())))


def status_record(data: dict[str, Any]):
    from ..api import RepoStatus, Status

    def when(stamp: str | None) -> float | None:
        return calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")) if stamp else None

    repos = tuple(RepoStatus(r["repo"], r["root"], r["files"], r["chunks"], when(r.get("last_sync")),
                             r["state"], tuple((r.get("languages") or {}).items()), tuple(r.get("roles") or ()),
                             freshness=(r.get("freshness") or {}).get("mode", ""),
                             freshness_note=(r.get("freshness") or {}).get("note", ""))
                  for r in data.get("repos", ()))
    return Status(data["uri"], data["collection"], data.get("embedder", ""), data.get("dim", 0),
                  data.get("chunker", ""), data.get("schema_version", 0), repos)


def report_record(data: dict[str, Any]):
    from ..indexing.report import IndexReport
    from ..records import Skip

    fields = dict(data)
    fields["skips"] = [Skip(s["path"], s["reason"], s.get("detail", "")) for s in data.get("skips", ())]
    return IndexReport(**fields)
