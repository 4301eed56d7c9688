"""The HTTP client of the server that holds an index: :class:`RemoteIndex`, an
``interface.CodeIndex`` and ``interface.IndexServer`` over a running ``codeseam serve`` (or the
CLI's keep-alive server), returning the same records as the local calls (``codec`` turns the
server's JSON back into them). ``route.call`` uses it for the CLI; the MCP skin, started while
an HTTP server holds the index, serves its tools through it. httpx is imported only when used.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import quote

from .. import codec, errors
from ..errors import CodeseamError, ConfigError, FatalError, IndexBusyError
from ..interface import SearchRequest
from ..settings import Settings
from .serverfile import ServerInfo, http_client

log = logging.getLogger(__name__)

POLL_SECONDS = 0.3
FIRST_POLL_SECONDS = 0.02


class ServerGone(IndexBusyError):
    """The server could not be reached, or hung up before it answered."""


class RemoteIndex:
    """The index held by a running server: the local API's operations and records over HTTP, and
    the background jobs of a ``service.Service``. With ``open`` (the MCP skin) a keep-alive server
    is pinged while this session lasts, so that it does not idle out under it."""

    def __init__(self, info: ServerInfo, settings: Settings, *, timeout: float = 120.0,
                 cwd: str | None = None) -> None:
        self.info, self.settings = info, settings
        self.cwd = cwd or os.getcwd()  # relative paths to index are this folder's
        headers = {}
        if info.token_required and not settings.server_token:
            raise ConfigError(
                f"the codeseam server at {info.url} (pid {info.pid}) holds the index and needs a token",
                hint="set RAG_SERVER_TOKEN to the server's token, or stop the server")
        if settings.server_token:
            headers["Authorization"] = f"Bearer {settings.server_token}"
        self._http = http_client(info, timeout=timeout, headers=headers)
        self._closed = threading.Event()
        self._llm: bool | None = None

    def open(self) -> RemoteIndex:
        if self.info.keepalive:
            threading.Thread(target=self._heartbeat, name="codeseam-heartbeat", daemon=True).start()
        return self

    def _heartbeat(self) -> None:
        every = max(0.2, min(60.0, self.info.keepalive / 3))
        while not self._closed.wait(every):
            with contextlib.suppress(CodeseamError):
                self._request("GET", "/health", timeout=10.0)

    def close(self, timeout: float = 0.0) -> None:
        self._closed.set()
        self._http.close()

    def __enter__(self) -> RemoteIndex:
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
        raise codec.error_record(response.status_code, data)

    def _gone(self, exc: Exception) -> IndexBusyError:
        import httpx

        gone = isinstance(exc, (httpx.ConnectError, httpx.RemoteProtocolError))
        return (ServerGone if gone else IndexBusyError)(
            f"the codeseam server at {self.info.where} (pid {self.info.pid}) holds the index but "
            f"did not answer: {exc or type(exc).__name__}",
            hint=f"check that it runs, or stop it (`kill {self.info.pid}`) and retry")

    # -- the index ------------------------------------------------------------------------------
    def search(self, request: SearchRequest | str, /, **options: Any):
        """The server's hits for ``request``: all ``k`` of them (its page is the caller's to show)."""
        request = SearchRequest.of(request, **options).replace(offset=0, limit=None)
        params = codec.request_params(request)
        if len(request.query) > codec.GET_QUERY_CHARS:  # a pasted issue: too long for a URL
            return codec.search_result(self._request("POST", "/search", json=params))
        return codec.search_result(self._request("GET", "/search", params=params))

    def refs(self, name: str, *, repo: str | None = None, kind: str | Sequence[str] | None = None,
             max_tokens: int | None = None):
        """The server's references to ``name`` (``GET /refs``; the server checks the name and the kinds)."""
        from ..safety import check_max_tokens

        kind = kind if kind is None or isinstance(kind, str) else ",".join(kind)
        params = {"name": name, "repo": repo or None, "kind": kind or None, "max_tokens": check_max_tokens(max_tokens)}
        return codec.refs_result(self._request("GET", "/refs", params={k: v for k, v in params.items() if v is not None}))

    def status(self):
        return codec.status_record(self._request("GET", "/status")["index"])

    def remove(self, repo: str) -> int:
        return int(self._request("DELETE", f"/repos/{quote(repo, safe='')}")["removed_chunks"])

    def inspect(self, repo: str) -> dict[str, Any]:
        return self._request("GET", f"/repos/{quote(repo, safe='')}")

    def ask(self, request: SearchRequest | str, /, *, on_delta: Callable[[str], None] | None = None,
            **options: Any):
        """The server's answer; with ``on_delta`` streamed (``"stream": true``), each delta
        passed on as it arrives. ``POST /ask`` takes the request's query, repo and k."""
        request = SearchRequest.of(request, **options)
        if request.replace(repo=None, k=None) != SearchRequest(request.query):
            raise ConfigError("asking through a server takes a question, a repo and k, no other filter")
        body = {"question": request.query, "repo": request.repo, "k": request.k}
        timeout = self.settings.llm_timeout * 4 + 60
        try:
            if on_delta is None:
                return codec.answer_record(self._request("POST", "/ask", json=body, timeout=timeout), request.query)
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
                    raise codec.error_record(response.status_code, _json_or_text(response))
                for line in response.iter_lines():
                    data = json.loads(line) if line.strip() else {}
                    if "delta" in data:
                        shown = True
                        on_delta(data["delta"])
                    elif data.get("done"):
                        return codec.answer_record(data, body["question"])
                    elif "error" in data:
                        raise codec.error_record(int(data.get("status") or 500), data)
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
              wait: bool = True, vectors: str | None = None):
        """Index ``path`` in the server (a job, or the one already running for the repo: attached
        to), following it with ``progress``; its report when every vector is written, or without
        ``wait`` (the CLI's default) when every file is keyword-searchable (``chunks_pending`` rows
        then wait for the vectors the server goes on writing)."""
        body: dict[str, Any] = {"path": os.path.realpath(path), "repo_id": repo_id}
        if vectors is not None:
            body["vectors"] = vectors
        job = self._request("POST", "/index", json=body)
        return self._follow(job, progress, wait)

    def _follow(self, job: dict[str, Any], progress: Callable[..., None] | None, wait: bool = False):
        """Poll the job until it ends, feeding the CLI's progress callback; the run report.
        Ctrl-C stops the job in the server too (at its next file; the next run finishes it)."""
        try:
            return self._poll(job, progress, wait)
        except KeyboardInterrupt:
            if job.get("searchable"):  # only waiting for the vectors: the server goes on with them
                raise
            with contextlib.suppress(CodeseamError):
                self._request("DELETE", f"/jobs/{quote(job['id'], safe='')}", timeout=10.0)
                log.warning("stopped the indexing job %s in the server (pid %d); the next run finishes "
                            "what it left", job["id"], self.info.pid)
            raise

    def _poll(self, job: dict[str, Any], progress: Callable[..., None] | None, wait: bool = False):
        progress = progress or (lambda event, **f: None)
        total_sent, embedded, queued, pending = False, 0, False, False
        pause = FIRST_POLL_SECONDS  # short first: a no-op re-sync takes ~0.2 s in the server
        while True:
            if job.get("files_total") is not None and not total_sent:
                progress("files", total=job["files_total"])
                total_sent = True
            if total_sent:
                progress("file", path=job.get("current_file") or "", done=job.get("files_done", 0))
            if job.get("phase") == "queued" and not queued:
                progress("queued", behind=job.get("queued_behind", ""))
                queued = True
            if job.get("searchable") and not pending:
                progress("backfill", rows=job.get("chunks_pending", 0))
                pending = True
            if job.get("chunks_embedded", 0) > embedded:
                progress("embedded", count=job["chunks_embedded"] - embedded)
                embedded = job["chunks_embedded"]
            if job.get("state") != "running" or (job.get("searchable") and not wait):
                break
            time.sleep(pause)
            pause = min(POLL_SECONDS, pause * 1.5)
            job = self._request("GET", f"/jobs/{job['id']}")
        if job["state"] not in ("done", "running"):
            raise FatalError(f"indexing through the server failed: {job.get('error')}", hint=job.get("hint"))
        return codec.report_record(job["report"])

    # -- the background jobs (the MCP skin) ---------------------------------------------------------
    @property
    def llm_configured(self) -> bool:
        if self._llm is None:
            self._llm = bool(self._request("GET", "/status").get("llm"))
        return self._llm

    def start_index(self, path: str, repo_id: str | None = None, vectors: str | None = None):
        # relative to this process's folder; the HTTP server resolves and checks it
        full = path if os.path.isabs(os.path.expanduser(path)) else os.path.join(self.cwd, path)
        if self.info.keepalive:  # it trusts its socket's paths: check this process's allowed roots here
            from ..safety import AllowedRoots, check_index_path

            roots = AllowedRoots.build(self.settings.allowed_roots, [r.root for r in self.status().repos], self.cwd)
            full = str(check_index_path(full, roots, cwd=self.cwd))
        body: dict[str, Any] = {"path": full, "repo_id": repo_id}
        if vectors is not None:
            body["vectors"] = vectors
        return codec.job_record(self._request("POST", "/index", json=body))

    def job(self, job_id: str):
        return codec.job_record(self._request("GET", f"/jobs/{quote(job_id, safe='')}"))

    def jobs(self) -> list:
        return [codec.job_record(j) for j in self._request("GET", "/status").get("jobs", ())]


def _json_or_text(response: Any) -> Any:
    try:
        return response.json()
    except ValueError:
        return {"error": response.text[:300]}
