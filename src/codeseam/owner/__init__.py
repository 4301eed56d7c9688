"""One owner of the index: the server file, and CLI commands that go through a running server.

A Milvus Lite file serves one process at a time. A server (``codeseam serve`` or
``codeseam mcp``) that holds it writes a small *server file* next to it,
``<index file>.server.json`` (mode 0600)::

    {"kind": "http", "pid": 4242, "url": "http://127.0.0.1:8765", "token_required": false, ...}
    {"kind": "mcp",  "pid": 4243, ...}                        # stdio: not reachable

and removes it on shutdown. The token itself is never written there.

``codeseam mcp`` started while an HTTP server holds the index serves its tools through that
server (:class:`RemoteIndex`).

``call(op, ...)`` runs one operation of ``interface.CodeIndex`` for the CLI. When a live HTTP
server holds the index (its pid is alive and is the recorded holder of the index lock), the
operation goes through that server (:class:`RemoteIndex`, with ``RAG_SERVER_TOKEN`` when the
server needs one) and returns the same records as the local call. When the holder is an MCP server, which
cannot be reached, the ``IndexBusyError`` says so and what to do. A stale server file (its
process gone) is ignored.

When no server holds a Lite index and ``keepalive`` is above 0, ``call`` first starts a
keep-alive server (``keepalive.py``; it has ``"keepalive"`` and ``"socket"`` in the server
file) and goes through it. A server gone before it answered (an idle exit) is retried.

Modules: ``serverfile`` (the server file, the live server, what ``codeseam status`` says of
it), ``client`` (``RemoteIndex``), ``route`` (``call``), ``keepalive`` (starting, fitting and
stopping the keep-alive server), ``hold`` (holding the index for others: one lifecycle for
``serve``, the keep-alive server, ``watch`` and ``mcp``), ``process`` (pids, locks, sockets). Only the standard library is imported at module level: a CLI call
through a running server imports no model, Milvus or web-framework library.
"""

from __future__ import annotations

from .client import RemoteIndex, ServerGone
from .route import call, mcp_busy_error, page_address
from .serverfile import (
                         ServerInfo,
                         alive,
                         live_server,
                         lock_holder,
                         read_server_file,
                         remove_server_file,
                         server_file,
                         server_status,
                         write_server_file,
)

__all__ = ["RemoteIndex", "ServerGone", "ServerInfo", "alive", "call",
           "live_server", "lock_holder", "mcp_busy_error", "page_address", "read_server_file", "remove_server_file",
           "server_file", "server_status", "write_server_file"]
