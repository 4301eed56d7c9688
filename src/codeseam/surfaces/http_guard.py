"""ASGI middleware of the HTTP API: bearer token, loopback ``Host`` (DNS rebinding), same-origin
state changes (``Origin`` / ``Sec-Fetch-Site``: a cross-site page), body size, security headers (the page's Content-Security-Policy), and the request activity that
``serve(idle_exit=...)`` watches.

Each refuses with the API's JSON error body (``{"error", "hint", "type"}``) before the
request reaches FastAPI.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

from starlette.exceptions import HTTPException

from ..codec import error_body
from ..safety import is_loopback


async def _send_json(send: Any, status: int, body: dict[str, Any], headers: list | None = None) -> None:
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
                            *(headers or [])]})
    await send({"type": "http.response.body", "body": data})


class BearerAuth:
    """Every request must carry ``Authorization: Bearer <token>`` (compared in constant time),
    except a ``GET`` of the page's shell (``public``: its HTML, scripts and styles, which hold
    no indexed data): the page then asks for the token and sends it with every API call."""

    def __init__(self, app: Any, token: str, public: Callable[[str], bool] | None = None) -> None:
        self.app, self.token, self.public = app, token.encode(), public

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if self.public is not None and scope.get("method") in ("GET", "HEAD") and self.public(scope.get("path", "")):
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


SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_PORTS = {"http": "80", "https": "443"}


def _origin_key(scheme: str, host: str) -> tuple[str, str, str]:
    """(scheme, host name, port) of an origin, the default port filled in."""
    host = host.strip().lower()
    if host.startswith("["):
        end = host.find("]")
        name, port = host[:end + 1], host[end + 1:].lstrip(":")
    else:
        name, _, port = host.partition(":")
    return scheme, name, port or _PORTS.get(scheme, "")


def cross_origin(scope: dict) -> str | None:
    """Why a request comes from another site (a web page the user has open), or None.

    A browser sends ``Origin`` with every POST (forms and ``fetch(..., {mode: "no-cors"})``
    included) and ``Sec-Fetch-Site`` with every request; the server's own origin is its
    ``Host`` on this connection's scheme. A request with neither header (the CLI, curl, MCP
    clients, ``RemoteIndex``) is not a browser's and passes."""
    headers = dict(scope.get("headers") or ())
    site = headers.get(b"sec-fetch-site", b"").decode("latin-1").strip().lower()
    if site in ("cross-site", "same-site"):
        return f"Sec-Fetch-Site: {site}"
    origin = headers.get(b"origin")
    if origin is None:
        return None
    text = origin.decode("latin-1").strip()
    scheme, sep, rest = text.partition("://")
    host = headers.get(b"host", b"").decode("latin-1")
    if not sep or "/" in rest or not host or \
            _origin_key(scheme.lower(), rest) != _origin_key(scope.get("scheme", "http"), host):
        return f"Origin: {text[:100]}"
    return None


class SameOrigin:
    """Refuse (403) a state-changing request (any method but GET, HEAD and OPTIONS: ``POST
    /index``, ``POST /ask``, ``DELETE /repos/...``) sent by a page of another origin, whatever its
    body's content type: a cross-site form or ``no-cors`` fetch must start nothing."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method", "GET") in SAFE_METHODS:
            return await self.app(scope, receive, send)
        why = cross_origin(scope)
        if why is not None:
            await _send_json(send, 403, error_body(
                f"refused a state-changing request from another site ({why})",
                "only the server's own page, or a client that is not a browser, may index, ask or remove",
                "AuthError"))
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


# No inline script or style, nothing from another origin: the page's assets ship in the package.
CONTENT_SECURITY_POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                           "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
SECURITY_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
]


class SecurityHeaders:
    """Adds ``SECURITY_HEADERS`` to every response (JSON ones too: harmless, and a JSON body
    opened in a browser then runs nothing either)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                names = {name.lower() for name, _ in message.get("headers", ())}
                extra = [(n, v) for n, v in SECURITY_HEADERS if n not in names]
                message = {**message, "headers": [*message.get("headers", ()), *extra]}
            await send(message)

        await self.app(scope, receive, with_headers)
