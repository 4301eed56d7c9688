"""``codeseam setup AGENT``: register the MCP server with a coding agent and tell it, in its own
instruction file, when to use which tool.

``plan`` computes the changes (pure over the files' current text: ``edit.py``), ``diff`` shows
them, ``apply`` writes them (atomically, keeping the file's mode). Installing twice changes
nothing; ``remove=True`` takes out exactly what was added; a file that does not parse is an
error and stays as it is. Scope: ``project`` (default: files in the repository, which the team
can review and share; Codex reads ``.codex/config.toml`` only in trusted projects) or ``user``
(files in the home folder: every project on this machine).
"""

from __future__ import annotations

import difflib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Mapping, Sequence

from ..errors import ConfigError
from . import edit
from .agents import AGENTS, ALIASES, INSTRUCTIONS, SERVER_NAME, Agent, default_command

__all__ = ["AGENTS", "Change", "agent_for", "apply", "diff", "plan"]

SCOPES = ("project", "user")


@dataclass(frozen=True)
class Change:
    path: Path
    kind: str  # config | instructions
    before: str | None  # None: the file does not exist
    after: str | None  # None: the file is to be deleted (it held only what setup wrote)

    @property
    def action(self) -> str:
        if self.before == self.after:
            return "unchanged"
        if self.before is None:
            return "create"
        return "delete" if self.after is None else "update"


def agent_for(name: str) -> Agent:
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key not in AGENTS:
        raise ConfigError(f"unknown agent {name!r}", hint="agents: " + ", ".join(AGENTS))
    return AGENTS[key]


def _read(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not UTF-8 text; left as it is") from None


def plan(agent: Agent | str, *, scope: str = "project", project: str | os.PathLike[str] = ".",
         home: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None,
         command: Sequence[str] | None = None, server_env: Mapping[str, str] | None = None,
         remove: bool = False) -> list[Change]:
    """The changes that register (or, with ``remove``, unregister) codeseam with ``agent``."""
    agent = agent_for(agent) if isinstance(agent, str) else agent
    if scope not in SCOPES:
        raise ConfigError(f"unknown scope {scope!r}", hint="project or user")
    env = os.environ if env is None else env
    home_dir = Path(home).expanduser() if home is not None else Path.home()
    root = Path(project).expanduser().resolve()
    cfg_path = agent.config_path(scope, root, home_dir, env)
    if scope == "project":
        _inside_project(cfg_path, root)
    changes = [_config_change(agent, cfg_path, list(command or default_command(env)), dict(server_env or {}), remove)]
    doc_path = agent.instructions_path(scope, root, home_dir, env)
    if doc_path is not None:
        if scope == "project":
            _inside_project(doc_path, root)
        before = _read(doc_path)
        if remove:
            after = edit.without_block(before) if before is not None else None
            after = None if after == "" else after
        else:
            after = edit.with_block(before or "", INSTRUCTIONS)
        changes.append(Change(doc_path, "instructions", before, after))
    return changes


def _inside_project(path: Path, root: Path) -> None:
    """Refuse a project file that is (or lies under) a link leaving the project: a cloned
    repository could commit ``CLAUDE.md -> ~/.bashrc`` or ``.codex -> ~/.codex``, and setup
    would read that file into its diff and write the repo's text into it."""
    real = Path(os.path.realpath(path))
    if real != root and root not in real.parents:
        raise ConfigError(f"{path} is a link that leaves the project (to {real}); left as it is",
                          hint="remove the link, or use --user to write the user-scope files")


def _config_change(agent: Agent, path: Path, command: list[str], server_env: dict[str, str], remove: bool) -> Change:
    before = _read(path)
    where = str(path)
    servers = agent.servers
    if agent.format == "toml":
        if remove:
            after = edit.toml_without(before, servers, SERVER_NAME, where) if before is not None else None
        else:
            after = edit.toml_with(before or "", servers, SERVER_NAME, agent.entry(command, server_env), where)
        return Change(path, "config", before, None if after == "" else after)
    if agent.key == "opencode" and before is not None:
        data = edit.parse_json(before, where)
        if isinstance(edit.json_get(data, ("mcp", "servers")), dict):
            servers = ("mcp", "servers")  # an opencode v2 file keeps its servers under mcp.servers
    if remove:
        after = edit.json_without(before, servers, SERVER_NAME, where) if before is not None else None
        if after is not None and after.strip() in ("{}", ""):
            after = None
        return Change(path, "config", before, after)
    after = edit.json_with(before or "", servers, SERVER_NAME, agent.entry(command, server_env), where)
    return Change(path, "config", before, after)


def diff(changes: Sequence[Change]) -> str:
    """A unified diff of the changes (what ``--dry-run`` shows)."""
    out: list[str] = []
    for c in changes:
        if c.action == "unchanged":
            continue
        a = (c.before or "").splitlines(keepends=True)
        b = (c.after or "").splitlines(keepends=True)
        out.extend(difflib.unified_diff(a, b, "/dev/null" if c.before is None else str(c.path),
                                        "/dev/null" if c.after is None else str(c.path)))
        if out and not out[-1].endswith("\n"):
            out[-1] += "\n\\ No newline at end of file\n"
    return "".join(out)


def apply(changes: Sequence[Change]) -> None:
    """Write the changes: each file replaced atomically (its mode kept), folders made as needed;
    a file that held only what setup wrote is deleted.

    Nothing is written through a link someone planted: the new text goes to a fresh temp file
    (``mkstemp``: ``O_CREAT | O_EXCL``, a random name) in the target's folder, which then
    replaces the target. A target that is a link is written where the link points (a dotfile
    kept in another folder stays linked); ``plan`` has refused a project file whose link leaves
    the project."""
    for c in changes:
        if c.action == "unchanged":
            continue
        if c.after is None:
            if c.before is not None:
                c.path.unlink()
            continue
        _write_atomic(c.path, c.after)


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    target = Path(os.path.realpath(path))
    try:
        mode = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".codeseam-tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
