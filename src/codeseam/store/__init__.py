"""The store (DESIGN §6): one Milvus collection for all repos, plus a file manifest and
index metadata, behind :class:`Store`.

Per index name N (``settings.collection``): ``N`` holds the chunks (dense vector, BM25
sparse vector derived by Milvus from ``indexed_text``, text and location), ``N_files`` the
manifest, ``N_meta`` the index meta and repo records. Milvus Lite (a local ``.db`` file,
one process at a time, guarded by a lock) or a Milvus server (``RAG_MILVUS_URI``), with the
same code path. ``import codeseam.store`` does not import pymilvus.

Modules: ``model`` (records, limits), ``expr`` (safe filter expressions, path globs),
``schema`` (collections), ``lock`` and ``lite`` (Milvus Lite process), ``client`` (errors,
paging, batching), ``core`` (``Store``) with its mixins ``retrieval``, ``pending`` and
``layouts``.
"""

from __future__ import annotations

from .core import Store
from .model import SCHEMA_VERSION, ChunkRow, FileEntry, Filters, IndexMeta, StoredChunk

__all__ = ["Store", "IndexMeta", "FileEntry", "ChunkRow", "StoredChunk", "Filters",
           "SCHEMA_VERSION"]
