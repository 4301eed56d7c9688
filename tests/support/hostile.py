"""The hostile corpus of issue 8, written to disk so that tests at every level can index it.

``make_hostile_corpus(root, git=True)`` writes every hostile input into ``root`` (a git
repository with one commit, or a plain folder) and returns what it made and what must
happen to each path::

    {
      "root": str, "git": bool, "as_root_user": bool, "max_file_bytes": int,
      "index":   {path: {"marker": str | None, "language": str | None, "note": str}},
      "skip":    {path: reason},          # a Skip with exactly this reason code
      "ignored": [path, ...],             # on disk, but neither listed nor reported
      "races":   {"delete": [path], "change": {path: new bytes}},
      "zero_files_dir": "ignore_all",     # discovering this folder alone leaves 0 files
      "new_markers": {path: marker},      # markers of the changed race files' new content
    }

``marker`` is a unique ASCII word inside the file (None for empty files), so end-to-end
tests can search for it. The race files are indexable as written; ``apply_races`` deletes
and rewrites them: call it between listing and reading to reproduce "a file deleted, or
changed, between listing and reading" (then the deleted one is skipped as ``vanished`` and
the changed one is read in its new state).

The chmod-000 file is ``unreadable`` only for a normal user: root reads it, and then it is
expected in ``index`` (``as_root_user`` says which case applies).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

MAX_FILE_BYTES = 1 << 20
HUGE_BYTES = 50 * 1000 * 1000
BAD_NAME = b"bad\xffname.py"  # not valid UTF-8
BAD_NAME_SHOWN = "bad\\xffname.py"  # how discovery reports it
DEEP_DIRS = 100


def _marker(name: str) -> str:
    return "zqhostile" + "".join(ch for ch in name if ch.isalnum()).lower()


def _texts() -> dict[str, tuple[bytes, str | None, str | None, str]]:
    """path -> (content, marker, language, note) for every file that must be indexed."""
    m = _marker
    deep_py = ("# " + m("deep") + "\nx = " + "[\n" * 10_000 + "]\n" * 10_000).encode()
    deep_json = ('{"' + m("deepjson") + '": ' + "[\n" * 10_000 + "]\n" * 10_000 + "}\n").encode()
    return {
        "main.py": (f"def main():\n    return '{m('main')}'\n".encode(), m("main"), "python", "plain"),
        "pkg/__init__.py": (f"# {m('pkginit')}\n".encode(), m("pkginit"), "python", "plain"),
        "pkg/mod.py": (f"class Mod:\n    name = '{m('pkgmod')}'\n".encode(), m("pkgmod"), "python", "plain"),
        "invalid_utf8.py": (f"# {m('invalidutf8')}\ns = '".encode() + b"\xff\xfe\x80 broken'\n",
                            m("invalidutf8"), "python", "invalid UTF-8: cp1252/latin-1 fallback"),
        "latin1_cookie.py": (b"# -*- coding: latin-1 -*-\n" + f"# {m('latin1cookie')}\n".encode()
                             + "s = 'café crème'\n".encode("latin-1"),
                             m("latin1cookie"), "python", "Latin-1 with a PEP 263 cookie"),
        "latin1_plain.txt": (f"{m('latin1plain')} ".encode() + "naïve déjà vu\n".encode("latin-1"),
                             m("latin1plain"), None, "Latin-1 without a cookie"),
        "utf16_bom.py": (f"# {m('utf16')}\ndef f():\n    return 'Grüße'\n".encode("utf-16"),
                         m("utf16"), "python", "UTF-16 with a BOM"),
        "crlf.py": (f"def crlf_func():\r\n    return '{m('crlf')}'\r\n".encode(), m("crlf"), "python",
                    "CRLF line ends"),
        "formfeed.py": (f"def a():\n    return '{m('formfeed')}'\n\f\ndef b():\n    pass\n".encode(),
                        m("formfeed"), "python", "form feed"),
        "deep_nesting.py": (deep_py, m("deep"), "python", "nesting 10,000 deep"),
        "deep_nesting.json": (deep_json, m("deepjson"), "json", "nesting 10,000 deep"),
        "syntax_error.py": (f"def broken(:\n    return (( '{m('syntaxpy')}'\n".encode(), m("syntaxpy"),
                            "python", "syntax error"),
        "syntax_error.js": (f"function ( {{{{ '{m('syntaxjs')}' ]]\n".encode(), m("syntaxjs"),
                            "javascript", "syntax error"),
        "empty.py": (b"", None, "python", "empty file"),
        "blank.txt": (b"\n\n   \n", None, None, "whitespace only"),
        "only_comments.py": (f"# {m('commentspy')}\n# nothing else here\n".encode(), m("commentspy"),
                             "python", "comments only"),
        "only_comments.c": (f"/* {m('commentsc')} */\n// nothing else\n".encode(), m("commentsc"), "c",
                            "comments only"),
        "legacy.cob": (f"       IDENTIFICATION DIVISION.\n       PROGRAM-ID. {m('cobol').upper()}.\n".encode(),
                       m("cobol").upper(), None, "COBOL: grammar excluded, indexed as line windows"),
        "with space.py": (f"X = '{m('space')}'\n".encode(), m("space"), "python", "space in the name"),
        "ünïcödé_名前.py": (f"X = '{m('unicode')}'\n".encode(), m("unicode"), "python", "unicode name"),
        "new\nline.py": (f"X = '{m('newline')}'\n".encode(), m("newline"), "python", "newline in the name"),
        "race_delete.py": (f"X = '{m('racedelete')}'\n".encode(), m("racedelete"), "python",
                           "deleted between listing and reading (apply_races)"),
        "race_change.py": (f"X = '{m('racechange')}'\n".encode(), m("racechange"), "python",
                           "changed between listing and reading (apply_races)"),
        "/".join(f"d{i}" for i in range(DEEP_DIRS)) + "/leaf.py": (
            f"X = '{m('deepdirs')}'\n".encode(), m("deepdirs"), "python", f"{DEEP_DIRS} folders deep"),
    }


def _skipped_files() -> dict[str, tuple[bytes, str]]:
    """path -> (content, reason) for regular files that discovery must skip."""
    line = b"var a=function(b){return b*2};" * 40
    bundle = (b"!function(){" + line * (1_000_000 // len(line)))[:999_990] + b"}();"
    return {
        "binary.dat": (b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8, "binary"),
        "bundle.js": (bundle, "minified"),
        "vendor/lib.min.js": (b"var x=1;\nvar y=2;\n", "minified"),
        "package-lock.json": (b'{"lockfileVersion": 3}\n', "lockfile"),
        "yarn.lock": (b"# yarn lockfile v1\n", "lockfile"),
        "Cargo.lock": (b"version = 3\n", "lockfile"),
    }


def run_git(cwd: Path, *args: str) -> str:
    """Run git in ``cwd`` with a fixed identity (no signing); returns stdout. Raises on failure."""
    proc = subprocess.run(["git", "-c", "user.name=hostile", "-c", "user.email=hostile@example.invalid",
                           "-c", "commit.gpgsign=false", "-c", "protocol.file.allow=always", *args],
                          cwd=cwd, check=True, capture_output=True, encoding="utf-8",
                          errors="surrogateescape")
    return proc.stdout


def make_hostile_corpus(root: Path, *, git: bool = True) -> dict:
    """Write the whole hostile corpus into ``root`` (created if missing); see the module doc."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    as_root = hasattr(os, "geteuid") and os.geteuid() == 0
    index: dict[str, dict] = {}
    for rel, (data, marker, language, note) in _texts().items():
        _write(root / rel, data)
        index[rel] = {"marker": marker, "language": language, "note": note}
    skip = {}
    for rel, (data, reason) in _skipped_files().items():
        _write(root / rel, data)
        skip[rel] = reason
    _write(root / "ignore_all" / ".gitignore", b"*\n")
    _write(root / "ignore_all" / "hidden.py", f"X = '{_marker('hidden')}'\n".encode())
    ignored = ["ignore_all/.gitignore", "ignore_all/hidden.py"]
    fd = os.open(os.path.join(os.fsencode(root), BAD_NAME), os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, b"X = 1\n")
    os.close(fd)
    skip[BAD_NAME_SHOWN] = "bad-name"
    skip.update(_make_links(root))
    _write(root / "unreadable.py", f"X = '{_marker('unreadable')}'\n".encode())
    if git:
        run_git(root, "init", "-q")
        run_git(root, "add", "-A")
        run_git(root, "commit", "-q", "-m", "hostile corpus")
    # Made after the commit: git cannot add an unreadable file, a 50 MB file is slow to add,
    # and a FIFO is never listed by git (so in a repository it is simply not there).
    os.chmod(root / "unreadable.py", 0)
    if as_root:
        index["unreadable.py"] = {"marker": _marker("unreadable"), "language": "python",
                                  "note": "chmod 000, but root reads it"}
    else:
        skip["unreadable.py"] = "unreadable"
    with open(root / "huge.txt", "wb") as fh:
        fh.truncate(HUGE_BYTES)  # sparse: 50 MB on paper, no disk blocks
    skip["huge.txt"] = "too-large"
    if hasattr(os, "mkfifo"):
        os.mkfifo(root / "pipe.fifo")
        if git:
            ignored.append("pipe.fifo")
        else:
            skip["pipe.fifo"] = "not-a-file"
    new_content = f"X = '{_marker('racechangenew')}'\n".encode()
    return {
        "root": str(root), "git": git, "as_root_user": as_root, "max_file_bytes": MAX_FILE_BYTES,
        "index": index, "skip": skip, "ignored": ignored,
        "races": {"delete": ["race_delete.py"], "change": {"race_change.py": new_content}},
        "new_markers": {"race_change.py": _marker("racechangenew")},
        "zero_files_dir": "ignore_all",
    }


