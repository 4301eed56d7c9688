"""The agents ``codeseam setup`` knows: where each keeps its MCP servers and its instructions.

Checked against each agent's documentation (2026):

| agent | MCP config (project / user) | server entry | instructions (project / user) |
|---|---|---|---|
| Claude Code | ``.mcp.json`` / ``~/.claude.json``, ``mcpServers`` | ``type: stdio, command, args`` | ``CLAUDE.md`` / ``~/.claude/CLAUDE.md`` |
| Codex CLI | ``.codex/config.toml`` (trusted projects) / ``$CODEX_HOME/config.toml`` (``~/.codex``), ``[mcp_servers.x]`` | ``command, args`` | ``AGENTS.md`` / ``$CODEX_HOME/AGENTS.md`` |
| Cursor | ``.cursor/mcp.json`` / ``~/.cursor/mcp.json``, ``mcpServers`` | ``command, args`` | ``AGENTS.md`` / (rules live in its settings) |
| Gemini CLI | ``.gemini/settings.json`` / ``~/.gemini/settings.json``, ``mcpServers`` | ``command, args`` | ``GEMINI.md`` / ``~/.gemini/GEMINI.md`` |
| VS Code (Copilot) | ``.vscode/mcp.json`` / the profile's ``mcp.json``, ``servers`` | ``type: stdio, command, args`` | ``.github/copilot-instructions.md`` / (profile prompts) |
| opencode | ``opencode.json`` / ``~/.config/opencode/opencode.json``, ``mcp`` (``mcp.servers`` in a v2 file) | ``type: local, command: [..], enabled`` | ``AGENTS.md`` / ``~/.config/opencode/AGENTS.md`` |
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable, Mapping

SERVER_NAME = "codeseam"

Entry = Callable[[list[str], dict[str, str]], dict]


def _stdio(typed: bool) -> Entry:
    def entry(command: list[str], env: dict[str, str]) -> dict:
        out: dict = {"type": "stdio"} if typed else {}
        out.update(command=command[0], args=command[1:])
        if env:
            out["env"] = dict(env)
        return out
    return entry


def _opencode(command: list[str], env: dict[str, str]) -> dict:
    out: dict = {"type": "local", "command": list(command), "enabled": True}
    if env:
        out["environment"] = dict(env)
    return out


def _codex_home(home: Path, env: Mapping[str, str]) -> Path:
    return Path(env["CODEX_HOME"]).expanduser() if env.get("CODEX_HOME") else home / ".codex"


def _vscode_user(home: Path, env: Mapping[str, str]) -> Path:
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "Code" / "User" / "mcp.json"
    if sys.platform.startswith("win"):
        return Path(env.get("APPDATA") or home / "AppData" / "Roaming") / "Code" / "User" / "mcp.json"
    return Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "Code" / "User" / "mcp.json"


def _xdg(home: Path, env: Mapping[str, str]) -> Path:
    return Path(env.get("XDG_CONFIG_HOME") or home / ".config")


@dataclass(frozen=True)
class Agent:
    key: str
    name: str
    format: str  # json | toml
    servers: tuple[str, ...]  # the key path of the servers object
    entry: Entry
    project_config: str
    user_config: Callable[[Path, Mapping[str, str]], Path]
    project_instructions: str | None
    user_instructions: Callable[[Path, Mapping[str, str]], Path] | None

    def config_path(self, scope: str, project: Path, home: Path, env: Mapping[str, str]) -> Path:
        return project / self.project_config if scope == "project" else self.user_config(home, env)

    def instructions_path(self, scope: str, project: Path, home: Path, env: Mapping[str, str]) -> Path | None:
        if scope == "project":
            return project / self.project_instructions if self.project_instructions else None
        return self.user_instructions(home, env) if self.user_instructions else None


AGENTS: dict[str, Agent] = {a.key: a for a in (
    Agent("claude", "Claude Code", "json", ("mcpServers",), _stdio(True), ".mcp.json",
          lambda h, e: h / ".claude.json", "CLAUDE.md", lambda h, e: h / ".claude" / "CLAUDE.md"),
    Agent("codex", "Codex CLI", "toml", ("mcp_servers",), _stdio(False), ".codex/config.toml",
          lambda h, e: _codex_home(h, e) / "config.toml", "AGENTS.md", lambda h, e: _codex_home(h, e) / "AGENTS.md"),
    Agent("cursor", "Cursor", "json", ("mcpServers",), _stdio(False), ".cursor/mcp.json",
          lambda h, e: h / ".cursor" / "mcp.json", "AGENTS.md", None),
    Agent("gemini", "Gemini CLI", "json", ("mcpServers",), _stdio(False), ".gemini/settings.json",
          lambda h, e: h / ".gemini" / "settings.json", "GEMINI.md", lambda h, e: h / ".gemini" / "GEMINI.md"),
    Agent("vscode", "VS Code (GitHub Copilot)", "json", ("servers",), _stdio(True), ".vscode/mcp.json",
          _vscode_user, ".github/copilot-instructions.md", None),
    Agent("opencode", "opencode", "json", ("mcp",), _opencode, "opencode.json",
          lambda h, e: _xdg(h, e) / "opencode" / "opencode.json", "AGENTS.md",
          lambda h, e: _xdg(h, e) / "opencode" / "AGENTS.md"),
)}
ALIASES = {"claude-code": "claude", "claude_code": "claude", "codex-cli": "codex", "gemini-cli": "gemini",
           "copilot": "vscode", "vs-code": "vscode", "code": "vscode", "github-copilot": "vscode"}

INSTRUCTIONS = """## Code search with codeseam

This repository is indexed by codeseam (MCP server `codeseam`). Use its tools before grep or reading whole files:

- `search_code`: find code by meaning or by name ("where are retries scheduled?", "config file parsing"); each hit is a
  definition with its exact `path:start-end` lines. Pass `max_tokens` to fit the hits to your context.
- `find_references`: where a symbol (`name`, `Type.method`, `pkg::name`) is defined, called, imported and used, in code
  only, at the files' current lines, with its callers. Use it before renaming, changing a signature or deleting code.
- `ask`: a short answer with checked citations to exact lines, for "how does X work?" (when an LLM is configured).

Results follow the files as they are now; a hit marked STALE has moved: read the file again before you edit by lines.
"""


def default_command(env: Mapping[str, str] | None = None) -> list[str]:
    """How the agent starts the server: ``codeseam mcp`` when that ``codeseam`` on PATH is this
    one, else this installation's script by its absolute path (a venv the agent's PATH lacks)."""
    import shutil

    env = os.environ if env is None else env
    here = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0] else None
    on_path = shutil.which("codeseam", path=env.get("PATH"))
    if here is not None and here.name == "codeseam" and here.is_file():
        if on_path and Path(on_path).resolve() == here:
            return ["codeseam", "mcp"]
        return [str(here), "mcp"]
    mine = Path(sys.executable).with_name("codeseam")
    if mine.is_file():
        if on_path and Path(on_path).resolve() == mine.resolve():
            return ["codeseam", "mcp"]
        return [str(mine), "mcp"]
    return ["codeseam", "mcp"]
