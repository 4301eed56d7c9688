"""The three collections of an index named N, as pymilvus schemas and index parameters.

- ``N``        chunks: text, BM25-analysed ``indexed_text`` (Milvus' BM25 Function writes
               ``sparse``), the dense vector, and where the chunk lives;
- ``N_files``  the file manifest, one row per (repo_id, path);
- ``N_meta``   key/value rows: the index meta, one record per repo and one chunk layout per
               file (``layouts.py``).

Milvus needs a vector field in every collection, so the two small ones carry a 2-d dummy.
``repo_id`` is the partition key only on a Milvus server: on Milvus Lite 2.5 a partition key
breaks filters and hybrid search.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .model import LIMITS

ANALYZER_PARAMS: dict[str, Any] = {"type": "standard"}
DUMMY_DIM = 2
DUMMY_VECTOR = [1.0, 0.0]
HNSW_PARAMS = {"M": 16, "efConstruction": 200}
# BM25's term-frequency saturation (k1) and length normalisation (b) of the sparse index: build
# parameters, not search parameters (Milvus reads them from the index). Milvus' defaults are 1.2
# and 0.75; a word a chunk repeats says more in code than in prose (a function about redirects
# names them in its signature, its calls and its comments), and k1 = 1.6 lifted BM25 alone on all
# three dev sets with the hybrid unchanged (bench/results/bm25-params.md).
# An index built with other values is upgraded in place when it is next opened for writing
# (``setup.ensure_bm25``): the sparse index is rebuilt from the stored text, nothing re-embedded.
BM25_PARAMS: dict[str, float] = {"bm25_k1": 1.6, "bm25_b": 0.75}
# Vectors are unit length (the embedder normalises them; the store checks), so inner product
# *is* cosine similarity, and Milvus Lite's brute-force search measured ~1.5x faster with IP
# than with COSINE at 100k rows. Lite offers FLAT and IVF_FLAT only, and IVF_FLAT there
# measured recall@40 0.40 whatever nlist/nprobe, so Lite stays exact (bench/results/store.md).
DENSE_METRIC = "IP"

# A chunk row is written keyword-only first (zero dense vector, ``embedded`` false: BM25 finds
# it, dense search filters it out) and gets its vector from the dense backfill.
EMBEDDED = "embedded"
DENSE_READY = f"{EMBEDDED} == true"
DENSE_PENDING = f"{EMBEDDED} == false"
# Fields Milvus derives (never written): dropped from a row read back before it is rewritten.
DERIVED_FIELDS = ("sparse",)

CHUNK_FIELDS = ("id", "repo_id", "path", "language", "symbol", "parent", "kind", "role", "start_line",
                "end_line", "text", "chunk_hash", "file_hash")
FILE_FIELDS = ("id", "repo_id", "path", "size", "mtime_ns", "file_hash", "n_chunks", "indexed_at")
META_FIELDS = ("id", "kind", "repo_id", "value")


@dataclass(frozen=True)
class Names:
    chunks: str
    files: str
    meta: str

    @classmethod
    def of(cls, collection: str) -> Names:
        return cls(collection, f"{collection}_files", f"{collection}_meta")

    def all(self) -> tuple[str, str, str]:
        return (self.chunks, self.files, self.meta)


def uses_partition_key(uri: str) -> bool:
    """True for a Milvus server URI (http, https, tcp, grpc), where the partition key works."""
    return uri.lower().startswith(("http://", "https://", "tcp://", "grpc://"))


def chunk_schema(dim: int, *, server: bool):
    from pymilvus import DataType, Function, FunctionType, MilvusClient

    s = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
    s.add_field("id", DataType.VARCHAR, is_primary=True, max_length=LIMITS["id"])
    s.add_field("repo_id", DataType.VARCHAR, max_length=LIMITS["repo_id"], is_partition_key=server)
    for name in ("path", "language", "symbol", "parent", "kind", "role"):
        s.add_field(name, DataType.VARCHAR, max_length=LIMITS[name])
    s.add_field("start_line", DataType.INT64)
    s.add_field("end_line", DataType.INT64)
    s.add_field("text", DataType.VARCHAR, max_length=LIMITS["text"])
    s.add_field("indexed_text", DataType.VARCHAR, max_length=LIMITS["indexed_text"],
                enable_analyzer=True, analyzer_params=ANALYZER_PARAMS)
    s.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    s.add_field("dense", DataType.FLOAT_VECTOR, dim=dim)
    s.add_field("file_hash", DataType.VARCHAR, max_length=LIMITS["file_hash"])
    s.add_field("chunk_hash", DataType.VARCHAR, max_length=LIMITS["chunk_hash"])
    s.add_field(EMBEDDED, DataType.BOOL)
    s.add_function(Function(name="indexed_text_bm25", function_type=FunctionType.BM25,
                            input_field_names=["indexed_text"], output_field_names=["sparse"]))
    return s


def chunk_index(*, server: bool):
    from pymilvus import MilvusClient

    ip = MilvusClient.prepare_index_params()
    if server:
        ip.add_index("dense", index_type="HNSW", metric_type=DENSE_METRIC, params=HNSW_PARAMS)
        ip.add_index("repo_id", index_type="INVERTED")
        ip.add_index("chunk_hash", index_type="INVERTED")
    else:
        ip.add_index("dense", index_type="FLAT", metric_type=DENSE_METRIC)
    return _with_sparse(ip)


def sparse_index():
    """The chunk collection's BM25 index alone (``setup.ensure_bm25`` rebuilds it)."""
    from pymilvus import MilvusClient

    return _with_sparse(MilvusClient.prepare_index_params())


def _with_sparse(ip):
    ip.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25", params=dict(BM25_PARAMS))
    return ip


def files_schema(*, server: bool):
    from pymilvus import DataType, MilvusClient

    s = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
    s.add_field("id", DataType.VARCHAR, is_primary=True, max_length=64)
    s.add_field("repo_id", DataType.VARCHAR, max_length=LIMITS["repo_id"], is_partition_key=server)
    s.add_field("path", DataType.VARCHAR, max_length=LIMITS["path"])
    for name in ("size", "mtime_ns", "n_chunks"):
        s.add_field(name, DataType.INT64)
    s.add_field("file_hash", DataType.VARCHAR, max_length=LIMITS["file_hash"])
    s.add_field("indexed_at", DataType.DOUBLE)
    s.add_field("v", DataType.FLOAT_VECTOR, dim=DUMMY_DIM)
    return s


def meta_schema():
    from pymilvus import DataType, MilvusClient

    s = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
    s.add_field("id", DataType.VARCHAR, is_primary=True, max_length=64)
    s.add_field("kind", DataType.VARCHAR, max_length=16)
    s.add_field("repo_id", DataType.VARCHAR, max_length=LIMITS["repo_id"])
    s.add_field("value", DataType.VARCHAR, max_length=65_535)
    s.add_field("v", DataType.FLOAT_VECTOR, dim=DUMMY_DIM)
    return s


def dummy_index():
    from pymilvus import MilvusClient

    ip = MilvusClient.prepare_index_params()
    ip.add_index("v", index_type="FLAT", metric_type="L2")
    return ip


def dense_search_params(limit: int, *, server: bool) -> dict[str, Any]:
    if server:
        return {"metric_type": DENSE_METRIC, "params": {"ef": max(64, limit)}}
    return {"metric_type": DENSE_METRIC}
