"""Index and search end to end: real git repos in temp dirs, real Milvus Lite, real
tree-sitter; only the embedding model is the deterministic fake."""
from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest

from codeseam import api
from codeseam.errors import ConfigError, IndexMismatchError, NotIndexedError
from codeseam.settings import load_settings

RETRY_PY = textwrap.dedent('''\
    """Retry helpers."""
    import random
    import time


    def compute_retry_delay(attempt, base=0.5, cap=30.0):
        """Exponential backoff with full jitter."""
        return random.uniform(0, min(cap, base * 2 ** attempt))


    class RetryPolicy:
        def __init__(self, attempts=5):
            self.attempts = attempts

        def should_retry(self, error, attempt):
            return attempt < self.attempts and isinstance(error, OSError)
    ''')

PARSE_GO = textwrap.dedent('''\
    package config

    import "encoding/json"

    type Config struct {
        Name string
    }

    func ParseJSON(data []byte) (*Config, error) {
        var c Config
        err := json.Unmarshal(data, &c)
        return &c, err
    }
    ''')


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@t.invalid", "-c", "user.name=t", *args], cwd=cwd,
                   check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "retry.py").write_text(RETRY_PY)
    (root / "config.go").write_text(PARSE_GO)
    (root / "notes.md").write_text("# Notes\n\nThe retry delay uses jitter.\n")
    (root / ".gitignore").write_text("build/\n")
    (root / "build").mkdir()
    (root / "build" / "out.py").write_text("IGNORED = True\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "init")
    return root


@pytest.fixture
def settings(isolated_env):
    return load_settings({"embedding_backend": "fake"})


def test_index_search_resync(repo: Path, settings):
    report = api.index(repo, settings=settings)
    assert report.repo_id == "proj"
    assert report.files_indexed == 4 and report.chunks_embedded > 0
    paths = {row["path"] for row in api.inspect("proj", settings=settings)["chunks"]}
    assert paths == {"pkg/retry.py", "config.go", "notes.md", ".gitignore"}

    result = api.search("compute_retry_delay", settings=settings, k=3)
    top = result.hits[0]
    assert (top.path, top.symbol) == ("pkg/retry.py", "compute_retry_delay")
    assert top.start_line <= 6 <= top.end_line  # small neighbours (docstring, imports) merge in
    lines = RETRY_PY.split("\n")
    assert top.text == "\n".join(lines[top.start_line - 1:top.end_line]) + "\n"
    assert top.repo == "proj" and top.language == "python"

    # a re-sync of an unchanged repo embeds nothing and writes nothing
    again = api.index(repo, settings=settings)
    assert (again.chunks_embedded, again.chunks_written, again.files_indexed) == (0, 0, 0)
    assert again.files_unchanged == 4

    # a changed file: only its new chunks are embedded; a deleted file leaves the index
    (repo / "pkg" / "retry.py").write_text(RETRY_PY.replace("attempts=5", "attempts=7"))
    (repo / "config.go").unlink()
    third = api.index(repo, settings=settings)
    assert third.files_indexed == 1 and third.files_deleted == 1
    assert 0 < third.chunks_embedded < report.chunks_embedded
    assert third.chunks_reused >= 1
    rows = api.inspect("proj", settings=settings)
    assert "config.go" not in rows["files"]
    assert all(r["path"] != "config.go" for r in rows["chunks"])
    assert any("attempts=7" in h.text for h in api.search("RetryPolicy attempts", settings=settings).hits)


def test_touch_without_change_costs_no_embedding(repo: Path, settings):
    api.index(repo, settings=settings)
    f = repo / "pkg" / "retry.py"
    f.write_text(f.read_text())  # new mtime, same content
    report = api.index(repo, settings=settings)
    assert report.chunks_embedded == 0 and report.files_indexed == 0 and report.files_unchanged == 4


def test_filters_and_errors(repo: Path, settings):
    api.index(repo, settings=settings)
    go = api.search("parse json config", language="go", settings=settings)
    assert go.hits and all(h.language == "go" for h in go.hits)
    py = api.search("retry", path_glob="pkg/*.py", settings=settings)
    assert py.hits and all(h.path.startswith("pkg/") for h in py.hits)
    with pytest.raises(NotIndexedError, match="not indexed"):
        api.search("retry", repo="other", settings=settings)
    with pytest.raises(ConfigError):
        api.search("   ", settings=settings)


def test_language_filters_take_the_names_people_use(repo: Path, settings):
    api.index(repo, settings=settings)
    for name in ("go", "Go", " GO ", "golang"):
        hits = api.search("parse json config", language=name, settings=settings).hits
        assert hits and {h.language for h in hits} == {"go"}, name
    for name in ("Python", "py", "PY"):
        hits = api.search("retry delay", language=name, settings=settings).hits
        assert hits and {h.language for h in hits} == {"python"}, name


def test_a_filter_no_indexed_file_passes_is_an_error_naming_what_is_indexed(repo: Path, settings):
    api.index(repo, settings=settings)
    with pytest.raises(NotIndexedError, match=r"language 'cobol' \(indexed: gitignore, go, markdown, python\)"):
        api.search("retry", language="cobol", settings=settings)
    with pytest.raises(NotIndexedError, match="in repo 'proj' matches the path glob 'nope/\\*\\*'"):
        api.search("retry", path_glob="nope/**", repo="proj", settings=settings)
    with pytest.raises(NotIndexedError, match="in language 'go' matches the path glob 'pkg/\\*'"):
        api.search("retry", path_glob="pkg/*", language="go", settings=settings)
    # a filter that files pass but whose rows BM25 does not score: an empty result, not an error
    result = api.search("zzqq nothing like this", path_glob="pkg/*", mode="bm25", settings=settings)
    assert result.hits == ()


def test_not_indexed_is_an_error_not_an_empty_list(settings):
    with pytest.raises(NotIndexedError):
        api.search("anything", settings=settings)


def test_remove_repo(repo: Path, settings):
    api.index(repo, settings=settings)
    assert api.remove("proj", settings=settings) > 0
    with pytest.raises(NotIndexedError):
        api.search("retry", repo="proj", settings=settings)


def test_embedder_mismatch_names_rebuild(repo: Path, settings):
    api.index(repo, settings=settings)
    other = settings.replace(embedding_dim=32)
    with pytest.raises(IndexMismatchError, match="--rebuild"):
        api.search("retry", settings=other)
    report = api.index(repo, settings=other, rebuild=True)
    assert report.files_indexed == 4
    assert api.search("retry", settings=other).hits


def test_dry_run_touches_nothing(repo: Path, settings):
    report = api.index(repo, settings=settings, dry_run=True)
    assert report.dry_run and report.files_seen == 4
    assert report.by_language == {"gitignore": 1, "go": 1, "markdown": 1, "python": 1}
    with pytest.raises(NotIndexedError):
        api.search("retry", settings=settings)


def test_same_repo_id_other_root_is_refused(repo: Path, settings, tmp_path: Path):
    api.index(repo, settings=settings)
    other = tmp_path / "elsewhere" / "proj"
    other.mkdir(parents=True)
    (other / "a.py").write_text("x = 1\n")
    with pytest.raises(ConfigError, match="--repo-id"):
        api.index(other, settings=settings)
    assert api.index(other, repo_id="proj2", settings=settings).files_indexed == 1


def test_search_of_a_repo_without_chunks(tmp_path: Path, settings, capfd):
    """An index whose repos hold no chunks (only empty files) answers with no hits, not a
    Milvus error (BM25 cannot score an empty collection), and logs nothing to stderr."""
    root = tmp_path / "empty"
    root.mkdir()
    (root / "a.py").write_text("")
    report = api.index(root, settings=settings)
    assert report.files_indexed == 1 and report.chunks_written == 0
    for mode in ("hybrid", "bm25", "dense"):
        result = api.search("hello", settings=settings, mode=mode)
        assert result.hits == ()
    assert "ERROR" not in capfd.readouterr().err
