"""`codeseam index | search | status | remove | inspect`: thin skins over the index that
``owner.call`` finds (``interface.CodeIndex``); their JSON comes from ``codec``."""

from __future__ import annotations

import sys

import click

from ..records import ROLES
from ..safety import MAX_TOKENS, MIN_TOKENS
from .cli import emit_json, settings_from
from .render import IndexProgress, print_files, print_hits, print_report, print_status

K_HELP = "Number of results (1..100; default 8, or RAG_K)."


@click.command("index")
@click.argument("path", type=click.Path(file_okay=False, path_type=str), default=".")
@click.option("--repo-id", help="Name of the repo in the index (default: the folder name).")
@click.option("--dry-run", is_flag=True, help="List what would be indexed and skipped; touch nothing.")
@click.option("--rebuild", is_flag=True, help="Drop the whole index first, then index PATH.")
@click.option("--chunker", type=click.Choice(["ast", "window"]), help="Chunker (default ast).")
@click.option("--json", "as_json", is_flag=True, help="Print the run report as JSON.")
@click.option("--verbose-skips", is_flag=True, help="List every skipped file with its reason.")
@click.option("--wait", is_flag=True, help="Return only when every vector is written (scripts, CI, benchmarks); "
              "without it, index returns once every file is keyword-searchable and the server embeds the rest.")
@click.option("--vectors", type=click.Choice(["all", "source", "none"]),
              help="Which files get dense vectors: all (default), source (only source files) or none "
              "(keyword-only); recorded for the repo and kept by later syncs.")
def index_cmd(path: str, repo_id: str | None, dry_run: bool, rebuild: bool, chunker: str | None,
              as_json: bool, verbose_skips: bool, wait: bool, vectors: str | None) -> None:
    """Index the repository at PATH (default: current folder).

    Incremental and idempotent: unchanged files cost nothing, changed files are
    re-chunked and only new chunks are embedded, deleted files leave the index.
    Secrets are scrubbed before anything is stored (RAG_SCRUB=off to disable).

    Through a server that holds the index (the keep-alive server, serve, mcp, watch) it
    returns once every file is keyword-searchable; the server goes on writing the
    vectors, source files first (`codeseam status` shows how far, `--wait` waits).
    Run again while a job runs for the repo, it attaches to that job.
    """
    from .. import api, codec, owner

    settings = settings_from(chunker=chunker)
    show = sys.stderr.isatty() and not as_json
    with IndexProgress(enabled=show) as progress:
        if dry_run:  # touches no index: runs here, whoever holds it
            report = api.index(path, repo_id=repo_id, settings=settings, dry_run=True)
        else:
            report = owner.call("index", path, repo_id=repo_id, progress=progress, settings=settings,
                                rebuild=rebuild, wait=wait, vectors=vectors)
    if as_json:
        emit_json(codec.report_json(report))
        return
    print_report(report, list_files=dry_run, verbose_skips=verbose_skips or dry_run)
    if report.chunks_pending:
        click.echo(f"searchable now (keyword); {report.chunks_pending} chunks wait for their vectors, which the "
                   "server writes in the background (source files first): `codeseam status` shows how far, "
                   "`codeseam index --wait` waits for them", err=True)


@click.command("search")
@click.argument("query", nargs=-1)
@click.option("--query-file", type=click.Path(dir_okay=False, allow_dash=True, path_type=str),
              help="Read the query from this file (- for standard input): a pasted issue or stack trace.")
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
@click.option("--max-tokens", type=click.IntRange(MIN_TOKENS, MAX_TOKENS), help="Return the best hits that fit this many tokens, whole definitions "
              "first (k defaults to 30 then), and say what was left out.")
@click.option("--files", "files", is_flag=True, help="Rank files instead of chunks: the files to open, each with "
              "its best spans (with --json: both, `files` beside `hits`).")
@click.option("--json", "as_json", is_flag=True, help="Print results as JSON (schema in the README).")
def search_cmd(query: tuple[str, ...], query_file: str | None, k: int | None, repo: str | None,
               path_glob: str | None, language: str | None, roles: tuple[str, ...], mode: str,
               max_tokens: int | None, files: bool, as_json: bool) -> None:
    """Search indexed code with QUERY (dense + BM25, fused with RRF).

    \b
    QUERY may be a question, a name, or a whole issue with its traceback:
      codeseam search - < issue.md          # from standard input
      codeseam search --query-file trace.txt --files
    """
    from .. import codec, owner
    from ..fit import left_out_note
    from ..interface import SearchRequest
    from .cli import read_query

    request = SearchRequest(read_query(query, query_file), repo=repo, path_glob=path_glob, language=language,
                            role=tuple(r for spec in roles for r in spec.split(",")), k=k, mode=mode,
                            max_tokens=max_tokens, files=files)
    result = owner.call("search", request, settings=settings_from())
    if as_json:
        emit_json(codec.search_json(result))
        return
    if files:
        print_files(result)
        return
    print_hits(result, full=result.fit is not None)  # a budget chose whole hits: show them whole
    if result.fit is not None:
        click.echo(left_out_note(result.fit), err=True)


@click.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print status as JSON.")
def status_cmd(as_json: bool) -> None:
    """Show indexed repos (files, chunks, last sync), the embedder and where the index lives."""
    from .. import codec, owner
    from ..errors import NotIndexedError

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
        emit_json({**codec.status_json(st), "server": server})
        return
    print_status(st)
    click.echo(line)


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
