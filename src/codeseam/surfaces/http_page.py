"""The page for people, served by the HTTP API (``mount``): ``GET /`` (search, ask, status),
``GET /docs`` (the endpoints, read from ``/openapi.json`` in the browser), ``GET /assets/*``.

Every asset ships in the package (``surfaces/web/``, package data), so the page works offline;
the highlighting stylesheet comes from Pygments (``present.highlight_css``). The shell holds no
indexed data, so a token-protected server serves it without the token (``is_public``) and the
page asks for the token, then sends it with every API call. The responses carry a
Content-Security-Policy without inline scripts (``http_guard.SecurityHeaders``).

``PageListener`` is the keep-alive server's page (``codeseam open``): that server listens on a
private unix socket, which a browser cannot reach, so ``POST /page`` (on that socket only)
starts a second listener for the same service on a loopback TCP port, behind a fresh random
token that only the caller learns. It stops with the server.
"""

from __future__ import annotations

import functools
import secrets
import threading
from importlib import resources
from typing import Any

from fastapi import Body, FastAPI
from fastapi.responses import Response
from pydantic import BaseModel, Field

from .. import present

JS = "text/javascript; charset=utf-8"
ASSETS = {  # name -> content type: nothing else under /assets is served
    "app.js": JS, "common.js": JS, "search.js": JS, "ask.js": JS, "status.js": JS,  # the page's modules
    "docs.js": JS,
    "page.css": "text/css; charset=utf-8",
    "icon.svg": "image/svg+xml",
}
PAGES = {"/": "index.html", "/docs": "docs.html"}


class PageRequest(BaseModel):
    port: int = Field(0, ge=0, le=65535, description="Loopback port (0 picks a free one)")


def is_public(path: str) -> bool:
    """The page's shell: served without the bearer token (it holds no indexed data)."""
    return path in PAGES or path.startswith("/assets/")


@functools.lru_cache(maxsize=16)
def asset(name: str) -> bytes:
    return resources.files(__package__).joinpath("web", name).read_bytes()


def mount(app: FastAPI, *, page_listener: PageListener | None = None) -> None:
    """Add the page's routes to ``app`` (and ``POST /page`` when ``page_listener`` is given)."""
    no_cache = {"cache-control": "no-cache"}

    def page(name: str):
        def serve_page() -> Response:
            return Response(asset(name), media_type="text/html; charset=utf-8", headers=no_cache)
        return serve_page

    for route, name in PAGES.items():
        app.get(route, include_in_schema=False)(page(name))

    @app.get("/assets/highlight.css", include_in_schema=False)
    def highlight_css() -> Response:
        return Response(present.highlight_css(), media_type="text/css; charset=utf-8", headers=no_cache)

    @app.get("/assets/{name}", include_in_schema=False)
    def static(name: str) -> Response:
        if name not in ASSETS:
            return Response(b'{"error": "no such asset", "hint": null, "type": "Error"}', status_code=404,
                            media_type="application/json")
        return Response(asset(name), media_type=ASSETS[name], headers=no_cache)

    if page_listener is not None:
        @app.post("/page", include_in_schema=False)
        def open_page(body: PageRequest = Body(default_factory=lambda: PageRequest(port=0))) -> dict[str, Any]:
            return page_listener.open(body.port)


class PageListener:
    """A loopback TCP listener for the keep-alive server's page, started on demand."""

    def __init__(self, make_app: Any) -> None:
        self.make_app = make_app  # token -> a FastAPI app over the keep-alive server's service
        self._lock = threading.Lock()
        self._listener: Any = None
        self.url = self.token = ""

    def open(self, port: int = 0) -> dict[str, Any]:
        """Start the listener (once); ``{"url", "token"}`` either way."""
        from ..owner.hold import Listener
        from ..owner.process import bind, local_url

        with self._lock:
            if self._listener is None:
                sock = bind("127.0.0.1", port)
                self.token = secrets.token_urlsafe(24)
                self._listener = Listener(self.make_app(self.token), sock, grace=5)
                self.url = local_url("127.0.0.1", sock.getsockname()[1])
            return {"url": self.url, "token": self.token}

    def close(self) -> None:
        with self._lock:
            if self._listener is not None:
                self._listener.stop()
                self._listener = None
