"""owner/hold.py: one lifecycle for holding the index, in this process: the one shutdown order
(observed at each step), signals, the idle exit."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import httpx
import pytest

from codeseam.owner import hold, keepalive, lock_holder, read_server_file, server_file
from codeseam.settings import load_settings
from codeseam.surfaces.http import create_app


@pytest.fixture
def settings(tmp_path: Path):
    return load_settings(env={"RAG_CONFIG": os.devnull, "RAG_DATA_DIR": str(tmp_path / "data"),
                              "RAG_EMBEDDING_BACKEND": "fake", "RAG_KEEPALIVE": "0"})


def test_close_lets_go_in_one_order(settings, monkeypatch):
    """stop serving -> close the service (the index lock is free) -> remove the server file ->
    remove the socket."""
    seen: list[str] = []
    path = keepalive.socket_path(settings)
    with hold.Holder(settings, trusted=True, signals=False) as holder:
        holder.serve(create_app(holder.service, token=None), holder.listen_unix(path))
        holder.record(url="http://localhost", socket=str(path))
        assert read_server_file(settings).pid == os.getpid() and lock_holder(settings).get("pid") == os.getpid()
        with httpx.Client(transport=httpx.HTTPTransport(uds=str(path)), base_url="http://localhost") as c:
            assert c.get("/health").json()["index_open"] is True
        listener = holder._listeners[0]
        close_service, remove_file = holder.service.close, hold.remove_server_file

        def service_close(*a, **kw):
            assert not listener.thread.is_alive()  # nothing is served any more
            seen.append("service")
            close_service(*a, **kw)

        def file_removed(s):
            assert lock_holder(s).get("pid") != os.getpid() and path.exists()  # the index is free, the socket not yet gone
            seen.append("file")
            remove_file(s)

        monkeypatch.setattr(holder.service, "close", service_close)
        monkeypatch.setattr(hold, "remove_server_file", file_removed)
    assert seen == ["service", "file"] and not path.exists() and not server_file(settings).exists()


def test_a_signal_stops_the_holder_and_a_second_one_interrupts(settings):
    stopped = threading.Event()
    with hold.Holder(settings, on_stop=stopped.set) as holder:
        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGTERM)).start()
        started = time.monotonic()
        assert holder.run() is False and time.monotonic() - started < 10
        assert holder.stopped_by == signal.SIGTERM and stopped.wait(5)
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)  # the second signal: forced
            time.sleep(5)
    assert signal.getsignal(signal.SIGTERM) is not holder._on_signal  # handlers restored
    with pytest.raises(SystemExit) as info:
        holder.reraise()
    assert info.value.code == 143


def test_run_returns_after_the_idle_exit(settings, tmp_path):
    from codeseam.owner.process import bind

    with hold.Holder(settings, signals=False) as holder:
        holder.serve(create_app(holder.service), bind("127.0.0.1", 0))
        started = time.monotonic()
        assert holder.run(idle_exit=0.5) is True
        assert 0.4 < time.monotonic() - started < 10
