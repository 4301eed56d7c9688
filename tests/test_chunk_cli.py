"""`codeseam chunk`: human view, JSON lines, folders, flags (click's CliRunner)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from codeseam.surfaces.cli import cli

FIXTURES = Path(__file__).parent / "fixtures" / "chunk"
GOLDEN = Path(__file__).parent / "golden" / "chunk" / "cli_sample_go.jsonl"


def run(*args: str, cwd: Path | None = None):
    runner = CliRunner()
    if cwd is None:
        return runner.invoke(cli, ["chunk", *args], catch_exceptions=False)
    with runner.isolated_filesystem(temp_dir=cwd):
        return runner.invoke(cli, ["chunk", *args], catch_exceptions=False)


def test_human_view_lines(isolated_env, monkeypatch):
    monkeypatch.chdir(FIXTURES)
    res = run("sample.py", "--max-bytes", "400", "--min-bytes", "80")
    assert res.exit_code == 0, res.output
    lines = res.stdout.strip().split("\n")
    text = (FIXTURES / "sample.py").read_text()
    total = 0
    for line in lines:
        where, kind, symbol, nbytes = line.split("  ")
        path, span = where.rsplit(":", 1)
        start, end = map(int, span.split("-"))
        assert path == "sample.py" and 1 <= start <= end
        assert kind in ("module", "function", "method", "class", "header")
        total += int(nbytes)
    assert total == len(text.encode())
    assert "sample.py:15-22  function  get_user_by_id" in res.stdout
    assert "chunks in 1 file" in res.stderr


def test_json_lines_match_the_golden_file(isolated_env, monkeypatch, update_golden):
    monkeypatch.chdir(FIXTURES)
    res = run("sample.go", "--json", "--max-bytes", "400", "--min-bytes", "80")
    assert res.exit_code == 0
    records = [json.loads(line) for line in res.stdout.splitlines()]
    text = (FIXTURES / "sample.go").read_text()
    assert "".join(r["text"] for r in records) == text
    for r in records:
        assert {"path", "language", "symbol", "parent", "kind", "start_line", "end_line", "text",
                "indexed_text", "hash"} <= set(r)
        assert r["indexed_text"].endswith(r["text"])
    if update_golden:
        GOLDEN.write_text(res.stdout, encoding="utf-8")
    assert res.stdout == GOLDEN.read_text(encoding="utf-8")


def test_folder_is_walked_and_window_chunker(isolated_env, tmp_path):
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    shutil.copy(FIXTURES / "sample.py", repo / "pkg" / "store.py")
    shutil.copy(FIXTURES / "sample.md", repo / "README.md")
    (repo / "blob.bin").write_bytes(b"\0\1\2" * 100)
    res = run(str(repo), "--json")
    assert res.exit_code == 0
    paths = {json.loads(line)["path"] for line in res.stdout.splitlines()}
    assert paths == {f"{repo}/pkg/store.py", f"{repo}/README.md"}
    assert "binary" in res.stderr
    res = run(str(repo / "pkg" / "store.py"), "--chunker", "window", "--json")
    kinds = {json.loads(line)["kind"] for line in res.stdout.splitlines()}
    assert kinds == {"window"}


def test_bad_flags_are_clear_errors(isolated_env):
    from codeseam.surfaces.cli import main

    res = CliRunner().invoke(cli, ["chunk", str(FIXTURES / "sample.py"), "--chunker", "magic"])
    assert res.exit_code == 2
    res = CliRunner().invoke(cli, ["chunk", str(FIXTURES / "nope.py")])
    assert res.exit_code == 2
    try:
        main(["chunk", str(FIXTURES / "sample.py"), "--max-bytes", "10"])
    except SystemExit as exc:
        assert exc.code == 1
    else:  # pragma: no cover
        raise AssertionError("expected exit 1")
