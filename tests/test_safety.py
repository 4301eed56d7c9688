"""Safety rules of the servers: allowed roots, path refusals, bind rules, input limits, no shell."""

from __future__ import annotations

import ast
import functools
import os
from pathlib import Path

import pytest

from codeseam import safety
from codeseam.errors import ConfigError, UnsafePathError
from codeseam.safety import AllowedRoots, check_bind, check_index_path

SRC = Path(__file__).resolve().parents[1] / "src" / "codeseam"


@functools.lru_cache(maxsize=1)
def parsed_sources() -> tuple[tuple[str, ast.AST], ...]:
    return tuple((str(f.relative_to(SRC)), ast.parse(f.read_text(encoding="utf-8")))
                 for f in sorted(SRC.rglob("*.py")))


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    """allowed/ (with repo/, a link out, a link in), outside/ (a secret repo), a file."""
    allowed = tmp_path / "allowed"
    (allowed / "repo" / "sub").mkdir(parents=True)
    outside = tmp_path / "outside"
    (outside / "secret").mkdir(parents=True)
    (allowed / "escape").symlink_to(outside / "secret", target_is_directory=True)
    (allowed / "inner").symlink_to(allowed / "repo", target_is_directory=True)
    (allowed / "parent-link").symlink_to(tmp_path, target_is_directory=True)
    (allowed / "file.txt").write_text("x\n")
    return {"allowed": allowed, "outside": outside, "tmp": tmp_path}


def roots(*paths: Path, cwd: Path | None = None) -> AllowedRoots:
    return AllowedRoots.build([str(p) for p in paths], [], cwd)


def test_paths_inside_an_allowed_root_are_accepted_resolved(tree):
    allowed = tree["allowed"]
    r = roots(allowed)
    assert check_index_path(str(allowed / "repo"), r) == allowed / "repo"
    assert check_index_path(str(allowed), r) == allowed
    assert check_index_path(str(allowed / "repo" / "sub"), r) == allowed / "repo" / "sub"
    # a symlink that stays inside resolves to its target, which is checked (and accepted)
    assert check_index_path(str(allowed / "inner"), r) == allowed / "repo"
    # relative paths are taken from the server's working directory
    assert check_index_path("repo", r, cwd=allowed) == allowed / "repo"


def test_outside_the_roots_is_refused_and_names_the_roots(tree):
    r = roots(tree["allowed"])
    with pytest.raises(UnsafePathError, match="outside the allowed roots") as info:
        check_index_path(str(tree["outside"] / "secret"), r)
    assert str(tree["allowed"]) in str(info.value) and "RAG_ALLOWED_ROOTS" in (info.value.hint or "")
    with pytest.raises(UnsafePathError, match="outside"):
        check_index_path("/", r)
    # a sibling whose name merely starts with the root's name is not inside it
    sibling = tree["tmp"] / "allowed-but-not"
    sibling.mkdir()
    with pytest.raises(UnsafePathError, match="outside"):
        check_index_path(str(sibling), r)


@pytest.mark.parametrize("rel", ["repo/../../outside/secret", "repo/..", "../outside", "repo/sub/../../repo"])
def test_dotdot_traversal_is_refused_even_when_it_lands_inside(tree, rel):
    r = roots(tree["allowed"])
    with pytest.raises(UnsafePathError, match=r"'\.\.' traversal"):
        check_index_path(str(tree["allowed"] / rel), r)
    with pytest.raises(UnsafePathError, match=r"'\.\.' traversal"):
        check_index_path(rel, r, cwd=tree["allowed"])


def test_symlink_escape_is_refused_as_such(tree):
    r = roots(tree["allowed"])
    for link in ("escape", "parent-link"):
        with pytest.raises(UnsafePathError, match="symlink resolves it to") as info:
            check_index_path(str(tree["allowed"] / link), r)
        assert "outside the allowed roots" in str(info.value)
    # through an intermediate component as well
    (tree["outside"] / "secret" / "deeper").mkdir()
    with pytest.raises(UnsafePathError, match="symlink"):
        check_index_path(str(tree["allowed"] / "escape" / "deeper"), r)


def test_missing_paths_files_and_junk_are_refused(tree):
    r = roots(tree["allowed"])
    with pytest.raises(UnsafePathError, match="no such directory"):
        check_index_path(str(tree["allowed"] / "nope"), r)
    with pytest.raises(UnsafePathError, match="not a folder"):
        check_index_path(str(tree["allowed"] / "file.txt"), r)
    for junk in ("", "   ", "a\0b", "x" * 5000):
        with pytest.raises(UnsafePathError):
            check_index_path(junk, r)


