"""A pasted issue through every surface (library, CLI with stdin and a file, HTTP GET and POST,
the remote client, MCP), files as answers, the limit, and the SWE-bench-style eval on a real
bare git mirror."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import httpx
import pytest

from codeseam import api, codec
from codeseam.errors import ConfigError
from codeseam.interface import SearchRequest
from codeseam.safety import MAX_QUERY_CHARS
from codeseam.settings import load_settings

FORMS = '''"""Forms."""


class Form:
    def full_clean(self):
        self._clean_fields()

    def _clean_fields(self):
        for name, field in self.fields.items():
            field.clean(self.data.get(name))
'''
FIELDS = '''"""Fields."""


class Field:
    required = True

    def to_python(self, value):
        return value

    def clean(self, value):
        value = self.to_python(value)
        if self.required and not value:
            raise ValueError("required field missing")
        return value
'''
DOCS = "# Forms\n\nA form cleans its fields; a field that is required raises an error when it is missing.\n"
TRACE = '''Form.full_clean loses the error of a required field

Traceback (most recent call last):
  File "/home/me/venv/lib/python3.11/site-packages/proj/forms.py", line 6, in full_clean
    self._clean_fields()
  File "/home/me/venv/lib/python3.11/site-packages/proj/fields.py", line 12, in clean
    value = self.to_python(value)
ValueError: required field missing
'''


def long_issue() -> str:
    """About 20,000 characters: the traceback, then a long pasted log after it."""
    filler = "\n".join(f"DEBUG request {i} served in {i % 7} ms by worker {i % 3}" for i in range(500))
    text = TRACE + "\nThe log of the run:\n" + filler
    return (text + "\n" + filler)[:20_000]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "proj").mkdir(parents=True)
    (root / "proj" / "forms.py").write_text(FORMS)
    (root / "proj" / "fields.py").write_text(FIELDS)
    (root / "docs").mkdir()
    (root / "docs" / "forms.md").write_text(DOCS)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (tmp_path / "cfg.toml").write_text("")
    return root


def env_for(tmp: Path) -> dict[str, str]:
    return {"RAG_CONFIG": str(tmp / "cfg.toml"), "RAG_DATA_DIR": str(tmp / "data"), "RAG_EMBEDDING_BACKEND": "fake",
            "RAG_KEEPALIVE": "0"}


def test_a_long_issue_is_searched_and_its_frames_found(repo: Path, tmp_path: Path) -> None:
    settings = load_settings(env=env_for(tmp_path))
    api.index(repo, settings=settings)
    query = long_issue()
    assert len(query) == 20_000
    with api.Index(settings) as ix:
        for mode in ("hybrid", "bm25", "dense"):
            result = ix.search(SearchRequest(query, k=5, mode=mode, files=True))
            assert result.query == query
            # the innermost frame's line (a small file is one chunk)
            assert any(h.path == "proj/fields.py" and h.start_line <= 12 <= h.end_line for h in result.hits[:2]), \
                (mode, result.hits)
            assert result.files is not None and result.files[0].path in ("proj/fields.py", "proj/forms.py")
            assert {f.path for f in result.files[:2]} == {"proj/fields.py", "proj/forms.py"}
            assert all(f.role == "source" for f in result.files[:2])
        short = ix.search("required field", k=3)  # a one-line question: no files unless asked
        assert short.files is None and short.hits
        with pytest.raises(ConfigError, match="too long"):
            ix.search("x" * (MAX_QUERY_CHARS + 1))


def test_codec_keeps_the_files(repo: Path, tmp_path: Path) -> None:
    settings = load_settings(env=env_for(tmp_path))
    api.index(repo, settings=settings)
    result = api.search(SearchRequest(TRACE, files=True), settings=settings)
    back = codec.search_result(json.loads(json.dumps(codec.search_json(result))))
    assert back.files == tuple(f.__class__(f.repo, f.path, f.language, f.role, round(f.score, 6),
                                           tuple(s.__class__(s.start_line, s.end_line, s.symbol, round(s.score, 6))
                                                 for s in f.spans)) for f in result.files or ())
    assert "files" not in codec.search_json(api.search("clean", settings=settings))


def run_cli(tmp: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAG_")}
    env.update(env_for(tmp), HF_HUB_OFFLINE="1")
    return subprocess.run([sys.executable, "-m", "codeseam.surfaces.cli", *args], env=env, capture_output=True,
                          text=True, timeout=300, input=stdin)


def test_cli_reads_the_issue_from_stdin_or_a_file(repo: Path, tmp_path: Path) -> None:
    assert run_cli(tmp_path, "index", str(repo)).returncode == 0
    query = long_issue()
    out = run_cli(tmp_path, "search", "-", "--json", "--files", stdin=query)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["query"] == query.strip() and data["files"][0]["path"].startswith("proj/")
    (tmp_path / "issue.md").write_text(query)
    text = run_cli(tmp_path, "search", "--query-file", str(tmp_path / "issue.md"), "--files")
    assert text.returncode == 0, text.stderr
    first = text.stdout.splitlines()[0]
    assert first.startswith(("proj/fields.py", "proj/forms.py")) and "[" in first
    too_long = run_cli(tmp_path, "search", "-", stdin="y " * MAX_QUERY_CHARS)
    assert too_long.returncode == 1 and "too long" in too_long.stderr and "Traceback" not in too_long.stderr
    both = run_cli(tmp_path, "search", "words", "--query-file", str(tmp_path / "issue.md"))
    assert both.returncode == 2 and "not both" in both.stderr
    missing = run_cli(tmp_path, "search", "--query-file", str(tmp_path / "nope.md"))
    assert missing.returncode == 1 and "cannot read the query" in missing.stderr and "Traceback" not in missing.stderr


def test_http_post_and_get_and_the_remote_client(repo: Path, tmp_path: Path) -> None:
    from codeseam.owner.client import RemoteIndex
    from codeseam.owner.serverfile import ServerInfo
    from codeseam.service import Service
    from codeseam.surfaces.http import create_app
    from tests.test_http import running

    settings = load_settings(env=env_for(tmp_path))
    api.index(repo, settings=settings)
    query = long_issue()
    with Service(settings, cwd=tmp_path, watch=False) as service, running(create_app(service)) as url:
        with httpx.Client(base_url=url, timeout=60) as client:
            posted = client.post("/search", json={"q": query, "files": True, "k": 5})
            assert posted.status_code == 200, posted.text
            body = posted.json()
            assert body["files"][0]["path"].startswith("proj/") and body["hits"]
            got = client.get("/search", params={"q": TRACE, "files": "true"}).json()
            assert [f["path"] for f in got["files"]] == [f["path"] for f in
                                                          client.post("/search", json={"q": TRACE, "files": True})
                                                          .json()["files"]]
            over = client.post("/search", json={"q": "z" * (MAX_QUERY_CHARS + 1)})
            assert over.status_code == 422 and over.json()["type"] == "ConfigError"
        with RemoteIndex(ServerInfo("http", os.getpid(), url), settings) as remote:
            far = remote.search(SearchRequest(query, k=5, files=True))  # too long for a URL: POSTed
            near = service.search(SearchRequest(query, k=5, files=True))
            assert [(h.path, h.start_line) for h in far.hits] == [(h.path, h.start_line) for h in near.hits]
            assert [f.path for f in far.files or ()] == [f.path for f in near.files or ()]


def test_mcp_search_code_takes_a_pasted_issue(repo: Path, tmp_path: Path) -> None:
    from mcp import Client, StdioServerParameters

    env = {**env_for(tmp_path), "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    env.update({k: os.environ[k] for k in ("HOME", "PATH", "LANG", "TMPDIR") if k in os.environ})
    params = StdioServerParameters(command=sys.executable, args=["-m", "codeseam.surfaces.cli", "mcp"], env=env,
                                   cwd=str(repo))
    query = long_issue()

    async def session():
        async with Client(params, mode="legacy", read_timeout_seconds=90) as client:
            done = await client.call_tool("index_repo", {"path": str(repo), "wait": True})
            assert not done.is_error
            return await client.call_tool("search_code", {"query": query, "files": True, "k": 5})

    result = anyio.run(session)
    assert not result.is_error
    text = "\n".join(c.text for c in result.content)
    assert text.startswith('3 results for "Form.full_clean loses the error of a required field…"')  # three chunks
    assert "files to open:" in text and result.structured_content["files"][0]["path"].startswith("proj/")


# -- the SWE-bench-style eval on a real bare mirror ------------------------------------------------

def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def test_swe_eval_exports_commit_by_commit_and_scores(repo: Path, tmp_path: Path) -> None:
    from codeseam.eval import swe

    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-qm", "one")
    first = git(repo, "rev-parse", "HEAD")
    (repo / "proj" / "extra.py").write_text("def unrelated():\n    return 1\n")
    (repo / "docs" / "forms.md").unlink()
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-qm", "two")
    second = git(repo, "rev-parse", "HEAD")
    mirrors = tmp_path / "mirrors"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(mirrors / "acme+proj" / "repo")], check=True)

    tree = tmp_path / "tree"
    assert swe.export_tree(mirrors / "acme+proj" / "repo", first, tree)["written"] == 3
    again = swe.export_tree(mirrors / "acme+proj" / "repo", second, tree)
    assert again == {"written": 1, "deleted": 1, "kept": 2, "absent": 0}
    assert sorted(str(p.relative_to(tree)) for p in tree.rglob("*") if p.is_file()) == [
        "proj/extra.py", "proj/fields.py", "proj/forms.py"]

    gold = {"path": "proj/fields.py", "qualname": "Field.clean", "start_line": 10, "end_line": 14}
    rows = [{"instance_id": f"acme__proj-{n}", "repo": "acme/proj", "base_commit": c, "created_at": f"2020-0{n}",
             "problem_statement": TRACE.replace("Form.full_clean loses", "Cleaning loses"), "gold_files": ["proj/fields.py"], "gold_functions": [gold]}
            for n, c in ((1, first), (2, second))]
    instances = tmp_path / "swe" / "instances.jsonl"
    instances.parent.mkdir()
    instances.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    settings = load_settings(env=env_for(tmp_path))
    result = swe.run_swe(instances, mirrors, modes=("hybrid", "bm25"), settings=settings,
                         cache_dir=tmp_path / "cache")
    assert len(result.outcomes) == 4 and all(o.file_rank() == 1 for o in result.outcomes), [(o.mode, o.files) for o in result.outcomes]
    summary = swe.summarize(result.by_mode("bm25"))
    assert summary["file@1"] == 100.0 and summary["function@10"] == 100.0 and summary["n"] == 2
    md = swe.markdown(result)
    assert "| codeseam hybrid | 2 | 100.0 |" in md and "CodeRankEmbed 137M (published)" in md
    assert result.indexing[1]["written"] == 1  # the second commit rewrote only what changed

    cli = run_cli(tmp_path, "eval", str(instances.parent), "--root", str(mirrors), "--variants", "bm25",
                  "--cache-dir", str(tmp_path / "cache2"), "--json")
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout)["summary"]["bm25"]["file@1"] == 100.0


def test_outcome_metrics_follow_locagent() -> None:
    from codeseam.eval.swe import GoldFunction, Outcome

    g = (GoldFunction("a.py", "f", 10, 20), GoldFunction("b.py", "g", 1, 5))
    o = Outcome("i", "r", "bm25", ["c.py", "a.py", "b.py"], [("a.py", 15, 30), ("x.py", 1, 2), ("b.py", 5, 9)],
                ("a.py", "b.py"), g, 10, 0.0)
    assert o.file_rank() == 3 and not o.file_acc(2) and o.file_acc(3)  # every gold file
    assert o.function_acc(2) is False and o.function_acc(3) is True  # every gold function overlapped
    assert Outcome("i", "r", "bm25", [], [], ("a.py",), (), 1, 0.0).function_acc(10) is None
