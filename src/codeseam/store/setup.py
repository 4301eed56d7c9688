"""Creating, checking, loading and dropping the three collections of an index."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from ..errors import IndexMismatchError, StoreError
from . import schema as sch
from .client import MilvusCalls
from .expr import eq
from .model import IndexMeta

META_ID = "index"
# Milvus' own BM25 parameters, which an index built without any carries
MILVUS_BM25_DEFAULTS: dict[str, float] = {"bm25_k1": 1.2, "bm25_b": 0.75}
INDEX_DEADLINE = 120.0  # seconds an index of an empty collection may take (``_create_one``)
REBUILD_DEADLINE = 3600.0  # seconds a rebuilt BM25 index of a full collection may take (``ensure_bm25``)

log = logging.getLogger(__name__)


def read_meta(m: MilvusCalls, names: sch.Names, location: str) -> IndexMeta | None:
    """The recorded meta, or None when there is no (complete) index."""
    if not set(names.all()) <= set(m.call("list collections", "list_collections")):
        return None
    rows = m.query(names.meta, eq("id", META_ID), ["value"])
    if not rows:
        return None
    try:
        return IndexMeta(**json.loads(rows[0]["value"]))
    except (TypeError, ValueError) as exc:
        raise IndexMismatchError(f"the index at {location} has unreadable metadata ({exc})",
                                 hint="rebuild it: `codeseam index PATH --rebuild`") from None


def create_all(m: MilvusCalls, names: sch.Names, meta: IndexMeta, *, server: bool) -> None:
    drop_all(m, names)  # leftovers of an interrupted creation
    _create_one(m, names.meta, sch.meta_schema(), sch.dummy_index())
    _create_one(m, names.files, sch.files_schema(server=server), sch.dummy_index())
    _create_one(m, names.chunks, sch.chunk_schema(meta.dim, server=server), sch.chunk_index(server=server))
    value = json.dumps(meta.__dict__, sort_keys=True)
    m.upsert(names.meta, [{"id": META_ID, "kind": "index", "repo_id": "", "value": value, "v": sch.DUMMY_VECTOR}])


def _create_one(m: MilvusCalls, name: str, schema: Any, index: Any) -> None:
    # pymilvus waits for each new index in 0.5 s sleeps; on an empty collection the index
    # is ready at once, so ask without waiting and poll briefly instead.
    m.call(f"create collection {name}", "create_collection", name, schema=schema, consistency_level="Strong")
    _build_index(m, name, index, INDEX_DEADLINE)


def _build_index(m: MilvusCalls, name: str, index: Any, seconds: float) -> None:
    """Create ``index`` on collection ``name``, wait until Milvus has built it, load."""
    m.call(f"index {name}", "create_index", name, index, sync=False)
    deadline = time.monotonic() + seconds
    for field in [p.field_name for p in index]:
        while m.call(f"index {name}", "describe_index", name, field).get("state") != "Finished":
            if time.monotonic() > deadline:
                raise StoreError(f"Milvus did not build the {field} index of {name} in time")
            time.sleep(0.01)
    m.call(f"load {name}", "load_collection", name)


def bm25_params(m: MilvusCalls, names: sch.Names) -> dict[str, float]:
    """The BM25 parameters the chunk collection's sparse index was built with."""
    desc = m.call(f"describe the BM25 index of {names.chunks}", "describe_index", names.chunks, "sparse") or {}
    return {k: float(desc.get(k, default)) for k, default in MILVUS_BM25_DEFAULTS.items()}


def ensure_bm25(m: MilvusCalls, names: sch.Names) -> bool:
    """Rebuild the sparse index when it was built with other BM25 parameters than
    ``schema.BM25_PARAMS`` (an index of an older codeseam). Milvus derives the index from the
    stored ``indexed_text``: nothing is re-embedded or rewritten. True when it rebuilt."""
    old = bm25_params(m, names)
    if all(abs(old[k] - v) < 1e-9 for k, v in sch.BM25_PARAMS.items()):
        return False
    # a warning, not info: the one-time rebuild takes a while on a large index (about 40 s at
    # 100k chunks on two shared cores) and a silent pause reads as a hang
    log.warning("rebuilding the BM25 index of %s once with k1 %s, b %s (an older codeseam built it with k1 %s, "
                "b %s); nothing is re-embedded", names.chunks, sch.BM25_PARAMS["bm25_k1"], sch.BM25_PARAMS["bm25_b"],
                old["bm25_k1"], old["bm25_b"])
    m.call(f"release {names.chunks}", "release_collection", names.chunks)
    m.call(f"drop the BM25 index of {names.chunks}", "drop_index", names.chunks, "sparse")
    _build_index(m, names.chunks, sch.sparse_index(), REBUILD_DEADLINE)
    return True


def drop_all(m: MilvusCalls, names: sch.Names) -> None:
    for name in names.all():
        if m.call("check collections", "has_collection", name):
            m.call(f"drop collection {name}", "drop_collection", name)


def load_all(m: MilvusCalls, names: sch.Names) -> None:
    for name in names.all():
        state = m.call(f"check {name}", "get_load_state", name)
        if str(state.get("state")) != "Loaded":
            m.call(f"load {name}", "load_collection", name)


def mismatch_error(meta: IndexMeta, expect: IndexMeta, location: str, records: dict[str, dict],
                   *, lite: bool) -> IndexMismatchError:
    roots = [r.get("root") or repo for repo, r in sorted(records.items())]
    first = roots[0] if roots else "PATH"
    rest = f", then `codeseam index ROOT` for each other repo ({', '.join(roots[1:])})" if len(roots) > 1 else ""
    delete = f" (or delete {location})" if lite else ""
    return IndexMismatchError(
        f"the index at {location} was built differently: {'; '.join(meta.differences(expect))}",
        hint=f"rebuild the whole index with `codeseam index {first} --rebuild`{delete}{rest}; "
        "or switch back to the settings it was built with",
    )
