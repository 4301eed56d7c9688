"""Rendering for the CLI: progress on stderr (rich, TTY only), results on stdout."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

SNIPPET_LINES = 6


class IndexProgress:
    """The progress callback for an indexing run, drawn with rich on a TTY (stderr).

    Events (from ``indexing.run.IndexRun``): discover, plan, files, file, written, backfill (rows
    to embed), embedded, deleted, done. When disabled it does nothing; the run still ends with a one-line summary.
    """

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._progress: Progress | None = None
        self._files: TaskID | None = None
        self._chunks: TaskID | None = None

    def __enter__(self) -> IndexProgress:
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self._progress = Progress(
                TextColumn("{task.description:>10}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("{task.fields[note]}"), TimeRemainingColumn(),
                console=Console(stderr=True), transient=True,
            )
            self._progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._progress is not None:
            self._progress.stop()

    def __call__(self, event: str, **f: Any) -> None:
        p = self._progress
        if p is None:
            if event == "queued":  # said without a TTY too: the wait has a reason
                click.echo(f"codeseam: queued behind job {f.get('behind', '')} (one repo's files at a time)",
                           err=True)
            return
        if event == "files":
            self._files = p.add_task("files", total=f["total"], note="")
            self._chunks = p.add_task("embedded", total=None, note="")
        elif event == "file" and self._files is not None:
            p.update(self._files, completed=f["done"], note=f["path"][-50:])
        elif event == "backfill" and self._chunks is not None:
            p.update(self._chunks, total=f["rows"], completed=0)
        elif event == "embedded" and self._chunks is not None:
            p.update(self._chunks, advance=f["count"])
        elif event == "queued":
            p.console.print(f"[dim]queued behind job {f.get('behind', '')} (one repo's files at a time)[/dim]")
        elif event == "plan":
            p.console.print(f"[dim]plan: {f['redo']} to index, {f['check']} to check, "
                            f"{f['delete']} to remove, {f['unchanged']} unchanged[/dim]")


def print_report(report, *, list_files: bool, verbose_skips: bool) -> None:
    out = click.echo
    if report.dry_run:
        out(f"{report.root}: {report.files_seen} files would be indexed, {len(report.skips)} skipped")
        if report.by_language:
            out("by language: " + ", ".join(f"{k} {v}" for k, v in report.by_language.items()))
        if report.by_reason:
            out("skipped by reason: " + ", ".join(f"{k} {v}" for k, v in report.by_reason.items()))
    if verbose_skips:
        for s in report.skips:
            out(f"skip  {s.path}  {s.reason}" + (f"  ({s.detail})" if s.detail else ""))
    for w in report.warnings:
        click.echo(f"warning: {w}", err=True)
    if report.truncated:
        click.echo(f"warning: {report.truncated} texts were longer than the model's limit", err=True)
    if report.enrich:
        click.echo("enrichment: " + ", ".join(f"{k} {v}" for k, v in report.enrich.items()), err=True)
    if not report.dry_run:
        out(report.summary())


def print_files(result) -> None:
    """``search --files``: one line per ranked file, its best spans after it."""
    files = result.files or ()
    if not files:
        click.echo("no results")
    for f in files:
        role = "" if f.role == "source" else f"  {f.role}"
        spans = ", ".join(f"{s.start_line}-{s.end_line}" + (f" {s.symbol}" if s.symbol else "") for s in f.spans)
        click.echo(f"{f.path}{role}  {f.score:.4f}  [{spans}]")


def short_query(query: str, limit: int = 120) -> str:
    """A query as a one-line label: its first line, cut at ``limit`` characters."""
    first = query.strip().split("\n", 1)[0]
    more = len(first) > limit or "\n" in query.strip()
    return first[:limit].rstrip() + ("…" if more else "")


def print_hits(result, *, full: bool = False) -> None:
    """The hits with a snippet of each (``full``: each hit's whole text, as a token budget chose them)."""
    from rich.console import Console
    from rich.syntax import Syntax

    console = Console(highlight=False, soft_wrap=True)
    p = result.progress
    if result.partial and p is not None:
        console.print(f"[yellow]partial: indexing of {', '.join(p.repos)} is not finished "
                      f"({p.files_indexed}/{p.files_total} files searchable, {p.chunks_embedded}/{p.chunks} "
                      f"chunks embedded); answered by {', '.join(result.signals) or 'no signal'}[/yellow]")
    if result.weak:
        console.print("[yellow]weak evidence: nothing in the index is close to this query; "
                      "the results below are the nearest matches, not answers[/yellow]")
    if not result.hits:
        console.print("no results")
    for note in result.notes:
        console.print(f"note: {note}", style="yellow", markup=False)
    for h in result.hits:
        role = "" if h.role == "source" else f"[magenta]{h.role}[/]  "
        where = f"{h.path}:{h.start_line}-{h.end_line}" if h.lines_current else f"{h.path} (not at its indexed lines)"
        console.print(f"[bold cyan]{where}[/]  [bold]{h.symbol}[/]  {role}[dim]{h.score:.4f}[/]"
                      + ("  [yellow]STALE[/]" if h.stale else ""), markup=True)
        if h.note:
            console.print(f"  {h.note}", style="yellow", markup=False)
        lines = h.text.split("\n")
        snippet = "\n".join(lines if full else lines[:SNIPPET_LINES]).rstrip("\n")
        if not h.lines_current:  # old text: never shown with line numbers, as if it were the file's
            for line in snippet.split("\n"):
                console.print(f"  {'?':>5}  {line}", markup=False)
        elif console.is_terminal:
            console.print(Syntax(snippet, _lexer(h.language), line_numbers=True, start_line=h.start_line,
                                 theme="ansi_dark", background_color="default"))
        else:
            for i, line in enumerate(snippet.split("\n")):
                console.print(f"  {h.start_line + i:>5}  {line}", markup=False)
        if len(lines) > SNIPPET_LINES and not full:
            console.print(f"  [dim]… {len(lines) - SNIPPET_LINES} more lines[/dim]")


def _lexer(language: str) -> str:
    return {"csharp": "c#", "tsx": "tsx", "text": "text"}.get(language, language)


def print_status(st) -> None:
    out = click.echo
    out(f"index:     {st.uri} (collection {st.collection})")
    out(f"embedder:  {st.embedder} ({st.dim}-d); chunker {st.chunker}; schema v{st.schema_version}")
    if not st.repos:
        out("no repos indexed")
    for r in st.repos:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(r.last_sync)) if r.last_sync else "never"
        if r.state == "embedding":
            left = (" (the server holding the index writes them; `codeseam index` finishes them)"
                    if r.eta_seconds is None else f", about {r.eta_seconds:.0f}s left")
            state = f"  [searchable; {r.vectors_pending} chunks wait for vectors{left}]"
        else:
            state = "" if r.state == "clean" else f"  [{r.state}: re-run index to finish]"
        out(f"  {r.repo_id:<20} {r.files:>6} files {r.chunks:>7} chunks  last sync {when}  {r.root}{state}")
        if r.freshness:
            out(f"  {'':<20} freshness: {r.freshness}" + (f" ({r.freshness_note})" if r.freshness_note else ""))
        if r.vectors != "all":
            out(f"  {'':<20} vectors: {r.vectors}" + (" (keyword-only)" if r.vectors == "none" else
                                                      " (only source files are embedded)"))


def is_tty() -> bool:
    return sys.stdout.isatty()
