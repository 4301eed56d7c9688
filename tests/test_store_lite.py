"""Milvus Lite as a process: the single-process lock, holders that die, cold imports.
Real subprocesses, real Milvus Lite files in temp dirs."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from codeseam.errors import IndexBusyError
from codeseam.store import Store
from codeseam.store.lite import sweep_stale_sockets
from tests.test_store import META, rows_for, settings_for

HOLDER = textwrap.dedent("""
    import sys, time
    from codeseam.settings import Settings
    from codeseam.store import Store
    from tests.test_store import META, rows_for
    store = Store.open(Settings(data_dir=sys.argv[1]), expect=META, create=True)
    store.insert_chunks(rows_for("held", "h.py", ["written by the holder"]))
    print("ready", flush=True)
    time.sleep(120)
""")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_python(code: str, *args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code, *args], cwd=ROOT, stdout=subprocess.PIPE,
                            text=True, **kw)


@pytest.fixture
def holder(tmp_path):
    settings = settings_for(tmp_path)
    proc = run_python(HOLDER, str(settings.data_path))
    try:
        assert proc.stdout.readline().strip() == "ready"
        yield settings, proc
    finally:
        proc.kill()
        proc.wait()


def test_a_second_process_gets_index_busy_naming_the_holder(holder):
    settings, proc = holder
    t = time.monotonic()
    with pytest.raises(IndexBusyError) as err:
        Store.open(settings, expect=META, create=False)
    assert time.monotonic() - t < 5
    text = str(err.value)
    assert f"process {proc.pid}" in text and "-c" in text  # who: pid and command line
    assert f"kill {proc.pid}" in text and "codeseam serve" in text  # what to do
    with pytest.raises(IndexBusyError):
        Store.open(settings, expect=META, create=True, lock_timeout=0.3)


def test_the_index_is_free_again_when_the_holder_is_killed(holder):
    settings, proc = holder
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with Store.open(settings, expect=META, create=False) as store:  # waits for its old server to go
        assert [c.text for c in store.iter_chunks("held")] == ["written by the holder"]
        # the killed holder's socket was swept: every one left for this file name is live
        left = list(Path(tempfile.gettempdir()).glob("codeseam-*-index.db.sock"))
        assert left and all(_accepts(p) for p in left), left


def _accepts(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
            return True
        except OSError:
            return False


def test_stale_lite_sockets_are_swept_and_live_ones_kept():
    tmp = Path(tempfile.gettempdir())
    stale, live = tmp / "codeseam-0000aaaa0000-sweep.db.sock", tmp / "codeseam-0000bbbb0000-sweep.db.sock"
    other = tmp / "codeseam-0000cccc0000-other.db.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        for path in (stale, other):  # bound, then closed without unlink: what SIGKILL leaves
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as dead:
                dead.bind(str(path))
        listener.bind(str(live))
        listener.listen(1)
        assert sweep_stale_sockets("sweep.db") == 1
        assert not stale.exists() and live.exists() and other.exists()  # another index's: not this sweep's
    finally:
        listener.close()
        for path in (stale, live, other):
            path.unlink(missing_ok=True)


def test_a_foreign_milvus_lite_holder_is_busy_too(tmp_path):
    """A program that opened the file with plain pymilvus holds milvus-lite's own lock."""
    settings = settings_for(tmp_path)
    with Store.open(settings, expect=META, create=True):
        pass
    db = settings.data_path / "index.db"
    code = ("import fcntl, sys, time; f = open(sys.argv[1], 'a'); "
            "fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB); print('ready', flush=True); time.sleep(60)")
    proc = run_python(code, str(db.with_name(".index.db.lock")))
    try:
        assert proc.stdout.readline().strip() == "ready"
        with pytest.raises(IndexBusyError, match="another program"):
            Store.open(settings, expect=META, create=False)
    finally:
        proc.kill()
        proc.wait()
    with Store.open(settings, expect=META, create=False):  # nothing left behind by the failure
        pass


def test_close_releases_the_file_for_the_same_process(tmp_path):
    settings = settings_for(tmp_path)
    for i in range(3):
        with Store.open(settings, expect=META, create=True) as store:
            store.insert_chunks(rows_for("r", f"f{i}.py", [f"text {i}"]))
            with pytest.raises(IndexBusyError, match="this process"):
                Store.open(settings, expect=META, create=False)
    with Store.open(settings, expect=META, create=False) as store:
        assert sorted(store.chunk_paths("r")) == ["f0.py", "f1.py", "f2.py"]


COLD = textwrap.dedent("""
    import json, sys
    import codeseam.store
    seen = {"pymilvus_on_import": "pymilvus" in sys.modules}
    from codeseam.settings import Settings
    from codeseam.store import Store, Filters
    from tests.test_store import META, rows_for, embed
    with Store.open(Settings(data_dir=sys.argv[1]), expect=META, create=True) as store:
        store.insert_chunks(rows_for("r", "a.py", ["cold open works"]))
        seen["hits"] = len(store.dense_search(embed("cold"), 3, Filters()))
        seen["pandas_after_open"] = "pandas" in sys.modules
    import pandas
    from pymilvus.orm import schema
    df = pandas.DataFrame({"a": [1]})
    seen["real_pandas"] = hasattr(pandas, "read_csv") and type(df).__module__.startswith("pandas")
    seen["isinstance_ok"] = isinstance(df, schema.pd.DataFrame) and not isinstance([], schema.pd.DataFrame)
    print(json.dumps(seen))
""")


def test_store_import_is_light_and_opening_skips_pandas(tmp_path):
    proc = run_python(COLD, str(tmp_path / "data"))
    out, _ = proc.communicate(timeout=120)
    seen = json.loads(out.strip().splitlines()[-1])
    assert seen == {"pymilvus_on_import": False, "hits": 1, "pandas_after_open": False,
                    "real_pandas": True, "isinstance_ok": True}


def test_pymilvus_own_lite_path_is_the_fallback(tmp_path, monkeypatch):
    """With a milvus-lite other than 2.5.x, pymilvus starts the server itself; a foreign
    holder then surfaces as milvus-lite's "Open local milvus failed", mapped to IndexBusyError."""
    import codeseam.store.lite as lite

    monkeypatch.setattr(lite, "_binary", lambda: None)
    settings = settings_for(tmp_path)
    with Store.open(settings, expect=META, create=True) as store:
        store.insert_chunks(rows_for("r", "a.py", ["through pymilvus"]))
    with Store.open(settings, expect=META, create=False) as store:  # released on close
        assert [c.text for c in store.iter_chunks("r")] == ["through pymilvus"]
    code = ("import fcntl, sys, time; f = open(sys.argv[1], 'a'); "
            "fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB); print('ready', flush=True); time.sleep(60)")
    proc = run_python(code, str(settings.data_path / ".index.db.lock"))
    try:
        assert proc.stdout.readline().strip() == "ready"
        with pytest.raises(IndexBusyError):
            Store.open(settings, expect=META, create=False)
    finally:
        proc.kill()
        proc.wait()


def test_lite_server_starts_without_home(tmp_path):
    """MCP clients may start codeseam with a minimal environment: no HOME."""
    import os
    import subprocess
    import sys

    code = (
        "from codeseam.settings import load_settings\n"
        "from codeseam.store import Store, IndexMeta\n"
        f"s = load_settings({{'data_dir': {str(tmp_path)!r}}}, env={{}})\n"
        "st = Store.open(s, expect=IndexMeta('fake:4', 4, 'ast:x', 2), create=True)\n"
        "print(sorted(st.repo_records()))\n"
        "st.close()\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "HOME"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"
