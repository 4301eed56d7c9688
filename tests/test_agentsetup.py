"""``codeseam setup AGENT`` for every agent on a temp home and project: dry run, install,
idempotence, removal, an existing config and instruction file kept byte for byte outside what
setup owns, a config that does not parse left alone; then the server is started exactly as the
agent would start it from the config written, and the official MCP client lists its tools."""

from __future__ import annotations

import difflib
import json
import os
import sys
import tomllib
from pathlib import Path

import anyio
import pytest

from codeseam.agentsetup import AGENTS, apply, diff, plan
from codeseam.agentsetup.agents import SERVER_NAME
from codeseam.errors import ConfigError

SCRIPT = Path(sys.executable).with_name("codeseam")
NOTES = "# Project notes\n\nKeep the build green.\n"
OTHER = {"command": "npx", "args": ["-y", "other-server"]}


def existing_config(agent, with_servers: bool) -> str:
    if agent.format == "toml":
        head = '# my codex config\nmodel = "o3"  # favourite\n'
        return head + ('\n[mcp_servers.other]\ncommand = "npx"\nargs = ["-y", "other-server"]\n' if with_servers else "")
    data: dict = {"theme": "dark"}
    if with_servers:
        data[agent.servers[0]] = {"other": OTHER}
    data["numStartups"] = 12
    return json.dumps(data, indent=2) + "\n"


def servers_of(agent, text: str) -> dict:
    data = tomllib.loads(text) if agent.format == "toml" else json.loads(text)
    for key in agent.servers:
        data = data.get(key, {})
    return data


def only_added(before: str, after: str) -> bool:
    """``after`` is ``before`` with lines inserted (and a comma put after one line): nothing of
    ``before`` is lost or changed otherwise."""
    ops = difflib.SequenceMatcher(a=before.splitlines(), b=after.splitlines(), autojunk=False).get_opcodes()
    a, b = before.splitlines(), after.splitlines()
    for tag, i1, i2, j1, _j2 in ops:
        if tag == "delete":
            return False
        if tag == "replace" and not (i2 - i1 == 1 and b[j1] == a[i1] + ","):
            return False
    return True


@pytest.fixture
def places(tmp_path: Path):
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    return home, project


@pytest.mark.parametrize("scope", ["project", "user"])
@pytest.mark.parametrize("with_servers", [True, False])
@pytest.mark.parametrize("key", sorted(AGENTS))
def test_install_is_idempotent_and_removal_restores_every_byte(places, key, scope, with_servers) -> None:
    home, project = places
    agent = AGENTS[key]
    env = {"XDG_CONFIG_HOME": str(home / ".config"), "APPDATA": str(home / "AppData")}
    cfg = agent.config_path(scope, project, home, env)
    doc = agent.instructions_path(scope, project, home, env)
    cfg.parent.mkdir(parents=True, exist_ok=True)
    original = existing_config(agent, with_servers)
    cfg.write_text(original)
    notes = NOTES if with_servers else NOTES.rstrip("\n")  # also a file whose last line has no line end
    if doc is not None:
        doc.parent.mkdir(parents=True, exist_ok=True)
        doc.write_text(notes)
    command = [str(SCRIPT), "mcp"]
    kw = dict(scope=scope, project=project, home=home, env=env, command=command)

    dry = plan(key, **kw)
    shown = diff(dry)
    assert f"+++ {cfg}" in shown and "codeseam" in shown
    assert cfg.read_text() == original  # a dry run writes nothing
    apply(dry)
    after = cfg.read_text()
    assert only_added(original, after), after
    servers = servers_of(agent, after)
    assert SERVER_NAME in servers and (not with_servers or servers["other"] == OTHER)
    if doc is not None:
        text = doc.read_text()
        assert text.startswith(notes) and "find_references" in text[len(notes):]
    assert all(c.action == "unchanged" for c in plan(key, **kw))  # twice changes nothing

    apply(plan(key, remove=True, **kw))
    assert cfg.read_text() == original
    if doc is not None:
        assert doc.read_text() == notes
    assert all(c.action == "unchanged" for c in plan(key, remove=True, **kw))


@pytest.mark.parametrize("key", sorted(AGENTS))
def test_new_files_are_created_and_removed_whole(places, key) -> None:
    home, project = places
    changes = plan(key, project=project, home=home, env={}, command=["codeseam", "mcp"])
    assert {c.action for c in changes} == {"create"}
    apply(changes)
    apply(plan(key, project=project, home=home, env={}, remove=True))
    assert [p for p in project.rglob("*") if p.is_file()] == []


@pytest.mark.parametrize("key", sorted(AGENTS))
def test_a_config_that_does_not_parse_is_an_error_and_left_alone(places, key) -> None:
    home, project = places
    agent = AGENTS[key]
    cfg = agent.config_path("project", project, home, {})
    cfg.parent.mkdir(parents=True, exist_ok=True)
    broken = "[mcp_servers\nx = " if agent.format == "toml" else '{"theme": "dark", // a comment\n}'
    cfg.write_text(broken)
    for remove in (False, True):
        with pytest.raises(ConfigError, match="left as it is"):
            plan(key, project=project, home=home, env={}, command=["codeseam", "mcp"], remove=remove)
    assert cfg.read_text() == broken


def test_unknown_agent_and_scope() -> None:
    with pytest.raises(ConfigError, match="unknown agent"):
        plan("emacs")
    with pytest.raises(ConfigError, match="unknown scope"):
        plan("claude", scope="system")
def launch(agent, text: str) -> tuple[list[str], dict[str, str]]:
    """``(argv, env)`` as the agent starts the server from its config entry."""
    entry = servers_of(agent, text)[SERVER_NAME]
    if isinstance(entry["command"], list):  # opencode
        return entry["command"], entry.get("environment", {})
    return [entry["command"], *entry.get("args", [])], entry.get("env", {})


@pytest.mark.skipif(not SCRIPT.is_file(), reason=f"no installed codeseam script at {SCRIPT}")
@pytest.mark.parametrize("key", sorted(AGENTS))
def test_the_agent_starts_the_server_and_lists_its_tools(places, key, tmp_path) -> None:
    from mcp import Client, StdioServerParameters

    home, project = places
    agent = AGENTS[key]
    (tmp_path / "cfg.toml").write_text("")
    data = {"RAG_DATA_DIR": str(tmp_path / "data"), "RAG_CONFIG": str(tmp_path / "cfg.toml"),
            "RAG_EMBEDDING_BACKEND": "fake"}
    apply(plan(key, project=project, home=home, env={}, server_env=data))
    argv, env = launch(agent, agent.config_path("project", project, home, {}).read_text())
    assert env == data
    env = {**{k: os.environ[k] for k in ("HOME", "PATH", "LANG", "TMPDIR") if k in os.environ}, **env,
           "HF_HUB_OFFLINE": "1"}
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=str(project))

    async def tools() -> list[str]:
        async with Client(params, mode="legacy", read_timeout_seconds=90) as client:
            return sorted(t.name for t in (await client.list_tools()).tools)

    names = anyio.run(tools)
    assert {"search_code", "find_references", "get_status", "index_repo"} <= set(names)
