"""The corpus an eval indexes, and where the eval keeps its own index.

Two corpus modes:

- ``gold`` (default): exactly the files the golden set names (its distinct gold paths),
  copied from ``--root`` into ``<cache>/corpus/`` with their relative paths. This is what
  ``golden/README.md`` asks for ("index exactly these files and nothing else"): a folder
  of copies indexes the same way as the originals, without the rest of ``--root`` and
  without symlinks (which discovery treats by its own rules). A file is re-copied only
  when its bytes differ, with its modification time, so an unchanged corpus stays
  unchanged for the incremental indexer (a re-run embeds nothing). Copies of files the
  set no longer names are deleted.
- ``all``: ``--root`` itself, as ``codeseam index`` would see it (ignore files, skips).

The eval's index lives in the cache folder (a Milvus Lite file ``eval.db``), never in the
user's index; one collection per (chunker, embedder, enrichment).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from collections.abc import Sequence
from pathlib import Path

from ..errors import ConfigError

CORPUS_MODES = ("gold", "all")
LITE_FILE = "eval.db"


def default_cache_dir(golden: Path, root: Path, corpus: str) -> Path:
    """``<user cache dir>/codeseam/eval/<golden name>-<hash of golden path, root, mode>``."""
    import platformdirs

    key = "\0".join([str(golden.resolve()), str(root.resolve()), corpus])
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", golden.stem)[:40] or "golden"
    return Path(platformdirs.user_cache_dir("codeseam", appauthor=False)) / "eval" / f"{name}-{digest}"


def collection_name(spec_key: str, embedder_id: str) -> str:
    """A Milvus collection name for one (index spec, embedder): letters, digits, underscore."""
    slug = re.sub(r"[^A-Za-z0-9]+", "_", f"{spec_key}_{embedder_id}").strip("_").lower()
    digest = hashlib.sha256(f"{spec_key}\0{embedder_id}".encode()).hexdigest()[:8]
    return f"eval_{slug[:80]}_{digest}"


def prepare_corpus(root: Path, paths: Sequence[str], dest: Path) -> Path:
    """Copy ``paths`` (relative to ``root``) into ``dest``; returns ``dest``."""
    root = root.resolve()
    missing = [p for p in paths if not (root / p).is_file()]
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise ConfigError(f"{len(missing)} gold path(s) are not files under {root}: {shown}",
                          hint="pass --root with the folder the golden set's paths are relative to")
    dest.mkdir(parents=True, exist_ok=True)
    wanted = set(paths)
    for p in sorted(wanted):
        src, dst = root / p, dest / p
        if not (root / p).resolve().is_relative_to(root):
            raise ConfigError(f"gold path {p!r} leaves the corpus root {root}")
        if dst.is_file() and dst.read_bytes() == src.read_bytes():
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
    _prune(dest, wanted)
    return dest


def _prune(dest: Path, wanted: set[str]) -> None:
    for dirpath, dirnames, filenames in os.walk(dest, topdown=False):
        for name in filenames:
            full = Path(dirpath) / name
            if full.relative_to(dest).as_posix() not in wanted:
                full.unlink()
        for name in dirnames:
            d = Path(dirpath) / name
            if d.is_dir() and not any(d.iterdir()):
                d.rmdir()
