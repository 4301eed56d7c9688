"""Concurrent use of one index.

The guarantees, on Milvus Lite (one process holds the file):

- **two indexers**: a second process gets ``IndexBusyError`` at once (CLI: one line naming
  the holder's pid and command, exit 1); two runs in one ``Index`` session take turns (the
  second waits); a second session in the same process is refused, naming this process.
  Nothing is corrupted: the index then equals a clean build.
- **search while indexing** (inside the process that holds the index, e.g. ``codeseam serve``):
  per file, a search sees the file's old rows or its new rows, complete, never a mix and
  never a half-written file, because each write batch (pending manifest, delete, insert,
  final manifest) and each search's store calls hold the session's lock. Across files there
  is no guarantee during a run: some changed files may already be new while others are
  still old, and a search may see a deleted file that the run has not reached yet.

On a Milvus server URI no lock spans processes: a search from another process during a run
can see a file between the delete of its old rows and the insert of its new ones (missing, or
partly inserted). Only the end state is guaranteed there.
"""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from codeseam import api
from codeseam.errors import IndexBusyError
from codeseam.settings import load_settings
from tests.test_crash import (ROOT, cli_command, clean_build, compare, finish, index_run, inspect_api,
                              make_tree, run_env)


def test_a_second_cli_indexer_fails_with_a_clear_message_naming_the_holder(tmp_path):
    root = make_tree(tmp_path / "busyrepo", 8)
    data = tmp_path / "data"
    log = tmp_path / "points.log"
    env = run_env(data, faults="chunk:2=sleep:8", log=log)
    first = subprocess.Popen([*cli_command(), "index", str(root)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not (log.exists() and "chunk 2" in log.read_text()):  # the first holds the index now
            assert first.poll() is None and time.monotonic() < deadline, first.stderr.read()
            time.sleep(0.05)
        second = index_run(root, data)
        assert second.rc == 1 and "Traceback" not in second.stderr, second.stderr
        line = second.stderr.strip().split("\n")[0]
        assert line.startswith("error: the index") and f"process {first.pid}" in line
        assert "codeseam index" in line and "hint:" in second.stderr
        _, err = first.communicate(timeout=300)
        assert first.returncode == 0, err
    finally:
        if first.poll() is None:
            first.send_signal(signal.SIGKILL)
            first.wait()
    assert compare(inspect_api(data, "busyrepo"), clean_build(root, tmp_path / "clean", "busyrepo")) == {}
    assert finish(root, data).rc == 0  # and the index is free again


def repo_with(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def functions(prefix: str, n: int, word: str) -> str:
    """``n`` functions, each its own chunk (~300 bytes), each holding ``word``."""
    return "\n\n".join(f"def {prefix}_{i}(value):\n    '''{word} step {i}: {prefix} computes a value.'''\n"
                       f"    total = value * {i} + {len(prefix)}\n    for k in range({i % 5 + 2}):\n"
                       f"        total += k * {i}\n    return total  # {word} {prefix} {i}\n" for i in range(n)) + "\n"


def test_two_runs_in_one_session_take_turns_and_a_second_session_is_refused(tmp_path, isolated_env):
    root = repo_with(tmp_path / "turns", {f"m{i}.py": functions(f"mod{i}", 30, "turn") for i in range(6)})
    settings = load_settings({"embedding_backend": "fake"})
    with api.Index(settings, create=True) as ix:
        with pytest.raises(IndexBusyError, match="this process"):
            api.Index(settings)
        reports, errors = [], []

        def run() -> None:
            try:
                reports.append(ix.index(root))
            except Exception as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=run) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
        assert errors == [] and len(reports) == 2
        assert sorted(r.files_indexed for r in reports) == [0, 6]  # one did the work, one found it done
        got = ix.inspect("turns")
    clean = settings.replace(data_dir=str(tmp_path / "clean"))
    api.index(root, settings=clean)
    assert compare(got, api.inspect("turns", settings=clean)) == {}


def test_search_while_indexing_sees_each_file_old_or_new_never_a_mix(tmp_path, isolated_env):
    """A thread searches the changed file continuously while another re-indexes the repo after
    the file changed from version A (12 chunks) to version B (20 chunks). Other changed files
    before and after it make the run several write batches long."""
    n_a, n_b = 12, 20
    files = {f"a{i}.py": functions(f"before{i}", 280, "filler") for i in range(3)}
    files |= {f"z{i}.py": functions(f"after{i}", 280, "filler") for i in range(3)}
    files["m_target.py"] = functions("target", n_a, "zqmarker alphaversion")
    root = repo_with(tmp_path / "mixed", files)
    # the searches read the index as it stands (freshness off): this test is about the write order
    settings = load_settings({"embedding_backend": "fake", "freshness": "off"})
    seen: list[tuple[str, int, bool]] = []
    problems: list[str] = []
    with api.Index(settings, create=True) as ix:
        ix.index(root)
        for rel in files:  # every file changes, so the run rewrites them all, batch by batch
            if rel != "m_target.py":
                (root / rel).write_text(files[rel].replace("filler", "padding"))
        (root / "m_target.py").write_text(functions("target", n_b, "zqmarker betaversion"))
        done = threading.Event()

        def searcher() -> None:
            while not done.is_set():
                hits = [h for h in ix.search("zqmarker target", path_glob="m_target.py", k=50).hits]
                versions = {"A" if "alphaversion" in h.text else "B" if "betaversion" in h.text else "?"
                            for h in hits}
                state = "".join(sorted(versions))
                seen.append((state, len(hits), done.is_set()))
                if state not in ("A", "B") or len(hits) != (n_a if state == "A" else n_b):
                    problems.append(f"{state} with {len(hits)} hits")

        t = threading.Thread(target=searcher)
        t.start()
        try:
            time.sleep(0.3)
            ix.index(root)
        finally:
            done.set()
            t.join(timeout=60)
    assert problems == []
    states = [s for s, _, _ in seen]
    assert "A" in states and states[-1] == "B"
    assert states.index("B") > 0 and "A" not in states[states.index("B"):]  # once new, never old again
    assert len(seen) >= 10, seen  # the searches really ran during the run


def test_searches_during_re_syncs_never_say_not_indexed(tmp_path, isolated_env):
    """Every run rewrites the repo record (state syncing, then clean). Milvus Lite's upsert
    deletes the old row before it inserts the new one, and a reader in between saw no record
    at all: "nothing is indexed yet" in the middle of a re-sync. Readers and writers of the
    records and the manifest now take turns inside the store."""
    root = repo_with(tmp_path / "resync", {f"m{i}.py": functions(f"mod{i}", 4, "resync") for i in range(3)})
    settings = load_settings({"embedding_backend": "fake"})
    failures: list[str] = []
    counts = {"runs": 0, "searches": 0}
    with api.Index(settings, create=True) as ix:
        ix.index(root)
        done = threading.Event()

        def resync() -> None:
            i = 0
            while not done.is_set():
                (root / "m0.py").write_text(functions("mod0", 4 + i % 2, "resync"))  # a real change
                ix.index(root)
                counts["runs"] += 1
                i += 1

        def reader() -> None:
            while not done.is_set():
                try:
                    assert ix.search("resync mod1", k=3).hits
                    assert [r.repo_id for r in ix.status().repos] == ["resync"]
                    assert "m1.py" in ix.inspect("resync")["files"]
                except Exception as exc:  # noqa: BLE001 - every failure is a finding
                    failures.append(f"{type(exc).__name__}: {str(exc)[:120]}")
                counts["searches"] += 1

        threads = [threading.Thread(target=resync), threading.Thread(target=reader)]
        for t in threads:
            t.start()
        time.sleep(8)
        done.set()
        for t in threads:
            t.join(timeout=120)
    assert counts["runs"] >= 3 and counts["searches"] >= 20, counts
    assert failures == [], (len(failures), failures[:3], counts)
