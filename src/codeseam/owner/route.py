"""Routing one CLI operation: through the server that holds the index, or here.

``call(op, ...)`` runs one operation of ``interface.CodeIndex`` for the CLI (see the package
docstring for the protocol) on whichever index holds it: a live HTTP server's (``RemoteIndex``),
starting a keep-alive server first when allowed, or the index opened here (``api.Index``). The
two answer with the same records, so the CLI never knows which one it got. A server gone before
it answered is retried.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from ..errors import IndexBusyError
from ..settings import Settings
from . import keepalive
from .client import RemoteIndex, ServerGone
from .serverfile import ServerInfo, live_server

log = logging.getLogger(__name__)

RETRIES = 2  # a server that went away (idle exit) between finding it and asking it
EMBEDS = frozenset({"search", "ask", "index"})  # ops that load the model: it warms while the index opens


def call(op: str, *args: Any, settings: Settings, rebuild: bool = False, start: bool = True, **kwargs: Any) -> Any:
    """``<index>.op(*args, **kwargs)`` on the index that holds this one's data: through the server
    that holds it when there is one, starting a keep-alive server when allowed and ``start`` (the
    CLI; the library reaches a running one but starts none: see the package docstring), else
    opened here. ``rebuild`` (``op == "index"``) drops the whole index first, which only this
    process may do: a keep-alive server is stopped for it, a ``codeseam serve`` is an error."""
    for attempt in range(RETRIES + 1):
        info = live_server(settings)
        if info is not None and info.keepalive:
            info = keepalive.fit(settings, info, "rebuild" if rebuild else op)
        if info is None and start and keepalive.wanted(settings, "rebuild" if rebuild else op):
            info, why = keepalive.ensure(settings)
            if why:
                keepalive.say(f"codeseam: the keep-alive server did not start ({why}); opening the index directly")
        if info is None or info.kind != "http":
            try:
                return _local(op, args, kwargs, settings, rebuild)
            except IndexBusyError:
                info = live_server(settings)  # a server may have started since
                if info is None:
                    raise
                if info.kind != "http":
                    raise mcp_busy_error(settings, info) from None
        if rebuild:
            raise IndexBusyError(f"--rebuild drops the whole index, which the server at {info.url} (pid "
                                 f"{info.pid}) holds", hint="stop the server (`codeseam stop`, or end "
                                                            "`codeseam serve`), then rebuild")
        log.info("the index is held by the server at %s (pid %d): going through it", info.where, info.pid)
        try:
            with RemoteIndex(info, settings) as remote:
                return getattr(remote, op)(*args, **kwargs)
        except ServerGone:
            if attempt == RETRIES or not keepalive.wait_gone(settings, info, 15.0):
                raise
            log.info("the server (pid %d) went away before it answered; trying again", info.pid)
    raise AssertionError("unreachable")  # pragma: no cover


def _local(op: str, args: tuple, kwargs: dict[str, Any], settings: Settings, rebuild: bool) -> Any:
    """The operation on the index opened here (created by ``index``; dropped first by ``rebuild``)."""
    from ..api import Index

    if op == "index":  # the index closes after the call: nobody would fill the vectors in later
        kwargs = {**kwargs, "wait": True}
    if rebuild:
        from ..store import Store

        Store.drop(settings)
    with Index(settings, create=op == "index", warm=op in EMBEDS) as ix:
        return getattr(ix, op)(*args, **kwargs)


def mcp_busy_error(settings: Settings, info: ServerInfo) -> IndexBusyError:
    since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(info.started)) if info.started else "?"
    return IndexBusyError(
        f"the index {settings.resolved_milvus_uri} is held by an MCP server (`codeseam mcp`, pid "
        f"{info.pid}, since {since}) that an MCP client such as Claude Code started; it talks over "
        "stdio, so the command line cannot reach it",
        hint=f"use its tools (search_code, get_status, index_repo, ...) from that client, or end that "
        f"client session (or `kill {info.pid}`) and retry; to share the index between agents and the "
        "command line, run `codeseam serve` first: `codeseam mcp` and the CLI then both go through it",
    )


def page_address(settings: Settings, port: int = 0) -> tuple[str, str]:
    """``(url, fragment)``: where a browser reaches the page of the server that holds the index,
    and the URL fragment that hands the page its token (``""`` when none is needed or known).

    A `codeseam serve` serves its own page (with ``RAG_SERVER_TOKEN`` set here, the fragment
    carries it). Otherwise the keep-alive server (started when none runs) is asked to serve
    its page on a loopback port (``POST /page`` on its unix socket), behind a fresh token."""
    from urllib.parse import quote

    import httpx

    from ..codec import error_record
    from ..errors import ConfigError
    from .serverfile import http_client

    info = live_server(settings)
    if info is not None and info.keepalive:
        info = keepalive.fit(settings, info, "status")
    if info is not None and info.kind != "http":
        raise mcp_busy_error(settings, info)
    if info is not None and not info.keepalive:
        token = settings.server_token if info.token_required else ""
        return info.url, f"#token={quote(token, safe='')}" if token else ""
    if info is None:
        if not keepalive.enabled(settings):
            why = "the index is a Milvus server" if not settings.is_lite else "RAG_KEEPALIVE=0"
            raise ConfigError(f"no server holds the index and there is no keep-alive server ({why})",
                              hint="start `codeseam serve` and open the URL it prints")
        info, why = keepalive.ensure(settings)
        if info is None:
            raise ConfigError(f"the keep-alive server did not start: {why}",
                              hint="start `codeseam serve` and open the URL it prints")
    try:
        with http_client(info, timeout=30.0) as client:
            response = client.post("/page", json={"port": port})
    except (OSError, httpx.HTTPError) as exc:
        raise ConfigError(f"cannot reach the keep-alive server (pid {info.pid}): {exc}",
                          hint="run `codeseam open` again") from None
    data = response.json() if response.headers.get("content-type", "").startswith("application/json") else {}
    if response.status_code != 200:
        raise error_record(response.status_code, data)
    return data["url"], "#token=" + quote(data["token"], safe="")
