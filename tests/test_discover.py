"""Discovery: git-aware listing, ignore files, skip reasons, symlinks, names, warnings.

Real git repositories and real files in temp dirs. Expected listings are written from the
rules (gitignore semantics), and where both apply, the git listing and the plain-folder walk
of the same tree must agree.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import pytest

from codeseam.chunk.languages import language_for
from codeseam.discover import Discovery, discover, read_text, rules
from codeseam.errors import ConfigError, FileSkipped
from tests.support.hostile import run_git, run_unprivileged
from tests.support.fixtures import isolated_git  # noqa: F401 (autouse fixture)

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode())


def paths(d: Discovery) -> set[str]:
    return {f.path for f in d.files}


def reasons(d: Discovery) -> dict[str, str]:
    return {s.path: s.reason for s in d.skips}


def git_init(root: Path, commit: bool = False) -> None:
    run_git(root, "init", "-q")
    if commit:
        run_git(root, "add", "-A")
        run_git(root, "commit", "-q", "-m", "init", "--allow-empty")


def check_invariants(d: Discovery) -> None:
    """What every Discovery must satisfy, whatever the tree."""
    listed = [f.path for f in d.files]
    assert listed == sorted(listed) and len(set(listed)) == len(listed)
    assert not set(listed) & {s.path for s in d.skips}
    assert set(d.counts_by_reason()) <= set(rules.REASONS)
    assert sum(d.counts_by_language().values()) == len(d.files)
    assert sum(d.counts_by_reason().values()) == len(d.skips)
    for f in d.files:
        assert not f.path.startswith(("/", "./")) and "//" not in f.path
        assert os.path.realpath(f.abs_path).startswith(d.root)
        assert not os.path.islink(f.abs_path)
        st = os.stat(f.abs_path)
        assert (f.size, f.mtime_ns) == (st.st_size, st.st_mtime_ns)
        assert f.language == language_for(f.path)


# -- ignore rules ---------------------------------------------------------------------------

NESTED_TREE = {
    ".gitignore": "*.log\n!keep.log\nbuild/\n",
    "a.py": "A = 1\n",
    "x.log": "log\n",
    "keep.log": "kept\n",
    "build/out.py": "OUT = 1\n",
    "src/build": "a file named build is not a build/ folder\n",
    "sub/.gitignore": "*.tmp\n!important.tmp\n/local.txt\n",
    "sub/y.tmp": "t\n",
    "sub/important.tmp": "t\n",
    "sub/local.txt": "anchored to sub/, ignored\n",
    "local.txt": "not under sub/, kept\n",
    "sub/deeper/local.txt": "/local.txt in sub/.gitignore only means sub/local.txt\n",
    "sub/deeper/z.log": "root *.log reaches here\n",
    "sub/deeper/keep.log": "and so does the negation\n",
}
NESTED_EXPECTED = {".gitignore", "a.py", "keep.log", "src/build", "sub/.gitignore",
                   "sub/important.tmp", "local.txt", "sub/deeper/local.txt", "sub/deeper/keep.log"}


def test_nested_gitignore_with_negation_in_git_repo(tmp_path):
    write(tmp_path, NESTED_TREE)
    git_init(tmp_path, commit=True)
    d = discover(tmp_path)
    assert d.is_git and paths(d) == NESTED_EXPECTED
    assert not d.skips and not d.warnings
    check_invariants(d)


def test_nested_gitignore_with_negation_in_plain_folder(tmp_path):
    write(tmp_path, NESTED_TREE)
    d = discover(tmp_path)
    assert not d.is_git and paths(d) == NESTED_EXPECTED
    check_invariants(d)


def test_untracked_not_ignored_is_listed_and_deleted_tracked_is_not(tmp_path):
    write(tmp_path, {".gitignore": "*.tmp\n", "a.py": "a\n", "gone.py": "b\n"})
    git_init(tmp_path, commit=True)
    write(tmp_path, {"new.py": "untracked\n", "scratch.tmp": "ignored\n", "forced.tmp": "tracked\n"})
    run_git(tmp_path, "add", "-f", "forced.tmp")
    (tmp_path / "gone.py").unlink()  # still in the index, no longer on disk
    d = discover(tmp_path)
    assert paths(d) == {".gitignore", "a.py", "new.py", "forced.tmp"}
    assert not d.skips  # a deleted tracked file is neither a file nor a skip
    check_invariants(d)


def test_global_excludes_and_info_exclude(tmp_path, isolated_git):  # noqa: F811 - the pytest fixture imported above
    excludes = tmp_path.parent / f"{tmp_path.name}-excludes"
    excludes.write_text("*.bak\n")
    isolated_git.write_text(f"[core]\n\texcludesFile = {excludes}\n")
    write(tmp_path, {"a.py": "a\n", "a.py.bak": "backup\n", "notes.swp": "swap\n"})
    git_init(tmp_path)
    (tmp_path / ".git" / "info" / "exclude").write_text("*.swp\n")
    assert paths(discover(tmp_path)) == {"a.py"}


@pytest.mark.parametrize("use_git", [True, False])
def test_codeseamignore(tmp_path, use_git):
    write(tmp_path, {
        ".gitignore": "*.log\n.codeseamignore\n",  # a git-ignored .codeseamignore still applies
        ".codeseamignore": "docs/\n!docs/keep.md\n*.gen.py\n!x.log\n",
        "a.py": "a\n", "b.gen.py": "generated\n", "x.log": "git-ignored\n",
        "docs/guide.md": "guide\n", "docs/keep.md": "inside an excluded folder\n",
        "sub/.codeseamignore": "secret.txt\n/only_here.py\n",
        "sub/secret.txt": "s\n", "sub/only_here.py": "o\n", "sub/deep/only_here.py": "kept\n",
        "sub/deep/secret.txt": "not anchored: also excluded\n",
    })
    if use_git:
        git_init(tmp_path, commit=True)
    d = discover(tmp_path)
    assert d.is_git is use_git
    # negations cannot re-include from an excluded folder, nor what git ignores
    # ".codeseamignore" in .gitignore (no slash) hides both ignore files from the listing
    assert paths(d) == {".gitignore", "a.py", "sub/deep/only_here.py"}
    check_invariants(d)


def test_plain_folder_default_ignores_are_visible_and_overridable(tmp_path):
    write(tmp_path, {
        "a.py": "a\n", "__pycache__/a.cpython-311.pyc": b"\x00\x01", "stray.pyc": b"\x00",
        "node_modules/lib/index.js": "module.exports = 1\n", ".venv/bin/python": "#!\n",
        ".git/config": "[core]\n",  # not a repository, but .git is never entered
    })
    assert "node_modules/" in rules.DEFAULT_IGNORES
    assert paths(discover(tmp_path)) == {"a.py"}
    write(tmp_path, {".gitignore": "!node_modules/\n"})
    assert paths(discover(tmp_path)) == {"a.py", ".gitignore", "node_modules/lib/index.js"}


def test_git_repo_does_not_apply_default_ignores(tmp_path):
    write(tmp_path, {"a.py": "a\n", "node_modules/lib/index.js": "vendored on purpose\n"})
    git_init(tmp_path, commit=True)
    assert paths(discover(tmp_path)) == {"a.py", "node_modules/lib/index.js"}


def test_root_in_a_subfolder_of_a_repo(tmp_path):
    write(tmp_path, {".gitignore": "*.tmp\nignored_dir/\n", "top.py": "t\n", "pkg/a.py": "a\n",
                     "pkg/b.tmp": "b\n", "ignored_dir/c.py": "c\n"})
    git_init(tmp_path, commit=True)
    d = discover(tmp_path / "pkg")
    assert d.is_git and paths(d) == {"a.py"}
    assert d.files[0].abs_path == str((tmp_path / "pkg" / "a.py").resolve())
    # a folder the enclosing repository ignores was asked for explicitly: walk it
    d = discover(tmp_path / "ignored_dir")
    assert not d.is_git and paths(d) == {"c.py"}


def test_submodule_and_nested_repo_are_skipped(tmp_path):
    lib = tmp_path / "lib"
    write(lib, {"lib.py": "L = 1\n"})
    git_init(lib, commit=True)
    repo = tmp_path / "repo"
    write(repo, {"a.py": "a\n"})
    git_init(repo, commit=True)
    run_git(repo, "submodule", "add", "-q", str(lib), "vendor/lib")
    run_git(repo, "commit", "-q", "-m", "add submodule")
    write(repo / "nested", {"n.py": "n\n"})
    git_init(repo / "nested", commit=True)
    d = discover(repo)
    assert paths(d) == {"a.py", ".gitmodules"}
    assert reasons(d) == {"vendor/lib": "submodule", "nested": "submodule"}


# -- skip reasons ---------------------------------------------------------------------------

@pytest.mark.parametrize("use_git", [True, False])
def test_content_and_size_rules(tmp_path, use_git):
    head = b"".join(b"# license line %d\n" % i for i in range(30))
    write(tmp_path, {
        "text.py": "x = 1\n" * 2000,
        "nul_head.bin": b"abc\x00def",
        "nul_late.txt": b"a\n" * 4500 + b"\x00",  # past the 8 KiB sniff: read_text decides
        "utf16.txt": "UTF-16 text has NUL bytes but no NUL characters\n".encode("utf-16"),
        "exact.txt": b"x\n" * 512,
        "big.txt": b"x\n" * 513,
        "bundle.js": b"var a=1;" * 125_000,  # 1 MB, one line
        "after_license.js": head + b"var a=1;" * 12_500,  # one 100 KB line after 30 short ones
        "short_line.json": b'{"k": "' + b"v" * 3000 + b'"}',  # one long line, but under 4 KiB
        "app.min.js": b"var a = 1;\n",
        "style.min.css": b"a{}\n",
        "long_lines.py": b"".join(b"x%d = '%s'\n" % (i, b"y" * 900) for i in range(100)),
    })
    if use_git:
        git_init(tmp_path, commit=True)
    d = discover(tmp_path, max_file_bytes=1024)
    assert reasons(d) == {
        "nul_head.bin": "binary", "big.txt": "too-large", "text.py": "too-large",
        "bundle.js": "too-large", "after_license.js": "too-large", "long_lines.py": "too-large",
        "nul_late.txt": "too-large", "short_line.json": "too-large",
        "app.min.js": "minified", "style.min.css": "minified"}
    d = discover(tmp_path)
    assert reasons(d) == {"nul_head.bin": "binary", "bundle.js": "minified",
                          "after_license.js": "minified", "app.min.js": "minified",
                          "style.min.css": "minified"}
    assert {"text.py", "nul_late.txt", "utf16.txt", "exact.txt", "big.txt", "short_line.json",
            "long_lines.py"} == paths(d) - {".git"}
    with pytest.raises(FileSkipped) as err:
        read_text(tmp_path / "nul_late.txt")
    assert err.value.reason == "binary"
    check_invariants(d)


def test_too_large_sparse_50mb_file_is_not_read(tmp_path):
    with open(tmp_path / "huge.txt", "wb") as fh:
        fh.truncate(50 * 1000 * 1000)
    d = discover(tmp_path)
    assert reasons(d) == {"huge.txt": "too-large"}
    # sparse zeros would be "binary" if discovery had opened the file
    assert "50000000 bytes" in d.skips[0].detail


def test_every_lockfile_name_is_skipped(tmp_path):
    names = sorted(rules.LOCKFILE_NAMES)
    write(tmp_path, {f"deps/{n}": "lock\n" for n in names} | {"deps/lockfile.py": "not one\n"})
    d = discover(tmp_path)
    assert reasons(d) == {f"deps/{n}": "lockfile" for n in names}
    assert paths(d) == {"deps/lockfile.py"}


@pytest.mark.parametrize("use_git", [True, False])
def test_symlinks(tmp_path, use_git):
    root = tmp_path / "repo"
    outside = tmp_path / "outside"
    write(outside, {"secret.txt": "outside the root\n"})
    write(root, {"main.py": "M = 1\n", "pkg/mod.py": "X = 1\n", ".gitignore": "hidden/\n",
                 "hidden/target.py": "T = 1\n"})
    links = {
        "loop_a": "loop_b", "loop_b": "loop_a", "self": "self",
        "out_file.txt": str(outside / "secret.txt"), "out_dir": "../outside", "up": "..",
        "dangling.py": "missing.py", "dup.py": "main.py", "pkg_link": "pkg",
        "alias.py": "hidden/target.py", "alias2.py": "hidden/target.py", "gitcfg": ".git/config",
    }
    for name, target in links.items():
        os.symlink(target, root / name)
    if use_git:
        git_init(root, commit=True)
    else:
        write(root, {".git/config": "[core]\n"})
    d = discover(root)
    assert reasons(d) == {
        "loop_a": "symlink-loop", "loop_b": "symlink-loop", "self": "symlink-loop",
        "out_file.txt": "symlink-escape", "out_dir": "symlink-escape", "up": "symlink-escape",
        "gitcfg": "symlink-escape", "dangling.py": "broken-symlink", "dup.py": "symlink-duplicate",
        "alias2.py": "symlink-duplicate", "pkg_link": "not-a-file"}
    # a link to a file that is not listed itself is indexed once, under its own path
    assert paths(d) == {"main.py", "pkg/mod.py", ".gitignore", "alias.py"}
    alias = next(f for f in d.files if f.path == "alias.py")
    assert alias.abs_path == str((root / "hidden" / "target.py").resolve())
    assert read_text(alias.abs_path)[0] == "T = 1\n"
    check_invariants(d)


def test_fifo_is_not_a_file_and_never_blocks(tmp_path):
    write(tmp_path, {"a.py": "a\n"})
    os.mkfifo(tmp_path / "pipe")
    d = discover(tmp_path)  # opening a FIFO for reading would block forever without O_NONBLOCK
    assert reasons(d) == {"pipe": "not-a-file"} and paths(d) == {"a.py"}


@pytest.mark.parametrize("use_git", [True, False])
def test_odd_names(tmp_path, use_git):
    names = ["with space.py", "ünïcödé_名前.py", "new\nline.py", "tab\there.py", "-dash.py",
             "quote\"s.py", "back\\slash.py", "#hash.py", " lead.py"]
    write(tmp_path, {n: f"# {i}\n" for i, n in enumerate(names)})
    fd = os.open(os.fsencode(tmp_path) + b"/bad\xffname.py", os.O_WRONLY | os.O_CREAT, 0o644)
    os.close(fd)
    if use_git:
        git_init(tmp_path, commit=True)
    d = discover(tmp_path)
    assert paths(d) == set(names)
    assert reasons(d) == {"bad\\xffname.py": "bad-name"}
    for f in d.files:
        assert read_text(f.abs_path)[0] == f"# {names.index(f.path)}\n"
    check_invariants(d)


def test_unreadable_file_and_folder(tmp_path):
    """chmod 000 as a normal user: the file and the folder are skipped as unreadable. Root
    reads chmod-000 files, so as root the check runs in a child that became ``nobody``."""
    base = Path(tempfile.mkdtemp(prefix="codeseam-unreadable-", dir="/tmp"))
    try:
        base.chmod(0o755)
        write(base, {"ok.py": "ok\n", "locked.py": "secret\n", "closed/inner.py": "x\n"})
        for p in (base / "ok.py", base / "locked.py", base / "closed" / "inner.py"):
            p.chmod(0o644)
        (base / "locked.py").chmod(0)
        (base / "closed").chmod(0)

        def probe(root: str):
            d = discover(root)
            try:
                read_text(os.path.join(root, "locked.py"))
                read = "read"
            except FileSkipped as exc:
                read = exc.reason
            return paths(d), reasons(d), read

        if IS_ROOT:
            as_root = discover(base)  # root: the chmod-000 file is readable and indexed
            assert "locked.py" in paths(as_root) and "closed/inner.py" in paths(as_root)
            listed, skipped, read = run_unprivileged(probe, str(base))
        else:
            listed, skipped, read = probe(str(base))
        assert listed == {"ok.py"}
        assert skipped == {"locked.py": "unreadable", "closed": "unreadable"}
        assert read == "unreadable"
    finally:
        (base / "closed").chmod(0o755)
        (base / "locked.py").chmod(0o644)
        import shutil

        shutil.rmtree(base)


# -- warnings, errors, languages ------------------------------------------------------------

@pytest.mark.parametrize("use_git", [True, False])
def test_gitignore_that_ignores_everything_warns(tmp_path, use_git):
    write(tmp_path, {".gitignore": "*\n", "a.py": "a\n", "sub/b.py": "b\n"})
    if use_git:
        git_init(tmp_path)
    d = discover(tmp_path)
    assert d.files == () and d.skips == ()
    assert any("ignore rules leave 0 files" in w for w in d.warnings)


def test_empty_and_all_skipped_folders_warn_differently(tmp_path):
    (tmp_path / "empty").mkdir()
    assert discover(tmp_path / "empty").warnings == ("no files found to index",)
    write(tmp_path / "locks", {"yarn.lock": "x\n", "bin.dat": b"\x00"})
    d = discover(tmp_path / "locks")
    assert d.warnings == ("0 files to index: all 2 candidate files were skipped",)


def test_bad_root_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="no such directory"):
        discover(tmp_path / "missing")
    (tmp_path / "file.py").write_text("x\n")
    with pytest.raises(ConfigError, match="not a directory"):
        discover(tmp_path / "file.py")


def test_root_is_resolved_and_cobol_has_no_grammar(tmp_path):
    write(tmp_path / "real", {"legacy.cob": "       PROGRAM-ID. X.\n", "a.py": "a\n"})
    os.symlink(tmp_path / "real", tmp_path / "via_link")
    d = discover(tmp_path / "via_link")
    assert d.root == str((tmp_path / "real").resolve())
    cob = next(f for f in d.files if f.path == "legacy.cob")
    assert cob.language is None
    assert d.counts_by_language() == {"cobol": 1, "python": 1}


def test_walker_and_stat_agree_on_a_deep_tree(tmp_path):
    deep = "/".join(f"d{i}" for i in range(150))
    write(tmp_path, {f"{deep}/leaf.py": "leaf\n", "top.py": "top\n"})
    d = discover(tmp_path)
    assert paths(d) == {f"{deep}/leaf.py", "top.py"}
    assert stat.S_ISREG(os.stat(d.files[0].abs_path).st_mode)


def test_git_environment_of_a_hook_does_not_leak_in(tmp_path, monkeypatch):
    """Run from a git hook, GIT_DIR/GIT_INDEX_FILE point at another repository."""
    other = tmp_path / "other"
    write(other, {"other.py": "o\n"})
    git_init(other, commit=True)
    repo = tmp_path / "repo"
    write(repo, {".gitignore": "*.tmp\n", "mine.py": "m\n", "x.tmp": "t\n"})
    git_init(repo, commit=True)
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other / ".git" / "index"))
    d = discover(repo)
    assert d.is_git and paths(d) == {".gitignore", "mine.py"}


def test_without_git_a_repository_is_walked_with_a_warning(tmp_path, monkeypatch):
    write(tmp_path, {".gitignore": "*.tmp\n", "a.py": "a\n", "x.tmp": "t\n"})
    git_init(tmp_path, commit=True)
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    d = discover(tmp_path)
    assert not d.is_git and paths(d) == {".gitignore", "a.py"}
    assert any("git is not available" in w for w in d.warnings)


def test_ignore_patterns_reach_names_with_newlines(tmp_path):
    write(tmp_path, {".gitignore": "x.py\nsub*/\n", "a\nb/x.py": "x\n", "a\nb/k.py": "k\n",
                     "sub\ndir/y.py": "y\n"})
    walked = paths(discover(tmp_path))
    git_init(tmp_path)
    assert walked == paths(discover(tmp_path)) == {".gitignore", "a\nb/k.py"}
