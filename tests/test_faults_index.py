"""Faults in the middle of an indexing run: a full disk and Milvus errors surface as one clear
message (CLI: ``error: ...``, exit 1, no traceback), and the next run repairs the index to
exact agreement with a clean build.

Injected with ``CODESEAM_FAULTS`` (OSError ENOSPC, StoreError), a real Milvus error (the
Milvus Lite server process SIGKILLed under the client at a fault point), and a real full disk
(a small tmpfs; skipped where mounting is not permitted).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from codeseam import api, faults
from codeseam.errors import StoreError
from codeseam.settings import load_settings
from tests.test_crash import clean_build, compare, finish, index_run, inspect_api, make_tree

REPO = "faultrepo"


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    return make_tree(tmp_path_factory.mktemp("faults") / REPO, 10)


@pytest.fixture(scope="module")
def clean(tree, tmp_path_factory) -> dict:
    return clean_build(tree, tmp_path_factory.mktemp("clean") / "data", REPO)


def one_clear_line(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr[-3000:]
    lines = [ln for ln in stderr.strip().split("\n") if ln.strip()]
    assert lines and lines[0].startswith("error: "), stderr[-3000:]
    assert len(lines) <= 2 and all(ln.startswith(("error: ", "  hint: ")) for ln in lines), stderr
    return lines[0]


@pytest.mark.slow
@pytest.mark.parametrize("spec, words", [
    ("insert:2=enospc", "No space left on device"),
    ("delete:1=enospc", "No space left on device"),
    ("insert:1=raise", "Milvus failed"),
    ("write:3=raise", "Milvus failed"),
    ("write:4=killchild", "Milvus Lite server process stopped"),
])
def test_cli_fault_is_one_clear_error_and_the_next_run_repairs(spec, words, tree, clean, tmp_path):
    data = tmp_path / "data"
    if spec.startswith("delete"):  # a delete needs rows to delete: index once, then change
        shutil.copytree(tree, tmp_path / REPO)
        root = tmp_path / REPO
        finish(root, data)
        (root / "generated" / "many_functions.py").write_text("def only():\n    return 1\n")
        clean = clean_build(root, tmp_path / "clean", REPO)
    else:
        root = tree
    run = index_run(root, data, faults=spec)
    assert run.rc == 1, (run.rc, run.stderr[-3000:])
    assert words in one_clear_line(run.stderr)
    report = json.loads(finish(root, data).stdout)
    assert report["files_indexed"] > 0
    assert compare(inspect_api(data, REPO), clean) == {}


def test_api_fault_raises_a_store_error_and_the_same_session_repairs(tree, tmp_path, isolated_env):
    settings = load_settings({"embedding_backend": "fake"})
    with api.Index(settings, create=True) as ix:
        faults.configure("insert:2=enospc")
        try:
            with pytest.raises(StoreError, match="No space left") as err:
                ix.index(tree)
        finally:
            faults.configure(None)
        assert "index" in (err.value.hint or "")
        assert ix.status().repos[0].state == "syncing"
        ix.index(tree)
        got = ix.inspect(REPO)
    want = api.index(tree, settings=settings.replace(data_dir=str(tmp_path / "clean")))
    assert want.files_indexed > 0
    assert compare(got, api.inspect(REPO, settings=settings.replace(data_dir=str(tmp_path / "clean")))) == {}


@pytest.fixture
def small_disk(tmp_path):
    mnt = tmp_path / "small-disk"
    mnt.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], capture_output=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({proc.stderr.decode().strip()[:100]}): "
                    "the injected ENOSPC tests cover the full disk")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


@pytest.mark.slow
def test_a_real_full_disk_is_a_clear_error_and_more_space_repairs(small_disk, tree, clean):
    data = small_disk / "data"
    run = index_run(tree, data)
    assert run.rc == 1, (run.rc, run.stderr[-3000:])
    line = one_clear_line(run.stderr)
    assert "Milvus failed" in line or "No space left" in line
    subprocess.run(["mount", "-o", "remount,size=64m", str(small_disk)], check=True)
    finish(tree, data)
    assert compare(inspect_api(data, REPO), clean) == {}


def test_enospc_escaping_elsewhere_is_still_one_line(tmp_path):
    """A data dir that cannot be created (an OSError before any index exists)."""
    from tests.test_crash import codeseam, run_env

    run = codeseam(["index", str(tmp_path)], run_env(Path("/proc/codeseam-nope")))
    assert run.rc == 1
    assert "/proc/codeseam-nope" in one_clear_line(run.stderr)
