"""The HTTP API (FastAPI): a thin skin over :class:`codeseam.service.Service`.

Endpoints (OpenAPI at ``/openapi.json``, interactive docs at ``/docs``)::

    GET    /search?q=&repo=&path=&lang=&role=&k=&mode=   hits, as `codeseam search --json`
           (&offset=&limit=: a page of those k hits; &highlight=true: + lines, editor_url;
           &max_tokens=: the best hits that fit, and `fit`: what was left out)
    GET    /refs?name=&repo=&kind=&max_tokens=      where a name is defined and used (`refs --json`)
    POST   /index   {"path", "repo_id"?, "vectors"?}   202 + the background job (the running one
           of that repo, when there is one); `searchable` once every file is keyword-searchable,
           `done` when the vectors are complete
    GET    /jobs/{id}                              one job's progress or result
    DELETE /jobs/{id}                              stop a running job (at its next file)
    GET    /status                                 the index (as `status --json`) + jobs
    POST   /ask     {"question", "repo"?, "k"?, "stream"?}   answer with checked citations
    GET    /repos/{id}                             every row of a repo (as `inspect --json`)
    DELETE /repos/{id}                             remove a repo
    GET    /health                                 liveness (+ pid, the running job's id, store up/down)
    GET    /  /docs  /assets/*                     the page for people (http_page.py)

Errors are JSON ``{"error", "hint", "type"}``, never a traceback: NotIndexedError 404,
UnsafePathError 403, IndexBusyError and IndexMismatchError 409, ConfigError and invalid
parameters 422, a body over ``MAX_BODY_BYTES`` 413, LLMUnavailableError 503, LLMResponseError
502, a missing or wrong bearer token 401, a non-loopback ``Host`` on a loopback server 421
(DNS rebinding). With a token, every request (docs included) needs ``Authorization: Bearer
<token>``, except the page's shell (``/``, ``/docs``, ``/assets/*``: no indexed data), whose
script asks for the token. ``/docs`` lists the endpoints from ``/openapi.json`` with a script
served from here (Swagger UI would load from a CDN: blank offline).

With ``"stream": true``, ``/ask`` answers ``application/x-ndjson``: a ``{"delta"}`` line per
piece of the model's reply as it arrives, then the checked answer (the non-streamed body plus
``"done": true``), or, when the reply breaks off, an error body plus its ``"status"``. Errors
before the reply starts get their status code as usual.

The server commands run these apps through ``owner.hold.Holder`` (one lifecycle: take the index
over, serve, record the server file, stop on a signal or after ``--idle-exit`` seconds without a
request while no indexing job runs, close in one order).
"""

from __future__ import annotations

import itertools
import threading
import json
import logging
import os
from collections.abc import Iterator
from typing import Any, Literal

from fastapi import Body, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException

from .. import codec, errors
from .._version import __version__
from ..codec import error_body
from ..interface import SearchRequest
from ..jobs import UnknownJobError
from ..records import ROLES, Answer
from ..safety import MAX_BODY_BYTES, MAX_K, MAX_QUERY_CHARS, MAX_TOKENS, MIN_TOKENS
from ..service import Service
from .http_guard import (Activity, ActivityMiddleware, BearerAuth, BodyLimit, LoopbackHost, SameOrigin,
                         SecurityHeaders)

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


class IndexRequest(BaseModel):
    path: str = Field(min_length=1, max_length=4096, description="Folder to index (absolute, under an allowed root)")
    repo_id: str | None = Field(None, max_length=200, description="Name in the index (default: the folder name)")
    vectors: Literal["all", "source", "none"] | None = Field(
        None, description="Which files get dense vectors (default: the repo's recorded choice, else all)")


class SearchBody(BaseModel):
    """``POST /search``: the parameters of ``GET /search`` as a JSON body."""

    q: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="What to look for")
    repo: str | None = Field(None, max_length=200)
    path: str | None = Field(None, max_length=1000)
    lang: str | None = Field(None, max_length=50)
    k: int | None = Field(None, ge=1, le=MAX_K)
    mode: Literal["hybrid", "dense", "bm25"] = "hybrid"
    role: str | None = Field(None, max_length=200)
    offset: int = Field(0, ge=0, le=MAX_K)
    limit: int | None = Field(None, ge=1, le=MAX_K)
    highlight: bool = False
    max_tokens: int | None = Field(None, ge=MIN_TOKENS, le=MAX_TOKENS)
    files: bool = False


