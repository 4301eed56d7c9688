"""Fixtures and fixture texts shared by several test modules."""

from __future__ import annotations

import textwrap

import pytest

# A small module with one function and one class, indexed by the ask, HTTP and MCP tests.
RETRY_PY = textwrap.dedent('''\
    """Retry helpers."""
    import random


    def compute_retry_delay(attempt, base=0.5, cap=30.0):
        """Exponential backoff with full jitter."""
        return random.uniform(0, min(cap, base * 2 ** attempt))


    class RetryPolicy:
        def should_retry(self, error, attempt):
            return attempt < 5 and isinstance(error, OSError)
    ''')


@pytest.fixture(autouse=True)
def isolated_git(tmp_path_factory, monkeypatch):
    """No user or system git config leaks in; the empty global config file is returned, so
    a test can write settings (such as core.excludesFile) into it. Autouse wherever a test
    module imports it."""
    cfg = tmp_path_factory.mktemp("gitcfg") / "gitconfig"
    cfg.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(cfg))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return cfg
