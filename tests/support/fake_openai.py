"""A loopback HTTP server that speaks the OpenAI protocol with scripted replies.

No capable LLM runs on the test machines, so the real clients (chat, embeddings) are driven
against this server on 127.0.0.1. It implements:

- ``POST /v1/chat/completions``: replies are taken from a script queue, in order. Each
  scripted reply is a ``Reply``: content text, an HTTP status, a delay (to force client
  timeouts) or a malformed body. With ``"stream": true`` the content is sent as
  server-sent events in several ``delta`` pieces, ending with ``data: [DONE]``.
  More behaviours: ``error`` (the message of a non-200 reply), ``headers`` (extra response
  headers, e.g. ``Retry-After``), ``drop`` (close the connection without answering),
  ``cut_after`` (stream that many pieces, then close without finishing), ``piece_delay`` (a
  pause after each streamed piece) and ``raw_stream`` (a raw ``text/event-stream`` body, for
  malformed events).
  When the queue is empty, ``responder`` (a function of the request body returning a
  ``Reply`` or a string) answers if set, else ``default`` (or a 500 when there is none).
- ``POST /v1/embeddings``: deterministic vectors derived from the input text (a hashed
  bag of words, so that similar texts get similar vectors), with ``dim`` dimensions.
- ``GET /v1/models``: lists one model.

Every request body is recorded in ``server.requests`` for assertions.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    content: str = ""
    status: int = 200
    delay: float = 0.0  # seconds to wait before answering (timeouts)
    raw: str | None = None  # a raw body to send instead of a proper completion (malformed)
    chunks: int = 4  # pieces when streamed
    error: str | None = None  # message of a non-200 reply (default "scripted status N")
    headers: dict = field(default_factory=dict)  # extra response headers (Retry-After, ...)
    drop: bool = False  # close the connection without sending any response
    cut_after: int | None = None  # streamed: close after this many pieces, no finish, no [DONE]
    raw_stream: str | None = None  # streamed: send this raw text/event-stream body instead
    piece_delay: float = 0.0  # streamed: seconds to wait after each piece (a client sees it arrive)


@dataclass
class FakeOpenAI:
    dim: int = 16
    default: Reply | None = None
    responder: Any = None  # Callable[[dict], Reply | str]: answers when the queue is empty
    replies: deque = field(default_factory=deque)
    requests: list = field(default_factory=list)
    embedding_status: int = 200
    models_status: int = 200  # status of GET /v1/models (401, 404, 500 ... for probes)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    # -- scripting ---------------------------------------------------------------
    def script(self, *replies: Reply | str) -> FakeOpenAI:
        for r in replies:
            self.replies.append(Reply(content=r) if isinstance(r, str) else r)
        return self

    def next_reply(self, body: dict[str, Any]) -> Reply | None:
        try:
            return self.replies.popleft()
        except IndexError:
            pass
        if self.responder is not None:
            r = self.responder(body)
            return Reply(content=r) if isinstance(r, str) else r
        return self.default

    @property
    def base_url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def chat_requests(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests if r["path"].endswith("/chat/completions")]

    # -- lifecycle ---------------------------------------------------------------
    def start(self) -> FakeOpenAI:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models") and owner.models_status != 200:
                    self._json(owner.models_status, {"error": {"message": f"scripted status {owner.models_status}"}})
                elif self.path.rstrip("/").endswith("/models"):
                    self._json(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})
                else:
                    self._json(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                owner.requests.append({"path": self.path, "body": body, "headers": dict(self.headers)})
                if self.path.endswith("/embeddings"):
                    self._embeddings(body)
                elif self.path.endswith("/chat/completions"):
                    self._chat(body)
                else:
                    self._json(404, {"error": {"message": "not found"}})

            # ---------------------------------------------------------------------
            def _json(self, status: int, obj: Any, headers: dict | None = None) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                for name, value in (headers or {}).items():
                    self.send_header(name, str(value))
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _embeddings(self, body: dict[str, Any]) -> None:
                if owner.embedding_status != 200:
                    self._json(owner.embedding_status, {"error": {"message": "scripted failure"}})
                    return
                inputs = body.get("input", [])
                if isinstance(inputs, str):
                    inputs = [inputs]
                data = [
                    {"object": "embedding", "index": i, "embedding": hashed_vector(t, owner.dim)}
                    for i, t in enumerate(inputs)
                ]
                self._json(200, {"object": "list", "data": data, "model": body.get("model", "fake"),
                                 "usage": {"prompt_tokens": 0, "total_tokens": 0}})

            def _chat(self, body: dict[str, Any]) -> None:
                reply = owner.next_reply(body)
                if reply is None:
                    self._json(500, {"error": {"message": "no scripted reply"}})
                    return
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.drop:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if reply.status != 200:
                    message = reply.error if reply.error is not None else f"scripted status {reply.status}"
                    self._json(reply.status, {"error": {"message": message}}, reply.headers)
                    return
                if reply.raw is not None:
                    data = reply.raw.encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                if body.get("stream") and reply.raw_stream is not None:
                    self._raw_stream(reply.raw_stream)
                    return
                if body.get("stream"):
                    self._stream(reply)
                    return
                self._json(200, {
                    "id": "chatcmpl-fake", "object": "chat.completion", "model": body.get("model", "fake"),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": reply.content}}],
                })

            def _stream(self, reply: Reply) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                text = reply.content
                n = max(1, reply.chunks)
                step = max(1, math.ceil(len(text) / n))
                for count, i in enumerate(range(0, len(text) or 1, step)):
                    if reply.cut_after is not None and count >= reply.cut_after:
                        self.close_connection = True
                        return
                    piece = text[i:i + step]
                    event = {"id": "chatcmpl-fake", "object": "chat.completion.chunk",
                             "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
                    self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                    self.wfile.flush()
                    if reply.piece_delay:
                        time.sleep(reply.piece_delay)
                end = {"id": "chatcmpl-fake", "object": "chat.completion.chunk",
                       "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
                self.wfile.write(f"data: {json.dumps(end)}\n\ndata: [DONE]\n\n".encode())
                self.wfile.flush()
                self.close_connection = True

            def _raw_stream(self, raw: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(raw.encode())
                self.wfile.flush()
                self.close_connection = True

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)  # short poll: fast shutdown between tests
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


_WORD = re.compile(r"[A-Za-z0-9]+")


def hashed_vector(text: str, dim: int) -> list[float]:
    """A deterministic bag-of-words vector (not normalised: clients must normalise)."""
    vec = [0.0] * dim
    for word in _WORD.findall(text.lower()) or [""]:
        h = hashlib.blake2b(word.encode(), digest_size=8).digest()
        vec[h[0] % dim] += 1.0 + h[1] / 255.0
    return vec
