"""A secret planted in a repo never comes back out of the index: not from dense search, not
from BM25, not by its own value, not by its variable name, and not from the stored rows."""
from __future__ import annotations

import secrets
import subprocess
from pathlib import Path

import pytest

from codeseam import api
from codeseam.settings import load_settings


def _token(prefix: str, n: int) -> str:
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    return prefix + "".join(secrets.choice(alphabet) for _ in range(n))


@pytest.fixture
def planted(tmp_path: Path):
    # built at run time so that no real-looking token is ever committed
    openai_key = _token("sk-" + "proj-", 40)
    gh_token = _token("gh" + "p_", 36)
    db_password = _token("Pw", 14)
    root = tmp_path / "svc"
    root.mkdir()
    (root / "settings.py").write_text(
        '"""Service settings."""\n'
        "import os\n\n"
        f'OPENAI_API_KEY = "{openai_key}"\n'
        f'DB_PASSWORD = "{db_password}"\n\n\n'
        "def database_url(host):\n"
        '    """Build the connection URL for the service database."""\n'
        '    return f"postgres://svc@{host}/svc"\n'
    )
    (root / "deploy.sh").write_text(f"#!/bin/sh\nexport GITHUB_TOKEN={gh_token}\n./deploy --prod\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root, {"openai": openai_key, "github": gh_token, "password": db_password}


def test_secrets_never_leave_the_index(planted, isolated_env):
    root, planted_secrets = planted
    settings = load_settings({"embedding_backend": "fake"})
    report = api.index(root, settings=settings)
    assert report.redactions >= 3 and report.redacted_files == 2
    assert "redactions in 2 files" in report.summary()
    for value in planted_secrets.values():
        assert value not in report.summary()

    queries = [*planted_secrets.values(), "OPENAI_API_KEY", "DB_PASSWORD", "GITHUB_TOKEN", "api key password token"]
    seen_text = []
    for q in queries:
        for mode in ("dense", "bm25", "hybrid"):
            result = api.search(q, settings=settings, mode=mode, k=10)
            seen_text.extend(h.text for h in result.hits)
    assert seen_text, "searches returned nothing"
    assert any("[REDACTED:" in t for t in seen_text)

    rows = api.inspect("svc", settings=settings)
    with api.open_index(settings) as ix:
        stored = [c.text for c in ix.store.iter_chunks("svc")]
        # the embedded and BM25-indexed field too: its header (identifier splits, imports,
        # documentation lines) is derived from the file, which is scrubbed before chunking
        indexed = [r["indexed_text"] for r in
                   ix.store._m.query_all(ix.store.names.chunks, 'repo_id == "svc"', ["indexed_text"])]
    assert len(indexed) == len(stored) and any("[REDACTED:" in t for t in indexed)
    blob = "\n".join(seen_text + stored + indexed + [str(rows)])
    for value in planted_secrets.values():
        assert value not in blob
    # line structure survives: the function is still at its real lines
    hit = api.search("database_url", settings=settings, k=1).hits[0]
    assert hit.path == "settings.py" and hit.start_line <= 8 <= hit.end_line


def test_scrub_off_keeps_text(planted, isolated_env):
    root, planted_secrets = planted
    settings = load_settings({"embedding_backend": "fake", "scrub": False})
    report = api.index(root, settings=settings)
    assert report.redactions == 0
    hits = api.search(planted_secrets["password"], settings=settings, mode="bm25").hits
    assert any(planted_secrets["password"] in h.text for h in hits)
