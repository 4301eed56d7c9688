"""The CLI's keep-alive owner of a Milvus Lite index (owner/keepalive.py) and `serve --idle-exit`.

Every process is the real entry point in a subprocess on a temp data dir with the fake
embedder; every test stops the servers it started (fixture ``box``)."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import httpx
import pytest

from codeseam import api, owner
from codeseam.errors import ConfigError, UnsafePathError
from codeseam.owner import keepalive
from codeseam.settings import load_settings

CLI = [sys.executable, "-m", "codeseam.surfaces.cli"]
RETRY_PY = textwrap.dedent('''\
    def compute_retry_delay(attempt, base=0.5, cap=30.0):
        """Exponential backoff with full jitter: the delay before retry number ``attempt``,
        doubling from ``base`` seconds and never above ``cap`` seconds."""
        delay = base * 2 ** attempt
        return min(cap, delay)


    def parse_header_line(line):
        """Split a 'Name: value' header line into its name and its value, both stripped of
        surrounding white space; a line without a colon is a name with an empty value."""
        name, _, value = line.partition(":")
        return name.strip(), value.strip()
    ''')
HEAVY = ["numpy", "pymilvus", "milvus_lite", "onnxruntime", "tokenizers", "tree_sitter", "torch", "fastapi",
         "codeseam.store", "codeseam.api"]


@pytest.fixture
def box(tmp_path: Path):
    (tmp_path / "cfg.toml").write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAG_")}
    env.update(RAG_DATA_DIR=str(tmp_path / "data"), RAG_EMBEDDING_BACKEND="fake", RAG_KEEPALIVE="30",
               RAG_CONFIG=str(tmp_path / "cfg.toml"), HF_HUB_OFFLINE="1")
    src = str(Path(__file__).resolve().parents[1] / "src")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH", "")) if p)
    work = tmp_path / "work"
    repo = work / "proj"
    repo.mkdir(parents=True)
    (repo / "retry.py").write_text(RETRY_PY)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    settings = load_settings(env=env)
    api.index(repo, settings=settings.replace(keepalive=0))
    b = {"env": env, "work": work, "repo": repo, "settings": settings, "pids": set(),
         "server_file": owner.server_file(settings)}
    yield b
    # teardown: no server outlives its test
    info = owner.read_server_file(settings)
    for pid in b["pids"] | ({info.pid} if info else set()):
        _end(pid)


def _end(pid: int) -> None:
    for sig, wait in ((signal.SIGTERM, 20.0), (signal.SIGKILL, 5.0)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        if wait_dead(pid, wait):
            return


def wait_dead(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not owner.alive(pid):
            return True
        time.sleep(0.05)
    return False


def cli(box, *args: str, timeout: float = 120, **env: str) -> subprocess.CompletedProcess:
    res = subprocess.run([*CLI, *args], cwd=box["work"], env={**box["env"], **env}, capture_output=True,
                         text=True, timeout=timeout)
    assert "Traceback" not in res.stderr, res.stderr
    server = owner.read_server_file(box["settings"])
    if server is not None:
        box["pids"].add(server.pid)
    return res


def hits(res: subprocess.CompletedProcess) -> list[tuple]:
    assert res.returncode == 0, res.stderr
    return [(h["path"], h["start_line"], h["end_line"], h["symbol"]) for h in json.loads(res.stdout)["hits"]]


def through_pid(stderr: str) -> int | None:
    """The pid of the server a `-v` CLI call went through (None: it opened the index itself)."""
    for line in stderr.splitlines():
        if line.endswith(": going through it"):
            return int(line.rsplit("(pid ", 1)[1].split(")")[0])
    return None


def live(box) -> owner.ServerInfo:
    info = owner.live_server(box["settings"])
    assert info is not None and info.keepalive, info
    return info


def test_first_call_starts_a_keepalive_server_that_later_calls_share_and_stop_ends(box):
    direct = cli(box, "-v", "search", "compute_retry_delay", "--json", RAG_KEEPALIVE="0")
    assert through_pid(direct.stderr) is None and not box["server_file"].exists()

    first = cli(box, "-v", "search", "compute_retry_delay", "--json")
    assert hits(first) == hits(direct)  # the same answer as opening the index here
    info = live(box)
    assert "started a keep-alive server" in first.stderr and through_pid(first.stderr) == info.pid
    assert info.keepalive == 30 and info.fingerprint == keepalive.fingerprint(box["settings"])
    sock = Path(info.socket)
    assert stat.S_ISSOCK(sock.stat().st_mode) and stat.S_IMODE(sock.stat().st_mode) == 0o600
    assert stat.S_IMODE(sock.parent.stat().st_mode) == 0o700  # only this user reaches it
    assert stat.S_IMODE(box["server_file"].stat().st_mode) == 0o600
    assert "keep-alive server (pid" in Path(info.log).read_text()

    second = cli(box, "-v", "search", "parse_header_line", "--json")
    assert through_pid(second.stderr) == info.pid and "started a keep-alive" not in second.stderr
    assert hits(second)[0][3] == "parse_header_line"

    status = json.loads(cli(box, "status", "--json").stdout)
    assert status["server"]["kind"] == "keep-alive" and status["server"]["pid"] == info.pid
    assert [r["repo"] for r in status["repos"]] == ["proj"]
    assert f"keep-alive pid {info.pid}" in cli(box, "status").stdout

    # writes go through it too: a new file is indexed by the server, then found
    (box["repo"] / "merge.py").write_text("def merge_sorted_runs(a, b):\n    return sorted(a + b)\n")
    res = cli(box, "-v", "index", str(box["repo"]))
    assert res.returncode == 0 and res.stdout.startswith("proj: 1 files indexed, 1 unchanged"), res.stderr
    assert through_pid(res.stderr) == info.pid
    assert hits(cli(box, "search", "merge_sorted_runs", "--json"))[0][:2] == ("merge.py", 1)

    res = cli(box, "stop")
    assert res.returncode == 0 and res.stdout.strip() == f"stopped the keep-alive server (pid {info.pid})"
    assert wait_dead(info.pid, 10) and not box["server_file"].exists() and not sock.exists()
    assert "no codeseam server holds" in cli(box, "stop").stdout
    line = cli(box, "status", RAG_KEEPALIVE="0").stdout.splitlines()[-1]
    assert line.startswith("server:    none; keep-alive off")
    assert hits(cli(box, "search", "merge_sorted_runs", "--json", RAG_KEEPALIVE="0"))[0][0] == "merge.py"


def test_racing_calls_start_exactly_one_server(box):
    procs = [subprocess.Popen([*CLI, "-v", "search", "retry delay", "--json"], cwd=box["work"], env=box["env"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    outs = [p.communicate(timeout=180) for p in procs]
    box["pids"].add(live(box).pid)
    assert all(p.returncode == 0 for p in procs), [e for _, e in outs]
    pids = {through_pid(err) for _, err in outs}
    assert pids == {live(box).pid}  # every call went through the one server
    assert sum("started a keep-alive server" in err for _, err in outs) == 1
    assert len({json.dumps(json.loads(out)["hits"]) for out, _ in outs}) == 1


def test_idle_server_exits_by_itself_and_the_next_call_starts_another(box):
    res = cli(box, "-v", "search", "compute_retry_delay", "--json", RAG_KEEPALIVE="1.5")
    first = through_pid(res.stderr)
    assert first is not None and hits(res)
    assert wait_dead(first, 30), "the keep-alive server did not exit when idle"
    assert not box["server_file"].exists()
    log = Path(keepalive.log_path(box["settings"])).read_text()
    assert "no request for 1.5 s and no indexing job: exiting" in log
    res = cli(box, "-v", "search", "compute_retry_delay", "--json", RAG_KEEPALIVE="1.5")
    second = through_pid(res.stderr)
    assert second not in (None, first) and hits(res)


def test_a_killed_server_leaves_nothing_that_blocks_the_next_call(box):
    res = cli(box, "-v", "search", "compute_retry_delay", "--json")
    pid = through_pid(res.stderr)
    os.kill(pid, signal.SIGKILL)
    assert wait_dead(pid, 10)
    assert box["server_file"].exists()  # stale: its process is gone
    res = cli(box, "-v", "search", "compute_retry_delay", "--json")
    assert through_pid(res.stderr) not in (None, pid) and hits(res)


def test_a_server_that_cannot_start_falls_back_to_opening_the_index(box):
    # the index holds 64-d vectors: a server with 32-d settings refuses to open it
    res = cli(box, "search", "compute_retry_delay", RAG_EMBEDDING_DIM="32")
    assert res.returncode == 1 and res.stdout == ""
    note, error = res.stderr.strip().split("\n", 1)
    assert note.startswith("codeseam: the keep-alive server did not start (it exited with code 1: ")
    assert note.endswith("; opening the index directly") and "fake:32" in note
    assert error.startswith("error: ") and "rebuild" in error  # the direct path's own message
    assert owner.live_server(box["settings"]) is None


def test_rebuild_stops_the_keepalive_server_and_rebuilds_here(box):
    res = cli(box, "-v", "search", "compute_retry_delay", "--json")
    pid = through_pid(res.stderr)
    res = cli(box, "-v", "index", str(box["repo"]), "--rebuild")
    assert res.returncode == 0 and res.stdout.startswith("proj: 1 files indexed"), res.stderr
    assert "--rebuild drops the whole index" in res.stderr and through_pid(res.stderr) is None
    assert wait_dead(pid, 10)
    res = cli(box, "-v", "search", "compute_retry_delay", "--json")
    assert through_pid(res.stderr) not in (None, pid) and hits(res)[0][3] == "compute_retry_delay"


def test_a_call_with_other_settings_replaces_an_idle_server(box):
    res = cli(box, "-v", "search", "retry", "--json")
    pid = through_pid(res.stderr)
    assert len(hits(res)) == 2
    res = cli(box, "-v", "search", "retry", "--json", RAG_K="1")
    assert "it was started with other settings" in res.stderr
    assert through_pid(res.stderr) not in (None, pid) and len(hits(res)) == 1
    assert wait_dead(pid, 10)


def test_an_allow_pattern_with_a_comma_reaches_the_server_whole(box):
    """Settings reach the keep-alive server as they are: an allow pattern holding a comma used to
    arrive split in two, so the fingerprints differed and every call restarted the server."""
    (box["work"].parent / "cfg.toml").write_text('scrub_allow = ["AKIA[0-9]{4,8}"]\n')
    first = cli(box, "-v", "search", "compute_retry_delay", "--json")
    pid = through_pid(first.stderr)
    assert pid is not None and hits(first)[0][3] == "compute_retry_delay"
    second = cli(box, "-v", "search", "parse_header_line", "--json")
    assert "started with other settings" not in second.stderr
    assert through_pid(second.stderr) == pid and hits(second)[0][3] == "parse_header_line"
    assert owner.read_server_file(box["settings"]).fingerprint == keepalive.fingerprint(
        load_settings(env=box["env"]))


def test_a_relative_data_dir_means_the_same_index_to_the_server(box):
    """A relative RAG_DATA_DIR is read from the caller's folder: the keep-alive server runs there
    too, so it opens the caller's index (it used to start in the index's folder, open a second,
    empty index below it and never answer: each call waited RAG_KEEPALIVE seconds for it)."""
    def search(query: str) -> subprocess.CompletedProcess:  # from the folder that holds data/
        res = subprocess.run([*CLI, "-v", "search", query, "--json"], cwd=box["work"].parent,
                             env={**box["env"], "RAG_DATA_DIR": "data"}, capture_output=True, text=True, timeout=120)
        box["pids"].update(p for p in [through_pid(res.stderr)] if p)
        return res

    first = search("compute_retry_delay")
    assert "did not start" not in first.stderr and hits(first)[0][3] == "compute_retry_delay"
    pid = through_pid(first.stderr)
    assert pid is not None and pid == live(box).pid
    second = search("parse_header_line")
    assert through_pid(second.stderr) == pid and hits(second)[0][3] == "parse_header_line"
    assert not (box["work"].parent / "data" / "data").exists()


def test_search_through_the_server_imports_no_heavy_module(box):
    cli(box, "search", "retry")  # starts the server
    live(box)
    probe = ("import sys, json\nfrom codeseam.surfaces.cli import main\n"
             "main(['search', 'compute_retry_delay', '--json'])\n"
             f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=box["work"], env=box["env"], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    first, last = out.stdout.strip().splitlines()[0], out.stdout.strip().splitlines()[-1]
    assert json.loads(first)["hits"][0]["symbol"] == "compute_retry_delay"
    assert json.loads(last) == []


def test_mcp_through_a_keepalive_server_keeps_its_allowed_roots_and_the_server_alive(box, tmp_path):
    cli(box, "search", "retry", RAG_KEEPALIVE="1.5")
    info = live(box)
    outside = tmp_path / "outside"
    outside.mkdir()
    svc = owner.RemoteIndex(info, box["settings"], cwd=str(box["work"])).open()
    try:
        with pytest.raises(UnsafePathError, match="outside the allowed roots"):
            svc.start_index(str(outside))
        job = svc.start_index("proj")  # under its working directory: forwarded
        deadline = time.monotonic() + 60
        while svc.job(job.id).state == "running" and time.monotonic() < deadline:
            time.sleep(0.1)
        assert svc.job(job.id).state == "done"
        time.sleep(4)  # idle for longer than its idle exit, but the MCP session pings it
        assert owner.alive(info.pid)
    finally:
        svc.close()
    assert wait_dead(info.pid, 20)  # once the session ends it idles out


def test_an_explicit_serve_takes_over_from_a_keepalive_server(box):
    cli(box, "search", "retry")
    old = live(box)
    proc = subprocess.Popen([*CLI, "serve", "--port", "0"], cwd=box["work"], env=box["env"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    box["pids"].add(proc.pid)
    try:
        deadline = time.monotonic() + 60
        while (info := owner.live_server(box["settings"])) is None or info.pid != proc.pid:
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
            time.sleep(0.05)
        assert not info.keepalive and info.url.startswith("http://127.0.0.1:") and not owner.alive(old.pid)
        res = cli(box, "-v", "search", "compute_retry_delay", "--json")
        assert through_pid(res.stderr) == proc.pid and hits(res)[0][3] == "compute_retry_delay"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert f"stopping the keep-alive server (pid {old.pid})" in proc.stderr.read()


def test_serve_idle_exit_waits_for_a_running_job_and_delete_stops_it(box):
    (box["repo"] / "slow.py").write_text("def slow_one():\n    return 1\n")
    env = {**box["env"], "RAG_KEEPALIVE": "0", "CODESEAM_FAULTS": "chunk:1=sleep:4"}
    proc = subprocess.Popen([*CLI, "serve", "--port", "0", "--idle-exit", "1"], cwd=box["work"], env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    box["pids"].add(proc.pid)
    try:
        deadline = time.monotonic() + 60
        while (info := owner.live_server(box["settings"])) is None:
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
            time.sleep(0.05)
        assert info.url.startswith("http://127.0.0.1:") and not info.keepalive  # an explicit serve: TCP
        job = httpx.post(info.url + "/index", json={"path": str(box["repo"])}).json()
        time.sleep(2.5)  # idle for longer than --idle-exit, but a job runs
        assert proc.poll() is None
        assert httpx.get(info.url + "/health").json()["job"] == job["id"]
        stopped = httpx.delete(f"{info.url}/jobs/{job['id']}").json()
        assert stopped["id"] == job["id"]
        code = proc.wait(timeout=30)  # the job stops at its next file, then the server idles out
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 0, proc.stderr.read()
    assert not box["server_file"].exists()
    assert "no request for 1 s and no indexing job: exiting" in proc.stderr.read()


def test_when_the_cli_starts_a_server():
    env = {"RAG_CONFIG": os.devnull, "RAG_DATA_DIR": "/nonexistent-codeseam"}
    s = load_settings(env=env)
    assert s.keepalive > 0  # on by default
    assert not keepalive.wanted(s, "search")  # no index yet: nothing to keep alive
    assert keepalive.wanted(s, "index")  # indexing creates it
    assert not keepalive.wanted(s, "rebuild")  # runs here (a dry run never asks: it touches no index)
    assert not keepalive.wanted(s.replace(keepalive=0), "index")
    assert not keepalive.wanted(s.replace(milvus_uri="http://milvus:19530"), "index")
    assert keepalive.fingerprint(s) == keepalive.fingerprint(s.replace(keepalive=5, server_token="x"))
    assert keepalive.fingerprint(s) != keepalive.fingerprint(s.replace(k=3))
    with pytest.raises(ConfigError, match="keepalive"):
        load_settings(env={**env, "RAG_KEEPALIVE": "-1"})
