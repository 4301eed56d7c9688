"""The HTTP API (FastAPI): a thin skin over :class:`codeseam.service.Service`.

Endpoints (OpenAPI at ``/openapi.json``, interactive docs at ``/docs``)::

    GET    /search?q=&repo=&path=&lang=&k=&mode=   hits, as `codeseam search --json`
    POST   /index   {"path", "repo_id"?}           202 + the background job
    GET    /jobs/{id}                              one job's progress or result
    DELETE /jobs/{id}                              stop a running job (at its next file)
    GET    /status                                 the index (as `status --json`) + jobs
    POST   /ask     {"question", "repo"?, "k"?}    answer with checked citations
    GET    /repos/{id}                             every row of a repo (as `inspect --json`)
    DELETE /repos/{id}                             remove a repo
    GET    /health                                 liveness (+ pid, the running job's id)

Errors are JSON ``{"error", "hint", "type"}``, never a traceback: NotIndexedError 404,
UnsafePathError 403, IndexBusyError and IndexMismatchError 409, ConfigError and invalid
parameters 422, a body over ``MAX_BODY_BYTES`` 413, LLMUnavailableError 503, LLMResponseError
502, a missing or wrong bearer token 401, a non-loopback ``Host`` on a loopback server 421
(DNS rebinding). With a token, every request (docs included) needs ``Authorization: Bearer
<token>``. The /docs page loads Swagger UI from a CDN in the browser (FastAPI's default);
/openapi.json is served from here.

``serve(app, sock, idle_exit=S)`` stops the server after S seconds without a request while no
indexing job runs (``codeseam serve --idle-exit``; the CLI's keep-alive server).
"""

from __future__ import annotations

import logging
import os
import secrets
import threading
import time
from typing import Any, Callable, Literal

from fastapi import Body, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException

from .. import __version__, errors
from ..safety import MAX_BODY_BYTES, MAX_K, MAX_QUERY_CHARS, is_loopback
from ..service import Service, UnknownJobError, answer_json

log = logging.getLogger(__name__)

STATUS_CODES: list[tuple[type[errors.CodeseamError], int]] = [
    (errors.NotIndexedError, 404), (UnknownJobError, 404), (errors.UnsafePathError, 403), (errors.IndexBusyError, 409),
    (errors.IndexMismatchError, 409), (errors.ConfigError, 422), (errors.LLMUnavailableError, 503),
    (errors.LLMResponseError, 502), (errors.StoreError, 503), (errors.EmbeddingError, 503),
]


HTTP_HINTS = {
    413: (f"send a shorter request (at most {MAX_BODY_BYTES} bytes)", "ConfigError"),
    404: ("see /docs for the endpoints", "Error"),
    405: ("see /docs for the endpoints", "Error"),
}


def status_for(exc: errors.CodeseamError) -> int:
    return next((code for cls, code in STATUS_CODES if isinstance(exc, cls)), 500)


def error_body(message: str, hint: str | None = None, kind: str = "Error") -> dict[str, Any]:
    return {"error": message, "hint": hint, "type": kind}


class IndexRequest(BaseModel):
    path: str = Field(min_length=1, max_length=4096, description="Folder to index (absolute, under an allowed root)")
    repo_id: str | None = Field(None, max_length=200, description="Name in the index (default: the folder name)")


class AskRequest(BaseModel):
    question: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    repo: str | None = Field(None, max_length=200)
    k: int | None = Field(None, ge=1, le=MAX_K)


