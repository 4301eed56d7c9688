"""`codeseam mcp`, `codeseam serve` and `codeseam stop`: start and stop the servers (the skins
live in mcp.py and http.py; the CLI's keep-alive server in owner/keepalive.py)."""

from __future__ import annotations

import os
import signal
import threading

import click

from ..errors import ConfigError, IndexBusyError
from .cli import settings_from


@click.command("mcp")
def mcp_cmd() -> None:
    """Serve the index to agents over MCP (stdio).

    \b
    Tools: index_repo, search_code, get_status, remove_repo, and ask when an
    LLM is configured (RAG_LLM_MODEL). Claude Code:
      claude mcp add codeseam -- codeseam mcp
    While it runs it holds the index; the CLI then says so (see `codeseam serve`
    to share the index between agents and the command line).
    """
    from .mcp import run_stdio

    run_stdio(settings_from())


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. Anything but loopback needs --allow-remote and a token.")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="Port (0 picks a free one).")
@click.option("--allow-remote", is_flag=True, help="Allow a non-loopback --host (needs a bearer token).")
@click.option("--token", help="Bearer token every request must carry (prefer RAG_SERVER_TOKEN: flags "
                              "show in the process list).")
@click.option("--idle-exit", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
              help="Exit after SECONDS without a request while no indexing job runs (default: never).")
@click.option("--keepalive", is_flag=True, hidden=True,
              help="The CLI's keep-alive server: a private unix socket instead of --host/--port.")
def serve_cmd(host: str, port: int, allow_remote: bool, token: str | None, idle_exit: float | None,
              keepalive: bool) -> None:
    """Serve the index over HTTP (FastAPI; OpenAPI docs at /docs) and the search page at /.

    While it runs, `codeseam search/status/ask/index/remove/inspect` in another
    shell go through it (it records its URL next to the index). `codeseam stop`
    ends it. The CLI starts a server like this by itself (RAG_KEEPALIVE).
    """
    from ..owner.hold import Holder
    from ..owner.process import bind, local_url
    from ..safety import check_bind, is_loopback
    from .http import create_app

    settings = settings_from(server_token=token)
    if keepalive:
        return serve_keepalive(settings, idle_exit or settings.keepalive or 600.0)
    check_bind(host, allow_remote=allow_remote, token=settings.server_token)
    with Holder(settings) as holder:
        sock = bind(host, port)
        url = local_url(host, sock.getsockname()[1])
        holder.serve(create_app(holder.service, token=settings.server_token or None,
                                loopback_only=is_loopback(host)), sock)
        holder.record(url=url, token_required=bool(settings.server_token))
        click.echo(f"codeseam: serving {settings.resolved_milvus_uri} at {url} (the search page at {url}/, "
                   f"API docs {url}/docs{'; bearer token required' if settings.server_token else ''}); "
                   "Ctrl-C stops", err=True)
        if holder.run(idle_exit=idle_exit):
            click.echo(idle_note(idle_exit), err=True)
    if holder.stopped_by == signal.SIGINT:  # Ctrl-C is how a served index is meant to stop: exit 0
        click.echo("codeseam: stopped; the index is closed", err=True)
        return
    holder.reraise()


def serve_keepalive(settings, idle_exit: float) -> None:
    """The CLI's keep-alive server (see owner/keepalive.py): the index over a private unix socket,
    trusted paths, the embedder warmed up at once, exit after ``idle_exit`` idle seconds."""
    from ..owner import keepalive as ka
    from ..owner.hold import Holder
    from .http import create_app

    if not settings.is_lite:
        raise ConfigError("a keep-alive server serves a Milvus Lite index only",
                          hint="with a Milvus server (RAG_MILVUS_URI) every command connects to it directly")
    path = ka.socket_path(settings)
    try:
        # only this user's processes reach the socket: paths are trusted like the CLI's own
        with Holder(settings, trusted=True) as holder:
            sock = holder.listen_unix(path)
            threading.Thread(target=_warm_up, args=(holder.service,), name="codeseam-warm-up", daemon=True).start()
            holder.serve(create_app(holder.service, token=None, loopback_only=True, page_server=True), sock)
            holder.record(url="http://localhost", socket=str(path), keepalive=idle_exit,
                          log=str(ka.log_path(settings)), fingerprint=ka.fingerprint(settings))
            click.echo(f"codeseam: keep-alive server (pid {os.getpid()}) serving {settings.resolved_milvus_uri} "
                       f"on unix:{path}; exits after {idle_exit:g} s idle", err=True)
            if holder.run(idle_exit=idle_exit):
                click.echo(idle_note(idle_exit), err=True)
    finally:
        click.echo(f"codeseam: keep-alive server (pid {os.getpid()}) stopped", err=True)
    holder.reraise()


def idle_note(idle_exit: float | None) -> str:
    return f"codeseam: no request for {idle_exit:g} s and no indexing job: exiting"


def _warm_up(service) -> None:
    """Load the query embedder now, so that the first search does not wait for it."""
    try:
        service.session().embedder.embed_query("warm up")
    except Exception as exc:  # noqa: BLE001 - the first search reports a real failure
        import logging

        logging.getLogger(__name__).info("warm-up failed: %s", exc)


@click.command("open")
@click.argument("query", required=False)
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Loopback port for the keep-alive server's page (0 picks a free one).")
@click.option("--no-browser", is_flag=True, help="Only print the page's URL.")
def open_cmd(query: str | None, port: int, no_browser: bool) -> None:
    """Open the search page in a browser (and print its URL).

    \b
    The page of the server that holds the index: a running `codeseam serve`, or
    the CLI's keep-alive server (started if needed), which then also listens on
    127.0.0.1:PORT behind a fresh token that the printed URL carries (after #,
    so it is never sent to the server or kept in its logs). With QUERY the page
    opens on its results.
    """
    from urllib.parse import urlencode

    from ..owner import page_address

    url, note = page_address(settings_from(), port)
    url = url.rstrip("/") + "/" + (f"?{urlencode({'q': query})}" if query else "") + note
    click.echo(url)
    if not no_browser:
        import webbrowser

        if not webbrowser.open(url):
            click.echo("codeseam: no browser found here: open the URL above in one", err=True)


@click.command("stop")
def stop_cmd() -> None:
    """Stop the server that holds the index: the keep-alive server the CLI started
    (RAG_KEEPALIVE), or a `codeseam serve`. An indexing job in it stops at its next
    file; the next `codeseam index` finishes it."""
    from ..owner import keepalive as ka
    from ..owner import live_server

    settings = settings_from()
    info = live_server(settings)
    if info is None:
        click.echo(f"no codeseam server holds {settings.resolved_milvus_uri}")
        return
    what = "keep-alive server" if info.keepalive else ("MCP server" if info.kind == "mcp" else "codeseam serve")
    if info.kind != "http":
        raise IndexBusyError(f"the index is held by an MCP server (`codeseam mcp`, pid {info.pid}) that an MCP "
                             "client started", hint=f"end that client session, or `kill {info.pid}`")
    if not ka.stop(settings, info):
        raise IndexBusyError(f"the {what} (pid {info.pid}) did not stop within {ka.STOP_TIMEOUT:.0f} s",
                             hint=f"`kill -9 {info.pid}` (the index stays consistent: the next run repairs it)")
    click.echo(f"stopped the {what} (pid {info.pid})")