def test_allowed_roots_come_from_settings_indexed_repos_and_cwd(tree):
    allowed, outside = tree["allowed"], tree["outside"]
    r = AllowedRoots.build([str(allowed)], [str(outside / "secret")], cwd=tree["tmp"] / "allowed" / "repo")
    assert dict(r.roots) == {allowed: "RAG_ALLOWED_ROOTS", outside / "secret": "indexed repo",
                             allowed / "repo": "server working directory"}
    assert check_index_path(str(outside / "secret"), r) == outside / "secret"  # an indexed repo
    # roots given through a symlink match their real path; duplicates collapse
    r2 = AllowedRoots.build([str(allowed / "inner"), str(allowed / "repo")], [], None)
    assert r2.paths == (allowed / "repo",)
    assert check_index_path(str(allowed / "repo" / "sub"), r2) == allowed / "repo" / "sub"
    # no roots at all: everything is refused
    with pytest.raises(UnsafePathError, match=r"allowed roots \(none\)"):
        check_index_path(str(allowed), AllowedRoots.build([], [], None))


def test_bind_rules():
    for host in ("127.0.0.1", "::1", "[::1]", "localhost", "127.0.0.2"):
        check_bind(host, allow_remote=False, token="")
    for host in ("0.0.0.0", "::", "192.168.1.10", "example.invalid"):
        with pytest.raises(ConfigError, match="--allow-remote"):
            check_bind(host, allow_remote=False, token="t" * 32)
        with pytest.raises(ConfigError, match="RAG_SERVER_TOKEN"):
            check_bind(host, allow_remote=True, token="")
        with pytest.raises(ConfigError, match="at least 16"):
            check_bind(host, allow_remote=True, token="short")
        check_bind(host, allow_remote=True, token="t" * 16)


def test_input_limits():
    assert safety.check_query("  where  ") == "where"
    assert safety.check_query("x" * safety.MAX_QUERY_CHARS) == "x" * safety.MAX_QUERY_CHARS
    for bad in ("", "   ", "x" * (safety.MAX_QUERY_CHARS + 1)):
        with pytest.raises(ConfigError):
            safety.check_query(bad)
    assert safety.check_k(None) is None and safety.check_k(1) == 1 and safety.check_k(100) == 100
    for bad in (0, 101, -1, True, 2.5, "8"):
        with pytest.raises(ConfigError, match="1..100"):
            safety.check_k(bad)  # type: ignore[arg-type]
    assert safety.check_repo_id("my-repo.v2") == "my-repo.v2" and safety.check_repo_id(None) is None
    for bad in ("a\nb", "x" * 201, "  "):
        with pytest.raises(ConfigError):
            safety.check_repo_id(bad)


def _shell_calls(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = ast.unparse(node.func)
        if name in ("os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput") \
                or name.startswith("os.exec") or name.startswith("os.spawn"):
            found.append(name)
        for kw in node.keywords:
            if kw.arg == "shell" and not (isinstance(kw.value, ast.Constant) and kw.value.value is False):
                found.append(f"{name}(shell=...)")
        if name.startswith("subprocess.") and node.args and isinstance(node.args[0], (ast.Constant, ast.JoinedStr)):
            found.append(f"{name}(<string command>)")
    return found


def test_nothing_in_codeseam_runs_a_shell():
    files = parsed_sources()
    assert len(files) > 20
    offenders = {}
    for name, tree in files:
        calls = _shell_calls(tree)
        if calls:
            offenders[name] = calls
    assert offenders == {}
    # the checker itself finds what it must
    bad = ast.parse("import os, subprocess\nos.system('ls')\nsubprocess.run('ls', shell=True)\n"
                    "subprocess.check_output('ls')\nos.execvp('ls', ['ls'])\n")
    assert len(_shell_calls(bad)) == 5


def test_server_processes_take_list_argv():
    """The subprocesses codeseam starts (git, Milvus Lite) are given argv lists."""
    starts = []
    for name, tree in parsed_sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and ast.unparse(node.func) in (
                    "subprocess.run", "subprocess.Popen", "subprocess.check_output", "subprocess.call"):
                starts.append((name, node))
    assert starts, "expected codeseam to start git / Milvus Lite somewhere"
    for name, node in starts:
        first = node.args[0] if node.args else None
        assert not isinstance(first, (ast.Constant, ast.JoinedStr, ast.BinOp)), (name, ast.unparse(node))


def test_environment_is_not_consulted_for_paths(tree, monkeypatch):
    """A path is taken literally: no variable or ~user expansion beyond the caller's home."""
    monkeypatch.setenv("EVIL", str(tree["outside"]))
    with pytest.raises(UnsafePathError):
        check_index_path("$EVIL/secret", roots(tree["allowed"]), cwd=tree["allowed"])
    assert os.path.expandvars("$EVIL") != "$EVIL"  # the variable is set, and still not used
