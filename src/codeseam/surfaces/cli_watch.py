"""`codeseam watch [PATH]`: keep the index current as files change (fresh/follow.py)."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time

import click

from ..errors import IndexBusyError
from .cli import settings_from


@click.command("watch")
@click.argument("path", type=click.Path(file_okay=False, path_type=str), required=False)
@click.option("--repo-id", help="Name of PATH's repo in the index (default: the folder name).")
def watch_cmd(path: str | None, repo_id: str | None) -> None:
    """Keep the index current as files change.

    \b
    With PATH: index it (incremental), then follow it; without: follow every
    indexed repo. Prints one line per sync: files, chunks embedded, seconds.
    Repos that cannot be watched (inotify watch limit, network file system)
    are stat-scanned every 2 s instead; the line says so. While it runs, other
    codeseam commands go through it. Ctrl-C stops it cleanly: the sync under
    way stops after its current write batch, nothing is left half-written.
    """
    from ..fresh.follow import follow, wake
    from ..owner import keepalive as ka
    from ..owner import live_server, remove_server_file, write_server_file
    from ..owner.process import bind_unix
    from ..service import Service
    from .http import create_app, serve_in_background

    settings = settings_from()
    holder = live_server(settings)
    if holder is not None and holder.keepalive:  # the CLI's own server: this one takes over
        click.echo(f"codeseam: stopping the keep-alive server (pid {holder.pid}) that holds the index", err=True)
        ka.stop(settings, holder)
    elif holder is not None:
        raise IndexBusyError(f"the index is held by a codeseam server (pid {holder.pid}, {holder.where}); it "
                             "keeps its repos current at each query already", hint="use that server, or stop it first")
    service = Service(settings.replace(allowed_roots=("/",), server_token=""), watch=True)
    service.open()
    stop = threading.Event()
    stop_http = None
    sock_path = ka.socket_path(settings)
    old_int = old_term = None
    try:
        if settings.is_lite:  # serve the other CLI commands over the private socket meanwhile
            sock = bind_unix(sock_path)
            stop_http = serve_in_background(create_app(service, token=None, loopback_only=True), sock)
            write_server_file(settings, "http", url="http://localhost", socket=str(sock_path),
                              fingerprint=ka.fingerprint(settings), watch=True)
        ix = service.session()
        repos = None
        if path is not None:
            report = ix.index(path, repo_id=repo_id)
            click.echo(sync_line(report.repo_id, report))
            repos = {report.repo_id}

        def on_signal(signum: int, frame) -> None:
            if stop.is_set():
                raise KeyboardInterrupt
            click.echo("codeseam: stopping after the current write batch (Ctrl-C again to force)", err=True)
            stop.set()
            wake(ix.refresher)

        old_int = signal.signal(signal.SIGINT, on_signal)
        old_term = signal.signal(signal.SIGTERM, on_signal)
        click.echo(f"codeseam: watching {', '.join(sorted(repos)) if repos else 'every indexed repo'} "
                   f"({settings.resolved_milvus_uri}); Ctrl-C stops", err=True)
        follow(ix.refresher, _event, stop, repo_ids=repos)
    finally:
        if old_int is not None:
            signal.signal(signal.SIGINT, old_int)
            signal.signal(signal.SIGTERM, old_term)
        if stop_http is not None:
            stop_http()
        service.close()
        if settings.is_lite:
            remove_server_file(settings)
            with contextlib.suppress(OSError):
                os.unlink(sock_path)
        click.echo("codeseam: stopped; the index is consistent", err=True)


def sync_line(repo: str, report) -> str:
    """One line per sync: when, which repo, files, chunks embedded, seconds."""
    removed = f" ({report.files_deleted} removed)" if report.files_deleted else ""
    left = f"; {len(report.unfinished)} left for the next sync" if report.unfinished else ""
    return (f"{time.strftime('%H:%M:%S')} {repo}: {report.files_indexed + report.files_deleted} files{removed}, "
            f"{report.chunks_embedded} chunks embedded, {report.seconds:.2f} s{left}")


def _event(kind: str, repo: str, data) -> None:
    if kind == "sync":
        click.echo(sync_line(repo, data))
    elif kind == "mode":
        mode, note = data["mode"], data["note"]
        what = {"watch": "watching its files", "scan": "stat-scanning it every 2 s",
                "missing": "its folder is missing"}.get(mode, mode)
        click.echo(f"codeseam: {repo}: {what}" + (f" ({note})" if note else ""), err=True)
    elif kind == "error":
        click.echo(f"codeseam: {repo}: {data}", err=True)
