"""Connecting a store: the Lite lock and server process, or a Milvus server."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import NotIndexedError, StoreError
from ..settings import Settings
from . import schema as sch
from .atrest import make_private_dir, make_private_files
from .client import MilvusCalls
from .lite import check_lite_path, start_lite, wait_gone
from .lock import IndexLock, busy_error, holder_of

log = logging.getLogger(__name__)


@dataclass
class Connection:
    calls: MilvusCalls
    uri: str
    location: str  # the Lite file, or the server URI
    server: bool  # a Milvus server with partition key and HNSW (vs Lite)
    lite: bool  # a Milvus Lite file this process holds
    closers: list[Callable[[], None]] = field(default_factory=list)
    unclean: bool = False  # the previous holder of the Lite file died without closing it

    def close(self) -> None:
        closers, self.closers = self.closers, []
        run_all(closers)


def run_all(closers: list[Callable[[], None]]) -> None:
    for close in closers:
        try:
            close()
        except Exception:  # closing must not hide the error being raised
            log.warning("error while closing the store", exc_info=True)


def connect(settings: Settings, *, create: bool, lock_timeout: float) -> Connection:
    uri = settings.resolved_milvus_uri
    if not settings.is_lite:
        return _connect_server(uri, settings.milvus_token)
    db = Path(uri).expanduser().resolve()
    check_lite_path(db)
    if not db.exists() and not create:
        raise NotIndexedError(f"nothing is indexed yet (no index at {db})", hint="run `codeseam index PATH`")
    if db.parent == settings.data_path.expanduser().resolve():
        make_private_dir(db.parent)  # the data dir: 0700 (a Lite file elsewhere keeps its folder)
    else:
        db.parent.mkdir(parents=True, exist_ok=True)
    lock = IndexLock(db).acquire(lock_timeout)
    closers: list[Callable[[], None]] = [lock.release]
    try:
        wait_gone((lock.previous or {}).get("server_pid"), db)
        server = start_lite(db)  # returns at once: the server boots while pymilvus imports
        if server is None:
            closers.insert(0, lambda: _release_fallback(db))
        else:
            closers.insert(0, server.stop)
            lock.note(server_pid=server.proc.pid)
        client = _lite_client(db, server)
        closers.insert(0, client.close)
        make_private_files(db)  # index.db and its locks: 0600, whoever created them
    except BaseException:
        run_all(closers)
        raise
    calls = MilvusCalls(client, retry_times=3, where=str(db), alive=server.alive if server else None,
                        log_tail=server.log_tail if server else None)
    unclean = bool((lock.previous or {}).get("pid"))  # a clean release truncates the record
    return Connection(calls, uri, str(db), False, True, closers, unclean=unclean)


def _connect_server(uri: str, token: str) -> Connection:
    pymilvus = import_pymilvus()
    try:
        client = pymilvus.MilvusClient(uri=uri, token=token, timeout=10)
    except Exception as exc:  # any connect failure is one clear message
        raise StoreError(f"cannot reach Milvus at {uri}: {str(exc)[:300]}",
                         hint="check RAG_MILVUS_URI / RAG_MILVUS_TOKEN and that the server runs") from exc
    calls = MilvusCalls(client, retry_times=10, where=uri)
    return Connection(calls, uri, uri, sch.uses_partition_key(uri), False, [client.close])


def import_pymilvus() -> Any:
    from ._imports import import_pymilvus as _import

    module = _import()
    # its failures reach users as StoreError; pymilvus gives some of its loggers their own
    # level and handler, so quiet each of them, not only the parent
    for name in [n for n in logging.root.manager.loggerDict if n.startswith("pymilvus")] + ["pymilvus"]:
        logging.getLogger(name).setLevel(logging.CRITICAL)
    return module


def _lite_client(db: Path, server: Any) -> Any:
    pymilvus = import_pymilvus()
    if server is not None:
        server.wait_ready()
        try:
            return pymilvus.MilvusClient(uri=server.uri, timeout=30)
        except Exception as exc:
            raise StoreError(f"cannot connect to Milvus Lite for {db}: {str(exc)[:300]}") from exc
    try:  # milvus-lite other than 2.5.x: pymilvus' own path (slower start)
        return pymilvus.MilvusClient(uri=str(db))
    except Exception as exc:
        if "Open local milvus failed" in str(exc):
            raise busy_error(db, holder_of(db)) from None
        raise StoreError(f"cannot open Milvus Lite file {db}: {str(exc)[:300]}") from exc


def _release_fallback(db: Path) -> None:
    from milvus_lite.server_manager import server_manager_instance

    server_manager_instance.release_server(str(db))
