"""`codeseam mcp` and `codeseam serve`: start the servers (the skins live in mcp.py and http.py)."""

from __future__ import annotations

import socket

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
def serve_cmd(host: str, port: int, allow_remote: bool, token: str | None) -> None:
    """Serve the index over HTTP (FastAPI; OpenAPI docs at /docs).

    While it runs, `codeseam search/status/ask/index/remove/inspect` in another
    shell go through it (it records its URL next to the index).
    """
    from ..safety import check_bind, is_loopback
    from ..service import Service
    from .http import create_app, serve
    from .remote import live_server, mcp_busy_error, remove_server_file, write_server_file

    settings = settings_from(server_token=token)
    check_bind(host, allow_remote=allow_remote, token=settings.server_token)
    service = Service(settings)
    try:
        service.open()
    except IndexBusyError:
        holder = live_server(settings)
        if holder is not None and holder.kind == "http":
            raise IndexBusyError(f"the index is already served at {holder.url} (pid {holder.pid})",
                                 hint="use that server, or stop it first") from None
        if holder is not None:
            raise mcp_busy_error(settings, holder) from None
        raise
    try:
        sock = bind(host, port)
        url = local_url(host, sock.getsockname()[1])
        write_server_file(settings, "http", url=url, token_required=bool(settings.server_token))
        click.echo(f"codeseam: serving {settings.resolved_milvus_uri} at {url} (docs {url}/docs"
                   f"{'; bearer token required' if settings.server_token else ''}); Ctrl-C stops", err=True)
        app = create_app(service, token=settings.server_token or None, loopback_only=is_loopback(host))
        serve(app, sock)
    finally:
        remove_server_file(settings)
        service.close()


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (connections wait in the backlog until served)."""
    plain = host.strip("[]")
    family = socket.AF_INET6 if ":" in plain else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((plain, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}",
                          hint="pick another --port (0 picks a free one)") from None
    return sock


def local_url(host: str, port: int) -> str:
    """The URL this machine's CLI uses to reach a server bound to ``host``."""
    plain = host.strip("[]")
    if plain in ("0.0.0.0", ""):
        plain = "127.0.0.1"
    elif plain == "::":
        plain = "::1"
    return f"http://[{plain}]:{port}" if ":" in plain else f"http://{plain}:{port}"
