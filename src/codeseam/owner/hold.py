"""Holding the index for others: one lifecycle for ``codeseam serve``, the keep-alive server,
``codeseam watch`` and ``codeseam mcp``.

A :class:`Holder` (a context manager) takes the index over (``take_over``: a keep-alive server
that holds it gives way; another server that holds it is an ``IndexBusyError`` naming it),
opens a ``service.Service`` over it (at once, or on first use: ``lazy``, for ``mcp``, which
records itself once the index is open), serves HTTP apps in threads (``serve``, on a TCP socket
or a private unix socket from ``listen_unix``), records itself in the server file (``record``)
and waits (``run``) for a signal, or ``idle_exit`` seconds without a request while no indexing
job runs (``watch`` runs its follow loop on ``stopping`` instead). Whatever stopped it, it
closes in one order: stop serving (the requests at hand finish) -> close the service (a job
stops at its next file, the index closes) -> remove the server file -> remove the socket. The
index closes first: a CLI that still finds the file meanwhile gets no answer and retries once
the index is free (``route.call``).

Signals (``signals=True``: once the index is open; else from ``catch_signals``): the first
SIGINT or SIGTERM sets ``stopping`` and calls ``on_stop``, a second raises
``KeyboardInterrupt``. A process killed outright leaves its server file behind, which
``live_server`` ignores (its process is gone).
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import IndexBusyError
from ..settings import Settings
from . import keepalive
from .route import mcp_busy_error
from .serverfile import ServerInfo, live_server, remove_server_file, write_server_file

if TYPE_CHECKING:  # pragma: no cover
    import socket

    from ..service import Service

log = logging.getLogger(__name__)

GRACE = 10  # seconds a stopping HTTP server gives the requests at hand


def take_over(settings: Settings) -> None:
    """Stop a keep-alive server that holds the index; any other server that holds it is an
    ``IndexBusyError`` naming it."""
    info = live_server(settings)
    if info is None:
        return
    if not info.keepalive:
        raise busy_error(settings, info)
    keepalive.say(f"codeseam: stopping the keep-alive server (pid {info.pid}) that holds the index")
    keepalive.stop(settings, info)


def busy_error(settings: Settings, info: ServerInfo) -> IndexBusyError:
    if info.kind != "http":
        return mcp_busy_error(settings, info)
    return IndexBusyError(f"the index is already served at {info.where} (pid {info.pid}), which keeps its "
                          "repos current at each query", hint="use that server, or stop it first")


class Listener:
    """One app served by uvicorn on a listening socket, in a thread."""

    def __init__(self, app: Any, sock: socket.socket, *, grace: int = GRACE) -> None:
        import uvicorn

        self.app = app
        config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="off",
                                timeout_graceful_shutdown=grace)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]}, name="codeseam-http",
                                       daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started and self.thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.02)

    def stop(self) -> None:
        """Stop serving (the requests at hand finish), then whatever the app started (its page)."""
        self.server.should_exit = True
        self.thread.join(GRACE + 5)
        for close in getattr(getattr(self.app, "state", None), "closers", ()):
            close()


class Holder:
    """This process holding the index for others (see the module docstring)."""

    def __init__(self, settings: Settings, *, kind: str = "http", trusted: bool = False, lazy: bool = False,
                 signals: bool = True, on_stop: Callable[[], None] | None = None) -> None:
        """``trusted``: reached over a private unix socket only (the keep-alive server, ``watch``):
        paths are trusted like the CLI's own, no token is asked for."""
        from ..service import Service

        self.settings, self.kind, self.lazy, self.signals, self.on_stop = settings, kind, lazy, signals, on_stop
        served = settings.replace(allowed_roots=("/",), server_token="") if trusted else settings
        self.service: Service = Service(served, on_open=self.record if lazy else None)
        self.stopping = threading.Event()
        self.stopped_by: int | None = None
        self._listeners: list[Listener] = []
        self._socket: Path | None = None
        self._recorded = False
        self._old_handlers: dict[int, Any] = {}

    # -- taking the index over ----------------------------------------------------------------
    def __enter__(self) -> Holder:
        try:
            if not self.lazy:
                take_over(self.settings)
                self._open()
            if self.signals:
                self.catch_signals()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _open(self) -> None:
        try:
            self.service.open()
        except IndexBusyError:
            info = live_server(self.settings)  # a server that started meanwhile: say which
            if info is None:
                raise
            raise busy_error(self.settings, info) from None

    # -- serving ------------------------------------------------------------------------------
    def listen_unix(self, path: Path) -> socket.socket:
        """A private unix socket at ``path``, removed when the holder closes."""
        from .process import bind_unix

        sock = bind_unix(path)
        self._socket = path
        return sock

    def serve(self, app: Any, sock: socket.socket) -> None:
        self._listeners.append(Listener(app, sock))

    def record(self, **fields: Any) -> None:
        """Record this process in the server file as the holder of the index."""
        write_server_file(self.settings, self.kind, **fields)
        self._recorded = True

    def run(self, *, idle_exit: float | None = None) -> bool:
        """Wait until ``stopping`` is set (a signal), or until ``idle_exit`` seconds pass without a
        request while no indexing job runs (the end of a job counts as activity); True when it
        stopped idle."""
        activity = self._listeners[0].app.state.activity if self._listeners else None
        step = min(1.0, max(0.05, idle_exit / 4)) if idle_exit else 1.0
        while not self.stopping.wait(step):
            if not all(listener.thread.is_alive() for listener in self._listeners):
                log.error("the HTTP server stopped by itself")
                return False
            if idle_exit and activity is not None:
                if self.service.running_job() is not None:
                    activity.touch()
                elif activity.idle_for() >= idle_exit:
                    return True
        return False

    def catch_signals(self) -> None:
        """From now on, SIGINT and SIGTERM stop the holder (see the module docstring)."""
        if threading.current_thread() is threading.main_thread() and not self._old_handlers:
            for signum in (signal.SIGINT, signal.SIGTERM):
                self._old_handlers[signum] = signal.signal(signum, self._on_signal)

    def _on_signal(self, signum: int, frame: Any) -> None:
        if self.stopped_by is not None:
            raise KeyboardInterrupt
        self.stopped_by = signum
        # set from a thread: the main thread may hold the event's lock where the signal found it
        threading.Thread(target=self._stop, name="codeseam-stop", daemon=True).start()

    def _stop(self) -> None:
        self.stopping.set()
        if self.on_stop is not None:
            self.on_stop()

    def reraise(self) -> None:
        """End as the signal that stopped the holder asks: SIGINT as an interrupt, SIGTERM as exit 143."""
        if self.stopped_by == signal.SIGINT:
            raise KeyboardInterrupt
        if self.stopped_by == signal.SIGTERM:
            raise SystemExit(128 + signal.SIGTERM)

    # -- letting go: one order ----------------------------------------------------------------
    def close(self) -> None:
        for signum, handler in self._old_handlers.items():
            signal.signal(signum, handler)
        self._old_handlers.clear()
        for listener in self._listeners:
            listener.stop()
        self._listeners.clear()
        self.service.close()
        if self._recorded:
            remove_server_file(self.settings)
        if self._socket is not None:
            with contextlib.suppress(OSError):
                self._socket.unlink()
