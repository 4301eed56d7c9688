"""The HTTP API on a real uvicorn server (127.0.0.1, free port), driven with httpx: real
Milvus Lite, real tree-sitter, the fake embedder and the loopback fake LLM."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from codeseam.service import Service
from codeseam.settings import load_settings
from codeseam.surfaces.cli import main
from codeseam.surfaces.http import create_app
from tests.support.fake_openai import FakeOpenAI, Reply
from tests.support.fixtures import RETRY_PY

PARSE_GO = 'package config\n\nfunc ParseJSON(data []byte) error {\n\treturn nil\n}\n'
TOKEN = "s3cret-token-for-tests-0123456789"
ERROR_KEYS = {"error", "hint", "type"}


def make_repo(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "retry.py").write_text(RETRY_PY)
    (root / "config.go").write_text(PARSE_GO)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


@contextmanager
def running(app) -> Iterator[str]:
    """``app`` served by uvicorn in a thread on 127.0.0.1:<free port>."""
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    server = uvicorn.Server(uvicorn.Config(app, log_config=None, access_log=False, lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(15)
        sock.close()


@pytest.fixture(scope="module")
def llm():
    with FakeOpenAI() as server:
        yield server


@pytest.fixture(scope="module")
def site(tmp_path_factory, llm):
    """One service (index with repo `proj`) behind two apps: open, and token-protected."""
    tmp = tmp_path_factory.mktemp("http")
    repo = make_repo(tmp / "work" / "proj")
    (tmp / "outside" / "secret").mkdir(parents=True)
    (tmp / "work" / "escape").symlink_to(tmp / "outside" / "secret", target_is_directory=True)
    (tmp / "cfg.toml").write_text("")
    env = {"RAG_CONFIG": str(tmp / "cfg.toml"), "RAG_DATA_DIR": str(tmp / "data"),
           "RAG_EMBEDDING_BACKEND": "fake", "RAG_LLM_MODEL": "fake-model", "RAG_LLM_BASE_URL": llm.base_url,
           "RAG_LLM_TIMEOUT": "5"}
    settings = load_settings(env=env)
    service = Service(settings, cwd=tmp / "work").open()
    try:
        with running(create_app(service)) as url, running(create_app(service, token=TOKEN)) as locked, \
                httpx.Client(base_url=url, timeout=60) as client:
            job = client.post("/index", json={"path": str(repo)}).json()
            assert wait_job(client, job["id"])["state"] == "done"
            yield {"url": url, "locked": locked, "client": client, "service": service, "tmp": tmp,
                   "repo": repo, "settings": settings}
    finally:
        service.close()


def wait_job(client: httpx.Client, job_id: str, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        job = client.get(f"/jobs/{job_id}").json()
        if job["state"] != "running":
            return job
        assert time.monotonic() < deadline, job
        time.sleep(0.05)


def assert_error(response: httpx.Response, status: int, kind: str, *needles: str) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == ERROR_KEYS and body["type"] == kind, body
    assert "Traceback" not in response.text and 'File "' not in response.text
    for needle in needles:
        assert needle in body["error"] + (body["hint"] or ""), body
    return body


# -- endpoints --------------------------------------------------------------------------------

def test_search_returns_the_cli_json_shape(site):
    c = site["client"]
    res = c.get("/search", params={"q": "compute_retry_delay", "k": 3})
    assert res.status_code == 200
    body = res.json()
    assert set(body) == {"query", "weak", "hits", "best_similarity", "evidence", "partial", "signals", "progress", "notes"}
    assert body["partial"] is False and body["progress"] is None and set(body["signals"]) == {"dense", "bm25"}
    top = body["hits"][0]
    assert (top["repo"], top["path"], top["symbol"]) == ("proj", "pkg/retry.py", "compute_retry_delay")
    lines = RETRY_PY.split("\n")
    assert top["text"] == "\n".join(lines[top["start_line"] - 1:top["end_line"]]) + "\n"
    assert 1 <= len(body["hits"]) <= 3
    go = c.get("/search", params={"q": "parse json", "lang": "go"}).json()
    assert go["hits"] and {h["language"] for h in go["hits"]} == {"go"}
    py = c.get("/search", params={"q": "retry", "path": "pkg/*.py", "mode": "bm25"}).json()
    assert py["hits"] and all(h["path"].startswith("pkg/") for h in py["hits"])
    assert {h["role"] for h in body["hits"]} == {"source"}
    src = c.get("/search", params={"q": "retry", "role": "source,config"}).json()
    assert src["hits"] and {h["role"] for h in src["hits"]} <= {"source", "config"}
    assert_error(c.get("/search", params={"q": "retry", "role": "test"}), 404, "NotIndexedError", "role test")
    assert_error(c.get("/search", params={"q": "retry", "role": "bogus"}), 422, "ConfigError", "unknown role")


def test_index_job_status_and_resync(site):
    c, tmp = site["client"], site["tmp"]
    other = make_repo(tmp / "work" / "other")
    res = c.post("/index", json={"path": str(other), "repo_id": "other"})
    assert res.status_code == 202
    job = res.json()
    assert job["repo_id"] == "other" and job["path"] == str(other) and job["state"] in ("running", "done")
    done = wait_job(c, job["id"])
    assert done["state"] == "done" and done["report"]["files_indexed"] == 2 and done["error"] is None
    assert done["files_done"] == done["files_total"] == 2 and done["chunks_written"] > 0
    status = c.get("/status").json()
    repos = {r["repo"]: r for r in status["index"]["repos"]}
    assert repos["other"]["root"] == str(other) and repos["other"]["files"] == 2
    assert any(j["id"] == job["id"] for j in status["jobs"]) and status["llm"] is True
    listed = next(j for j in status["jobs"] if j["id"] == job["id"])  # compact: counts, not lists
    assert "skips" not in listed["report"] and listed["report"]["skipped"] == len(done["report"]["skips"])
    assert listed["report"]["files_indexed"] == 2
    # a repo id already naming another folder is refused up front, not in the job
    assert_error(c.post("/index", json={"path": str(site["repo"]), "repo_id": "other"}), 422, "ConfigError",
                 "already names", str(other))
    # an indexed repo's root is an allowed root from now on; a re-sync changes nothing
    again = wait_job(c, c.post("/index", json={"path": str(other), "repo_id": "other"}).json()["id"])
    assert again["report"]["files_unchanged"] == 2 and again["report"]["chunks_embedded"] == 0
    # relative paths are taken from the server's working directory
    rel = wait_job(c, c.post("/index", json={"path": "other", "repo_id": "other"}).json()["id"])
    assert rel["state"] == "done" and rel["path"] == str(other)


def test_delete_repo_and_inspect(site):
    c, tmp = site["client"], site["tmp"]
    gone = make_repo(tmp / "work" / "gone")
    wait_job(c, c.post("/index", json={"path": str(gone)}).json()["id"])
    rows = c.get("/repos/gone").json()
    assert set(rows["files"]) == {"pkg/retry.py", "config.go"} and rows["chunks"]
    res = c.delete("/repos/gone")
    assert res.status_code == 200 and res.json() == {"repo": "gone", "removed_chunks": len(rows["chunks"])}
    assert_error(c.get("/search", params={"q": "retry", "repo": "gone"}), 404, "NotIndexedError", "gone")
    assert_error(c.delete("/repos/gone"), 404, "NotIndexedError")
    assert_error(c.get("/repos/gone"), 404, "NotIndexedError")
    assert "gone" not in {r["repo"] for r in c.get("/status").json()["index"]["repos"]}


def test_a_repo_id_with_a_slash_is_inspected_and_removed_through_the_server(site):
    """Issue 40, finding 6: ``--repo-id team/app`` could be indexed but not inspected or
    removed through a server (404: the route took one path segment)."""
    from codeseam.owner.client import RemoteIndex
    from codeseam.owner.serverfile import ServerInfo

    c, tmp = site["client"], site["tmp"]
    slashed = make_repo(tmp / "work" / "slashed")
    assert wait_job(c, c.post("/index", json={"path": str(slashed), "repo_id": "team/app"}).json()["id"])["state"] == "done"
    assert set(c.get("/repos/team%2Fapp").json()["files"]) == {"pkg/retry.py", "config.go"}
    assert set(c.get("/repos/team/app").json()["files"]) == {"pkg/retry.py", "config.go"}
    with RemoteIndex(ServerInfo("http", os.getpid(), url=site["url"]), site["settings"]) as remote:
        assert set(remote.inspect("team/app")["files"]) == {"pkg/retry.py", "config.go"}
        assert remote.remove("team/app") > 0
    assert_error(c.get("/repos/team%2Fapp"), 404, "NotIndexedError")
    assert "team/app" not in {r["repo"] for r in c.get("/status").json()["index"]["repos"]}


def test_ask_answers_with_checked_citations(site, llm):
    c = site["client"]
    llm.script("The delay is drawn with jitter [1]. The cap comes from `cap` [1, 9].")
    res = c.post("/ask", json={"question": "how is the retry delay computed?", "k": 3})
    assert res.status_code == 200, res.text
    body = res.json()
    assert set(body) == {"answer", "citations", "weak", "notes", "text"}
    assert body["weak"] is False and "[9]" not in body["answer"] and "Sources:" not in body["answer"]
    (cite,) = body["citations"]
    assert set(cite) == {"n", "path", "start_line", "end_line", "symbol"} and cite["n"] == 1
    sent = llm.chat_requests()[-1]["messages"][1]["content"]
    assert f"[1] {cite['path']}:{cite['start_line']}-{cite['end_line']}" in sent
    assert any("removed citation [9]" in n for n in body["notes"])
    assert body["text"].startswith(body["answer"]) and f"{cite['path']}:{cite['start_line']}" in body["text"]


def ndjson(response: httpx.Response) -> list[dict]:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/x-ndjson")
    return [json.loads(line) for line in response.text.splitlines() if line.strip()]


def test_ask_streams_deltas_then_the_checked_answer(site, llm):
    c = site["client"]
    reply = "The delay is drawn with jitter [1]. The cap comes from `cap` [1, 9]."
    llm.script(Reply(reply, chunks=5))
    whole_reply = Reply(reply)
    lines = ndjson(c.post("/ask", json={"question": "how is the retry delay computed?", "k": 3, "stream": True}))
    *deltas, last = lines
    assert len(deltas) >= 2 and all(set(d) == {"delta"} for d in deltas)
    # the reply as it may be shown: citations checked as they arrive (issue 40: [9] was streamed)
    assert "".join(d["delta"] for d in deltas) == reply.replace("[1, 9]", "[1]")
    assert last["done"] is True
    llm.script(whole_reply)
    whole = c.post("/ask", json={"question": "how is the retry delay computed?", "k": 3}).json()
    assert {k: v for k, v in last.items() if k != "done"} == whole  # the same checked answer
    assert any("removed citation [9]" in n for n in last["notes"]) and "[9]" not in last["answer"]


def ask_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "codeseam-ask" and t.is_alive()]


def test_a_client_that_leaves_a_streamed_ask_stops_the_llm_call(site, llm):
    """Issue 40, finding 6: before, the server read the whole reply after the client left
    (here 200 pieces x 0.05 s = 10 s of LLM time for nobody)."""
    llm.script(Reply("The delay doubles [1]. " * 100, chunks=200, piece_delay=0.05))
    body = {"question": "how is the retry delay computed?", "k": 3, "stream": True}
    with httpx.stream("POST", site["url"] + "/ask", json=body, timeout=30) as response:
        first = next(response.iter_lines())
        assert "delta" in json.loads(first)
    t0 = time.monotonic()
    while ask_threads():
        assert time.monotonic() - t0 < 4, "the answer kept reading the LLM after the client left"
        time.sleep(0.05)


def test_streamed_ask_errors_before_and_during_the_reply(site, llm):
    c = site["client"]
    # before the reply starts: the usual status code and JSON error body
    assert_error(c.post("/ask", json={"question": "retry delay", "repo": "nope", "stream": True}),
                 404, "NotIndexedError", "nope")
    llm.script(Reply(status=400, error="bad request from the model server"))
    assert_error(c.post("/ask", json={"question": "retry delay", "stream": True}), 502, "LLMResponseError")
    # the model's stream breaks after two pieces: the deltas, then an error line with its status
    llm.script(Reply("Delays double per attempt, capped at cap [1].", chunks=6, cut_after=2))
    *deltas, last = ndjson(c.post("/ask", json={"question": "retry delay", "stream": True}))
    assert [set(d) for d in deltas] == [{"delta"}, {"delta"}]
    assert set(last) == ERROR_KEYS | {"status"} and last["type"] == "LLMResponseError" and last["status"] == 502
    assert "Traceback" not in last["error"]


def test_remote_index_streams_through_the_server(site, llm):
    from codeseam.errors import LLMResponseError
    from codeseam.owner.client import RemoteIndex
    from codeseam.owner.serverfile import ServerInfo

    info = ServerInfo(kind="http", pid=0, url=site["url"])
    reply = "Delays double per attempt [1]."
    with RemoteIndex(info, site["settings"]) as remote:
        llm.script(Reply(reply, chunks=4))
        seen: list[str] = []
        answer = remote.ask("how is the retry delay computed?", k=3, on_delta=seen.append)
        assert len(seen) >= 2 and "".join(seen) == reply
        assert answer.question == "how is the retry delay computed?" and answer.citations
        assert answer.answer.startswith(reply) and not answer.weak
        llm.script(Reply(reply, chunks=4, cut_after=1))
        seen.clear()
        with pytest.raises(LLMResponseError):
            remote.ask("how is the retry delay computed?", on_delta=seen.append)
        assert len(seen) == 1
        llm.script(reply)
        plain = remote.ask("how is the retry delay computed?", k=3)  # not streamed: the same answer
        assert plain.answer == answer.answer and plain.citations == answer.citations


def test_remote_index_sends_every_search_field_and_gets_the_local_records(site):
    """A request with every filter set: through the server (RemoteIndex, codec.request_params)
    it is the search the service runs here, record for record; GET /search takes every field."""
    import dataclasses

    from codeseam import codec
    from codeseam.codec import WIRE_NAMES
    from codeseam.interface import SearchRequest
    from codeseam.owner.client import RemoteIndex
    from codeseam.owner.serverfile import ServerInfo

    params = {p["name"] for p in site["client"].get("/openapi.json").json()["paths"]["/search"]["get"]["parameters"]}
    assert {WIRE_NAMES.get(f.name, f.name) for f in dataclasses.fields(SearchRequest)} <= params
    request = SearchRequest("retry delay", repo="proj", path_glob="pkg/**", language="Python", role="source",
                            k=3, mode="bm25", offset=1, limit=1)
    with RemoteIndex(ServerInfo(kind="http", pid=0, url=site["url"]), site["settings"]) as remote:
        remote_result = remote.search(request)
    local = site["service"].search(request)
    assert local.hits and {h.path for h in local.hits} == {"pkg/retry.py"}
    # the same records (scores within the 6 decimals the JSON keeps), all k hits: the page is the skin's
    assert codec.search_json(remote_result, evidence=True) == codec.search_json(local, evidence=True)
    # a token budget travels, and what it left out comes back as the local call's record
    budget = SearchRequest("retry delay", k=5, max_tokens=40)
    with RemoteIndex(ServerInfo(kind="http", pid=0, url=site["url"]), site["settings"]) as remote:
        remote_result = remote.search(budget)
    local = site["service"].search(budget)
    assert local.fit is not None and local.fit.max_tokens == 40 and local.fit.tokens <= 40
    assert codec.search_json(remote_result, evidence=True) == codec.search_json(local, evidence=True)


def test_llm_failures_map_to_502_and_503(site, llm, tmp_path):
    c = site["client"]
    llm.script(Reply(status=400, error="bad request from the model server"))
    assert_error(c.post("/ask", json={"question": "retry delay"}), 502, "LLMResponseError", "HTTP 400")
    # a service without an LLM: 503 naming the setting (the index is never opened for it)
    env = {"RAG_CONFIG": str(site["tmp"] / "cfg.toml"), "RAG_DATA_DIR": str(tmp_path / "none"),
           "RAG_EMBEDDING_BACKEND": "fake"}
    with running(create_app(Service(load_settings(env=env)))) as url:
        res = httpx.post(f"{url}/ask", json={"question": "retry delay"})
        assert_error(res, 503, "LLMUnavailableError", "RAG_LLM_MODEL")
        assert not (tmp_path / "none").exists()


# -- errors and limits ---------------------------------------------------------------------------

def test_invalid_queries_are_422_with_a_clear_message(site):
    c = site["client"]
    assert_error(c.post("/search", json={"q": "x" * 32_001}), 422, "ConfigError", "q", "at most 32000")
    assert c.post("/search", json={"q": "x" * 32_000}).status_code == 200  # a pasted issue fits
    assert c.get("/search", params={"q": "x" * 2001}).status_code == 200
    assert_error(c.get("/search", params={"q": ""}), 422, "ConfigError", "q")
    assert_error(c.get("/search"), 422, "ConfigError", "q")
    assert_error(c.get("/search", params={"q": "   "}), 422, "ConfigError", "empty query")
    for k in (0, 101, "many"):
        assert_error(c.get("/search", params={"q": "retry", "k": k}), 422, "ConfigError", "k")
    assert c.get("/search", params={"q": "retry", "k": 100}).status_code == 200
    assert_error(c.get("/search", params={"q": "retry", "mode": "magic"}), 422, "ConfigError", "mode")
    assert_error(c.post("/ask", json={"question": "q" * 32_001}), 422, "ConfigError", "question")
    assert_error(c.post("/ask", json={"question": "why", "k": 101}), 422, "ConfigError", "k")
    assert_error(c.post("/index", content=b"{not json", headers={"content-type": "application/json"}),
                 422, "ConfigError")
    assert_error(c.get("/jobs/j999"), 404, "UnknownJobError", "j999")
    assert_error(c.get("/no/such/route"), 404, "Error")


def test_unsafe_paths_are_403(site):
    c, tmp = site["client"], site["tmp"]
    cases = {
        str(tmp / "outside" / "secret"): "outside the allowed roots",
        "/": "outside the allowed roots",
        str(tmp / "work" / "proj" / ".." / ".." / "outside" / "secret"): "traversal",
        "../outside/secret": "traversal",
        str(tmp / "work" / "escape"): "symlink",
        str(tmp / "work" / "missing"): "no such directory",
        str(tmp / "work" / ("n" * 300)): "too long",
    }
    for path, why in cases.items():
        assert_error(c.post("/index", json={"path": path}), 403, "UnsafePathError", why)
    assert not any(j.path.startswith(str(tmp / "outside")) for j in site["service"].jobs())


def test_body_size_limit_is_413(site):
    c = site["client"]
    big = json.dumps({"path": "a" * (256 * 1024)}).encode()
    assert_error(c.post("/index", content=big, headers={"content-type": "application/json"}),
                 413, "ConfigError", "at most 262144 bytes")

    def chunks():  # no Content-Length: the limit applies while the body streams in
        for _ in range(40):
            yield b"x" * 8192

    assert_error(c.post("/ask", content=chunks(), headers={"content-type": "application/json"}),
                 413, "ConfigError", "too large")
    small = json.dumps({"path": "a" * 1000}).encode()
    assert c.post("/index", content=small, headers={"content-type": "application/json"}).status_code == 403


def test_a_rerun_attaches_another_repo_queues_and_queries_keep_working(site):
    """A job blocked mid-embedding (its files are all keyword-searchable by then): indexing the
    same repo again returns that job (attach), another repo's job is accepted and runs once the
    page in flight is written, search/status still answer, and the repo being indexed cannot be
    removed; once released, both jobs finish."""
    c, tmp, service = site["client"], site["tmp"], site["service"]
    slow = make_repo(tmp / "work" / "slow")
    (slow / "extra.py").write_text("def unique_marker_function():\n    return 42\n")
    embedder = service.session().embedder
    gate, entered = threading.Event(), threading.Event()
    original = embedder.embed_documents

    def gated(texts):
        entered.set()
        assert gate.wait(30)
        return original(texts)

    embedder.embed_documents = gated
    try:
        job = c.post("/index", json={"path": str(slow)}).json()
        assert entered.wait(30)
        again = c.post("/index", json={"path": str(slow)})
        assert again.status_code == 202 and again.json()["id"] == job["id"]  # attached, not "already running"
        other = c.post("/index", json={"path": str(site["repo"])})
        assert other.status_code == 202 and other.json()["id"] != job["id"]
        running = c.get(f"/jobs/{job['id']}").json()
        assert running["state"] == "running" and running["phase"] == "embedding" and running["searchable"]
        assert running["files_total"] == 3 and running["report"]["files_indexed"] == 3
        found = c.get("/search", params={"q": "unique_marker_function", "repo": "slow"}).json()
        assert found["hits"][0]["symbol"] == "unique_marker_function" and found["partial"]
        assert c.get("/search", params={"q": "compute_retry_delay"}).json()["hits"]
        assert any(j["state"] == "running" for j in c.get("/status").json()["jobs"])
        assert_error(c.delete("/repos/slow"), 409, "IndexBusyError", "being indexed")
    finally:
        gate.set()
        embedder.embed_documents = original
    assert wait_job(c, job["id"])["state"] == "done"
    assert wait_job(c, other.json()["id"])["state"] == "done"
    found = c.get("/search", params={"q": "unique_marker_function", "repo": "slow"}).json()
    assert found["hits"][0]["symbol"] == "unique_marker_function" and not found["partial"]


# -- auth, docs, binding ----------------------------------------------------------------------------

def test_bearer_token_is_required_on_every_request(site):
    url = site["locked"]
    for path in ("/search?q=retry", "/status", "/openapi.json", "/health", "/jobs/j1", "/repos/proj"):
        assert_error(httpx.get(url + path), 401, "AuthError", "bearer token")
        assert_error(httpx.get(url + path, headers={"Authorization": "Bearer wrong"}), 401, "AuthError")
        assert_error(httpx.get(url + path, headers={"Authorization": TOKEN}), 401, "AuthError")
    assert httpx.get(url + "/status").headers["www-authenticate"] == "Bearer"
    ok = httpx.get(url + "/search", params={"q": "retry"}, headers={"Authorization": f"Bearer {TOKEN}"})
    assert ok.status_code == 200 and ok.json()["hits"]
    # the unauthenticated body is refused before it is read
    res = httpx.post(url + "/index", content=b"x" * 100_000)
    assert res.status_code == 401
    # the page's shell holds no indexed data: it is served without the token, and asks for it
    for path in ("/", "/docs", "/assets/app.js", "/assets/search.js", "/assets/page.css", "/assets/highlight.css"):
        res = httpx.get(url + path)
        assert res.status_code == 200, path
        assert "retry" not in res.text and "proj" not in res.text, path
    assert_error(httpx.post(url + "/"), 401, "AuthError")  # only GET is public
    assert_error(httpx.get(url + "/assets/../status"), 401, "AuthError")


def test_loopback_server_refuses_foreign_host_names(site):
    """DNS rebinding: a page at evil.example resolving to 127.0.0.1 sends Host: evil.example."""
    url = site["url"]
    for host in ("evil.example", "evil.example:8765", "192.168.1.5", "[2001:db8::1]:80", ""):
        res = httpx.get(url + "/search", params={"q": "retry"}, headers={"Host": host})
        assert_error(res, 421, "ConfigError", "loopback host names")
    port = url.rsplit(":", 1)[1]
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}", "LOCALHOST"):
        assert httpx.get(url + "/health", headers={"Host": host}).status_code == 200, host


def test_cross_site_pages_change_nothing(site, llm):
    """Issue 40, finding 5: a page on another site POSTs to /index and /ask (a form, a no-cors
    fetch, or JSON from a lenient client). Before the fix the JSON one started a job (202) and
    only FastAPI's content-type check stopped the form and text/plain ones."""
    url, service, tmp = site["url"], site["service"], site["tmp"]
    target = make_repo(tmp / "work" / "cross")
    port = url.rsplit(":", 1)[1]
    body = json.dumps({"path": str(target), "repo_id": "cross"})
    asked = len(llm.chat_requests())
    attempts = [
        ({"Origin": "http://evil.example", "Content-Type": "application/json"}, body),
        ({"Origin": "http://evil.example", "Content-Type": "text/plain"}, body),
        ({"Origin": "http://evil.example", "Content-Type": "application/x-www-form-urlencoded"},
         "path=" + str(target)),
        ({"Origin": "null", "Content-Type": "application/json"}, body),  # a sandboxed frame, a file: page
        ({"Origin": f"http://localhost:{int(port) + 1}", "Content-Type": "application/json"}, body),  # another port
        ({"Origin": f"https://127.0.0.1:{port}", "Content-Type": "application/json"}, body),  # another scheme
        ({"Sec-Fetch-Site": "cross-site", "Content-Type": "application/json"}, body),
        ({"Sec-Fetch-Site": "same-site", "Content-Type": "application/json"}, body),
    ]
    for headers, data in attempts:
        assert_error(httpx.post(url + "/index", headers=headers, content=data), 403, "AuthError", "another site")
        ask = json.dumps({"question": "how does retry work?"}) if "json" in headers["Content-Type"] else data
        assert_error(httpx.post(url + "/ask", headers=headers, content=ask), 403, "AuthError", "another site")
        assert_error(httpx.delete(url + "/repos/proj", headers=headers), 403, "AuthError")
    assert service.running_job() is None and len(llm.chat_requests()) == asked
    assert "cross" not in {r["repo"] for r in site["client"].get("/status").json()["index"]["repos"]}
    assert "proj" in {r["repo"] for r in site["client"].get("/status").json()["index"]["repos"]}
    # reads from anywhere are answered as before (no CORS header: the page cannot read them)
    res = httpx.get(url + "/search", params={"q": "retry"}, headers={"Origin": "http://evil.example"})
    assert res.status_code == 200 and "access-control-allow-origin" not in res.headers
    # the server's own page (same origin) and clients without the headers still work
    for headers in ({"Origin": f"http://127.0.0.1:{port}", "Sec-Fetch-Site": "same-origin"}, {}):
        job = httpx.post(url + "/index", json={"path": str(target), "repo_id": "cross"}, headers=headers)
        assert job.status_code == 202, job.text
        assert wait_job(site["client"], job.json()["id"])["state"] == "done"
    assert site["client"].delete("/repos/cross").status_code == 200


