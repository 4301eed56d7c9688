"""The description cache: SQLite under the data dir (``enrich-cache.sqlite``).

Keyed by (chunk hash, model, language, prompt version): re-indexing reuses every
description whose chunk did not change, and a change of model, language or prompt
re-enriches. Only accepted descriptions are stored, so failures are asked again next run.
The cache also keeps the measured seconds per description of each model, for
``--dry-run`` estimates. One connection, guarded by a lock: safe to share between threads.
A cache file that cannot be opened is not fatal: the run goes on with an in-memory cache
and a warning (descriptions are then not kept).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

log = logging.getLogger(__name__)

FILENAME = "enrich-cache.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS descriptions (
    chunk_hash TEXT NOT NULL, model TEXT NOT NULL, language TEXT NOT NULL,
    prompt_version TEXT NOT NULL, description TEXT NOT NULL, created REAL NOT NULL,
    PRIMARY KEY (chunk_hash, model, language, prompt_version)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rates (
    model TEXT PRIMARY KEY, seconds_per_chunk REAL NOT NULL, samples INTEGER NOT NULL,
    updated REAL NOT NULL
);
"""
_BATCH = 500  # parameters per IN (...) query


class DescriptionCache:
    """Descriptions by (chunk hash, model, language, prompt version)."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = str(path) if path is not None else ":memory:"
        self._lock = threading.Lock()
        self._db = self._open(self.path)

    @staticmethod
    def _open(path: str) -> sqlite3.Connection:
        db = None
        try:
            if path != ":memory:":
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(path, check_same_thread=False, timeout=30.0)
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(_SCHEMA)
            return db
        except (OSError, sqlite3.Error) as exc:
            if db is not None:
                db.close()
            log.warning("cannot open the enrichment cache %s (%s); descriptions will not be kept",
                        path, exc)
            db = sqlite3.connect(":memory:", check_same_thread=False)
            db.executescript(_SCHEMA)
            return db

    def get_many(self, hashes: Sequence[str], model: str, language: str, version: str) -> dict[str, str]:
        out: dict[str, str] = {}
        unique = list(dict.fromkeys(hashes))
        with self._lock:
            for i in range(0, len(unique), _BATCH):
                part = unique[i:i + _BATCH]
                marks = ",".join("?" * len(part))
                rows = self._db.execute(
                    f"SELECT chunk_hash, description FROM descriptions WHERE model=? AND language=? "
                    f"AND prompt_version=? AND chunk_hash IN ({marks})",
                    (model, language, version, *part),
                ).fetchall()
                out.update(rows)
        return out

    def put_many(self, items: Iterable[tuple[str, str]], model: str, language: str, version: str) -> None:
        now = time.time()
        rows = [(h, model, language, version, d, now) for h, d in items]
        if not rows:
            return
        with self._lock:
            try:
                with self._db:
                    self._db.executemany(
                        "INSERT OR REPLACE INTO descriptions VALUES (?, ?, ?, ?, ?, ?)", rows)
            except sqlite3.Error as exc:  # disk full, locked too long: lose the cache, not the run
                log.warning("could not write %d descriptions to the enrichment cache: %s", len(rows), exc)

    def rate(self, model: str) -> float | None:
        """Measured seconds per description for ``model``, if any run measured it."""
        with self._lock:
            row = self._db.execute("SELECT seconds_per_chunk FROM rates WHERE model=?", (model,)).fetchone()
        return float(row[0]) if row else None

    def record_rate(self, model: str, seconds_per_chunk: float, samples: int) -> None:
        """Blend a run's measurement into the stored rate (weighted by samples, capped so
        recent runs count)."""
        if samples <= 0 or seconds_per_chunk <= 0:
            return
        with self._lock:
            try:
                with self._db:
                    row = self._db.execute("SELECT seconds_per_chunk, samples FROM rates WHERE model=?",
                                           (model,)).fetchone()
                    if row:
                        old, n = float(row[0]), min(int(row[1]), 200)
                        seconds_per_chunk = (old * n + seconds_per_chunk * samples) / (n + samples)
                        samples += n
                    self._db.execute("INSERT OR REPLACE INTO rates VALUES (?, ?, ?, ?)",
                                     (model, seconds_per_chunk, samples, time.time()))
            except sqlite3.Error as exc:
                log.warning("could not record the enrichment rate: %s", exc)

    def count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM descriptions").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()
