"""One owner of the index: while `codeseam serve` holds the Milvus Lite file, CLI commands (and
`codeseam mcp`) go through it; while `codeseam mcp` holds it, the CLI says clearly what to do.
Every process here is the real entry point in a subprocess, on a temp data dir."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from codeseam import api, owner
from codeseam.settings import load_settings

RETRY_PY = textwrap.dedent('''\
    def compute_retry_delay(attempt, base=0.5, cap=30.0):
        """Exponential backoff with full jitter."""
        return min(cap, base * 2 ** attempt)
    ''')
TOKEN = "owner-test-token-0123456789abcdef"
CLI = [sys.executable, "-m", "codeseam.surfaces.cli"]


def make_repo(root: Path, name: str = "retry.py", text: str = RETRY_PY) -> Path:
    root.mkdir(parents=True)
    (root / name).write_text(text)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


@pytest.fixture
def box(tmp_path: Path):
    (tmp_path / "cfg.toml").write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAG_")}
    env.update(RAG_DATA_DIR=str(tmp_path / "data"), RAG_EMBEDDING_BACKEND="fake",
               RAG_CONFIG=str(tmp_path / "cfg.toml"), HF_HUB_OFFLINE="1", RAG_KEEPALIVE="0")
    src = str(Path(__file__).resolve().parents[1] / "src")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH", "")) if p)
    work = tmp_path / "work"
    repo = make_repo(work / "proj")
    settings = load_settings(env=env)
    api.index(repo, settings=settings)
    return {"env": env, "work": work, "repo": repo, "settings": settings,
            "server_file": owner.server_file(settings)}


def cli(box, *args: str, timeout: float = 120, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], cwd=box["work"], env={**box["env"], **env}, capture_output=True,
                          text=True, timeout=timeout)


def wait_for_server_file(box, proc: subprocess.Popen, kind: str, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        try:
            info = json.loads(box["server_file"].read_text())
            if info["kind"] == kind and info["pid"] == proc.pid:
                return info
        except (OSError, ValueError):
            pass
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else "server exited"
        assert time.monotonic() < deadline, "no server file"
        time.sleep(0.05)


def no_traceback(text: str) -> str:
    assert "Traceback" not in text, text
    return text


def test_cli_and_mcp_go_through_a_running_http_server(box, fake_openai):
    server_env = {**box["env"], "RAG_SERVER_TOKEN": TOKEN, "RAG_LLM_MODEL": "fake-model",
                  "RAG_LLM_BASE_URL": fake_openai.base_url}
    proc = subprocess.Popen([*CLI, "serve", "--port", "0"], cwd=box["work"], env=server_env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        info = wait_for_server_file(box, proc, "http")
        assert info["url"].startswith("http://127.0.0.1:") and info["token_required"] is True
        assert TOKEN not in box["server_file"].read_text()
        assert (box["server_file"].stat().st_mode & 0o777) == 0o600

        # without the token: a clear error naming the setting
        res = cli(box, "search", "retry")
        assert res.returncode == 1 and "RAG_SERVER_TOKEN" in no_traceback(res.stderr)

        auth = {"RAG_SERVER_TOKEN": TOKEN}
        res = cli(box, "-v", "search", "compute_retry_delay", "--json", **auth)
        assert res.returncode == 0, res.stderr
        hits = json.loads(res.stdout)["hits"]
        assert hits[0]["symbol"] == "compute_retry_delay" and hits[0]["path"] == "retry.py"
        assert f"(pid {proc.pid}): going through it" in res.stderr

        # the direct path's messages and filters, through the server
        res = cli(box, "search", " ", **auth)
        assert res.returncode == 1 and "error: empty query" in no_traceback(res.stderr)
        res = cli(box, "search", "compute_retry_delay", "--lang", "Python", "--json", **auth)
        assert json.loads(res.stdout)["hits"][0]["symbol"] == "compute_retry_delay"
        res = cli(box, "search", "retry", "--lang", "cobol", **auth)
        assert res.returncode == 1 and "(indexed: python)" in no_traceback(res.stderr)

        status = json.loads(cli(box, "status", "--json", **auth).stdout)
        assert [r["repo"] for r in status["repos"]] == ["proj"] and status["uri"].endswith("index.db")

        second = make_repo(box["work"] / "second", "parse.go",
                           "package p\n\nfunc ParseJSON(data []byte) error {\n\treturn nil\n}\n")
        res = cli(box, "index", str(second), **auth)
        assert res.returncode == 0, res.stderr
        assert res.stdout.startswith("second: 1 files indexed")
        res = cli(box, "search", "ParseJSON", "--repo", "second", "--json", **auth)
        assert json.loads(res.stdout)["hits"][0]["symbol"] == "ParseJSON"
        rows = json.loads(cli(box, "inspect", "second", "--json", **auth).stdout)
        assert list(rows["files"]) == ["parse.go"]
        res = cli(box, "remove", "second", "--json", **auth)
        assert json.loads(res.stdout) == {"repo": "second", "removed_chunks": len(rows["chunks"])}
        res = cli(box, "search", "ParseJSON", "--repo", "second", **auth)
        assert res.returncode == 1 and "not indexed" in no_traceback(res.stderr)

        # outside the server's allowed roots: refused by the server, said clearly
        outside = make_repo(box["work"].parent / "outside")
        res = cli(box, "index", str(outside), **auth)
        assert res.returncode == 1 and "outside the allowed roots" in no_traceback(res.stderr)
        res = cli(box, "index", str(box["repo"]), "--rebuild", **auth)
        assert res.returncode == 1 and "stop the server" in no_traceback(res.stderr)

        # ask uses the server's LLM settings (this shell has no RAG_LLM_MODEL)
        fake_openai.script("Delays double per attempt [1].")
        res = cli(box, "ask", "how", "is", "the", "retry", "delay", "computed", "--json", **auth)
        assert res.returncode == 0, res.stderr
        doc = json.loads(res.stdout)
        assert doc["answer"] == "Delays double per attempt [1]." and doc["citations"][0]["path"] == "retry.py"
        # --stream through the server: the reply arrives in pieces, then the checked Sources list
        fake_openai.script("Delays double per attempt [1].")
        res = cli(box, "ask", "how", "is", "the", "retry", "delay", "computed", "--stream", **auth)
        assert res.returncode == 0, res.stderr
        assert res.stdout.startswith("Delays double per attempt [1].\n\nSources:\n[1] retry.py:1-3")
        assert fake_openai.chat_requests()[-1]["stream"] is True

        # an MCP server started now serves its tools through the HTTP server
        mcp_out = _mcp_search(box, auth)
        assert mcp_out["hits"][0]["symbol"] == "compute_retry_delay"
        assert json.loads(box["server_file"].read_text())["pid"] == proc.pid  # still the owner
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
    assert code in (0, 143), proc.stderr.read()
    assert not box["server_file"].exists()  # removed on shutdown
    res = cli(box, "search", "compute_retry_delay", "--json")  # the CLI opens the index itself again
    assert res.returncode == 0 and json.loads(res.stdout)["hits"]


def _mcp_search(box, extra_env: dict) -> dict:
    import anyio
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp"], env={**box["env"], **extra_env},
                                   cwd=str(box["work"]))

    async def go() -> dict:
        async with Client(params, mode="legacy", read_timeout_seconds=90) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert "ask" in names  # the HTTP server has an LLM configured
            result = await client.call_tool("search_code", {"query": "compute_retry_delay"})
            assert not result.is_error, result.content
            return result.structured_content

    return anyio.run(go)


def test_cli_explains_an_mcp_holder(box):
    proc = subprocess.Popen([*CLI, "mcp"], cwd=box["work"], env=box["env"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_server_file(box, proc, "mcp")
        res = cli(box, "search", "retry")
        assert res.returncode == 1 and res.stdout == ""
        err = no_traceback(res.stderr)
        assert err.startswith("error: ") and "held by an MCP server (`codeseam mcp`" in err
        assert f"pid {proc.pid}" in err and f"kill {proc.pid}" in err and "codeseam serve" in err
        res = cli(box, "serve", "--port", "0")
        assert res.returncode == 1 and "held by an MCP server" in no_traceback(res.stderr)
        res = cli(box, "status")
        assert res.returncode == 1 and "MCP" in res.stderr
    finally:
        proc.stdin.close()  # the client hangs up: the server exits and cleans up
        code = proc.wait(timeout=60)
    assert code == 0, proc.stderr.read()
    assert not box["server_file"].exists()
    assert cli(box, "search", "retry").returncode == 0


def test_stale_server_file_is_ignored(box):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    box["server_file"].write_text(json.dumps({"kind": "http", "pid": dead.pid, "url": "http://127.0.0.1:9",
                                              "token_required": False, "started": time.time()}))
    assert owner.live_server(box["settings"]) is None
    # alive but not the holder of the index lock (e.g. a reused pid): ignored as well
    box["server_file"].write_text(json.dumps({"kind": "http", "pid": os.getpid(), "url": "http://127.0.0.1:9"}))
    assert owner.live_server(box["settings"]) is None
    res = cli(box, "search", "compute_retry_delay", "--json")
    assert res.returncode == 0 and json.loads(res.stdout)["hits"]
