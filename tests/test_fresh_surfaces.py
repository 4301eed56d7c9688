"""Freshness through every surface: the CLI (through its keep-alive server, and one-shot), MCP
over stdio, HTTP, and `codeseam watch`; real git repos, real processes and file events, the
fake embedder. Each runs the scenario of tests/support/fresh.py (or part of it) and checks
what `status` says of the repo's mode."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx
import pytest

from tests.support.fixtures import isolated_git  # noqa: F401 - autouse
from tests.support.fresh import Scenario, make_repo
from tests.test_crash import ROOT, cli_command, compare, run_env
from tests.test_fresh_e2e import clean_inspect


def cli(args: list[str], env: dict, *, timeout: float = 180) -> subprocess.CompletedProcess:
    out = subprocess.run([*cli_command(), *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr[-3000:]
    return out


def cli_search(env: dict):
    return lambda q: json.loads(cli(["search", q, "-k", "8", "--json"], env).stdout)


def test_cli_through_the_keepalive_server(tmp_path):
    root = make_repo(tmp_path / "proj")
    env = run_env(tmp_path / "data", RAG_KEEPALIVE="60")
    try:
        cli(["index", str(root)], env)
        status = json.loads(cli(["status", "--json"], env).stdout)
        assert status["server"]["kind"] == "keep-alive"
        assert status["repos"][0]["freshness"]["mode"] == "watch", status
        Scenario(root, cli_search(env)).run_all()
        assert "freshness: watch" in cli(["status"], env).stdout
    finally:
        subprocess.run([*cli_command(), "stop"], cwd=ROOT, env=env, capture_output=True, timeout=120)
    got = json.loads(cli(["inspect", "proj", "--json"], {**env, "RAG_KEEPALIVE": "0"}).stdout)
    assert compare(got, clean_inspect(root, tmp_path / "clean", "proj")) == {}


def test_cli_one_shot_stat_scans(tmp_path):
    root = make_repo(tmp_path / "proj")
    env = run_env(tmp_path / "data")  # RAG_KEEPALIVE=0: each command opens the index itself
    cli(["index", str(root)], env)
    scenario = Scenario(root, cli_search(env))
    scenario.insert_lines_above()
    scenario.add_file()
    scenario.rename()
    scenario.delete()
    status = json.loads(cli(["status", "--json"], env).stdout)
    assert status["repos"][0]["freshness"]["mode"] == "scan"
    assert "one-shot" in status["repos"][0]["freshness"]["note"]


def mcp_env(tmp: Path) -> dict:
    (tmp / "cfg.toml").write_text("")
    env = {"RAG_DATA_DIR": str(tmp / "data"), "RAG_EMBEDDING_BACKEND": "fake", "RAG_CONFIG": str(tmp / "cfg.toml"),
           "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT / "src")}
    for name in ("HOME", "PATH", "LANG", "TMPDIR", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def test_mcp_over_stdio(tmp_path):
    from mcp import Client, StdioServerParameters

    root = make_repo(tmp_path / "proj")
    params = StdioServerParameters(command=sys.executable, args=["-m", "codeseam.surfaces.cli", "mcp"],
                                   env=mcp_env(tmp_path), cwd=str(tmp_path))
    seen: dict = {}

    async def session() -> None:
        async with Client(params, mode="legacy", read_timeout_seconds=120) as client:
            job = await client.call_tool("index_repo", {"path": str(root), "wait": True})
            assert not job.is_error and job.structured_content["state"] == "done"

            def search(q: str) -> dict:
                res = anyio.from_thread.run(client.call_tool, "search_code", {"query": q, "k": 8})
                assert not res.is_error, res
                return res.structured_content

            await anyio.to_thread.run_sync(Scenario(root, search).run_all)
            status = await client.call_tool("get_status", {})
            seen["status"] = status.structured_content
            seen["text"] = "\n".join(c.text for c in status.content if c.type == "text")

    anyio.run(session)
    assert seen["status"]["index"]["repos"][0]["freshness"]["mode"] == "watch"
    assert "freshness watch" in seen["text"]


def test_http(tmp_path):
    from codeseam.service import Service
    from codeseam.settings import load_settings
    from codeseam.surfaces.http import create_app
    from tests.test_http import running, wait_job

    root = make_repo(tmp_path / "proj")
    settings = load_settings({"embedding_backend": "fake", "data_dir": str(tmp_path / "data"), "keepalive": 0},
                             env={"RAG_CONFIG": os.devnull})
    service = Service(settings, cwd=tmp_path).open()
    try:
        with running(create_app(service)) as url, httpx.Client(base_url=url, timeout=120) as client:
            job = client.post("/index", json={"path": str(root)}).json()
            assert wait_job(client, job["id"])["state"] == "done"

            def search(q: str) -> dict:
                res = client.get("/search", params={"q": q, "k": 8})
                assert res.status_code == 200, res.text
                return res.json()

            Scenario(root, search).run_all()
            repos = client.get("/status").json()["index"]["repos"]
            assert repos[0]["freshness"] == {"mode": "watch", "note": ""}
    finally:
        service.close()


def test_watch_command_prints_a_line_per_sync_and_stops_cleanly(tmp_path):
    root = make_repo(tmp_path / "proj")
    env = run_env(tmp_path / "data")
    proc = subprocess.Popen([*cli_command(), "watch", str(root)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline()
        assert "proj: 3 files, 3 chunks embedded" in first, first + proc.stderr.read(2000)
        (root / "pkg" / "added.py").write_text("def added_while_watching():\n    return 1\n")
        line = proc.stdout.readline()
        assert "proj: 1 files, 1 chunks embedded" in line and line.rstrip().endswith(" s"), line
        found = json.loads(cli(["search", "added_while_watching", "--json"], env).stdout)  # through `watch`
        assert found["hits"][0]["path"] == "pkg/added.py" and not found["hits"][0]["stale"]
        status = json.loads(cli(["status", "--json"], env).stdout)
        assert status["server"]["kind"] == "watch" and status["repos"][0]["freshness"]["mode"] == "watch"
        (root / "pkg" / "vocab.py").unlink()
        line = proc.stdout.readline()
        assert "1 files (1 removed), 0 chunks embedded" in line, line
        for i in range(40):  # a burst; stopped while it syncs, nothing may be left half-written
            (root / "pkg" / f"burst_{i}.py").write_text("".join(f"def burst_{i}_{j}():\n    return {j}\n\n\n"
                                                                for j in range(30)))
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-2000:]
    assert "stopped; the index is consistent" in err and "Traceback" not in err
    # what the interrupted sync left, the next one finishes: then the index equals a clean build
    cli(["index", str(root)], env)
    got = json.loads(cli(["inspect", "proj", "--json"], env).stdout)
    assert compare(got, clean_inspect(root, tmp_path / "clean", "proj")) == {}


@pytest.mark.skipif(sys.platform != "linux" or shutil.which("unshare") is None,
                    reason="needs a user namespace to lower the inotify watch limit")
def test_a_watch_limit_falls_back_to_the_stat_scan_and_says_so(tmp_path):
    """The whole CLI flow in a user namespace whose inotify limit is 1 watch: the keep-alive
    server cannot watch the repo, `status` says why, and searches are still fresh (the stat
    scan)."""
    from tests.test_fresh_watch import unshare_works

    if not unshare_works():
        pytest.skip("user namespaces are not available here")
    root = make_repo(tmp_path / "proj")
    env = run_env(tmp_path / "data", RAG_KEEPALIVE="60")
    exe = " ".join(cli_command())
    script = f"""
        set -e
        echo 1 > /proc/sys/user/max_inotify_watches
        {exe} index {root} > /dev/null
        {exe} status --json > {tmp_path}/status.json
        printf 'def added_under_the_limit():\\n    return 1\\n' > {root}/pkg/limit.py
        {exe} search added_under_the_limit --json > {tmp_path}/search.json
        {exe} stop > /dev/null
    """
    out = subprocess.run(["unshare", "-U", "-r", "sh", "-c", script], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    fresh = json.loads((tmp_path / "status.json").read_text())["repos"][0]["freshness"]
    assert fresh["mode"] == "scan" and "inotify watch limit is reached" in fresh["note"], fresh
    hits = json.loads((tmp_path / "search.json").read_text())["hits"]
    assert hits[0]["path"] == "pkg/limit.py" and not hits[0]["stale"]


def without_dac_override() -> list[str]:
    """A prefix that runs a command without root's permission override (so a mode-000 file is
    unreadable to it, as to any user); nothing when not root."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: a mode-000 file stays readable")
    caps = "-dac_override,-dac_read_search"
    return ["setpriv", f"--inh-caps={caps}", f"--bounding-set={caps}"]


