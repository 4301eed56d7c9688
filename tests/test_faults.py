"""The fault-injection hook: rules, counting, each action, the environment, the log."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time

import pytest

from codeseam import faults
from codeseam.errors import StoreError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def _clear():
    faults.configure(None)
    yield
    faults.configure(None)


def test_parse_rules_and_reject_bad_ones():
    rules = faults.parse("insert:3=kill, delete=raise,chunk:2=sleep:0.5,embed=enospc,write:7=killchild")
    assert [(r.point, r.n, r.action, r.arg) for r in rules] == [
        ("insert", 3, "kill", 0.0), ("delete", 1, "raise", 0.0), ("chunk", 2, "sleep", 0.5),
        ("embed", 1, "enospc", 0.0), ("write", 7, "killchild", 0.0)]
    assert faults.parse("") == [] and faults.parse(" , ") == []
    for bad in ("insert", "insert:3", "insert:x=kill", "insert:0=kill", "=kill", "insert=explode",
                "insert=sleep", "insert=kill:3"):
        with pytest.raises(ValueError, match="bad fault rule"):
            faults.parse(bad)


def test_unset_is_a_noop_function():
    assert faults.point is faults._off
    faults.point("insert")
    assert faults.counts() == {}
    faults.configure("insert=raise")
    assert faults.point is faults._armed
    faults.configure("")
    assert faults.point is faults._off


def test_fires_exactly_at_the_nth_time_of_its_point():
    faults.configure("delete:3=raise,insert:2=enospc")
    faults.point("delete")
    faults.point("delete")
    faults.point("insert")
    with pytest.raises(OSError) as err:
        faults.point("insert")
    assert err.value.errno == errno.ENOSPC and "insert #2" in str(err.value)
    with pytest.raises(StoreError, match="delete #3"):
        faults.point("delete")
    faults.point("delete")  # the 4th passes
    assert faults.counts() == {"delete": 4, "insert": 2}


def test_sleep_holds_the_caller():
    faults.configure("chunk=sleep:0.2")
    t = time.monotonic()
    faults.point("chunk")
    assert time.monotonic() - t >= 0.2


def test_killchild_kills_only_the_children(tmp_path):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert child.pid in faults.child_pids()
        faults.configure("write=killchild")
        faults.point("write")
        assert child.wait(timeout=10) == -signal.SIGKILL
    finally:
        child.kill()
        child.wait()


def test_env_plan_kills_the_process_and_the_log_says_where(tmp_path):
    log = tmp_path / "points.log"
    code = ("from codeseam import faults\n"
            "for name in ['chunk', 'chunk', 'insert', 'chunk']:\n"
            "    faults.point(name)\n"
            "print('survived', flush=True)\n")
    env = {**os.environ, faults.ENV: "chunk:3=kill", faults.LOG_ENV: str(log)}
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == -signal.SIGKILL and "survived" not in proc.stdout
    assert log.read_text().split("\n") == ["chunk 1", "chunk 2", "insert 1", "chunk 3", ""]
    env[faults.ENV] = "chunk:9=kill"
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0 and "survived" in proc.stdout


def test_a_bad_env_plan_stops_at_import():
    env = {**os.environ, faults.ENV: "insert=explode"}
    proc = subprocess.run([sys.executable, "-c", "import codeseam.faults"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "bad fault rule" in proc.stderr
