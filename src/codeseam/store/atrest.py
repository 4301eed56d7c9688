"""The index's data at rest: who may read the Lite files, and what a removed repo leaves behind.

The Lite file holds every indexed chunk's text (scrubbed, but still the user's code), so its
folder is private to the user (0700: created so, or tightened when the index opens) and the
index's own files in it are 0600. Milvus Lite keeps rows as SQLite blobs; a delete leaves
their bytes in free pages, so ``remove`` ends with a ``VACUUM`` that rewrites the file without
them (the Lite process keeps its connection: SQLite sees the new file on its next read).
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)

DIR_MODE = 0o700
FILE_MODE = 0o600


def make_private_dir(folder: Path) -> None:
    """Create ``folder`` (and missing parents) as 0700, or tighten it to 0700 when it is ours
    and others can enter it."""
    folder.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    _tighten(folder, DIR_MODE)


def make_private_files(db: Path) -> None:
    """Tighten the index's own files beside ``db`` (``index.db``, its lock files, a journal)
    to 0600; nothing else in the folder is touched."""
    try:
        entries = list(os.scandir(db.parent))
    except OSError:
        return
    names = (db.name, f".{db.name}")
    for entry in entries:
        if entry.name.startswith(names) and entry.is_file(follow_symlinks=False):
            _tighten(Path(entry.path), FILE_MODE)


def _tighten(path: Path, mode: int) -> None:
    try:
        st = os.stat(path)  # a data dir given as a link is the user's own choice: its target
        if st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) & ~mode:
            os.chmod(path, stat.S_IMODE(st.st_mode) & mode)
    except OSError as exc:
        log.warning("cannot restrict the mode of %s: %s", path, exc)


def vacuum(db: Path, timeout: float = 30.0) -> bool:
    """Rewrite the Lite file so that deleted rows' text is gone from its free pages. Returns
    False (and logs why) when SQLite could not get the file, e.g. a write in progress: the
    removal itself stands, the next ``remove`` vacuums again."""
    import sqlite3

    if not db.is_file():
        return False
    try:
        conn = sqlite3.connect(str(db), timeout=timeout, isolation_level=None)
    except sqlite3.Error as exc:
        log.warning("cannot vacuum %s: %s", db, exc)
        return False
    try:
        conn.execute("VACUUM")
        return True
    except sqlite3.Error as exc:
        log.warning("cannot vacuum %s: %s", db, exc)
        return False
    finally:
        conn.close()
        make_private_files(db)
