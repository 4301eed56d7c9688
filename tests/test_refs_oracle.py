"""``refs`` against an oracle over whole real repositories (repos-dev: clap, flask, got, mocha,
testify in ``../shared/corpora``): for 30 definitions sampled per repository, every line
``Index.refs`` returns holds the name as a whole word outside comments and strings (precision
1.0 by line), and it finds at least 95% of those occurrences. The oracle is ripgrep ``-w``
less the grammar's comment and string nodes (``tests/support/refs_oracle.py``). The index is
real (Milvus Lite, BM25 candidates), the embedder the fake one (refs never embeds)."""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

from codeseam import api
from codeseam.settings import load_settings
from tests.support.refs_oracle import Oracle, code_files, have_rg, sample_definitions, score

CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"
REPOS = ("clap", "flask", "got", "mocha", "testify")
MIN_RECALL = 0.95

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not all((CORPORA / r).is_dir() for r in REPOS), reason=f"no repos-dev corpora at {CORPORA}"),
    pytest.mark.skipif(not have_rg(), reason="ripgrep (rg) is not installed: apt-get install ripgrep"),
]


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    data = tmp_path_factory.mktemp("refs-oracle")
    (data / "config.toml").write_text("")
    settings = load_settings({"data_dir": str(data), "embedding_backend": "fake", "embedding_model": "fake:16",
                              "keepalive": 0}, env={"RAG_CONFIG": str(data / "config.toml")})
    for repo in REPOS:
        api.index(CORPORA / repo, repo_id=repo, settings=settings)
    with api.Index(settings) as ix:
        yield ix


@pytest.mark.parametrize("repo", REPOS)
def test_refs_are_real_uses_and_find_nearly_every_one(index, repo: str) -> None:
    files = code_files(CORPORA / repo)
    oracle = Oracle(CORPORA / repo, files)
    names = sample_definitions(files, 30)
    assert len(names) == 30
    total = matched = 0
    false_lines, missed = {}, {}
    for name in names:
        result = index.refs(name, repo=repo)
        found = collections.Counter((r.path, r.line) for r in result.refs)
        assert all(r.repo == repo for r in result.refs)
        assert any(r.kind == "def" for r in result.refs), f"{name}: its definition is not found"
        expected = oracle.counts(name)
        false, hit, n = score(found, expected)
        if false:
            false_lines[name] = false[:5]
        if hit < n:
            missed[name] = [k for k in expected if found[k] < expected[k]][:5]
        total, matched = total + n, matched + hit
    assert not false_lines, f"lines that hold no code occurrence: {false_lines}"
    recall = matched / total
    assert recall >= MIN_RECALL, f"recall {recall:.3f} < {MIN_RECALL}; missed: {missed}"
