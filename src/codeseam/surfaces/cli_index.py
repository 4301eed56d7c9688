"""`codeseam index | search | status | remove | inspect`: thin skins over ``codeseam.api``."""

from __future__ import annotations

import sys
import time
from typing import Any

import click

from ..records import ROLES
from .cli import emit_json, settings_from
from .render import IndexProgress, print_hits, print_report, print_status

K_HELP = "Number of results (1..100; default 8, or RAG_K)."


@click.command("index")
@click.argument("path", type=click.Path(file_okay=False, path_type=str), default=".")
@click.option("--repo-id", help="Name of the repo in the index (default: the folder name).")
@click.option("--dry-run", is_flag=True, help="List what would be indexed and skipped; touch nothing.")
@click.option("--rebuild", is_flag=True, help="Drop the whole index first, then index PATH.")
@click.option("--chunker", type=click.Choice(["ast", "window"]), help="Chunker (default ast).")
@click.option("--json", "as_json", is_flag=True, help="Print the run report as JSON.")
@click.option("--verbose-skips", is_flag=True, help="List every skipped file with its reason.")
def index_cmd(path: str, repo_id: str | None, dry_run: bool, rebuild: bool, chunker: str | None,
              as_json: bool, verbose_skips: bool) -> None:
    """Index the repository at PATH (default: current folder).

    Incremental and idempotent: unchanged files cost nothing, changed files are
    re-chunked and only new chunks are embedded, deleted files leave the index.
    Secrets are scrubbed before anything is stored (RAG_SCRUB=off to disable).
    """
    from .. import owner

    settings = settings_from(chunker=chunker)
    show = sys.stderr.isatty() and not as_json
    with IndexProgress(enabled=show) as progress:
        report = owner.call("index", path, repo_id=repo_id, settings=settings, progress=progress,
                            dry_run=dry_run, rebuild=rebuild)
    if as_json:
        emit_json(report.to_json())
        return
    print_report(report, list_files=dry_run, verbose_skips=verbose_skips or dry_run)


@click.command("search")
@click.argument("query", nargs=-1, required=True)
@click.option("-k", type=click.IntRange(1, 100), help=K_HELP)
@click.option("--repo", help="Only this repo.")
@click.option("--path", "path_glob", help="Only paths matching this glob (gitignore syntax, e.g. 'src/**/*.py'); "
              "an error when no indexed file matches.")
@click.option("--lang", "language", help="Only this language: a name or file extension, any case (python, py, Go, "
              "ts); an error naming the indexed languages when no file is in it.")
@click.option("--role", "roles", multiple=True, metavar="ROLE[,ROLE]",
              help="Only files of these roles: " + ", ".join(ROLES) + ". Repeat or comma-separate. Without it, "
              "every role is searched and source is preferred unless the query asks for tests, docs, ...")
@click.option("--mode", type=click.Choice(["hybrid", "dense", "bm25"]), default="hybrid", show_default=True,
              help="Retrieval signal(s).")
@click.option("--max-tokens", type=click.IntRange(16, None), help="Return the best hits that fit this many tokens, "
              "whole definitions first (k defaults to 30 then), and say what was left out.")
@click.option("--json", "as_json", is_flag=True, help="Print results as JSON (schema in the README).")
def search_cmd(query: tuple[str, ...], k: int | None, repo: str | None, path_glob: str | None,
               language: str | None, roles: tuple[str, ...], mode: str, max_tokens: int | None, as_json: bool) -> None:
    """Search indexed code with QUERY (dense + BM25, fused with RRF)."""
    from .. import owner
    from ..safety import check_roles

    text = " ".join(query)
    role = ",".join(check_roles(",".join(roles))) or None
    if max_tokens is not None and k is None:
        from ..fit import FIT_K as k
    result = owner.call("search", text, repo=repo, path_glob=path_glob, language=language, k=k, mode=mode,
                        role=role, settings=settings_from())
    fitted = None
    if max_tokens is not None:
        from ..fit import fit_result, left_out_note

        result, fitted = fit_result(result, max_tokens)
    if as_json:
        emit_json(search_json(result) if fitted is None else {**search_json(result), "fit": fitted})
        return
    print_hits(result, full=fitted is not None)
    if fitted is not None:
        click.echo(left_out_note(fitted), err=True)