def test_openapi_document_and_docs(site):
    c = site["client"]
    doc = c.get("/openapi.json").json()
    assert {"/search", "/refs", "/index", "/status", "/ask", "/repos/{repo_id}", "/jobs/{job_id}"} <= set(doc["paths"])
    assert set(doc["paths"]["/repos/{repo_id}"]) == {"get", "delete"}
    params = {p["name"] for p in doc["paths"]["/search"]["get"]["parameters"]}
    assert params == {"q", "repo", "path", "lang", "role", "k", "mode", "offset", "limit", "highlight", "max_tokens",
                      "files"}
    docs = c.get("/docs")  # offline: a page of ours that reads /openapi.json, no CDN
    assert docs.status_code == 200 and "/openapi.json" in docs.text
    assert "swagger" not in docs.text.lower() and "//cdn" not in docs.text and "https://" not in docs.text


@pytest.mark.parametrize("args,needle", [
    (["--host", "0.0.0.0"], "--allow-remote"),
    (["--host", "192.0.2.1", "--allow-remote"], "RAG_SERVER_TOKEN"),
    (["--host", "::", "--allow-remote", "--token", "short"], "at least 16"),
])
def test_serve_refuses_non_loopback_without_flag_and_token(args, needle, isolated_env, capsys):
    with pytest.raises(SystemExit) as info:
        main(["serve", *args, "--port", "0"])
    assert info.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and needle in err and "Traceback" not in err
    assert not (isolated_env / "data").exists()  # refused before the index is touched
