"""Issue 40, finding 4: indexing a folder that holds the index's own data dir.

Milvus Lite's server exits when the lock on ``.index.db.lock`` is released (the milvus-lite
protocol). Held as a POSIX record lock, any open-and-close of that file by the same process
(discovery's sniff of every file under the root) released it, and the store died. Now: the
data dir is never indexed (one ``index-data`` skip), the lock is an open-file-description
lock that no other open of the file can drop, a dead Lite process is reported truthfully and
reopened by a server, and ``/health`` says when the store is down. Real Milvus Lite, the
real CLI, a real uvicorn server on loopback.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from codeseam import api
from codeseam.errors import StoreError
from codeseam.service import Service
from codeseam.settings import load_settings
from codeseam.surfaces.http import create_app
from tests.test_crash import ROOT, cli_command, run_env
from tests.test_http import running, wait_job
from tests.test_keepalive import box, cli, hits, through_pid  # noqa: F401 - box: fixture

APP_PY = 'def main():\n    """Start the zqappmarker application."""\n    return 1\n'


def fake(data: Path, **extra) -> api.Settings:
    return load_settings({"embedding_backend": "fake", "data_dir": str(data), "keepalive": 0, **extra},
                         env={"RAG_CONFIG": os.devnull})


def make_root(tmp: Path) -> tuple[Path, Path]:
    """A plain folder with one source file and the index's data dir inside it."""
    root = tmp / "proj"
    root.mkdir()
    (root / "app.py").write_text(APP_PY)
    return root, root / "data"


def lite_pid(data: Path) -> int:
    record = json.loads((data / "index.db.lock").read_text())
    return int(record["server_pid"])


def found(ix) -> set[str]:
    return {h.path for h in ix.search("zqappmarker", k=5).hits}


def test_the_data_dir_under_the_root_is_skipped_and_the_store_stays_up(tmp_path):
    root, data = make_root(tmp_path)
    with api.Index(fake(data), create=True) as ix:
        report = ix.index(root)  # unfixed: the sniff of data/.index.db.lock dropped the lock
        assert found(ix) == {"app.py"}
        assert set(ix.inspect("proj")["files"]) == {"app.py"}
        skips = {s.path: (s.reason, s.detail) for s in report.skips}
        assert skips["data"][0] == "index-data" and str(data) in skips["data"][1]
        assert not [p for p in skips if p.startswith("data/")]
        again = ix.index(root)
        assert (again.files_indexed, again.chunks_written) == (0, 0)
        assert ix.store.alive()


def test_a_read_of_the_lock_file_in_the_same_process_cannot_drop_the_lock(tmp_path):
    """Whatever else in the process opens and closes the lock file, Lite stays up (the data
    dir lies outside the repo here: only the lock is under test)."""
    root, _ = make_root(tmp_path)
    data = tmp_path / "data"
    with api.Index(fake(data), create=True) as ix:
        ix.index(root)
        for name in (".index.db.lock", "index.db.lock"):
            with open(data / name, "rb") as fh:
                fh.read()
        time.sleep(1.5)  # the Lite server polls its lock
        assert found(ix) == {"app.py"}
        assert ix.store.alive()


def test_cli_index_of_the_folder_holding_the_data_dir(tmp_path):
    root, data = make_root(tmp_path)
    env = run_env(data)
    run = [*cli_command(), "index", str(root), "--json"]
    done = subprocess.run(run, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert {s["path"]: s["reason"] for s in report["skips"]}.get("data") == "index-data"
    assert report["files_indexed"] == 1
    search = subprocess.run([*cli_command(), "search", "zqappmarker", "--json"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=300)
    assert search.returncode == 0, search.stderr[-2000:]
    assert [h["path"] for h in json.loads(search.stdout)["hits"]] == ["app.py"]


def test_a_dead_lite_process_is_reported_truthfully(tmp_path):
    root, data = make_root(tmp_path)
    with api.Index(fake(data), create=True) as ix:
        ix.index(root)
        os.kill(lite_pid(data), signal.SIGKILL)
        time.sleep(0.5)
        with pytest.raises(StoreError) as caught:
            ix.search("zqappmarker")
        assert "Milvus Lite server process stopped" in caught.value.message
        assert "disk is full" not in (caught.value.hint or "")
        assert "again" in (caught.value.hint or "")


def test_serve_post_index_proc_self_cwd_holding_the_data_dir(tmp_path, monkeypatch):
    """The issue's reproduction over HTTP: serve's working folder holds the data dir, a local
    client posts ``/proc/self/cwd``. The store stays up; a dead Lite process is then reported
    by ``/health`` and reopened by the next request (no 503 forever)."""
    root, data = make_root(tmp_path)
    monkeypatch.chdir(root)
    service = Service(fake(data), cwd=root).open()
    try:
        with running(create_app(service)) as url, httpx.Client(base_url=url, timeout=60) as client:
            job = client.post("/index", json={"path": "/proc/self/cwd"})
            assert job.status_code == 202, job.text
            done = wait_job(client, job.json()["id"])
            assert done["state"] == "done", done
            search = client.get("/search", params={"q": "zqappmarker"})
            assert search.status_code == 200, search.text
            assert [h["path"] for h in search.json()["hits"]] == ["app.py"]
            health = client.get("/health").json()
            assert health["ok"] is True and health["store"] == "up", health

            os.kill(lite_pid(data), signal.SIGKILL)  # the store dies under the server
            deadline = time.monotonic() + 10
            while (health := client.get("/health").json())["store"] == "up":
                assert time.monotonic() < deadline, health
                time.sleep(0.05)
            assert health["ok"] is False and health["store"].startswith("down"), health
            search = client.get("/search", params={"q": "zqappmarker"})  # reopened, not 503
            assert search.status_code == 200, search.text
            assert [h["path"] for h in search.json()["hits"]] == ["app.py"]
            health = client.get("/health").json()
            assert health["ok"] is True and health["store"] == "up", health
    finally:
        service.close()


def test_the_keepalive_server_reopens_a_dead_lite_process(box):  # noqa: F811 - the fixture
    """The CLI's keep-alive server stayed broken until `codeseam stop` once its Lite process
    died; now the next call through it reopens the index."""
    first = cli(box, "-v", "search", "compute_retry_delay", "--json")
    server = through_pid(first.stderr)
    assert server is not None and hits(first)
    data = box["settings"].data_path
    lite = lite_pid(data)
    os.kill(lite, signal.SIGKILL)
    time.sleep(0.5)
    again = cli(box, "-v", "search", "compute_retry_delay", "--json")
    assert through_pid(again.stderr) == server, again.stderr  # the same server, not a new one
    assert hits(again) == hits(first)
    assert lite_pid(data) != lite
