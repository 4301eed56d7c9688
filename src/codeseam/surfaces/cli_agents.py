"""`codeseam refs | setup`: thin skins over the index ``owner.call`` finds (``interface.CodeIndex.refs``;
JSON from ``codec``) and over ``codeseam.agentsetup``."""

from __future__ import annotations

import click

from ..safety import MAX_TOKENS, MIN_TOKENS
from .cli import emit_json, settings_from

MAX_TOKENS_HELP = ("Return only what fits this many tokens (counted with the bundled model's tokenizer), "
                   "and say what was left out.")


@click.command("refs")
@click.argument("name")
@click.option("--repo", help="Only this repo.")
@click.option("--kind", "kinds", multiple=True, metavar="KIND[,KIND]",
              help="Only these kinds: def, call, import, use. Repeat or comma-separate (default: all).")
@click.option("--max-tokens", type=click.IntRange(MIN_TOKENS, MAX_TOKENS), help=MAX_TOKENS_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the references as JSON (schema in the README).")
def refs_cmd(name: str, repo: str | None, kinds: tuple[str, ...], max_tokens: int | None, as_json: bool) -> None:
    """Where NAME is defined and used: every occurrence in code (not comments or strings), at the
    files' current lines, with its kind and the definition it sits in; then its callers.

    NAME may be qualified: Type.method, pkg::name (the qualifier must stand before the name in
    the code, or the use sits inside that type behind self/this)."""
    from .. import codec, owner
    from ..references.find import reference_line

    result = owner.call("refs", name, repo=repo, kind=",".join(kinds) or None, max_tokens=max_tokens,
                        settings=settings_from())
    if as_json:
        emit_json(codec.refs_json(result))
        return
    for note in result.notes:
        click.secho(f"note: {note}", fg="yellow", err=True)
    for r in result.refs:
        click.echo(reference_line(r))
    if result.callers:
        click.echo(f"\ncallers ({len(result.callers)}):")
        for c in result.callers:
            click.echo(f"  {c.path}:{c.start_line}-{c.end_line} {c.symbol}  (line{'s' if len(c.lines) > 1 else ''} "
                       + ", ".join(map(str, c.lines)) + ")")
    counts = ", ".join(f"{n} {k}" for k, n in result.counts().items()) or "none"
    budget = f" (--max-tokens {max_tokens}: {result.tokens} tokens)" if max_tokens is not None else ""
    left = f"; {result.left_out} left out{budget}" if result.left_out else ""
    n, files = len(result.refs), result.files_read
    click.echo(f"{n} reference{'' if n == 1 else 's'} to {name} ({counts}) in {files} file{'' if files == 1 else 's'} "
               f"read{left}", err=True)


@click.command("setup")
@click.argument("agent", type=click.Choice(["claude", "codex", "cursor", "gemini", "vscode", "opencode"],
                                           case_sensitive=False))
@click.option("--user", "user_scope", is_flag=True,
              help="Write the agent's user-level files (home folder: every project) instead of the project's.")
@click.option("--project", "project", type=click.Path(file_okay=False), default=".", show_default=True,
              help="The project whose files are written (project scope).")
@click.option("--remove", is_flag=True, help="Take out what setup added (the server entry and the block).")
@click.option("--dry-run", is_flag=True, help="Show the change as a diff; write nothing.")
@click.option("--command", "command", help="How the agent starts the server (default: `codeseam mcp`, or this "
              "installation's codeseam by its full path when the one on PATH is another).")
@click.option("--env", "env_pairs", multiple=True, metavar="KEY=VALUE",
              help="An environment variable for the server (e.g. RAG_DATA_DIR=...); repeatable.")
@click.option("--json", "as_json", is_flag=True, help="Print the changes as JSON.")
def setup_cmd(agent: str, user_scope: bool, project: str, remove: bool, dry_run: bool, command: str | None,
              env_pairs: tuple[str, ...], as_json: bool) -> None:
    """Register codeseam's MCP server with AGENT and tell the agent, in a marked block of its
    instruction file, when to use search_code, find_references and ask.

    \b
    agent     config (project / --user)                     instructions
    claude    .mcp.json / ~/.claude.json                     CLAUDE.md / ~/.claude/CLAUDE.md
    codex     .codex/config.toml / ~/.codex/config.toml      AGENTS.md / ~/.codex/AGENTS.md
    cursor    .cursor/mcp.json / ~/.cursor/mcp.json          AGENTS.md
    gemini    .gemini/settings.json / ~/.gemini/...          GEMINI.md / ~/.gemini/GEMINI.md
    vscode    .vscode/mcp.json / the profile's mcp.json      .github/copilot-instructions.md
    opencode  opencode.json / ~/.config/opencode/...         AGENTS.md / ~/.config/opencode/AGENTS.md

    Running it twice changes nothing; everything else in those files is kept byte for byte; a
    file that does not parse is an error and is left alone."""
    import shlex

    from .. import agentsetup
    from ..errors import ConfigError

    server_env = {}
    for pair in env_pairs:
        key, eq, value = pair.partition("=")
        if not eq or not key:
            raise ConfigError(f"--env takes KEY=VALUE, not {pair!r}")
        server_env[key] = value
    changes = agentsetup.plan(agent, scope="user" if user_scope else "project", project=project,
                              command=shlex.split(command) if command else None, server_env=server_env,
                              remove=remove)
    if not dry_run:
        agentsetup.apply(changes)
    if as_json:
        emit_json({"agent": agent, "scope": "user" if user_scope else "project", "dry_run": dry_run,
                   "changes": [{"path": str(c.path), "kind": c.kind, "action": c.action} for c in changes],
                   "diff": agentsetup.diff(changes)})
        return
    if dry_run:
        click.echo(agentsetup.diff(changes) or "nothing to change", nl=False)
    for c in changes:
        verb = {"unchanged": "unchanged", "create": "created", "update": "updated", "delete": "deleted"}[c.action]
        click.echo(f"{'would be ' + verb if dry_run and c.action != 'unchanged' else verb}: {c.path} ({c.kind})",
                   err=True)
