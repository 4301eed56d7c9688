"""Convergence when the store lost writes it had acknowledged, and determinism of chunk hashes
across processes.

Milvus Lite kept every acknowledged write through a SIGKILL in every trial measured
(bench/results/reliability.md), but the protocol must not depend on it: when the last holder
of a Lite file died without closing it, the next indexing run checks every stored row against
the manifest (row count *and* file hash per path) and re-does whatever disagrees. These tests
fake the lost writes directly in a real Milvus Lite index, then leave a dead holder's record
in the lock file, exactly what a SIGKILLed process leaves.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from codeseam import api
from codeseam.records import SourceFile
from codeseam.settings import load_settings
from codeseam.indexing.plan import ManifestEntry, plan_sync
from tests.test_crash import compare

ROOT = Path(__file__).resolve().parents[1]

FUNCS = "\n\n".join(f"def handler_{i}(event):\n    '''Handle event {i} of the queue.'''\n"
                    f"    value = event.payload * {i}\n    if value > {i * 10}:\n        return value - {i}\n"
                    f"    return value + {i}\n" for i in range(12)) + "\n"


@pytest.fixture
def settings(isolated_env):
    return load_settings({"embedding_backend": "fake"})


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "relrepo"
    root.mkdir()
    (root / "events.py").write_text(FUNCS)
    (root / "other.py").write_text("def other():\n    return 'other'\n")
    (root / "README.md").write_text("# relrepo\n\nEvents and handlers.\n")
    return root


def snapshot(settings, repo_id: str = "relrepo") -> dict:
    return api.inspect(repo_id, settings=settings)


def clean_snapshot(repo: Path, settings, tmp_path: Path) -> dict:
    other = settings.replace(data_dir=str(tmp_path / "clean-data"))
    api.index(repo, settings=other)
    return api.inspect("relrepo", settings=other)


def leave_dead_holder(settings) -> None:
    """What a SIGKILLed holder leaves in the lock file: its record, never truncated."""
    lock = settings.data_path / "index.db.lock"
    lock.write_text(json.dumps({"pid": 999_999_999, "command": "codeseam index .", "started": time.time()}))


def open_store(settings):
    from codeseam.store import Store

    return Store.open(settings, expect=None, create=False)


def test_lost_row_writes_are_found_after_an_unclean_shutdown(repo, settings, tmp_path):
    api.index(repo, settings=settings)
    with open_store(settings) as store:  # the rows of one file never reached the disk
        store.delete_paths("relrepo", ["events.py"])
    leave_dead_holder(settings)
    report = api.index(repo, settings=settings)
    assert report.files_indexed == 1
    assert compare(snapshot(settings), clean_snapshot(repo, settings, tmp_path)) == {}


def test_a_clean_close_costs_no_verification(repo, settings):
    """Without a dead holder (and with the repo record clean), stored rows are trusted: a
    no-op re-sync does not read every row."""
    api.index(repo, settings=settings)
    with open_store(settings) as store:
        store.delete_paths("relrepo", ["events.py"])
    assert api.index(repo, settings=settings).files_indexed == 0


def test_rows_of_another_file_version_with_the_same_count_are_found(repo, settings, tmp_path):
    """The manifest says version B (final entry written), but the delete and insert of the rows
    were lost: the old version's rows remain, as many as B has. Counts agree; file hashes do not."""
    from codeseam.discover import read_text
    from codeseam.store import FileEntry

    api.index(repo, settings=settings)
    path = repo / "events.py"
    path.write_text(FUNCS.replace("Handle event", "Process event"))
    _, new_hash = read_text(str(path))
    st = path.stat()
    with open_store(settings) as store:
        old = store.file_entries("relrepo")["events.py"]
        store.put_file_entries([FileEntry("relrepo", "events.py", st.st_size, st.st_mtime_ns, new_hash,
                                          old.n_chunks, time.time())])
    leave_dead_holder(settings)
    api.index(repo, settings=settings)
    got = snapshot(settings)
    assert compare(got, clean_snapshot(repo, settings, tmp_path)) == {}
    assert all("Process event" in h.text for h in api.search("handler_3 process event", settings=settings,
                                                             path_glob="events.py").hits)


def test_a_lost_repo_record_with_surviving_rows_converges(repo, settings, tmp_path):
    """The record (and so its ``syncing`` state) is lost, the manifest and rows survive."""
    api.index(repo, settings=settings)
    (repo / "other.py").unlink()
    (repo / "new.py").write_text("def new():\n    return 'new'\n")
    from codeseam.store.core import _repo_key

    with open_store(settings) as store:
        store._m.delete_ids(store.names.meta, [_repo_key("relrepo")])
    api.index(repo, settings=settings)
    assert compare(snapshot(settings), clean_snapshot(repo, settings, tmp_path)) == {}


def test_plan_redoes_a_path_whose_rows_carry_another_file_hash():
    f = SourceFile("a.py", "/r/a.py", "python", 10, 1)
    manifest = {"a.py": ManifestEntry("a.py", 10, 1, "new", 3)}
    assert plan_sync([f], manifest, stored_counts={"a.py": 3}).is_noop
    plan = plan_sync([f], manifest, stored_counts={"a.py": 3}, stored_hashes={"a.py": {"old"}})
    assert [x.path for x in plan.redo] == ["a.py"] and plan.reasons["a.py"] == "inconsistent"
    plan = plan_sync([f], manifest, stored_counts={"a.py": 3}, stored_hashes={"a.py": {"new", "old"}})
    assert plan.reasons["a.py"] == "inconsistent"
    assert plan_sync([f], manifest, stored_counts={"a.py": 3}, stored_hashes={"a.py": {"new"}}).is_noop


CHUNK_IN_CHILD = textwrap.dedent("""
    import json, sys
    from codeseam.chunk import chunk_file
    text = open(sys.argv[1]).read()
    print(json.dumps([c.hash for c in chunk_file("core.py", text)]))
""")


def test_chunk_hashes_do_not_depend_on_the_hash_seed(tmp_path):
    """Two processes must cut the same file into the same chunks with the same hashes, or a
    clean build and a resumed build (or any two builds) disagree and embeddings are not reused.
    (Chunk headers once listed identifier splits in set order, tied for identifiers sharing a
    prefix such as chunk_hash / chunk_hashes: the order followed the process's hash seed.)"""
    src = tmp_path / "core.py"
    src.write_text(textwrap.dedent('''
        def vectors_by_hash(chunk_hashes, chunk_hash, hashes_per_query):
            """Stored dense vectors by chunk hash."""
            wanted = [h for h in chunk_hashes if h != chunk_hash]
            return wanted[:hashes_per_query]
    '''))
    seen = set()
    for seed in ("1", "2", "3", "4", "5", "6"):
        out = subprocess.run([sys.executable, "-c", CHUNK_IN_CHILD, str(src)], cwd=ROOT, capture_output=True,
                             text=True, timeout=120, env={**os.environ, "PYTHONHASHSEED": seed})
        assert out.returncode == 0, out.stderr
        seen.add(out.stdout)
    assert len(seen) == 1
