"""`codeseam index` through the owner of the index (issue 43): it returns once every file is
keyword-searchable, the owner (here the CLI's keep-alive server) fills the vectors in behind,
a re-run attaches to the running job, `--wait` waits for every vector, and a killed owner's
work is finished by the next one, with exactly the rows a one-shot build gives.

Real processes: the CLI and the keep-alive server it starts, on a temp data dir, SIGKILLed where
a test says so; real Milvus Lite; the fake embedder, slowed by fault points (``embed=sleep``)
so that the background fill takes a few seconds."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from codeseam import api, owner
from codeseam.owner import keepalive
from codeseam.settings import load_settings
from tests.test_background import rows
from tests.test_keepalive import _end, wait_dead
from tests.test_partial import WORD, make_repo

CLI = [sys.executable, "-m", "codeseam.surfaces.cli"]
SLOW_PAGES = 60  # the pages of each process's fill sleep (more than the tree has): the fill lasts seconds
PAGE_SLEEP = 0.6


@pytest.fixture
def owned(tmp_path: Path):
    (tmp_path / "cfg.toml").write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "CODESEAM_"))}
    env.update(RAG_DATA_DIR=str(tmp_path / "data"), RAG_EMBEDDING_BACKEND="fake", RAG_KEEPALIVE="60",
               RAG_CONFIG=str(tmp_path / "cfg.toml"), HF_HUB_OFFLINE="1",
               CODESEAM_FAULTS=",".join(f"embed:{i}=sleep:{PAGE_SLEEP}" for i in range(1, SLOW_PAGES + 1)))
    src = str(Path(__file__).resolve().parents[1] / "src")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH", "")) if p)
    repo = make_repo(tmp_path / "work" / "proj")
    settings = load_settings(env=env)
    box = {"env": env, "repo": repo, "settings": settings, "pids": set(), "tmp": tmp_path}
    yield box
    info = owner.read_server_file(settings)
    for pid in box["pids"] | ({info.pid} if info else set()):
        _end(pid)


def cli(box, *args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    res = subprocess.run([*CLI, *args], cwd=box["repo"].parent, env=box["env"], capture_output=True, text=True,
                         timeout=timeout)
    assert "Traceback" not in res.stderr, res.stderr
    server = owner.read_server_file(box["settings"])
    if server is not None:
        box["pids"].add(server.pid)
    return res


def ok_json(res: subprocess.CompletedProcess) -> dict:
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout)


def repo_status(box) -> dict:
    return {r["repo"]: r for r in ok_json(cli(box, "status", "--json"))["repos"]}["proj"]


def clean_rows(box) -> dict:
    """A one-shot build of the same tree in a data dir of its own, every vector written."""
    settings = load_settings({"embedding_backend": "fake", "data_dir": str(box["tmp"] / "clean")},
                             env={"RAG_CONFIG": "/dev/null"})
    api.index(box["repo"], settings=settings)
    with api.Index(settings) as ix:
        return rows(ix, "proj")


def stopped_rows(box) -> dict:
    """Stop the owner, then read every row of the index it held."""
    info = owner.read_server_file(box["settings"])
    assert cli(box, "stop").returncode == 0
    assert info is None or wait_dead(info.pid, 20)
    with api.Index(box["settings"].replace(keepalive=0)) as ix:
        return rows(ix, "proj")


def test_index_returns_searchable_the_owner_fills_in_and_wait_attaches(owned):
    first = ok_json(cli(owned, "index", str(owned["repo"]), "--json"))
    assert first["chunks_pending"] > 3 * 64 and first["chunks_embedded"] == 0, first
    found = ok_json(cli(owned, "search", WORD, "-k", "3", "--mode", "bm25", "--json"))
    assert found["hits"][0]["path"] == "word.py" and found["partial"], found
    assert found["progress"]["chunks_embedded"] < found["progress"]["chunks"]
    assert ok_json(cli(owned, "search", WORD, "-k", "3", "--json"))["hits"]  # hybrid, with what is embedded
    st = repo_status(owned)
    assert st["state"] == "embedding" and st["vectors"]["choice"] == "all" and st["vectors"]["pending"] > 0

    waited = ok_json(cli(owned, "index", str(owned["repo"]), "--wait", "--json"))
    assert waited["chunks_pending"] == 0 and waited["files_indexed"] == first["files_indexed"]  # the same job
    st = repo_status(owned)
    assert st["state"] == "clean" and st["vectors"]["pending"] == 0
    assert not ok_json(cli(owned, "search", WORD, "-k", "3", "--json"))["partial"]
    assert stopped_rows(owned) == clean_rows(owned)


def test_a_killed_index_run_again_attaches_at_once_and_wait_gives_a_clean_build(owned):
    proc = subprocess.Popen([*CLI, "index", str(owned["repo"]), "--wait"], cwd=owned["repo"].parent,
                            env=owned["env"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    job = None
    while job is None and time.monotonic() < deadline:  # the owner runs the job: kill the CLI
        info = owner.read_server_file(owned["settings"])
        health = keepalive.health(info) if info is not None else None
        job = (health or {}).get("job")
        time.sleep(0.05)
    assert job, "no job started"
    owned["pids"].add(info.pid)  # type: ignore[union-attr]
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)

    again = ok_json(cli(owned, "index", str(owned["repo"]), "--json"))  # attaches: never 'already running'
    assert again["chunks_pending"] > 0 or repo_status(owned)["state"] == "clean"
    health = keepalive.health(owner.read_server_file(owned["settings"]))  # type: ignore[arg-type]
    assert health is not None and health["job"] in (job, None)  # no second job was started
    waited = ok_json(cli(owned, "index", str(owned["repo"]), "--wait", "--json"))
    assert waited["chunks_pending"] == 0
    assert stopped_rows(owned) == clean_rows(owned)


def test_an_owner_killed_while_filling_is_finished_by_the_next_owner(owned):
    first = ok_json(cli(owned, "index", str(owned["repo"]), "--json"))
    assert first["chunks_pending"] > 0
    info = owner.read_server_file(owned["settings"])
    assert info is not None
    time.sleep(2 * PAGE_SLEEP)  # a page or so written, most still waiting
    os.kill(info.pid, signal.SIGKILL)
    assert wait_dead(info.pid, 20)

    st = repo_status(owned)  # a new keep-alive owner opens the index and resumes the fill
    assert st["state"] == "embedding" and st["vectors"]["pending"] > 0
    deadline = time.monotonic() + 180
    while st["state"] != "clean" and time.monotonic() < deadline:
        time.sleep(0.5)
        st = repo_status(owned)
    assert st["state"] == "clean" and st["vectors"]["pending"] == 0
    assert stopped_rows(owned) == clean_rows(owned)


def test_vectors_choice_through_the_owner_is_recorded_shown_and_kept(owned):
    none = ok_json(cli(owned, "index", str(owned["repo"]), "--vectors", "none", "--json"))
    assert none["vectors"] == "none" and none["chunks_pending"] == 0
    st = repo_status(owned)
    assert st["state"] == "clean" and st["vectors"] == {"choice": "none", "pending": 0, "eta_seconds": None}
    found = ok_json(cli(owned, "search", WORD, "-k", "3", "--json"))
    assert found["hits"][0]["path"] == "word.py" and not found["partial"] and found["signals"] == ["bm25"]
    assert "vectors: none (keyword-only)" in cli(owned, "status").stdout
    source = ok_json(cli(owned, "index", str(owned["repo"]), "--vectors", "source", "--wait", "--json"))
    assert source["vectors"] == "source" and source["chunks_embedded"] > 0 and source["files_indexed"] == 0
    assert repo_status(owned)["vectors"]["choice"] == "source"
