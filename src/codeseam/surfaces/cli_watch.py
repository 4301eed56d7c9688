"""`codeseam watch [PATH]`: keep the index current as files change (fresh/follow.py)."""

from __future__ import annotations

import time

import click

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
    from ..owner.hold import Holder
    from .http import create_app

    settings = settings_from()
    refresher: list = []  # the follow loop's

    def on_stop() -> None:
        click.echo("codeseam: stopping after the current write batch (Ctrl-C again to force)", err=True)
        wake(refresher[0])

    try:
        with Holder(settings, trusted=True, signals=False, on_stop=on_stop) as holder:
            if settings.is_lite:  # serve the other CLI commands over the private socket meanwhile
                sock_path = ka.socket_path(settings)
                holder.serve(create_app(holder.service, token=None, loopback_only=True),
                             holder.listen_unix(sock_path))
                holder.record(url="http://localhost", socket=str(sock_path), fingerprint=ka.fingerprint(settings),
                              watch=True)
            ix = holder.service.session()
            refresher.append(ix.refresher)
            repos = None
            if path is not None:
                report = ix.index(path, repo_id=repo_id)
                click.echo(sync_line(report.repo_id, report))
                repos = {report.repo_id}
            holder.catch_signals()  # a first index (PATH) stops at Ctrl-C; the follow loop after its batch
            click.echo(f"codeseam: watching {', '.join(sorted(repos)) if repos else 'every indexed repo'} "
                       f"({settings.resolved_milvus_uri}); Ctrl-C stops", err=True)
            follow(ix.refresher, _event, holder.stopping, repo_ids=repos)
    finally:
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
