"""Oracle: on generated trees with nested .gitignore and .codeseamignore files, walking the
plain folder (pathspec) must list exactly what ``git ls-files`` lists once the same folder is
a git repository. Patterns come from a vocabulary of common gitignore shapes: negations,
anchors, folder-only patterns, ``**``, and ignore-everything-but."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from codeseam.discover import discover
from tests.support.hostile import run_git
from tests.support.fixtures import isolated_git  # noqa: F401 (autouse fixture)

DIRS = ["", "a", "b", "a/b", "a/c", "b/a", "build", "a/build", "a/b/deep", "s[1]", "s[1]/a",
        "sp ace", "!neg"]
NAMES = ["x.py", "y.log", "keep.log", "z.txt", "doc.md", "a.tmp", "build.txt"]
PATTERNS = ["*.log", "!keep.log", "build/", "build", "/x.py", "x.py", "a/", "!a/", "b/*.txt",
            "**/c", "a/**/x.py", "*.py", "!*.py", "!b/", "doc*", "*", "!*/", "z.txt", "!z.txt",
            "/a/b", "c/", "deep/", "!deep/", "*.t?p", "[xy].*", "b/**", "!b/a/", "\\#x",
            "a/*/", "!/x.py", "a/**/", "*/", "**/", "a/**", "**", "!a/b/", "!**/deep/x.py",
            "deep", "!b/**", "/*.txt", "*/x.py", "![xy].*", "s[1]/", "\\[*", "sp*", "*[!a-m].py",
            "a/b/**/deep", "?.py", "\\!neg/", "x.py/"]


def _join(d: str, name: str) -> str:
    return f"{d}/{name}" if d else name


trees = st.fixed_dictionaries({
    "files": st.sets(st.tuples(st.sampled_from(DIRS), st.sampled_from(NAMES)), min_size=1, max_size=14),
    "gitignores": st.dictionaries(st.sampled_from(DIRS), st.lists(st.sampled_from(PATTERNS), max_size=4),
                                  max_size=3),
    "extra": st.dictionaries(st.sampled_from(DIRS), st.lists(st.sampled_from(PATTERNS), max_size=3),
                             max_size=2),
})


@settings(max_examples=60, deadline=None)
@given(trees)
def test_walker_agrees_with_git(tree):
    root = Path(tempfile.mkdtemp(prefix="codeseam-oracle-"))
    try:
        dirs = {d for d in DIRS}
        for d, name in tree["files"]:
            if _join(d, name) in dirs:  # a file cannot share a folder's path
                continue
            path = root / _join(d, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"{d}/{name}\n")
        for kind, specs in ((".gitignore", tree["gitignores"]), (".codeseamignore", tree["extra"])):
            for d, patterns in specs.items():
                (root / d).mkdir(parents=True, exist_ok=True)
                (root / _join(d, kind)).write_text("\n".join(patterns) + "\n")
        walked = discover(root)
        run_git(root, "init", "-q")
        listed = discover(root)
        assert (walked.is_git, listed.is_git) == (False, True)
        assert [f.path for f in walked.files] == [f.path for f in listed.files], tree
        assert bool(walked.files) or any("ignore rules leave 0 files" in w for w in walked.warnings)
    finally:
        shutil.rmtree(root)
