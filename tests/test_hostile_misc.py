"""Attacks from issue 40 (findings 1, 3, 5, 6) on real temp repositories, the real CLI and a
real server: a cloned repository's planted links, its allow file, a cross-site page.

Each test here failed on the code before the fix (the commit that added it says how)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import codeseam
from codeseam.agentsetup import apply, plan
from codeseam.errors import ConfigError

SCRIPT = Path(sys.executable).with_name("codeseam")
SRC = str(Path(codeseam.__file__).resolve().parents[1])  # the sources under test
BASHRC = "# my shell setup\nexport PATH=$HOME/bin:$PATH\n"


def run_cli(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    full = {**os.environ, "RAG_KEEPALIVE": "0", "PYTHONPATH": SRC, **(env or {})}
    return subprocess.run([sys.executable, "-m", "codeseam.surfaces.cli", *args], cwd=cwd, env=full,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    rc = home / ".bashrc"
    rc.write_text(BASHRC)
    return rc


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "cloned"
    root.mkdir()
    return root


# --- finding 1: setup writes through a planted link -----------------------------------------

@pytest.mark.parametrize("planted", ["..mcp.json.codeseam-tmp", ".CLAUDE.md.codeseam-tmp"])
def test_setup_does_not_write_through_a_planted_temp_link(repo, victim, planted) -> None:
    """The repo commits the temp file setup used to write (a link to ~/.bashrc) and its own
    .mcp.json / CLAUDE.md. Before the fix, ~/.bashrc was truncated and rewritten with the repo's
    lines and .mcp.json became a link to it."""
    (repo / ".mcp.json").write_text('{"mcpServers": {"x": {"command": "touch /tmp/pwned"}}}\n')
    (repo / "CLAUDE.md").write_text("# notes\n")
    (repo / planted).symlink_to(victim)
    res = run_cli("setup", "claude", "--project", str(repo), cwd=repo)
    assert res.returncode == 0, res.stderr
    assert victim.read_text() == BASHRC
    assert (repo / planted).is_symlink()  # the planted link is left alone, never followed
    for name in (".mcp.json", "CLAUDE.md"):
        assert not (repo / name).is_symlink() and (repo / name).is_file()
    assert "codeseam" in json.loads((repo / ".mcp.json").read_text())["mcpServers"]
    assert "codeseam" in (repo / "CLAUDE.md").read_text()
    assert not [p for p in repo.iterdir() if p.name.endswith(".codeseam-tmp") and not p.is_symlink()]


@pytest.mark.parametrize("name", [".mcp.json", "CLAUDE.md"])
def test_setup_refuses_a_project_file_that_links_out_of_the_project(repo, victim, name) -> None:
    """``CLAUDE.md -> ~/.bashrc``: setup read the link's target into its diff and wrote the
    file's text plus its block into the repo (and ~/.bashrc's text with it). Now a clear error."""
    (repo / name).symlink_to(victim)
    res = run_cli("setup", "claude", "--project", str(repo), cwd=repo)
    assert res.returncode != 0
    assert "leaves the project" in res.stderr and "Traceback" not in res.stderr
    assert victim.read_text() == BASHRC
    assert (repo / name).is_symlink()
    dry = run_cli("setup", "claude", "--project", str(repo), "--dry-run", cwd=repo)
    assert dry.returncode != 0 and "export PATH" not in dry.stdout + dry.stderr


def test_setup_refuses_a_config_folder_that_links_out(repo, tmp_path) -> None:
    outside = tmp_path / "home" / ".codex"
    outside.mkdir(parents=True)
    (outside / "config.toml").write_text('model = "o3"\n')
    (repo / ".codex").symlink_to(outside)
    with pytest.raises(ConfigError, match="leaves the project"):
        plan("codex", project=repo, home=tmp_path / "home", env={})
    assert (outside / "config.toml").read_text() == 'model = "o3"\n'


def test_a_link_inside_the_project_is_written_where_it_points(repo, tmp_path) -> None:
    (repo / "AGENTS.md").write_text("# shared notes\n")
    (repo / "CLAUDE.md").symlink_to("AGENTS.md")
    os.chmod(repo / "AGENTS.md", 0o640)
    apply(plan("claude", project=repo, home=tmp_path / "home", env={}))
    assert (repo / "CLAUDE.md").is_symlink()
    assert "codeseam" in (repo / "AGENTS.md").read_text()
    assert (repo / "AGENTS.md").stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in repo.iterdir()) == [".mcp.json", "AGENTS.md", "CLAUDE.md"]