class AskRequest(BaseModel):
    question: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    repo: str | None = Field(None, max_length=200)
    k: int | None = Field(None, ge=1, le=MAX_K)
    stream: bool = Field(False, description="Answer as NDJSON lines: deltas as they arrive, then the answer")


def create_app(service: Service, *, token: str | None = None, max_body: int = MAX_BODY_BYTES,
               loopback_only: bool = True, activity: Activity | None = None,
               page_server: bool = False) -> FastAPI:
    """The app over ``service``. The caller owns the service (opens and closes it).

    ``loopback_only`` (a server bound to loopback) refuses requests whose ``Host`` is not a
    loopback name, so a web page cannot reach the server through DNS rebinding. ``activity``
    shares the idle clock with another app over the same service; ``page_server`` (the
    keep-alive server) adds ``POST /page``, which serves the page on a loopback port."""
    from . import http_page

    app = FastAPI(title="codeseam", version=__version__, docs_url=None, redoc_url=None,
                  description="Local code search with citations to exact lines.")
    app.state.activity = activity or Activity()
    app.state.closers = []
    app.add_middleware(BodyLimit, max_bytes=max_body)
    app.add_middleware(SameOrigin)  # a cross-site page changes nothing, authenticated or not
    if token:
        app.add_middleware(BearerAuth, token=token, public=http_page.is_public)
    if loopback_only:
        app.add_middleware(LoopbackHost)
    app.add_middleware(SecurityHeaders)
    app.add_middleware(ActivityMiddleware, activity=app.state.activity)  # outermost: every request counts
    _handlers(app)
    listener = None
    if page_server:
        listener = http_page.PageListener(lambda tok: create_app(service, token=tok, max_body=max_body,
                                                                 activity=app.state.activity))
        app.state.closers.append(listener.close)
    http_page.mount(app, page_listener=listener)

    @app.get("/health")
    def health() -> dict[str, Any]:
        running, store = service.running_job(), service.store_state()
        return {"ok": not store.startswith("down"), "version": __version__, "index_open": service.is_open,
                "store": store, "pid": os.getpid(), "job": running.id if running is not None else None}

    def run_search(request: SearchRequest, highlight: bool) -> JSONResponse:
        body = codec.search_json(service.search(request), request if request.paged or highlight else None,
                                 evidence=True)
        if highlight:
            from ..present import page_hits

            body["hits"] = page_hits(body["hits"], service.repo_roots(), service.settings.editor_url)
        # plain JSON types: json.dumps as is (FastAPI's encoder walks every highlighted token)
        return JSONResponse(body)

    @app.get("/search")
    def search(q: str = Query(min_length=1, max_length=MAX_QUERY_CHARS, description="What to look for (a long "
                              "one, such as a pasted issue, is better sent to POST /search)"),
               repo: str | None = Query(None, max_length=200), path: str | None = Query(None, max_length=1000),
               lang: str | None = Query(None, max_length=50), k: int | None = Query(None, ge=1, le=MAX_K),
               mode: Literal["hybrid", "dense", "bm25"] = "hybrid",
               role: str | None = Query(None, max_length=200, description="Comma list of file roles: "
                                        + ", ".join(ROLES)),
               offset: int = Query(0, ge=0, le=MAX_K, description="Skip this many of the k hits (paging)"),
               limit: int | None = Query(None, ge=1, le=MAX_K, description="Return at most this many hits"),
               highlight: bool = Query(False, description="Add `lines` (highlighted tokens) and `editor_url` "
                                                          "to each returned hit"),
               max_tokens: int | None = Query(None, ge=MIN_TOKENS, le=MAX_TOKENS, description="Only the best hits "
                                              "that fit this many tokens, whole definitions first; `fit` says what "
                                              "was left out (k defaults to 30 then)"),
               files: bool = Query(False, description="Also rank files: `files` lists the files to open, "
                                                      "each with its best spans")) -> JSONResponse:
        request = SearchRequest(q, repo=repo, path_glob=path, language=lang, role=tuple((role or "").split(",")),
                                k=k, mode=mode, offset=offset, limit=limit, max_tokens=max_tokens, files=files)
        return run_search(request, highlight)

    @app.post("/search")
    def search_post(body: SearchBody) -> JSONResponse:
        """The same search with its parameters in a JSON body: for a long query (a pasted issue
        or stack trace) that does not fit a URL."""
        request = SearchRequest(body.q, repo=body.repo, path_glob=body.path, language=body.lang,
                                role=tuple((body.role or "").split(",")), k=body.k, mode=body.mode,
                                offset=body.offset, limit=body.limit, max_tokens=body.max_tokens, files=body.files)
        return run_search(request, body.highlight)

    @app.get("/refs")
    def refs(name: str = Query(min_length=1, max_length=200, description="A name: parse, Type.method, pkg::name"),
             repo: str | None = Query(None, max_length=200),
             kind: str | None = Query(None, max_length=50, description="Comma list of def, call, import, use"),
             max_tokens: int | None = Query(None, ge=MIN_TOKENS, le=MAX_TOKENS, description="Only the references "
                                            "that fit this many tokens (definitions first); `left_out` counts the rest"),
             ) -> JSONResponse:
        return JSONResponse(codec.refs_json(service.refs(name, repo=repo, kind=kind, max_tokens=max_tokens)))

    @app.post("/index", status_code=202)
    def index(body: IndexRequest) -> dict[str, Any]:
        return codec.job_json(service.start_index(body.path, body.repo_id, body.vectors))

    @app.get("/jobs/{job_id}")
    def job(job_id: str) -> dict[str, Any]:
        return codec.job_json(service.job(job_id))

    @app.delete("/jobs/{job_id}")
    def cancel(job_id: str) -> dict[str, Any]:
        return codec.job_json(service.cancel(job_id))

    @app.get("/status")
    def status() -> dict[str, Any]:
        jobs = [codec.job_json(j, compact=True) for j in service.jobs()]
        roots = [{"path": str(p), "from": origin} for p, origin in service.allowed_roots().roots]
        return {"index": codec.status_json(service.status()), "jobs": jobs, "llm": service.llm_configured,
                "allowed_roots": roots}

    @app.post("/ask", response_model=None)
    def ask(body: AskRequest = Body()) -> dict[str, Any] | StreamingResponse:
        if not body.stream:  # the service checks for an LLM first, then the question
            return codec.answer_json(service.ask(body.question, repo=body.repo, k=body.k), text=True)
        left = threading.Event()
        events = service.ask_events(body.question, repo=body.repo, k=body.k, left=left)
        first = next(events)  # a question that fails before the reply starts gets its status code
        return _AnswerStream(_ask_lines(itertools.chain([first], events)), left)

    @app.get("/repos/{repo_id:path}")  # a repo id may hold "/" (sent as %2F or as is)
    def inspect(repo_id: str) -> dict[str, Any]:
        return service.inspect(repo_id)

    @app.delete("/repos/{repo_id:path}")
    def remove(repo_id: str) -> dict[str, Any]:
        return {"repo": repo_id, "removed_chunks": service.remove(repo_id)}

    return app