def test_a_file_that_becomes_unreadable_or_binary_gets_a_note_in_status_and_the_hit(tmp_path):
    root = make_repo(tmp_path / "proj")
    env = run_env(tmp_path / "data")
    prefix = without_dac_override()

    def run(args: list[str], **extra: str) -> dict:
        out = subprocess.run([*prefix, *cli_command(), *args, "--json"], cwd=ROOT, env={**env, **extra},
                             capture_output=True, text=True, timeout=180)
        assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr[-3000:]
        return json.loads(out.stdout)

    run(["index", str(root)])
    (root / "pkg" / "other.py").chmod(0)
    (root / "pkg" / "vocab.py").write_bytes(b"def placeholder_vocabulary():\n    return b'\x00\x01'\n")
    try:
        checked = run(["search", "unrelated_helper placeholder_vocabulary", "-k", "8"], RAG_FRESHNESS="check")
        by_path = {h["path"]: h for h in checked["hits"]}
        assert by_path["pkg/other.py"]["stale"] and "cannot be read now (Permission denied)" in by_path["pkg/other.py"]["note"]
        assert by_path["pkg/vocab.py"]["stale"] and "binary" in by_path["pkg/vocab.py"]["note"]
        assert by_path["pkg/vocab.py"]["current_lines"] is None
        synced = run(["search", "unrelated_helper placeholder_vocabulary", "-k", "8"])
        assert not {"pkg/other.py", "pkg/vocab.py"} & {h["path"] for h in synced["hits"]}  # they left the index
        note = run(["status"])["repos"][0]["freshness"]["note"]
        assert "2 indexed files left the index" in note and "pkg/other.py (unreadable" in note, note
        assert "pkg/vocab.py (binary" in note
    finally:
        (root / "pkg" / "other.py").chmod(0o644)
    (root / "pkg" / "vocab.py").write_text("def placeholder_vocabulary():\n    return []\n")
    back = run(["search", "unrelated_helper placeholder_vocabulary", "-k", "8"])
    assert {"pkg/other.py", "pkg/vocab.py"} <= {h["path"] for h in back["hits"]}
    assert "left the index" not in run(["status"])["repos"][0]["freshness"]["note"]