def create_app(service: Service, *, token: str | None = None, max_body: int = MAX_BODY_BYTES,
               loopback_only: bool = True) -> FastAPI:
    """The app over ``service``. The caller owns the service (opens and closes it).

    ``loopback_only`` (a server bound to loopback) refuses requests whose ``Host`` is not a
    loopback name, so a web page cannot reach the server through DNS rebinding."""
    from .cli_index import search_json, status_json

    app = FastAPI(title="codeseam", version=__version__,
                  description="Local code search with citations to exact lines.")
    app.state.activity = Activity()
    app.add_middleware(BodyLimit, max_bytes=max_body)
    if token:
        app.add_middleware(BearerAuth, token=token)
    if loopback_only:
        app.add_middleware(LoopbackHost)
    app.add_middleware(ActivityMiddleware, activity=app.state.activity)  # outermost: every request counts
    _handlers(app)

    @app.get("/health")
    def health() -> dict[str, Any]:
        running = service.running_job()
        return {"ok": True, "version": __version__, "index_open": service.is_open, "pid": os.getpid(),
                "job": running.id if running is not None else None}

    @app.get("/search")
    def search(q: str = Query(min_length=1, max_length=MAX_QUERY_CHARS, description="What to look for"),
               repo: str | None = Query(None, max_length=200), path: str | None = Query(None, max_length=1000),
               lang: str | None = Query(None, max_length=50), k: int | None = Query(None, ge=1, le=MAX_K),
               mode: Literal["hybrid", "dense", "bm25"] = "hybrid") -> dict[str, Any]:
        result = service.search(q, repo=repo, path_glob=path, language=lang, k=k, mode=mode)
        return {**search_json(result), "best_similarity": result.best_similarity}

    @app.post("/index", status_code=202)
    def index(body: IndexRequest) -> dict[str, Any]:
        return service.start_index(body.path, body.repo_id).to_json()

    @app.get("/jobs/{job_id}")
    def job(job_id: str) -> dict[str, Any]:
        return service.job(job_id).to_json()

    @app.delete("/jobs/{job_id}")
    def cancel(job_id: str) -> dict[str, Any]:
        return service.cancel(job_id).to_json()

    @app.get("/status")
    def status() -> dict[str, Any]:
        jobs = [j.to_json(compact=True) for j in service.jobs()]
        return {"index": status_json(service.status()), "jobs": jobs, "llm": service.llm_configured}

    @app.post("/ask")
    def ask(body: AskRequest = Body()) -> dict[str, Any]:
        answer = service.ask(body.question, repo=body.repo, k=body.k)
        return {**answer_json(answer), "text": answer.answer}

    @app.get("/repos/{repo_id}")
    def inspect(repo_id: str) -> dict[str, Any]:
        return service.inspect(repo_id)

    @app.delete("/repos/{repo_id}")
    def remove(repo_id: str) -> dict[str, Any]:
        return {"repo": repo_id, "removed_chunks": service.remove(repo_id)}

    return app


def _handlers(app: FastAPI) -> None:
    @app.exception_handler(errors.CodeseamError)
    async def codeseam_error(request: Request, exc: errors.CodeseamError) -> JSONResponse:
        hint = (exc.hint or "").replace("run `codeseam index PATH`", "POST /index {\"path\": ...}") or None
        return JSONResponse(error_body(exc.message, hint, type(exc).__name__), status_code=status_for(exc))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        parts = []
        for e in exc.errors()[:5]:
            where = ".".join(str(p) for p in e.get("loc", ()) if p not in ("query", "body", "path"))
            parts.append(f"{where or 'request'}: {e.get('msg', 'invalid')}")
        hint = f"queries hold at most {MAX_QUERY_CHARS} characters; k is within 1..{MAX_K}"
        return JSONResponse(error_body("invalid request: " + "; ".join(parts), hint, "ConfigError"),
                            status_code=422)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        hint, kind = HTTP_HINTS.get(exc.status_code, (None, "Error"))
        return JSONResponse(error_body(str(exc.detail), hint, kind), status_code=exc.status_code,
                            headers=exc.headers)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.error("unexpected error on %s %s: %s", request.method, request.url.path, exc, exc_info=exc)
        return JSONResponse(error_body(f"internal error ({type(exc).__name__})", "see the server log"),
                            status_code=500)


# -- ASGI middleware ------------------------------------------------------------------------------

async def _send_json(send: Any, status: int, body: dict[str, Any], headers: list | None = None) -> None:
    import json

    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
                            *(headers or [])]})
    await send({"type": "http.response.body", "body": data})


