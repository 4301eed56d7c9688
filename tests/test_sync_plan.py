"""The pure sync planner: what each file costs on a re-run."""
from __future__ import annotations

from codeseam.records import SourceFile
from codeseam.indexing.plan import PENDING, ManifestEntry, chunk_row_id, plan_sync


def sf(path, size=10, mtime=1):
    return SourceFile(path=path, abs_path="/r/" + path, language="python", size=size, mtime_ns=mtime)


def me(path, size=10, mtime=1, n=2):
    return ManifestEntry(path=path, size=size, mtime_ns=mtime, file_hash="h" + path, n_chunks=n)


def test_unchanged_repo_is_a_noop():
    files = [sf("a.py"), sf("b.py")]
    plan = plan_sync(files, {"a.py": me("a.py"), "b.py": me("b.py")})
    assert plan.is_noop and plan.unchanged == ("a.py", "b.py")


def test_new_changed_deleted_pending():
    files = [sf("a.py"), sf("b.py", mtime=2), sf("c.py"), sf("d.py")]
    manifest = {"a.py": me("a.py"), "b.py": me("b.py"), "d.py": me("d.py", n=PENDING), "gone.py": me("gone.py")}
    plan = plan_sync(files, manifest)
    assert [f.path for f in plan.redo] == ["c.py", "d.py"]
    assert plan.reasons["c.py"] == "new" and plan.reasons["d.py"] == "interrupted"
    assert [f.path for f in plan.check] == ["b.py"]
    assert plan.delete == ("gone.py",)
    assert plan.unchanged == ("a.py",)


def test_pipeline_change_redoes_everything():
    plan = plan_sync([sf("a.py")], {"a.py": me("a.py")}, pipeline_changed=True)
    assert [f.path for f in plan.redo] == ["a.py"]


def test_repair_compares_stored_rows():
    files = [sf("a.py"), sf("b.py")]
    manifest = {"a.py": me("a.py", n=2), "b.py": me("b.py", n=3)}
    stored = {"a.py": 2, "b.py": 1, "orphan.py": 4}
    plan = plan_sync(files, manifest, stored_counts=stored)
    assert [f.path for f in plan.redo] == ["b.py"] and plan.reasons["b.py"] == "inconsistent"
    assert plan.delete == ("orphan.py",)


def test_row_ids_are_deterministic_and_distinct():
    a = chunk_row_id("r", "a.py", 0, "x")
    assert a == chunk_row_id("r", "a.py", 0, "x")
    assert len({a, chunk_row_id("r", "a.py", 1, "x"), chunk_row_id("r2", "a.py", 0, "x"),
                chunk_row_id("r", "b.py", 0, "x")}) == 4
