"""One owner of the index: who holds it, and how the CLI and the MCP skin reach it.

A Milvus Lite file serves one process at a time. A server that holds it (``codeseam serve``,
the CLI's keep-alive server, ``codeseam watch``, ``codeseam mcp``: ``hold``) records itself in
``<index file>.server.json`` (mode 0600, never the token; ``serverfile``), which counts only
while its pid is alive and holds the index lock. ``call(op, ...)`` (``route``) runs one
``interface.CodeIndex`` operation for the CLI through that server (``client.RemoteIndex``: the
same records as the local call), starting a keep-alive server first when allowed
(``keepalive``), or on the index opened here; an MCP holder, which cannot be reached, is an
``IndexBusyError`` saying what to do. ``process``: pids, locks, sockets. Only the standard
library is imported at module level: a CLI call through a server imports no model, Milvus or
web-framework library.
"""

from __future__ import annotations

from .client import RemoteIndex, ServerGone
from .route import call, mcp_busy_error, page_address
from .serverfile import (ServerInfo, alive, live_server, lock_holder, read_server_file, remove_server_file,
                         server_file, server_status, write_server_file)

__all__ = ["RemoteIndex", "ServerGone", "ServerInfo", "alive", "call", "live_server", "lock_holder",
           "mcp_busy_error", "page_address", "read_server_file", "remove_server_file", "server_file",
           "server_status", "write_server_file"]