class _AnswerStream(StreamingResponse):
    """A streamed answer that tells the answer when the response ended, the client gone
    included (``left``): the server then stops reading the LLM's reply."""

    def __init__(self, lines: Iterator[str], left: threading.Event) -> None:
        super().__init__(lines, media_type="application/x-ndjson")
        self.left = left

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.left.set()


def _ask_lines(events: Iterator[str | Answer]) -> Iterator[str]:
    """NDJSON lines of a streamed answer; an error after the reply started is the last line."""
    try:
        for event in events:
            body = {"delta": event} if isinstance(event, str) else {**codec.answer_json(event, text=True), "done": True}
            yield json.dumps(body) + "\n"
    except errors.CodeseamError as exc:
        yield json.dumps({**codeseam_error_body(exc), "status": status_for(exc)}) + "\n"
    except Exception as exc:  # the status line is sent: the error travels in the body
        log.error("unexpected error while streaming an answer: %s", exc, exc_info=exc)
        yield json.dumps({**internal_error_body(exc), "status": 500}) + "\n"


def codeseam_error_body(exc: errors.CodeseamError) -> dict[str, Any]:
    """The JSON error body of a codeseam error; a CLI hint to index becomes the endpoint."""
    return codec.error_json(exc, (exc.hint or "").replace("run `codeseam index PATH`", "POST /index {\"path\": ...}"))


def internal_error_body(exc: Exception) -> dict[str, Any]:
    return error_body(f"internal error ({type(exc).__name__})", "see the server log")


def _handlers(app: FastAPI) -> None:
    @app.exception_handler(errors.CodeseamError)
    async def codeseam_error(request: Request, exc: errors.CodeseamError) -> JSONResponse:
        return JSONResponse(codeseam_error_body(exc), status_code=status_for(exc))

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
        return JSONResponse(internal_error_body(exc), status_code=500)
