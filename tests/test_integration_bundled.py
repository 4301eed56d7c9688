"""The real bundled model (all-MiniLM-L6-v2, its files in src/codeseam/embed/models) end to end:
index a small real repo, find code by meaning, and never exceed the model's 256 word pieces."""
from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest

from codeseam import api
from codeseam.settings import load_settings

pytestmark = pytest.mark.integration

FILES = {
    "net/retry.py": '''\
        import random


        def backoff_delay(attempt, base=0.5, cap=30.0):
            """How long to sleep before the next attempt: exponential backoff with jitter."""
            return random.uniform(0, min(cap, base * 2 ** attempt))
        ''',
    "util/strings.py": '''\
        def slugify(title):
            """Lower-case a title and join its words with hyphens for use in a URL."""
            return "-".join(title.lower().split())
        ''',
    "db/pool.go": '''\
        package db

        // Pool keeps open database connections for reuse.
        type Pool struct {
            conns []Conn
        }

        // Acquire takes a free connection from the pool or opens a new one.
        func (p *Pool) Acquire() Conn {
            if len(p.conns) == 0 {
                return Open()
            }
            c := p.conns[len(p.conns)-1]
            p.conns = p.conns[:len(p.conns)-1]
            return c
        }
        ''',
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "small"
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def test_bundled_model_end_to_end(repo: Path, isolated_env):
    settings = load_settings()  # the default: bundled model
    report = api.index(repo, settings=settings)
    assert report.files_indexed == 3 and report.truncated == 0
    with api.open_index(settings) as ix:
        # the default is the exact fp32 export (RAG_EMBEDDING_PRECISION=int8: embed/quantize.py)
        assert ix.embedder.id == "bundled:all-MiniLM-L6-v2" and ix.embedder.dim == 384
        expectations = {
            "where does the retry delay get computed?": "net/retry.py",
            "turn a title into a url slug": "util/strings.py",
            "take a connection from the database pool": "db/pool.go",
        }
        for query, path in expectations.items():
            for mode in ("dense", "hybrid"):
                top = ix.search(query, k=3, mode=mode).hits[0]
                assert top.path == path, (query, mode, top)
        hit = ix.search("Pool.Acquire", k=1).hits[0]
        assert hit.symbol == "Pool.Acquire" and hit.language == "go"
        # every chunk fits the model: nothing embedded was truncated
        from codeseam.chunk import chunk_file
        from codeseam.indexing.pipeline import make_budget

        budget = make_budget(settings, ix.embedder)
        assert budget.max_tokens == 254
        for rel in FILES:
            for c in chunk_file(rel, (repo / rel).read_text(), budget=budget):
                assert ix.embedder.count_tokens(c.indexed_text) <= 254
        assert ix.embedder.truncated == 0
    assert api.index(repo, settings=settings).chunks_embedded == 0
