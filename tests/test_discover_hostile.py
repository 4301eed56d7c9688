"""The issue-8 hostile corpus through discovery and reading: 0 crashes, every skip with its
expected reason, everything else listed and readable (as a git repository and as a folder)."""

from __future__ import annotations

import os

import pytest

from codeseam.chunk.languages import language_for
from codeseam.discover import discover, read_text
from codeseam.errors import FileSkipped
from tests.support.hostile import apply_races, make_hostile_corpus
from tests.support.fixtures import isolated_git  # noqa: F401 (autouse fixture)


def on_disk(root: str) -> set[str]:
    """Every non-directory entry under root (symlinks not followed, .git left out), shown as
    discovery shows names (undecodable bytes backslash-escaped)."""
    found = set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git" and not os.path.islink(os.path.join(dirpath, d))]
        links = [d for d in os.listdir(dirpath) if os.path.islink(os.path.join(dirpath, d))]
        for name in {*filenames, *links}:
            rel = os.path.relpath(os.path.join(dirpath, name), root)
            found.add(rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"))
    return found


@pytest.mark.parametrize("use_git", [True, False], ids=["git", "folder"])
def test_hostile_corpus(tmp_path, use_git):
    corpus = make_hostile_corpus(tmp_path / "corpus", git=use_git)
    d = discover(corpus["root"], max_file_bytes=corpus["max_file_bytes"])
    listed = {f.path: f for f in d.files}
    skipped = {s.path: s.reason for s in d.skips}

    assert d.is_git is use_git and d.warnings == ()
    assert set(listed) == set(corpus["index"])
    assert skipped == corpus["skip"]
    # every entry on disk is listed, skipped with a reason, or ignored: nothing falls through
    assert on_disk(corpus["root"]) == set(listed) | set(skipped) | set(corpus["ignored"])
    for path, want in corpus["index"].items():
        assert listed[path].language == want["language"] == language_for(path)
        text, digest = read_text(listed[path].abs_path, max_file_bytes=corpus["max_file_bytes"])
        assert len(digest) == 32
        if want["marker"]:
            assert want["marker"] in text, path

    zero = discover(os.path.join(corpus["root"], corpus["zero_files_dir"]))
    assert zero.files == () and any("ignore rules leave 0 files" in w for w in zero.warnings)


def test_races_between_listing_and_reading(tmp_path):
    corpus = make_hostile_corpus(tmp_path / "corpus", git=True)
    d = discover(corpus["root"])
    listed = {f.path: f for f in d.files}
    apply_races(corpus)
    outcomes = {}
    for path, f in listed.items():
        try:
            outcomes[path] = read_text(f.abs_path)[0]
        except FileSkipped as exc:
            outcomes[path] = exc.reason
    for path in corpus["races"]["delete"]:
        assert outcomes.pop(path) == "vanished"
    for path, new in corpus["races"]["change"].items():
        assert outcomes.pop(path) == new.decode()
        assert corpus["new_markers"][path] in new.decode()
    assert all(isinstance(v, str) and v not in ("vanished", "unreadable") for v in outcomes.values())
    again = discover(corpus["root"])
    assert not set(corpus["races"]["delete"]) & {f.path for f in again.files}
