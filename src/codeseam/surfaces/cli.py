"""The ``codeseam`` command line: a thin skin over the library.

Each command lives in a ``cli_<area>.py`` module that is imported only when the command
runs, so ``codeseam --help`` stays fast (no torch, no pymilvus). Errors from the library's
error tree are printed as one clear message (plus a hint) on stderr, never a traceback.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import sys
from typing import Any

import click

from ..errors import CodeseamError

# command name -> (module, attribute, one-line help shown by `codeseam --help`)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "index": ("cli_index", "index_cmd", "Index a repository (incremental; --dry-run to preview)."),
    "search": ("cli_index", "search_cmd", "Search indexed code (dense + BM25, fused)."),
    "refs": ("cli_agents", "refs_cmd", "Where a name is defined and used (code only, current lines)."),
    "setup": ("cli_agents", "setup_cmd", "Register the MCP server with a coding agent (claude, codex, ...)."),
    "status": ("cli_index", "status_cmd", "Show what is indexed and where the index lives."),
    "remove": ("cli_index", "remove_cmd", "Remove a repository from the index."),
    "inspect": ("cli_index", "inspect_cmd", "List every row the index holds for a repo."),
    "chunk": ("cli_chunk", "chunk_cmd", "Show how files are cut into chunks."),
    "scrub": ("cli_scrub", "scrub_cmd", "Dry-run the secret scrubber over files."),
    "ask": ("cli_ask", "ask_cmd", "Answer a question with checked citations (needs an LLM)."),
    "eval": ("cli_eval", "eval_cmd", "Measure retrieval on a golden set, variants side by side."),
    "mcp": ("cli_serve", "mcp_cmd", "Serve the index to agents over MCP (stdio)."),
    "serve": ("cli_serve", "serve_cmd", "Serve the index over HTTP, with a search page at /."),
    "open": ("cli_serve", "open_cmd", "Open the search page in a browser (prints its URL)."),
    "stop": ("cli_serve", "stop_cmd", "Stop the server that holds the index (e.g. the keep-alive one)."),
    "watch": ("cli_watch", "watch_cmd", "Keep the index current as files change (one line per sync)."),
}


class LazyGroup(click.Group):
    """A click group whose commands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        spec = COMMANDS.get(name)
        if spec is None:
            return None
        module = importlib.import_module(f"{__package__}.{spec[0]}")
        return getattr(module, spec[1])

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in sorted(COMMANDS)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="codeseam")
@click.option("-v", "--verbose", count=True, help="Log more to stderr (-v info, -vv debug).")
def cli(verbose: int) -> None:
    """codeseam: local, private code search with citations to exact lines.

    \b
    Quick start:
      codeseam index .                 # index this repository (incremental)
      codeseam search "retry delay"    # hybrid dense + BM25 search
      codeseam ask "how are retries computed?"   # needs an LLM (RAG_LLM_*)

    Settings come from defaults < config file ($RAG_CONFIG or the user config dir)
    < RAG_* environment variables < flags. Output for scripts: --json.
    """
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    from ..owner import keepalive  # light (standard library only)

    keepalive.notify = lambda message: click.echo(message, err=True)  # its notes, as plain stderr lines


def emit_json(obj: Any) -> None:
    """Write one JSON document to stdout (the only thing on stdout in --json mode)."""
    click.echo(json.dumps(obj, ensure_ascii=False, indent=None))


def read_query(words: tuple[str, ...], query_file: str | None = None) -> str:
    """The query of a command: its words, or ``-`` alone for standard input, or ``--query-file``
    (a pasted issue or stack trace keeps its lines)."""
    from ..errors import ConfigError
    from ..safety import MAX_QUERY_CHARS

    if query_file is not None and words:
        raise click.UsageError("give the query as words or with --query-file, not both")
    if query_file is None and words != ("-",):
        if not words:
            raise click.UsageError("no query: pass words, - (read standard input) or --query-file FILE")
        return " ".join(words)
    src = sys.stdin if query_file in (None, "-") else None
    try:
        if src is not None:
            text = src.read(MAX_QUERY_CHARS * 4 + 1)
        else:
            with open(query_file, encoding="utf-8", errors="replace") as fh:  # type: ignore[arg-type]
                text = fh.read(MAX_QUERY_CHARS * 4 + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read the query from {query_file}: {exc.strerror or exc}") from None
    return text


def settings_from(**flags: Any):
    """Settings with CLI flags (None = not given) applied last."""
    from ..settings import load_settings

    return load_settings(flags)


def main(argv: list[str] | None = None) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        cli.main(args=argv, prog_name="codeseam", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.UsageError as exc:  # one line and a hint, like every other error (not click's block)
        command = exc.ctx.command_path if exc.ctx is not None else "codeseam"
        click.echo(f"error: {exc.format_message()}", err=True)
        click.echo(f"hint: `{command} --help` lists its arguments and options", err=True)
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except CodeseamError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)
    except OSError as exc:  # a full disk, an unwritable data dir: a message, not a traceback
        where = f": {exc.filename}" if exc.filename else ""
        click.echo(f"error: {exc.strerror or exc}{where}", err=True)
        sys.exit(1)


if __name__ == "__main__":  # pragma: no cover
    main()
