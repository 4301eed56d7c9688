"""The watcher and the stat scan on real trees with real file events (no calls into our code
stand in for the file system)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from codeseam.fresh.scan import StatScan, folders_of
from codeseam.fresh.watch import NETWORK_FS, Watcher, WatchUnavailable, changed_paths, filesystem_type


def tree(root: Path, n_dirs: int = 3, per_dir: int = 3) -> dict[str, tuple[int, int]]:
    for d in range(n_dirs):
        (root / f"d{d}").mkdir(parents=True, exist_ok=True)
        for f in range(per_dir):
            (root / f"d{d}" / f"f{f}.py").write_text(f"x = {d * 10 + f}\n")
    (root / ".git").mkdir(exist_ok=True)
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in root.rglob("*.py")}


class Collector:
    def __init__(self) -> None:
        self.paths: set[str] = set()
        self.failed: list[str] = []
        self.cond = threading.Condition()

    def change(self, paths: set[str]) -> None:
        with self.cond:
            self.paths |= paths
            self.cond.notify_all()

    def failure(self, why: str) -> None:
        with self.cond:
            self.failed.append(why)
            self.cond.notify_all()

    def wait_for(self, pred, timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        with self.cond:
            while not pred():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(left)
        return True


def test_changed_paths_are_repo_relative_without_git_internals():
    changes = {(2, "/r/a.py"), (1, "/r/.git/index"), (1, "/r/sub/.git/HEAD"), (3, "/r/d/b.py"), (1, "/other/x")}
    assert changed_paths("/r", changes) == {"a.py", "d/b.py"}


def test_watcher_reports_edits_creations_deletions_and_moved_folders(tmp_path):
    root = tmp_path / "repo"
    tree(root)
    c = Collector()
    w = Watcher(str(root), c.change, c.failure)
    w.start()
    try:
        (root / "d0" / "f0.py").write_text("x = 100\n")
        (root / "new").mkdir()
        (root / "new" / "n.py").write_text("y = 1\n")
        (root / "d1" / "f1.py").unlink()
        (root / "d2").rename(root / "moved")
        (root / ".git" / "HEAD").write_text("ref: x\n")
        want = {"d0/f0.py", "new", "d1/f1.py", "d2", "moved"}
        assert c.wait_for(lambda: want <= c.paths), c.paths
        assert not any(p.startswith(".git") for p in c.paths)
        assert w.alive and c.failed == []
    finally:
        w.stop()
    assert not w.alive


def test_watcher_reports_its_folder_disappearing(tmp_path):
    root = tmp_path / "repo"
    tree(root, 1, 1)
    c = Collector()
    w = Watcher(str(root), c.change, c.failure)
    w.start()
    try:
        shutil.rmtree(root)
        assert c.wait_for(lambda: bool(c.failed)), "no failure reported"
        assert "no longer exists" in c.failed[0]
    finally:
        w.stop()


def test_network_file_systems_are_not_watched(tmp_path, monkeypatch):
    from codeseam.fresh import watch

    assert {"nfs", "nfs4", "cifs", "9p", "fuse.sshfs"} <= NETWORK_FS
    monkeypatch.setattr(watch, "filesystem_type", lambda path: "nfs4")
    w = Watcher(str(tmp_path), lambda p: None, lambda why: None)
    with pytest.raises(WatchUnavailable, match="network file system"):
        w.start()
    assert filesystem_type(str(tmp_path)) not in NETWORK_FS  # this machine's temp dir is local


LIMIT_SCRIPT = textwrap.dedent("""
    import sys
    from codeseam.fresh.watch import Watcher, WatchUnavailable
    w = Watcher(sys.argv[1], lambda p: None, lambda why: None)
    try:
        w.start()
    except WatchUnavailable as exc:
        print("UNAVAILABLE", exc)
    else:
        print("WATCHING")
        w.stop()
""")


def unshare_works() -> bool:
    probe = subprocess.run(["unshare", "-U", "-r", "sh", "-c", "echo 5 > /proc/sys/user/max_inotify_watches"],
                           capture_output=True)
    return probe.returncode == 0


@pytest.mark.skipif(sys.platform != "linux" or shutil.which("unshare") is None or not unshare_works(),
                    reason="needs a user namespace to lower the inotify watch limit for one process")
def test_a_real_watch_limit_is_detected_not_silently_ignored(tmp_path):
    """The inotify limit is per user namespace: a child namespace with a limit of 3 watches
    cannot watch a tree of 7 folders. watchfiles starts anyway and reports nothing for the
    folders it could not watch; our check must see it and refuse."""
    root = tmp_path / "repo"
    tree(root, 5, 1)  # root, .git, d0..d4: 7 folders
    script = tmp_path / "probe.py"
    script.write_text(LIMIT_SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    out = subprocess.run(["unshare", "-U", "-r", "sh", "-c",
                          f"echo 3 > /proc/sys/user/max_inotify_watches && exec {sys.executable} {script} {root}"],
                         capture_output=True, text=True, env=env, timeout=60)
    assert out.stdout.startswith("UNAVAILABLE"), out.stdout + out.stderr
    assert "inotify watch limit is reached" in out.stdout and "of the 7 folders" in out.stdout
    plain = subprocess.run([sys.executable, str(script), str(root)], capture_output=True, text=True, env=env)
    assert plain.stdout.startswith("WATCHING"), plain.stdout + plain.stderr


def test_stat_scan_finds_edits_deletions_and_new_files_in_new_folders(tmp_path):
    root = tmp_path / "repo"
    sigs = tree(root)
    scan = StatScan(str(root), sigs, since=time.time())
    assert scan.run().changed == set() and scan.run().added == set()
    (root / "d0" / "f0.py").write_text("x = 1000\n")
    (root / "d1" / "f2.py").unlink()
    (root / "d2" / "extra.py").write_text("z = 1\n")
    (root / "brand" / "new").mkdir(parents=True)
    (root / "brand" / "new" / "deep.py").write_text("w = 1\n")
    (root / "node_modules" / "pkg").mkdir(parents=True)  # pruned: never walked
    (root / "node_modules" / "pkg" / "x.js").write_text("1\n")
    got = scan.run()
    assert got.complete
    assert got.changed == {"d0/f0.py", "d1/f2.py"}
    assert got.added == {"d2/extra.py", "brand/new/deep.py"}
    assert folders_of(sigs) == ["", "d0", "d1", "d2"]


def test_stat_scan_is_time_boxed_and_resumes_where_it_stopped(tmp_path):
    root = tmp_path / "repo"
    sigs = tree(root, 20, 40)  # 800 files
    scan = StatScan(str(root), sigs, since=time.time())
    last = sorted(sigs)[-1]
    (root / last).write_text("changed = True\n")
    first = scan.run(deadline=time.monotonic() - 1)  # already late: stops at the first look at the clock
    assert not first.complete and first.files < len(sigs) and last not in first.changed
    found, runs = set(first.changed), 1
    while True:
        more = scan.run(deadline=time.monotonic() - 1)
        found |= more.changed
        runs += 1
        if more.complete:
            break
    assert last in found and runs >= 3
