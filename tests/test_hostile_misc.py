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


# --- finding 3: a repository's allow file runs regexes ----------------------------------------

def index_env(data: Path, **extra: str) -> dict[str, str]:
    return {"RAG_EMBEDDING_BACKEND": "fake", "RAG_DATA_DIR": str(data), "RAG_CONFIG": os.devnull,
            "HF_HUB_OFFLINE": "1", **extra}


def git_repo(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).write_text(text)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    return root


def stored_bytes(data: Path) -> bytes:
    return b"".join(p.read_bytes() for p in data.rglob("*") if p.is_file() and not p.is_symlink())


AWS_ID = "AKIA" + "Q3EGTXW5KZR7HB2M"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "Q8z2LmN4vT6u"


def test_an_allow_file_of_dot_does_not_turn_scrubbing_off(tmp_path) -> None:
    """Before: ``.codeseamallow`` holding ``.`` allowed every match (re.search('.') finds
    something in any text), so the AWS keys were stored and served verbatim."""
    creds = f"[default]\naws_access_key_id = {AWS_ID}\naws_secret_access_key = {AWS_SECRET}\n"
    root = git_repo(tmp_path / "repo", {".codeseamallow": ".\n.*\naws_secret_access_key\n", "creds.ini": creds,
                                         "app.py": "def handler(event):\n    return event\n"})
    data = tmp_path / "data"
    res = run_cli("index", str(root), cwd=tmp_path, env=index_env(data), timeout=300)
    assert res.returncode == 0, res.stderr
    found = run_cli("search", "aws_secret_access_key", "--json", cwd=tmp_path, env=index_env(data), timeout=300)
    assert found.returncode == 0, found.stderr
    assert "creds.ini" in found.stdout and "REDACTED" in found.stdout
    blob = stored_bytes(data) + found.stdout.encode()
    assert AWS_ID.encode() not in blob and AWS_SECRET.encode() not in blob
    assert "codeseamallow:1" in res.stdout + res.stderr  # the ignored entries are reported


@pytest.mark.parametrize("where", ["repo file", "user setting"])
def test_a_backtracking_allow_pattern_does_not_hang_scrub_or_index(tmp_path, where) -> None:
    """``(a+)+$`` and one line of a's with a secret on it: before, ``codeseam scrub`` and
    ``codeseam index`` spun for good (exponential backtracking in ``re``), here stopped at 20 s.
    A repo line is now a value; the user's own regex runs in RE2 (linear time)."""
    line = "a" * 40 + "! " + f"token = '{AWS_ID}'\n"
    files = {"data.txt": line * 50}
    extra = {}
    if where == "repo file":
        files[".codeseamallow"] = "(a+)+$\n"
    else:
        extra["RAG_SCRUB_ALLOW"] = "(a+)+$"
    root = git_repo(tmp_path / "repo", files)
    res = run_cli("scrub", str(root), cwd=tmp_path, env=index_env(tmp_path / "data", **extra), timeout=20)
    assert res.returncode == 0, res.stderr
    assert res.stdout.count(" aws-access-key-id ") == 50  # every line's key is still found
    res = run_cli("index", str(root), cwd=tmp_path, env=index_env(tmp_path / "data", **extra), timeout=60)
    assert res.returncode == 0, res.stderr
    assert AWS_ID.encode() not in stored_bytes(tmp_path / "data")


# --- finding 6: data at rest ------------------------------------------------------------------

def modes(folder: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mode & 0o777 for p in folder.iterdir() if p.name.startswith(("index.db", ".index.db"))}


def test_the_data_dir_is_private_and_remove_leaves_no_text(tmp_path) -> None:
    """Before: the data dir was 0755 and index.db 0644 (any local user could read the index),
    and a removed repo's text stayed in the Lite file's free pages."""
    marker = "platypus_" + "unique_marker_text"
    gone = git_repo(tmp_path / "gone", {"a.py": f"def zebra_lookup():\n    return '{marker}'\n"})
    kept = git_repo(tmp_path / "kept", {"b.py": "def other_helper():\n    return 1\n"})
    data = tmp_path / "state" / "data"
    env = index_env(data)
    for root in (gone, kept):
        res = run_cli("index", str(root), cwd=tmp_path, env=env, timeout=300)
        assert res.returncode == 0, res.stderr
    assert data.stat().st_mode & 0o777 == 0o700
    assert modes(data) and set(modes(data).values()) == {0o600}, modes(data)
    assert marker.encode() in (data / "index.db").read_bytes()
    res = run_cli("remove", "gone", cwd=tmp_path, env=env, timeout=300)
    assert res.returncode == 0, res.stderr
    assert marker.encode() not in stored_bytes(data)
    found = run_cli("search", "other_helper", "--json", cwd=tmp_path, env=env, timeout=300)
    assert found.returncode == 0 and "b.py" in found.stdout, found.stderr
    # an index made before (0755 / 0644) is tightened when it is opened
    os.chmod(data, 0o755)
    os.chmod(data / "index.db", 0o644)
    assert run_cli("status", cwd=tmp_path, env=env, timeout=300).returncode == 0
    assert data.stat().st_mode & 0o777 == 0o700 and modes(data)["index.db"] == 0o600


