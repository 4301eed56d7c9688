"""Shared pytest configuration.

``pytest --update-golden`` regenerates golden files (chunk spans, CLI --json output)
instead of comparing against them; review the diff before committing.

Every test runs in a clean environment (``clean_env``, autouse): no ``RAG_*`` or
``CODESEAM_*`` variable of the developer's shell reaches it, the user's config and data dirs
are never read or written (``XDG_CONFIG_HOME`` / ``XDG_DATA_HOME`` point into the session's
temp dir; the exported ONNX models there are kept between runs under pytest's cache), and the
CLI starts no keep-alive server (``RAG_KEEPALIVE=0``; a test that wants one sets it).
Each test has a time limit (pytest-timeout): ``timeout`` in pyproject.toml (600 s, about 16
times the longest test's time on an idle machine), ``LONG_TIMEOUT`` for the tests marked
``slow`` or ``integration`` (whole-stdlib sweeps, crash loops, a real full disk, the bundled
model's first export), or what a test says with ``@pytest.mark.timeout``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
OURS = ("RAG_", "CODESEAM_")  # the variables codeseam reads
LONG_TIMEOUT = 1800  # seconds, for the tests marked slow or integration


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("timeout") is None and (
                item.get_closest_marker("slow") or item.get_closest_marker("integration")):
            item.add_marker(pytest.mark.timeout(LONG_TIMEOUT))


@pytest.fixture(scope="session", autouse=True)
def clean_session_env(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """The environment of the whole session (session and module fixtures included)."""
    home = tmp_path_factory.mktemp("home")
    (home / "data" / "codeseam").mkdir(parents=True)
    cache = getattr(request.config, "cache", None)  # absent under -p no:cacheprovider
    models = cache.mkdir("codeseam-models") if cache is not None else home / "models"
    (home / "data" / "codeseam" / "models").symlink_to(models, target_is_directory=True)
    with pytest.MonkeyPatch.context() as mp:
        for key in [k for k in os.environ if k.startswith(OURS)]:
            mp.delenv(key)
        mp.setenv("XDG_CONFIG_HOME", str(home / "config"))
        mp.setenv("XDG_DATA_HOME", str(home / "data"))
        mp.setenv("RAG_KEEPALIVE", "0")
        yield home


@pytest.fixture(autouse=True)
def clean_env(clean_session_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts from the session's clean environment, whatever an earlier test left."""
    for key in [k for k in os.environ if k.startswith(OURS)]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(clean_session_env / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(clean_session_env / "data"))
    monkeypatch.setenv("RAG_KEEPALIVE", "0")


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
    """A config file and a data dir of this test's own (``tmp_path``), on top of ``clean_env``."""
    monkeypatch.setenv("RAG_CONFIG", str(tmp_path / "config.toml"))
    (tmp_path / "config.toml").write_text("")
    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path / "data"))
    return tmp_path
