"""`codeseam chunk PATH... [--json] [--chunker ast|window] [--max-bytes N] [--min-bytes N]`.

Shows how files are cut into chunks, without indexing anything. Folders are walked with
``codeseam.discover`` (the same files, ignore rules and skips as ``index``); files are
read with the same decoding policy (``discover.read_text``).

Human view: one line per chunk, ``path:start-end  kind  symbol  bytes``, then a summary
on stderr. ``--json``: one JSON object per chunk (JSON lines) with the record's fields.
Exit status 0 when the files were chunked (skipped files are reported on stderr), 1 for
a fatal error, 2 for a usage error.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import click

from .cli import settings_from

JSON_FIELDS = ("path", "language", "symbol", "parent", "kind", "start_line", "end_line",
               "text", "indexed_text", "hash")


def _files(given: str, max_file_bytes: int, skipped: list[tuple[str, str]]) -> Iterator[tuple[str, str]]:
    """(shown path, absolute path) of the files under ``given``."""
    path = Path(given)
    if not path.is_dir():
        yield given, str(path.resolve())
        return
    from ..discover import discover

    found = discover(path, max_file_bytes=max_file_bytes)
    for s in found.skips:
        skipped.append((os.path.join(given, s.path), s.reason))
    for f in found.files:
        yield os.path.join(given, f.path), f.abs_path


@click.command("chunk")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=str))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per chunk (JSON lines).")
@click.option("--chunker", type=click.Choice(["ast", "window"]), default=None,
              help="ast (syntax-aware, default) or window (the line-window baseline).")
@click.option("--max-bytes", type=int, default=None, help="Largest chunk text in bytes (RAG_CHUNK_MAX_BYTES).")
@click.option("--min-bytes", type=int, default=None, help="Small neighbours merge up to this (RAG_CHUNK_MIN_BYTES).")
def chunk_cmd(paths: tuple[str, ...], as_json: bool, chunker: str | None,
              max_bytes: int | None, min_bytes: int | None) -> None:
    """Show how PATH... (files or folders) are cut into chunks.

    \b
    Human view: path:start-end  kind  symbol  bytes
    --json:     one JSON object per chunk (path, language, symbol, parent, kind,
                start_line, end_line, text, indexed_text, hash)

    Nothing is indexed. Paths are shown as given (folders: PATH/relative path).
    """
    from ..chunk import Budget, chunk_file
    from ..discover import read_text
    from ..errors import FileSkipped

    settings = settings_from(chunker=chunker, chunk_max_bytes=max_bytes, chunk_min_bytes=min_bytes)
    budget = Budget(max_bytes=settings.chunk_max_bytes, min_bytes=settings.chunk_min_bytes)
    skipped: list[tuple[str, str]] = []
    n_files = n_chunks = 0
    for given in paths:
        for shown, abs_path in _files(given, settings.max_file_bytes, skipped):
            try:
                text, _ = read_text(abs_path, max_file_bytes=settings.max_file_bytes)
            except FileSkipped as exc:
                skipped.append((shown, exc.reason))
                continue
            n_files += 1
            shown_posix = shown.replace(os.sep, "/")
            for c in chunk_file(shown_posix, text, budget=budget, chunker=settings.chunker):
                n_chunks += 1
                if as_json:
                    obj = {k: getattr(c, k) for k in JSON_FIELDS}
                    click.echo(json.dumps(obj, ensure_ascii=False))
                else:
                    click.echo(f"{c.path}:{c.start_line}-{c.end_line}  {c.kind}  "
                               f"{c.symbol or '-'}  {c.nbytes}")
    for path, reason in skipped:
        click.echo(f"skipped {path}: {reason}", err=True)
    click.echo(f"{n_chunks} chunk{'s' * (n_chunks != 1)} in {n_files} file{'s' * (n_files != 1)}"
               f" ({settings.chunker}, max {budget.max_bytes} B, min {budget.min_bytes} B)", err=True)