def _make_links(root: Path) -> dict[str, str]:
    links = {
        "loop_a": ("loop_b", "symlink-loop"),
        "loop_b": ("loop_a", "symlink-loop"),
        "self_loop": ("self_loop", "symlink-loop"),
        "escape_file.py": (os.path.realpath(os.__file__), "symlink-escape"),
        "escape_dir": ("..", "symlink-escape"),
        "dangling.py": ("does_not_exist.py", "broken-symlink"),
        "link_to_main.py": ("main.py", "symlink-duplicate"),
        "linked_dir": ("pkg", "not-a-file"),
    }
    for rel, (target, _) in links.items():
        os.symlink(target, root / rel)
    return {rel: reason for rel, (_, reason) in links.items()}


def apply_races(corpus: dict) -> None:
    """Delete and rewrite the race files (call between listing and reading)."""
    root = Path(corpus["root"])
    for rel in corpus["races"]["delete"]:
        (root / rel).unlink()
    for rel, data in corpus["races"]["change"].items():
        path = root / rel
        before = path.stat()
        path.write_bytes(data)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


NOBODY = 65534


def run_unprivileged(fn, *args):
    """Run ``fn(*args)`` in a forked child that dropped root to ``nobody`` and return its
    (picklable) result: the honest way to see a chmod-000 file as a normal user would, when
    the tests run as root (root reads chmod-000 files). Only call it as root; paths the child
    touches must be reachable by ``nobody`` (e.g. a 0755 folder under /tmp)."""
    import pickle

    from codeseam.chunk.languages import available_grammars

    available_grammars()  # import the grammar pack now: the child cannot read /root
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        try:
            os.close(rfd)
            os.environ.update(HOME="/tmp", GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1")
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            try:
                payload = ("ok", fn(*args))
            except BaseException as exc:  # noqa: BLE001 - reported to the parent
                payload = ("err", repr(exc))
            with os.fdopen(wfd, "wb") as fh:
                fh.write(pickle.dumps(payload))
        finally:
            os._exit(0)
    os.close(wfd)
    with os.fdopen(rfd, "rb") as fh:
        data = fh.read()
    os.waitpid(pid, 0)
    status, value = pickle.loads(data)
    if status != "ok":
        raise AssertionError(f"unprivileged child failed: {value}")
    return value
