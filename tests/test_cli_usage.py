"""Usage errors are one line and a hint with exit code 2, like every other error (click's own
block was four lines: "Usage: ...", "Try ...", a blank line, "Error: ...")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize("args", [["search", "--bogus", "x"], ["search", "x", "-k", "500"], ["nope"],
                                  ["index", "README.md"], ["search"], ["eval"]])
def test_a_usage_error_is_one_line_and_a_hint(args: list[str], tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAG_")}
    env.update(RAG_DATA_DIR=str(tmp_path / "data"), RAG_KEEPALIVE="0", RAG_CONFIG=os.devnull)
    out = subprocess.run([sys.executable, "-m", "codeseam.surfaces.cli", *args], env=env, capture_output=True,
                         text=True, timeout=120, cwd=Path(__file__).resolve().parents[1])
    lines = out.stderr.splitlines()
    assert out.returncode == 2, out.stderr
    assert len(lines) == 2 and lines[0].startswith("error: ") and lines[1].startswith("hint: "), out.stderr
    assert "Usage:" not in out.stderr and "Traceback" not in out.stderr and out.stdout == ""


def test_ctrl_c_stops_serve_cleanly(tmp_path: Path) -> None:
    """Ctrl-C on `codeseam serve` printed "aborted" and exited 130; it is how a server stops."""
    import signal
    import time

    env = {k: v for k, v in os.environ.items() if not k.startswith("RAG_")}
    env.update(RAG_DATA_DIR=str(tmp_path / "data"), RAG_KEEPALIVE="0", RAG_CONFIG=os.devnull,
               RAG_EMBEDDING_BACKEND="fake")
    proc = subprocess.Popen([sys.executable, "-m", "codeseam.surfaces.cli", "serve", "--port", "0"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 120
        seen = ""
        while "Ctrl-C stops" not in seen and time.monotonic() < deadline:
            seen += proc.stderr.readline()
        assert "Ctrl-C stops" in seen, seen
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "stopped" in err and "aborted" not in err and "Traceback" not in err
