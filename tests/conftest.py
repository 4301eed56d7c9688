"""Shared pytest configuration.

``pytest --update-golden`` regenerates golden files (chunk spans, CLI --json output)
instead of comparing against them; review the diff before committing.
"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite golden files from the current output")


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture
def fake_openai():
    """A started loopback OpenAI-compatible server (see tests/support/fake_openai.py)."""
    from tests.support.fake_openai import FakeOpenAI

    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def isolated_env(tmp_path, monkeypatch):
    """Settings isolated from the user's config and data dirs. The CLI starts no keep-alive
    server (RAG_KEEPALIVE=0); a test that wants one sets RAG_KEEPALIVE itself and stops it."""
    for key in list(os.environ):
        if key.startswith("RAG_"):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("RAG_KEEPALIVE", "0")
    monkeypatch.setenv("RAG_CONFIG", str(tmp_path / "config.toml"))
    (tmp_path / "config.toml").write_text("")
    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path / "data"))
    return tmp_path