def test_a_server_whose_data_dir_is_deleted_says_so_instead_of_serving_stale_rows(tmp_path) -> None:
    """Before: the Lite process kept the deleted file open, so the server went on answering
    searches from rows that were no longer the index (while the CLI, finding no server file,
    built a second index beside it)."""
    import shutil

    import httpx

    from codeseam.service import Service
    from codeseam.settings import load_settings
    from codeseam.surfaces.http import create_app
    from tests.test_http import make_repo, running, wait_job

    repo = make_repo(tmp_path / "work" / "proj")
    data = tmp_path / "data"
    settings = load_settings(env={"RAG_CONFIG": os.devnull, "RAG_DATA_DIR": str(data),
                                  "RAG_EMBEDDING_BACKEND": "fake"})
    service = Service(settings, cwd=tmp_path / "work", watch=False).open()
    try:
        with running(create_app(service)) as url, httpx.Client(base_url=url, timeout=60) as c:
            assert wait_job(c, c.post("/index", json={"path": str(repo)}).json()["id"])["state"] == "done"
            assert c.get("/search", params={"q": "retry delay"}).json()["hits"]
            shutil.rmtree(data)
            res = c.get("/search", params={"q": "retry delay"})
            assert res.status_code >= 500 and "deleted or replaced" in res.json()["error"], res.text
            assert "Traceback" not in res.text
            assert c.post("/index", json={"path": str(repo)}).status_code >= 500
            assert service.index_gone is True and not data.exists()  # nothing rebuilt behind the user's back
            health = c.get("/health").json()
            assert health["ok"] is False and "deleted or replaced" in health["store"]
    finally:
        service.close()


def test_a_file_named_after_a_secret_is_never_stored_nor_shown(tmp_path) -> None:
    """Before: ``keys/AKIA....txt`` was indexed under its name, so the key sat in index.db and
    came back in every hit, the index report and ``codeseam scrub``."""
    root = git_repo(tmp_path / "repo", {"app.py": "def handler(event):\n    return event\n"})
    (root / "keys").mkdir()
    (root / "keys" / f"{AWS_ID}.txt").write_text("handler notes: nothing secret in here\n")
    (root / "keys" / f"{AWS_ID}.bin").write_bytes(b"\0" * 64)  # a skip: its path is shown too
    data = tmp_path / "data"
    env = index_env(data)
    res = run_cli("index", str(root), "--json", cwd=tmp_path, env=env, timeout=300)
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    reasons = {s["path"]: s["reason"] for s in report["skips"]}
    assert reasons == {"keys/[REDACTED:aws-access-key-id].txt": "secret-name",
                       "keys/[REDACTED:aws-access-key-id].bin": "binary"}
    found = run_cli("search", "handler notes", "--json", cwd=tmp_path, env=env, timeout=300)
    scrubbed = run_cli("scrub", str(root), "--json", cwd=tmp_path, env=env, timeout=300)
    assert found.returncode == 0 and scrubbed.returncode == 0
    assert "keys/[REDACTED:aws-access-key-id].txt" in scrubbed.stdout
    shown = res.stdout + res.stderr + found.stdout + found.stderr + scrubbed.stdout + scrubbed.stderr
    assert AWS_ID not in shown and AWS_ID.encode() not in stored_bytes(data)
    # renamed, the file is indexed as any other
    (root / "keys" / f"{AWS_ID}.txt").rename(root / "keys" / "notes.txt")
    assert run_cli("index", str(root), cwd=tmp_path, env=env, timeout=300).returncode == 0
    found = run_cli("search", "handler notes", "--json", cwd=tmp_path, env=env, timeout=300)
    assert "keys/notes.txt" in found.stdout


def test_the_server_file_is_not_written_through_a_planted_link(tmp_path, victim) -> None:
    """The server file's temp name is predictable (``.<index>.server.json.<pid>.tmp``): a link
    planted there was opened with O_TRUNC and followed."""
    from codeseam.owner.serverfile import read_server_file, server_file, write_server_file
    from codeseam.settings import load_settings

    settings = load_settings(env={"RAG_CONFIG": os.devnull, "RAG_DATA_DIR": str(tmp_path / "data")})
    path = server_file(settings)
    assert path is not None
    path.parent.mkdir(parents=True)
    path.with_name(f".{path.name}.{os.getpid()}.tmp").symlink_to(victim)
    write_server_file(settings, "http", url="http://127.0.0.1:1")
    assert victim.read_text() == BASHRC
    info = read_server_file(settings)
    assert info is not None and info.pid == os.getpid() and not path.is_symlink()