class BearerAuth:
    """Every request must carry ``Authorization: Bearer <token>`` (compared in constant time)."""

    def __init__(self, app: Any, token: str) -> None:
        self.app, self.token = app, token.encode()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        given = dict(scope.get("headers") or ()).get(b"authorization", b"")
        scheme, _, value = given.partition(b" ")
        if scheme.lower() != b"bearer" or not secrets.compare_digest(value.strip(), self.token):
            await _send_json(send, 401, error_body("missing or wrong bearer token",
                                                   "send `Authorization: Bearer <RAG_SERVER_TOKEN>`", "AuthError"),
                             [(b"www-authenticate", b"Bearer")])
            return
        await self.app(scope, receive, send)


class LoopbackHost:
    """Only ``Host: localhost | 127.x.x.x | [::1]`` (any port): DNS rebinding protection."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        host = dict(scope.get("headers") or ()).get(b"host", b"").decode("latin-1").strip().lower()
        name = host[1:host.find("]")] if host.startswith("[") else host.rsplit(":", 1)[0]
        if not is_loopback(name):
            await _send_json(send, 421, error_body(
                f"this server answers only to loopback host names, not {host[:100]!r}",
                "use http://127.0.0.1:<port>; to serve other machines start it with --allow-remote and a token",
                "ConfigError"))
            return
        await self.app(scope, receive, send)


class Activity:
    """When the server last saw a request, and how many are in flight (for ``idle_exit``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.in_flight = 0
        self.last = time.monotonic()

    def begin(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.last = time.monotonic()

    def end(self) -> None:
        with self._lock:
            self.in_flight -= 1
            self.last = time.monotonic()

    def touch(self) -> None:
        with self._lock:
            self.last = time.monotonic()

    def idle_for(self) -> float:
        """Seconds since the last request ended (0 while one is in flight)."""
        with self._lock:
            return 0.0 if self.in_flight else time.monotonic() - self.last


class ActivityMiddleware:
    def __init__(self, app: Any, activity: Activity) -> None:
        self.app, self.activity = app, activity

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        self.activity.begin()
        try:
            await self.app(scope, receive, send)
        finally:
            self.activity.end()


class BodyLimit:
    """Refuse request bodies over ``max_bytes`` with 413, declared or streamed."""

    def __init__(self, app: Any, max_bytes: int) -> None:
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        too_big = error_body(f"request body too large (at most {self.max_bytes} bytes)",
                             f"send a shorter request (at most {self.max_bytes} bytes)", "ConfigError")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            await _send_json(send, 413, too_big)
            return
        seen = 0

        async def limited() -> dict:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise HTTPException(413, too_big["error"])
            return message

        await self.app(scope, limited, send)


def serve(app: FastAPI, sock: Any, *, idle_exit: float | None = None,
          busy: Callable[[], bool] | None = None) -> bool:
    """Run ``app`` with uvicorn on an already bound, listening socket until SIGINT/SIGTERM, or
    (``idle_exit``) until no request came for that many seconds while ``busy()`` (a running
    indexing job) was false; the end of a job counts as activity. True when it stopped idle.

    uvicorn re-raises the signal that stopped it once it has shut down; SIGTERM becomes
    ``SystemExit(143)`` here so the caller's cleanup (server file, index) still runs."""
    import signal

    import uvicorn

    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="off",
                            timeout_graceful_shutdown=10)
    server = uvicorn.Server(config)
    idled = threading.Event()
    if idle_exit:
        threading.Thread(target=_idle_watch, args=(server, app.state.activity, idle_exit, busy, idled),
                         name="codeseam-idle-exit", daemon=True).start()
    main = threading.current_thread() is threading.main_thread()
    old = signal.signal(signal.SIGTERM, _exit_on_term) if main else None
    try:
        server.run(sockets=[sock])
    finally:
        if main:
            signal.signal(signal.SIGTERM, old)
    return idled.is_set()


def _idle_watch(server: Any, activity: Activity, idle_exit: float, busy: Callable[[], bool] | None,
                idled: threading.Event) -> None:
    step = min(1.0, max(0.05, idle_exit / 4))
    while not server.should_exit:
        time.sleep(step)
        if busy is not None and busy():
            activity.touch()
        elif activity.idle_for() >= idle_exit:
            idled.set()
            server.should_exit = True


def _exit_on_term(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)
