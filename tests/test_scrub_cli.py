"""`codeseam scrub PATH... [--json]`: the dry run lists masked findings, never a secret."""

from __future__ import annotations

import json
import subprocess

import pytest
from click.testing import CliRunner

from codeseam.surfaces.cli import cli, main
from tests.support.secret_corpus import Gen


@pytest.fixture
def repo(tmp_path, isolated_env):
    """A git repo with planted secrets (built at run time), an ignored file and an allow-list."""
    g = Gen(11)
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    secrets = {"token": g.github(), "password": g.password(), "email": g.email(), "key": g.openai(),
               "ignored": g.openai()}
    (root / ".env").write_text(f"DB_PASSWORD={secrets['password']}\nGITHUB_TOKEN={secrets['token']}\n")
    (root / "src" / "app.py").write_text(f"# owner: {secrets['email']}\nimport os\n\nKEY = '{secrets['key']}'\n")
    (root / "src" / "clean.py").write_text("def add(a, b):\n    return a + b\n")
    (root / ".gitignore").write_text("secret.txt\n")
    (root / "secret.txt").write_text(f"k = '{secrets['ignored']}'\n")
    return root, secrets


def run(*args: str):
    return CliRunner().invoke(cli, ["scrub", *args], catch_exceptions=False)


def test_lists_masked_findings_and_summary(repo):
    root, secrets = repo
    res = run(str(root))
    assert res.exit_code == 0
    lines = res.stdout.strip().split("\n")
    found = sorted((line.split(" ")[0], line.split(" ")[1]) for line in lines)
    assert found == sorted([(f"{root}/.env:1", "secret-assignment"), (f"{root}/.env:2", "github-token"),
                            (f"{root}/src/app.py:1", "email"), (f"{root}/src/app.py:4", "openai-key")])
    assert "4 redactions in 2 files" in res.stderr
    for secret in secrets.values():  # never printed, not even the ignored file's
        assert secret not in res.output


def test_json_document(repo):
    root, secrets = repo
    res = run(str(root / "src"), str(root / ".env"), "--json")
    assert res.exit_code == 0
    doc = json.loads(res.stdout)
    assert doc["redactions"] == len(doc["findings"]) == 4
    assert doc["files_with_redactions"] == 2 and doc["files_scanned"] == 3 and doc["scrub_enabled"] is True
    assert {(f["path"], f["line"], f["kind"]) for f in doc["findings"]} == {
        (f"{root}/src/app.py", 1, "email"), (f"{root}/src/app.py", 4, "openai-key"),
        (f"{root}/.env", 1, "secret-assignment"), (f"{root}/.env", 2, "github-token")}
    assert all(set(f) == {"path", "line", "kind", "rule", "preview"} for f in doc["findings"])
    github_rule = {"ghp_": "github-pat", "gho_": "github-oauth", "ghu_": "github-user-to-server",
                   "ghs_": "github-server-to-server", "ghr_": "github-refresh"}.get(
        secrets["token"][:4], "github-fine-grained-pat")
    assert {(f["kind"], f["rule"]) for f in doc["findings"]} == {
        ("email", "email"), ("openai-key", "openai-key"), ("secret-assignment", "secret-assignment"),
        ("github-token", github_rule)}
    for secret in secrets.values():
        assert secret not in res.output


def test_allow_file_at_the_repo_root_applies_to_a_subfolder(repo):
    root, secrets = repo
    (root / ".codeseamallow").write_text("# the maintainer's address is public\n" + secrets["email"] + "\n")
    doc = json.loads(run(str(root / "src"), "--json").stdout)
    assert [f["kind"] for f in doc["findings"]] == ["openai-key"]


def test_allow_from_env_and_scrub_off_note(repo, monkeypatch):
    root, _ = repo
    monkeypatch.setenv("RAG_SCRUB_ALLOW", "^KEY = ")
    monkeypatch.setenv("RAG_SCRUB", "off")
    res = run(str(root / "src" / "app.py"))
    assert res.exit_code == 0
    assert [line.split(" ")[1] for line in res.stdout.strip().split("\n")] == ["email"]
    assert "scrubbing is off" in res.stderr


def test_no_findings_exit_zero(repo):
    root, _ = repo
    res = run(str(root / "src" / "clean.py"))
    assert res.exit_code == 0 and res.stdout == "" and "0 redactions in 0 files" in res.stderr


def test_bad_allow_pattern_is_a_clear_error(repo, capsys, monkeypatch):
    root, _ = repo
    monkeypatch.setenv("RAG_SCRUB_ALLOW", "[unclosed")
    with pytest.raises(SystemExit) as exc:
        main(["scrub", str(root)])
    assert exc.value.code == 1
    err = capsys.readouterr().err
    assert "invalid allow pattern" in err and "RAG_SCRUB_ALLOW" in err and "Traceback" not in err


def test_an_allow_file_entry_that_is_ignored_is_a_warning(repo):
    root, secrets = repo
    (root / ".codeseamallow").write_text(".\n[unclosed-regex\n")
    res = run(str(root), "--json")
    doc = json.loads(res.stdout)
    assert len(doc["findings"]) == 4  # nothing is allowed by either line
    assert [w.removeprefix(f"{root}/").split(": ")[0] for w in doc["warnings"]] == [".codeseamallow:1", ".codeseamallow:2"]
    res = run(str(root))
    assert res.stderr.count("warning: ") == 2 and "shorter than 8" in res.stderr


def test_missing_path_is_a_usage_error(tmp_path, isolated_env):
    res = CliRunner().invoke(cli, ["scrub", str(tmp_path / "nope")])
    assert res.exit_code == 2 and "does not exist" in res.output
