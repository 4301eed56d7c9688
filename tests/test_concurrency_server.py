"""The HTTP server under parallel clients, while it re-indexes: no request fails.

A real ``codeseam serve`` subprocess (fake embedder) over a small git repository; 8 client
threads, each with its own connection, search in a loop, first on a steady index, then while a
background job re-indexes the changed tree. The full figure (8 x 200, bundled model, p50/p95)
is bench/bench_reliability.py's.
"""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.test_crash import ROOT, cli_command, finish, make_tree, run_env

QUERIES = ["parse a configuration file", "generated function value", "read lines from a stream",
           "compute a checksum", "format a date", "copy a file"]


def start_server(env: dict) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([*cli_command(), "serve", "--port", "0"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if " at http" in line:
            threading.Thread(target=proc.stderr.read, daemon=True).start()
            return proc, line.split(" at ")[1].split()[0]
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise AssertionError("codeseam serve did not start")


def hammer(url: str, clients: int, per_client: int) -> tuple[list[float], list[str]]:
    latencies: list[float] = []
    errors: list[str] = []

    def client(no: int) -> None:
        with httpx.Client(base_url=url, timeout=120) as c:
            for i in range(per_client):
                t = time.perf_counter()
                try:
                    r = c.get("/search", params={"q": QUERIES[(no + i) % len(QUERIES)], "k": 8})
                    if r.status_code != 200 or not r.json()["hits"]:
                        errors.append(f"{r.status_code} {r.text[:200]}")
                except httpx.HTTPError as exc:
                    errors.append(repr(exc))
                latencies.append(time.perf_counter() - t)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    return latencies, errors


@pytest.mark.slow
def test_eight_clients_search_without_errors_while_the_server_reindexes(tmp_path: Path):
    root = make_tree(tmp_path / "served", 12)
    data = tmp_path / "data"
    finish(root, data)
    # freshness "check": the searches only flag changed files, so the re-index job is the one
    # writer and its report is exact (with "sync", a search under load may sync the changed files
    # before the job reaches them, and the job then rightly finds nothing left to index)
    server, url = start_server(run_env(data, RAG_FRESHNESS="check"))
    try:
        latencies, errors = hammer(url, 8, 25)
        assert errors == [] and len(latencies) == 200
        for p in sorted((root / "lib").rglob("*.py"))[:6]:
            p.write_text(p.read_text() + "\ndef added_while_serving():\n    return 1\n")
        (root / "generated" / "many_functions.py").unlink()
        with httpx.Client(base_url=url, timeout=120) as c:
            job = c.post("/index", json={"path": str(root)}).json()
            busy_latencies, busy_errors = hammer(url, 8, 15)
            while job["state"] == "running":
                time.sleep(0.2)
                job = c.get(f"/jobs/{job['id']}").json()
        assert job["state"] == "done", job
        assert job["report"]["files_indexed"] == 6 and job["report"]["files_deleted"] == 1
        assert busy_errors == [] and len(busy_latencies) == 120
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
