"""The library's one-shot calls reach the server that holds the index, as the CLI does (the
README's library example raised IndexBusyError for ten minutes after any CLI command), and start
none of their own."""

from __future__ import annotations

import json
import subprocess

import pytest

import codeseam
from codeseam import api, owner
from codeseam.errors import IndexBusyError
from tests.test_keepalive import CLI, box  # noqa: F401 - the fixture


def cli(b, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], env=b["env"], cwd=b["work"], capture_output=True, text=True, timeout=300)


def test_the_library_goes_through_the_keepalive_server(box) -> None:  # noqa: F811
    out = cli(box, "search", "retry delay", "--json")  # starts the keep-alive server, which holds the index
    assert out.returncode == 0, out.stderr
    info = owner.read_server_file(box["settings"])
    assert info is not None and info.keepalive
    box["pids"].add(info.pid)
    settings = box["settings"]

    result = codeseam.search("retry delay", settings=settings)  # was IndexBusyError
    assert [(h.path, h.start_line) for h in result.hits] == [
        (h["path"], h["start_line"]) for h in json.loads(out.stdout)["hits"]]
    (box["repo"] / "more.py").write_text("def jitter_window(n):\n    return n * 2\n")
    report = codeseam.index(box["repo"], settings=settings)
    assert report.chunks_pending == 0  # the library waits for every vector, through the server too
    assert codeseam.search("jitter_window", settings=settings).hits[0].path == "more.py"
    assert any(r.repo_id == "proj" for r in codeseam.status(settings=settings).repos)
    assert [r.kind for r in codeseam.refs("compute_retry_delay", settings=settings).refs][:1] == ["def"]
    assert owner.read_server_file(settings).pid == info.pid  # the same server answered all of it
    with pytest.raises(IndexBusyError) as busy:  # an Index opened here is still refused, and says how to stop it
        api.search("retry delay", settings=settings)
    assert "codeseam stop" in (busy.value.hint or "")


def test_without_a_server_the_library_opens_the_index_and_starts_none(box) -> None:  # noqa: F811
    settings = box["settings"]
    assert settings.keepalive > 0 and owner.read_server_file(settings) is None
    assert codeseam.search("retry delay", settings=settings).hits
    assert owner.read_server_file(settings) is None  # no process left behind by a script