def search_json(result) -> dict[str, Any]:
    """Hits as JSON. ``stale``: the file changed since the hit was indexed; ``current_lines``:
    where its text is in the file now (null when it is no longer there: then ``start_line`` ..
    ``end_line`` are the indexed lines, not the file's); ``note`` says what happened."""
    return {
        "query": result.query,
        "weak": result.weak,
        "hits": [
            {"repo": h.repo, "path": h.path, "symbol": h.symbol, "kind": h.kind, "language": h.language,
             "role": h.role, "start_line": h.start_line, "end_line": h.end_line, "score": round(h.score, 6),
             "text": h.text, "stale": h.stale,
             "current_lines": [h.start_line, h.end_line] if h.lines_current else None, "note": h.note}
            for h in result.hits
        ],
        "partial": result.partial,
        "signals": list(result.signals),
        "progress": progress_json(result.progress),
        "notes": list(result.notes),
    }


def progress_json(p) -> dict[str, Any] | None:
    if p is None:
        return None
    return {"repos": list(p.repos), "files_indexed": p.files_indexed, "files_total": p.files_total,
            "chunks": p.chunks, "chunks_embedded": p.chunks_embedded}


@click.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print status as JSON.")
def status_cmd(as_json: bool) -> None:
    """Show indexed repos (files, chunks, last sync), the embedder and where the index lives."""
    from ..errors import NotIndexedError
    from .. import owner

    settings = settings_from()
    try:
        st = owner.call("status", settings=settings)
    except NotIndexedError:
        if as_json:
            emit_json({"uri": settings.resolved_milvus_uri, "collection": settings.collection, "repos": [],
                       "server": owner.server_status(settings)[0]})
        else:
            click.echo(f"nothing indexed yet (index location: {settings.resolved_milvus_uri})")
            click.echo("run `codeseam index PATH` to index a repository")
        return
    server, line = owner.server_status(settings)  # the server that holds the index (keep-alive or not)
    if as_json:
        emit_json({**status_json(st), "server": server})
        return
    print_status(st)
    click.echo(line)


def status_json(st) -> dict[str, Any]:
    return {
        "uri": st.uri, "collection": st.collection, "embedder": st.embedder, "dim": st.dim,
        "chunker": st.chunker, "schema_version": st.schema_version,
        "repos": [
            {"repo": r.repo_id, "root": r.root, "files": r.files, "chunks": r.chunks, "state": r.state,
             "last_sync": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(r.last_sync)) if r.last_sync else None,
             "languages": dict(r.languages), "roles": list(r.roles),
             "freshness": {"mode": r.freshness, "note": r.freshness_note}}
            for r in st.repos
        ],
    }


@click.command("remove")
@click.argument("repo")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def remove_cmd(repo: str, as_json: bool) -> None:
    """Remove REPO (its chunks and manifest) from the index."""
    from .. import owner

    n = owner.call("remove", repo, settings=settings_from())
    if as_json:
        emit_json({"repo": repo, "removed_chunks": n})
    else:
        click.echo(f"removed {repo}: {n} chunks")


@click.command("inspect")
@click.argument("repo")
@click.option("--json", "as_json", is_flag=True, help="Print every row as JSON.")
def inspect_cmd(repo: str, as_json: bool) -> None:
    """List what the index holds for REPO: every chunk row and every file hash."""
    from .. import owner

    data = owner.call("inspect", repo, settings=settings_from())
    if as_json:
        emit_json(data)
        return
    for row in data["chunks"]:
        click.echo(f"{row['path']}:{row['start_line']}-{row['end_line']}  {row['kind']}  "
                   f"{row['symbol']}  {row['chunk_hash'][:12]}")
    click.echo(f"{len(data['files'])} files, {len(data['chunks'])} chunks", err=True)
