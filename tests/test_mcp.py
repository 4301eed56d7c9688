"""`codeseam mcp` as a real subprocess, driven by the official SDK's stdio client (and once by
raw JSON-RPC lines, to prove stdout carries only the protocol). Real Milvus Lite, real
tree-sitter, the fake embedder, and the loopback fake LLM for `ask`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from tests.support.fixtures import RETRY_PY

SERVER = [sys.executable, "-m", "codeseam.surfaces.cli", "mcp"]


def make_repo(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "retry.py").write_text(RETRY_PY)
    (root / "config.go").write_text("package config\n\nfunc ParseJSON(data []byte) error {\n\treturn nil\n}\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "cfg.toml").write_text("")
    make_repo(tmp_path / "work" / "proj")
    (tmp_path / "outside").mkdir()
    return tmp_path


def server_env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {"RAG_DATA_DIR": str(tmp / "data"), "RAG_EMBEDDING_BACKEND": "fake",
           "RAG_CONFIG": str(tmp / "cfg.toml"), "HF_HUB_OFFLINE": "1", **extra}
    for name in ("HOME", "PATH", "LANG", "TMPDIR"):  # as MCP clients pass them (Milvus Lite needs HOME)
        if name in os.environ:
            env.setdefault(name, os.environ[name])
    src = str(Path(__file__).resolve().parents[1] / "src")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH", "")) if p)
    return env


def text_of(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def test_index_search_status_remove_over_stdio(workdir, fake_openai):
    from mcp import Client, StdioServerParameters

    repo = workdir / "work" / "proj"
    env = server_env(workdir, RAG_LLM_MODEL="fake-model", RAG_LLM_BASE_URL=fake_openai.base_url)
    params = StdioServerParameters(command=SERVER[0], args=SERVER[1:], env=env, cwd=str(workdir / "work"))
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async def session() -> dict:
        seen: dict = {}
        with open(workdir / "server.err", "w"):
            async with Client(params, mode="legacy", read_timeout_seconds=90) as client:
                seen["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
                call = client.call_tool
                seen["index"] = await call("index_repo", {"path": str(repo), "wait": True},
                                           progress_callback=on_progress)
                seen["search"] = await call("search_code", {"query": "compute_retry_delay", "k": 3})
                seen["go"] = await call("search_code", {"query": "parse json", "language": "go"})
                seen["role"] = await call("search_code", {"query": "retry", "role": "source"})
                seen["no_role"] = await call("search_code", {"query": "retry", "role": "test"})
                seen["status"] = await call("get_status", {})
                fake_openai.script("The delay uses full jitter [1]. It is capped [4].")
                seen["ask"] = await call("ask", {"question": "how is the retry delay computed?", "k": 3})
                seen["unsafe"] = await call("index_repo", {"path": str(workdir / "outside")})
                seen["traversal"] = await call("index_repo", {"path": "proj/../../outside"})
                seen["bad_k"] = await call("search_code", {"query": "retry", "k": 500})
                seen["no_repo"] = await call("search_code", {"query": "retry", "repo": "nope"})
                seen["again"] = await call("index_repo", {"path": "proj"})  # returns at once
                job_id = seen["again"].structured_content["id"]
                for _ in range(300):
                    st = await call("get_status", {})
                    job = next(j for j in st.structured_content["jobs"] if j["id"] == job_id)
                    if job["state"] != "running":
                        break
                    await anyio.sleep(0.1)
                seen["again_done"] = job
                seen["remove"] = await call("remove_repo", {"repo": "proj"})
                seen["after"] = await call("search_code", {"query": "retry", "repo": "proj"})
                seen["status_after"] = await call("get_status", {})
        return seen

    seen = anyio.run(session)
    err = (workdir / "server.err").read_text()
    assert seen["tools"] == ["ask", "find_references", "get_status", "index_repo", "remove_repo", "search_code"]

    index = seen["index"]
    assert not index.is_error, text_of(index)
    assert index.structured_content["state"] == "done"
    assert index.structured_content["report"]["files_indexed"] == 2
    assert progress and progress[-1][0] == 2 and progress[-1][1] == 2 and "done" in progress[-1][2]

    search = seen["search"]
    hits = search.structured_content["hits"]
    assert not search.is_error and hits[0]["symbol"] == "compute_retry_delay"
    top = hits[0]
    assert f"{top['path']}:{top['start_line']}-{top['end_line']} compute_retry_delay" in text_of(search)
    assert "def compute_retry_delay" in text_of(search)
    assert {h["language"] for h in seen["go"].structured_content["hits"]} == {"go"}
    assert {h["role"] for h in seen["role"].structured_content["hits"]} == {"source"}
    assert ", source, score" in text_of(seen["role"])
    assert seen["no_role"].is_error and "role test" in text_of(seen["no_role"])

    status = seen["status"].structured_content
    assert [r["repo"] for r in status["index"]["repos"]] == ["proj"] and status["llm"] is True
    assert "proj: 2 files" in text_of(seen["status"])

    ask = seen["ask"]
    assert not ask.is_error, text_of(ask)
    assert [c["n"] for c in ask.structured_content["citations"]] == [1]
    assert "Sources:\n[1] " in text_of(ask) and "removed citation [4]" in text_of(ask)

    for name, needle in [("unsafe", "outside the allowed roots"), ("traversal", "traversal"),
                         ("bad_k", "less than or equal to 100"), ("no_repo", "not indexed"), ("no_repo", "index_repo with repo_id=nope")]:
        assert seen[name].is_error, name
        assert needle in text_of(seen[name]), (name, text_of(seen[name]))

    assert seen["again"].structured_content["state"] in ("running", "done")
    assert seen["again_done"]["state"] == "done" and seen["again_done"]["report"]["files_unchanged"] == 2
    assert not seen["remove"].is_error and seen["remove"].structured_content["removed_chunks"] > 0
    assert seen["after"].is_error and "nothing is indexed" in text_of(seen["after"])
    assert "call index_repo" in text_of(seen["after"])  # the hint speaks of the tool, not the CLI
    assert seen["status_after"].structured_content["index"]["repos"] == []
    assert "Traceback" not in err
    assert not (workdir / "data" / "index.db.server.json").exists()  # removed at shutdown


def _rpc(proc: subprocess.Popen, msg: dict) -> None:
    proc.stdin.write(json.dumps(msg) + "\n")
    proc.stdin.flush()


def test_stdout_carries_only_the_protocol_and_ask_needs_an_llm(workdir):
    """Raw JSON-RPC over pipes, at -vv (debug logging): every stdout line is a JSON-RPC message;
    the logs went to stderr. Without RAG_LLM_MODEL there is no `ask` tool."""
    proc = subprocess.Popen([*SERVER[:-1], "-vv", "mcp"], cwd=workdir / "work", env=server_env(workdir),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _rpc(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                               "clientInfo": {"name": "raw", "version": "0"}}})
        _rpc(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _rpc(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        _rpc(proc, {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                    "params": {"name": "index_repo", "arguments": {"path": "proj", "wait": True}}})
        replies: dict[int, dict] = {}

        def read_until(n: int) -> None:
            while n not in replies:
                line = proc.stdout.readline()
                assert line, f"server closed stdout early; stderr:\n{proc.stderr.read()[-2000:]}"
                msg = json.loads(line)  # every stdout line is JSON ...
                assert msg.get("jsonrpc") == "2.0"  # ... and JSON-RPC
                if "id" in msg:
                    replies[msg["id"]] = msg

        read_until(3)  # (requests run concurrently: search only once the index is built)
        _rpc(proc, {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                    "params": {"name": "search_code", "arguments": {"query": "retry delay"}}})
        read_until(4)
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
        err = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert replies[1]["result"]["serverInfo"]["name"] == "codeseam"
    tools = {t["name"] for t in replies[2]["result"]["tools"]}
    assert tools == {"index_repo", "search_code", "find_references", "get_status", "remove_repo"}
    assert replies[3]["result"]["structuredContent"].get("state") == "done", replies[3]
    assert replies[4]["result"]["structuredContent"].get("hits"), replies[4]
    assert "DEBUG" in err or "INFO" in err  # the logs exist, on stderr
