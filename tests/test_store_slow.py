"""Past Milvus' 16,384-row query window, on real Milvus Lite (slow: ~20k rows)."""

from __future__ import annotations

import pytest

from codeseam.records import content_hash
from codeseam.store import ChunkRow, FileEntry, Filters, Store
from codeseam.store.client import MAX_WINDOW
from tests.test_store import META, chunk, embed, settings_for

pytestmark = pytest.mark.slow

BIG = MAX_WINDOW + 600


def test_reads_and_deletes_page_past_the_query_window(tmp_path):
    vec = embed("row")
    rows = [ChunkRow(content_hash("big", str(i)), "r", "fh", chunk("big.py", f"row {i}", start=i + 1), vec)
            for i in range(BIG)]
    rows += [ChunkRow(content_hash("small", str(i)), "r", "fh", chunk("small.py", f"row {i}", start=i + 1), vec)
             for i in range(50)]
    files = [FileEntry("r", f"d/{i}.py", i, i, "h", 1, 0.0) for i in range(BIG)]
    with Store.open(settings_for(tmp_path), expect=META, create=True) as store:
        store.insert_chunks(rows)
        store.put_file_entries(files)
        assert store.chunk_paths("r") == {"big.py": BIG, "small.py": 50}
        assert len(store.file_entries("r")) == BIG
        assert store.stats() == {"r": {"files": BIG, "chunks": BIG + 50}}
        got = [(c.path, c.start_line) for c in store.iter_chunks("r")]
        assert got == sorted((r.chunk.path, r.chunk.start_line) for r in rows)
        assert len(store.vectors_by_hash([r.chunk.hash for r in rows[:1000]])) == 1000
        assert store.delete_paths("r", ["big.py"]) == BIG
        assert store.chunk_paths("r") == {"small.py": 50}
        assert len(store.bm25_search("row", 100, Filters())) == 50
