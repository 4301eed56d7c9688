"""Roles end to end: stored per chunk, shown in every hit, filtered by in the library and the
CLI (HTTP and MCP: tests/test_http.py, tests/test_mcp.py). Real Milvus Lite, real
tree-sitter, a real git repo; the fake embedder."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from codeseam import api
from codeseam.errors import ConfigError, NotIndexedError
from codeseam.settings import load_settings
from codeseam.surfaces.cli import main
from tests.support.fixtures import RETRY_PY

FILES = {
    "pkg/retry.py": RETRY_PY,
    "tests/test_retry.py": "from pkg.retry import compute_retry_delay\n\n\ndef test_retry_delay_is_capped():\n"
                           "    assert compute_retry_delay(50, cap=3.0) <= 3.0\n",
    "docs/retries.md": "# Retries\n\nThe retry delay grows exponentially with full jitter and is capped.\n",
    "CHANGELOG.md": "# Changelog\n\n## 1.1\n\n- Fix the retry delay cap (compute_retry_delay).\n",
}


@pytest.fixture
def repo(isolated_env) -> Path:
    root = isolated_env / "proj"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


@pytest.fixture
def settings(isolated_env):
    return load_settings({"embedding_backend": "fake"})


def test_roles_are_stored_shown_and_filtered(repo: Path, settings):
    api.index(repo, settings=settings)
    rows = api.inspect("proj", settings=settings)["chunks"]
    assert {r["path"]: r["role"] for r in rows} == {
        "pkg/retry.py": "source", "tests/test_retry.py": "test", "docs/retries.md": "docs",
        "CHANGELOG.md": "changelog"}

    every = api.search("retry delay", settings=settings, k=10)
    assert {h.role for h in every.hits} == {"source", "test", "docs", "changelog"}
    assert all(h.role == {r["path"]: r["role"] for r in rows}[h.path] for h in every.hits)

    tests = api.search("retry delay", settings=settings, k=10, role="test")
    assert tests.hits and {h.path for h in tests.hits} == {"tests/test_retry.py"}
    prose = api.search("retry delay", settings=settings, k=10, role=["docs", "changelog"])
    assert {h.role for h in prose.hits} == {"docs", "changelog"}
    assert {h.role for h in api.search("retry delay", settings=settings, role="Source,").hits} == {"source"}

    with pytest.raises(NotIndexedError, match=r"role benchmark \(indexed roles: source, test, docs, changelog\)"):
        api.search("retry delay", settings=settings, role="benchmark")
    with pytest.raises(ConfigError, match="unknown role 'tests'") as err:
        api.search("retry delay", settings=settings, role="tests")
    assert "source, test, docs" in (err.value.hint or "")


def run(capsys, *args: str) -> tuple[int, str, str]:
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_role_flag_and_json(repo: Path, settings, capsys):
    assert run(capsys, "index", str(repo))[0] == 0
    code, out, _ = run(capsys, "search", "retry", "delay", "--role", "test", "--role", "docs", "--json")
    assert code == 0
    hits = json.loads(out)["hits"]
    assert hits and {h["role"] for h in hits} == {"test", "docs"}
    code, _, err = run(capsys, "search", "retry", "delay", "--role", "nonsense")
    assert code == 1 and "unknown role 'nonsense'" in err and "Traceback" not in err
    code, out, _ = run(capsys, "search", "retry", "delay", "--role", "changelog")
    assert code == 0 and "CHANGELOG.md" in out and "changelog" in out


def test_role_rules_change_reindexes_without_embedding(repo: Path, settings, monkeypatch):
    from codeseam.discover import roles

    api.index(repo, settings=settings)
    monkeypatch.setattr(roles, "ROLES_VERSION", roles.ROLES_VERSION + 1)
    monkeypatch.setattr("codeseam.indexing.pipeline.ROLES_VERSION", roles.ROLES_VERSION)
    again = api.index(repo, settings=settings)
    assert again.files_indexed == len(FILES) and again.chunks_embedded == 0
