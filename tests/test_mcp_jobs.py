"""Background indexing behind the MCP tools, in-process (the SDK's in-memory client): one job at
a time, other tools answer while a job runs, progress notifications, cancel on shutdown, and a
server that starts while another holder has the index. Real Milvus Lite; the fake embedder is
held at a gate so that "a job is running" is a state the test controls, not a race."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import anyio
import pytest

from codeseam.service import Service
from codeseam.settings import load_settings
from codeseam.surfaces.mcp import build_server


def make_repo(root: Path, n: int = 3) -> Path:
    root.mkdir(parents=True)
    for i in range(n):
        (root / f"mod{i}.py").write_text(f"def function_number_{i}(x):\n    return x * {i}\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


@pytest.fixture
def env(tmp_path: Path) -> dict:
    (tmp_path / "cfg.toml").write_text("")
    settings = load_settings(env={"RAG_CONFIG": str(tmp_path / "cfg.toml"), "RAG_DATA_DIR": str(tmp_path / "data"),
                                  "RAG_EMBEDDING_BACKEND": "fake"})
    return {"settings": settings, "work": tmp_path / "work", "repo": make_repo(tmp_path / "work" / "proj")}


class Gate:
    """Holds the embedder of ``service`` until ``release``."""

    def __init__(self, service: Service) -> None:
        self.embedder = service.session().embedder
        self.original = self.embedder.embed_documents
        self.open, self.entered = threading.Event(), threading.Event()
        self.embedder.embed_documents = self._gated

    def _gated(self, texts):
        self.entered.set()
        assert self.open.wait(30)
        return self.original(texts)

    def release(self) -> None:
        self.open.set()
        self.embedder.embed_documents = self.original


def text_of(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def wait_done(client, job_id: str) -> dict:
    for _ in range(600):
        jobs = (await client.call_tool("get_status", {})).structured_content["jobs"]
        job = next(j for j in jobs if j["id"] == job_id)
        if job["state"] != "running":
            return job
        await anyio.sleep(0.05)
    raise AssertionError("job did not finish")


def test_a_second_job_attaches_or_queues_while_other_tools_answer(env):
    from mcp import Client

    service = Service(env["settings"], cwd=env["work"]).open()
    gate = Gate(service)

    async def scenario() -> dict:
        out = {}
        async with Client(build_server(service)) as c:
            out["tools"] = sorted(t.name for t in (await c.list_tools()).tools)
            first = await c.call_tool("index_repo", {"path": str(env["repo"])})
            out["first"] = first.structured_content
            await anyio.to_thread.run_sync(gate.entered.wait, 30)
            out["same"] = await c.call_tool("index_repo", {"path": str(env["repo"])})
            out["second"] = await c.call_tool("index_repo", {"path": str(env["repo"]), "repo_id": "again"})
            out["status"] = await c.call_tool("get_status", {})
            out["remove"] = await c.call_tool("remove_repo", {"repo": "proj"})
            out["search"] = await c.call_tool("search_code", {"query": "function_number_1"})
            gate.release()
            out["done"] = await wait_done(c, out["first"]["id"])
            out["second_done"] = await wait_done(c, out["second"].structured_content["id"])
            out["after"] = await c.call_tool("search_code", {"query": "function_number_1"})
        return out

    try:
        out = anyio.run(scenario)
    finally:
        gate.release()
        service.close()
    assert out["tools"] == ["find_references", "get_status", "index_repo", "remove_repo", "search_code"]  # no LLM: no ask
    assert out["first"]["state"] == "running" and out["first"]["repo_id"] == "proj"
    # the same repo again: its running job (attached); another repo id: a job of its own
    assert not out["same"].is_error and out["same"].structured_content["id"] == out["first"]["id"]
    second = out["second"]
    assert not second.is_error and second.structured_content["repo_id"] == "again"
    assert second.structured_content["id"] != out["first"]["id"]
    status = out["status"].structured_content
    running = next(j for j in status["jobs"] if j["id"] == out["first"]["id"])
    assert running["state"] == "running" and running["files_total"] == 3 and running["phase"] == "embedding"
    assert running["searchable"]
    assert f"job {running['id']} (proj): running" in text_of(out["status"])
    assert out["remove"].is_error and "being indexed" in text_of(out["remove"])
    # the search ran while the job was held in its embedding: every file was already written
    # keyword-only, so BM25 answers and the result says it is partial (issue 16)
    found = out["search"].structured_content
    assert not out["search"].is_error and found["partial"] and found["signals"] == ["bm25"]
    assert found["hits"][0]["symbol"] == "function_number_1" and found["progress"]["chunks_embedded"] == 0
    assert out["done"]["state"] == "done" and out["done"]["report"]["files_indexed"] == 3
    assert out["second_done"]["state"] == "done"
    assert out["after"].structured_content["hits"][0]["symbol"] == "function_number_1"


def test_wait_reports_progress_and_does_not_block_other_calls(env):
    from mcp import Client

    repo2 = make_repo(env["work"] / "second", n=4)
    service = Service(env["settings"], cwd=env["work"]).open()
    service.session().index(env["repo"])  # something to search while the next job runs
    gate = Gate(service)
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done, total, message) -> None:
        progress.append((done, total, message))

    async def scenario() -> dict:
        out = {}
        async with Client(build_server(service)) as c, anyio.create_task_group() as tg:
            async def waiter() -> None:
                out["waited"] = await c.call_tool("index_repo", {"path": str(repo2), "wait": True},
                                                  progress_callback=on_progress)
            tg.start_soon(waiter)
            await anyio.to_thread.run_sync(gate.entered.wait, 30)
            out["search"] = await c.call_tool("search_code", {"query": "function_number_2", "repo": "proj"})
            out["waiting"] = "waited" not in out
            gate.release()
        return out

    try:
        out = anyio.run(scenario)
    finally:
        gate.release()
        service.close()
    assert out["waiting"] is True  # index_repo(wait) was still blocked when search answered
    assert out["search"].structured_content["hits"][0]["symbol"] == "function_number_2"
    waited = out["waited"]
    assert not waited.is_error and waited.structured_content["state"] == "done"
    assert waited.structured_content["report"]["files_indexed"] == 4
    dones = [p[0] for p in progress]
    assert dones == sorted(dones) and dones[-1] == 4 and progress[-1][1] == 4
    assert "done" in progress[-1][2] and any("running" in (p[2] or "") for p in progress)


def test_close_stops_a_running_job_and_the_next_run_finishes_it(env):
    service = Service(env["settings"], cwd=env["work"]).open()
    gate = Gate(service)
    job = service.start_index(str(env["repo"]))
    assert gate.entered.wait(30)
    closer = threading.Thread(target=service.close)
    closer.start()
    gate.release()  # the embedding returns; the next progress event sees the cancel
    closer.join(60)
    assert not closer.is_alive()
    assert job.state == "cancelled" and "shutting down" in job.error and job.finished is not None
    with Service(env["settings"], cwd=env["work"]) as again:
        st = again.status()
        # stopped in its keyword phase (syncing), or while its vectors were filled in (embedding:
        # the page in flight finished, maybe the last one)
        assert [r.state for r in st.repos if r.repo_id == "proj"] in ([], ["syncing"], ["embedding"], ["clean"])
        redo = again.wait(again.start_index(str(env["repo"])).id, timeout=60)
        assert redo.state == "done"
        assert {r.repo_id: r.state for r in again.status().repos} == {"proj": "clean"}
        assert again.search("function_number_0").hits[0].symbol == "function_number_0"


def test_server_started_while_the_index_is_held_reports_it_then_recovers(env):
    from mcp import Client

    holder = Service(env["settings"], cwd=env["work"]).open()
    late = Service(env["settings"], cwd=env["work"])

    async def scenario() -> dict:
        out = {}
        async with Client(build_server(late)) as c:
            out["busy"] = await c.call_tool("get_status", {})
            out["busy_index"] = await c.call_tool("index_repo", {"path": str(env["repo"])})
            await anyio.to_thread.run_sync(holder.close)
            out["ok"] = await c.call_tool("get_status", {})
        return out

    try:
        out = anyio.run(scenario)
    finally:
        holder.close()
        late.close()
    for name in ("busy", "busy_index"):
        assert out[name].is_error and out[name].structured_content["type"] == "IndexBusyError"
        assert "in use by this process" in text_of(out[name])
    assert not out["ok"].is_error and out["ok"].structured_content["index"]["repos"] == []
