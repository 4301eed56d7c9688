"""refs end to end on a real git repo and a real Lite index: the files as they are now (edits,
new files, deletions; freshness sync and check), and the skins: CLI (``refs``, ``search
--max-tokens``), HTTP ``/refs`` and ``/search?max_tokens`` with the remote client, MCP
``find_references`` and ``search_code(max_tokens)`` over stdio."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import httpx
import pytest

from codeseam import api
from codeseam.settings import load_settings

LIB = '''"""Configuration."""


def parse_config(path):
    """parse_config reads the file."""
    return {"path": path}


class Loader:
    def load(self, path):
        # parse_config does the work
        return parse_config(path)
'''
APP = '''from lib import parse_config

CONFIG = parse_config("app.toml")
label = "parse_config"
'''


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "lib.py").write_text(LIB)
    (root / "app.py").write_text(APP)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (tmp_path / "cfg.toml").write_text("")
    return root


def env_for(tmp: Path, **extra: str) -> dict[str, str]:
    return {"RAG_CONFIG": str(tmp / "cfg.toml"), "RAG_DATA_DIR": str(tmp / "data"), "RAG_EMBEDDING_BACKEND": "fake",
            "RAG_KEEPALIVE": "0", **extra}


def where(result) -> list[tuple[str, int, str, str]]:
    return [(r.path, r.line, r.kind, r.symbol) for r in result.refs]


def test_refs_follow_the_files_as_they_are_now(repo: Path, tmp_path: Path) -> None:
    settings = load_settings(env=env_for(tmp_path))
    api.index(repo, settings=settings)
    with api.Index(settings) as ix:
        result = ix.refs("parse_config")
        assert where(result) == [("lib.py", 4, "def", "parse_config"), ("app.py", 1, "import", ""),
                                 ("app.py", 3, "call", ""), ("lib.py", 12, "call", "Loader.load")]
        assert [(c.symbol, c.lines) for c in result.callers] == [("Loader.load", (12,))]
        assert result.refs[0].text == "def parse_config(path):" and result.refs[0].symbol_start == 4
        assert where(ix.refs("Loader.load")) == [("lib.py", 10, "def", "Loader.load")]
        assert [r.kind for r in ix.refs("parse_config", kind="call,def").refs] == ["def", "call", "call"]

        (repo / "lib.py").write_text("import os\n\n\n" + LIB)  # every line moves down by 3
        (repo / "new.py").write_text("from lib import parse_config\nparse_config('x')\n")
        (repo / "app.py").unlink()
        assert where(ix.refs("parse_config")) == [("lib.py", 7, "def", "parse_config"), ("lib.py", 15, "call", "Loader.load"),
                                                  ("new.py", 1, "import", ""), ("new.py", 2, "call", "")]

    # freshness=check writes nothing: a changed file is read from disk all the same
    check = load_settings({"freshness": "check"}, env=env_for(tmp_path))
    (repo / "late.py").write_text("def use():\n    return parse_config(1)\n")
    with api.Index(check) as ix:
        result = ix.refs("parse_config", kind="call")
        assert ("late.py", 2, "call", "use") in where(result)
        assert any("not in the index yet" in n for n in result.notes)


def test_refs_errors(repo: Path, tmp_path: Path) -> None:
    from codeseam.errors import ConfigError, NotIndexedError

    settings = load_settings(env=env_for(tmp_path))
    with pytest.raises(NotIndexedError):
        api.refs("parse_config", settings=settings)
    api.index(repo, settings=settings)
    with pytest.raises(ConfigError, match="not a name"):
        api.refs("parse config", settings=settings)
    with pytest.raises(ConfigError, match="unknown reference kind"):
        api.refs("parse_config", kind="caller", settings=settings)
    with pytest.raises(NotIndexedError, match="not indexed"):
        api.refs("parse_config", repo="nope", settings=settings)


def run_cli(tmp: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, **env_for(tmp), "HF_HUB_OFFLINE": "1"}
    env = {k: v for k, v in env.items() if not k.startswith("RAG_") or k in env_for(tmp)}
    return subprocess.run([sys.executable, "-m", "codeseam.surfaces.cli", *args], env=env, capture_output=True,
                          text=True, timeout=300)


def test_cli_refs_and_search_with_a_token_budget(repo: Path, tmp_path: Path) -> None:
    assert run_cli(tmp_path, "index", str(repo)).returncode == 0
    out = run_cli(tmp_path, "refs", "parse_config", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["counts"] == {"def": 1, "import": 1, "call": 2} and data["left_out"] == 0
    assert data["callers"][0]["symbol"] == "Loader.load"
    text = run_cli(tmp_path, "refs", "parse_config", "--kind", "call")
    assert text.stdout.splitlines() == ["app.py:3:10 call top level: CONFIG = parse_config(\"app.toml\")",
                                        "lib.py:12:16 call in Loader.load: return parse_config(path)", "",
                                        "callers (1):", "  lib.py:10-12 Loader.load  (line 12)"]
    small = json.loads(run_cli(tmp_path, "refs", "parse_config", "--max-tokens", "30", "--json").stdout)
    assert 0 < len(small["refs"]) < 4 and small["left_out"] == 4 - len(small["refs"]) and small["tokens"] <= 30
    bad = run_cli(tmp_path, "refs", "a b")
    assert bad.returncode == 1 and "not a name" in bad.stderr and "Traceback" not in bad.stderr
    fitted = json.loads(run_cli(tmp_path, "search", "parse config", "--max-tokens", "40", "--json").stdout)
    assert fitted["fit"]["max_tokens"] == 40 and fitted["fit"]["tokens"] <= 40
    assert len(fitted["hits"]) + len(fitted["fit"]["left_out"]) >= 1


def test_http_refs_search_budget_and_the_remote_client(repo: Path, tmp_path: Path) -> None:
    from codeseam.owner.client import RemoteIndex
    from codeseam.owner.serverfile import ServerInfo
    from codeseam.service import Service
    from codeseam.surfaces.http import create_app
    from tests.test_http import running

    settings = load_settings(env=env_for(tmp_path))
    api.index(repo, settings=settings)
    with Service(settings, cwd=tmp_path, watch=False) as service, running(create_app(service)) as url:
        with httpx.Client(base_url=url, timeout=60) as client:
            body = client.get("/refs", params={"name": "parse_config", "kind": "call"}).json()
            assert [(r["path"], r["line"]) for r in body["refs"]] == [("app.py", 3), ("lib.py", 12)]
            budget = client.get("/refs", params={"name": "parse_config", "max_tokens": 30}).json()
            assert budget["left_out"] > 0 and budget["tokens"] <= 30
            bad = client.get("/refs", params={"name": "a b"})
            assert bad.status_code == 422 and bad.json()["type"] == "ConfigError"
            fit = client.get("/search", params={"q": "parse config", "max_tokens": 40}).json()["fit"]
            assert fit["tokens"] <= 40
        with RemoteIndex(ServerInfo("http", os.getpid(), url), settings) as remote:
            assert remote.refs("parse_config") == service.refs("parse_config")


def test_mcp_find_references_and_a_budgeted_search(repo: Path, tmp_path: Path) -> None:
    from mcp import Client, StdioServerParameters

    env = {**env_for(tmp_path), "HF_HUB_OFFLINE": "1",
           "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    env.update({k: os.environ[k] for k in ("HOME", "PATH", "LANG", "TMPDIR") if k in os.environ})
    params = StdioServerParameters(command=sys.executable, args=["-m", "codeseam.surfaces.cli", "mcp"], env=env,
                                   cwd=str(repo))

    async def session() -> dict:
        async with Client(params, mode="legacy", read_timeout_seconds=90) as client:
            done = await client.call_tool("index_repo", {"path": str(repo), "wait": True})
            assert not done.is_error
            return {"refs": await client.call_tool("find_references", {"name": "parse_config"}),
                    "small": await client.call_tool("find_references", {"name": "parse_config", "max_tokens": 30}),
                    "search": await client.call_tool("search_code", {"query": "parse config", "max_tokens": 40})}

    seen = anyio.run(session)
    refs = seen["refs"]
    assert not refs.is_error
    text = "\n".join(c.text for c in refs.content)
    assert text.startswith("4 references to parse_config (1 def, 1 import, 2 call)")
    assert "lib.py:12:16 call in Loader.load: return parse_config(path)" in text
    assert refs.structured_content["callers"][0]["symbol"] == "Loader.load"
    assert seen["small"].structured_content["left_out"] > 0
    assert "left out" in "\n".join(c.text for c in seen["small"].content)
    assert seen["search"].structured_content["fit"]["tokens"] <= 40
