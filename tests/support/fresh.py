"""The freshness scenario, run through every surface (library, CLI, MCP, HTTP).

A real git repository in a temp dir is changed the ways people change code (insert lines
above a hit, edit, add, rename, delete, switch branch, edit while a query runs) and after each
change the next search must reflect it. The oracle for every hit of every search is the file
on disk: a hit whose lines are current holds exactly the file's lines there; any other hit says
why (``stale``, a note), never showing old lines as current.
"""

from __future__ import annotations

import subprocess
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path

VOCAB = textwrap.dedent('''\
    """The placeholder vocabulary of the scrubber."""


    def placeholder_vocabulary():
        """Words a placeholder may use instead of a real secret."""
        return ["your", "change-me", "example", "xxx"]


    def vocabulary_size():
        return len(placeholder_vocabulary())
    ''')
OTHER = 'def unrelated_helper(value):\n    """Scale a value."""\n    return value * 3\n'
TARGET = "def moving_target_{n}(x):\n    return x + {n}\n"

Search = Callable[[str], dict]  # query -> the JSON of `codeseam search --json`


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.email=t@t.invalid", "-c", "user.name=t", "-c", "commit.gpgsign=false",
                           *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def make_repo(root: Path) -> Path:
    """main: pkg/vocab.py, pkg/other.py, pkg/target.py; branch feature: vocab changed, other
    deleted, a feature-only file added. Checked out: main."""
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "vocab.py").write_text(VOCAB)
    (root / "pkg" / "other.py").write_text(OTHER)
    (root / "pkg" / "target.py").write_text(TARGET.format(n=0))
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "main")
    git(root, "checkout", "-q", "-b", "feature")
    (root / "pkg" / "vocab.py").write_text(VOCAB.replace("placeholder_vocabulary", "feature_branch_vocabulary"))
    (root / "pkg" / "other.py").unlink()
    (root / "pkg" / "feature_only.py").write_text("def only_on_the_feature_branch():\n    return 42\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "feature")
    git(root, "checkout", "-q", "main")
    return root


def file_lines(root: Path, path: str, start: int, end: int) -> str | None:
    try:
        text = (root / path).read_text()
    except OSError:
        return None
    lines = text.split("\n")
    if end > len(lines):
        return None
    return "\n".join(lines[start - 1:end]) + ("\n" if end < len(lines) else "")


def true_to_disk(result: dict, root: Path, *, allow_stale: bool = False) -> None:
    """The oracle: every hit is what the file says now, or says that it is not."""
    for h in result["hits"]:
        if h["current_lines"] is not None:
            now = file_lines(root, h["path"], h["start_line"], h["end_line"])
            assert now is not None and h["text"] in now, (h, now)
        else:
            assert h["stale"] and h["note"], h
        if not allow_stale:
            assert not h["stale"], h


def line_of(hit: dict, needle: str) -> int:
    """The file line of ``needle`` inside a hit."""
    return hit["start_line"] + hit["text"][:hit["text"].index(needle)].count("\n")


def hit_with(result: dict, needle: str) -> dict | None:
    return next((h for h in result["hits"] if needle in h["text"]), None)


class Scenario:
    """The changes, each followed at once by a search that must reflect it (``settle()``, a
    pause before each search, is there for callers that want one; none of ours does)."""

    def __init__(self, root: Path, search: Search, settle: Callable[[], None] = lambda: None) -> None:
        self.root, self.search, self.settle = root, search, settle

    def find(self, query: str, needle: str) -> dict | None:
        self.settle()
        result = self.search(query)
        true_to_disk(result, self.root)
        return hit_with(result, needle)

    def run_all(self) -> None:
        for step in (self.insert_lines_above, self.edit, self.add_file, self.rename, self.delete,
                     self.switch_branch, self.edit_while_querying):
            step()

    def insert_lines_above(self) -> None:
        needle = "def placeholder_vocabulary"
        before = self.find("placeholder_vocabulary", needle)
        assert before is not None
        path = self.root / "pkg" / "vocab.py"
        path.write_text("# one\n# two\n# three\n" + path.read_text())
        after = self.find("placeholder_vocabulary", needle)
        assert after is not None and line_of(after, needle) == line_of(before, needle) + 3, (before, after)

    def edit(self) -> None:
        path = self.root / "pkg" / "vocab.py"
        path.write_text(path.read_text().replace('"xxx"]', '"xxx", "zebracorn"]'))
        hit = self.find("zebracorn placeholder", "zebracorn")
        assert hit is not None and hit["path"] == "pkg/vocab.py"

    def add_file(self) -> None:
        (self.root / "pkg" / "added.py").write_text("def freshly_added_function():\n    return 'new'\n")
        hit = self.find("freshly_added_function", "def freshly_added_function")
        assert hit is not None and hit["path"] == "pkg/added.py"

    def rename(self) -> None:
        (self.root / "pkg" / "other.py").rename(self.root / "pkg" / "renamed.py")
        result = self.search_settled("unrelated_helper")
        paths = {h["path"] for h in result["hits"] if "def unrelated_helper" in h["text"]}
        assert paths == {"pkg/renamed.py"}, result["hits"]

    def delete(self) -> None:
        (self.root / "pkg" / "added.py").unlink()
        result = self.search_settled("freshly_added_function")
        assert not any(h["path"] == "pkg/added.py" for h in result["hits"]), result["hits"]

    def switch_branch(self) -> None:
        git(self.root, "stash", "-q", "--include-untracked")  # the edits above leave the tree dirty
        git(self.root, "checkout", "-q", "feature")
        hit = self.find("feature_branch_vocabulary", "def feature_branch_vocabulary")
        assert hit is not None and hit["path"] == "pkg/vocab.py"
        assert self.find("only_on_the_feature_branch", "def only_on_the_feature_branch") is not None
        result = self.search_settled("unrelated_helper")
        assert not any("def unrelated_helper" in h["text"] for h in result["hits"]), result["hits"]
        git(self.root, "checkout", "-q", "main")
        assert self.find("placeholder_vocabulary", "def placeholder_vocabulary") is not None
        result = self.search_settled("only_on_the_feature_branch")
        assert not any(h["path"] == "pkg/feature_only.py" for h in result["hits"]), result["hits"]

    def search_settled(self, query: str) -> dict:
        self.settle()
        result = self.search(query)
        true_to_disk(result, self.root)
        return result

    def edit_while_querying(self, versions: int = 12) -> None:
        """A writer rewrites pkg/target.py (each version moves the function down a line and
        renames it) while searches run. Every current-lines hit of target.py must be one of
        the versions written since its search began, at its lines; the search after the last
        write shows the last version."""
        path = self.root / "pkg" / "target.py"
        texts = [path.read_text()] + ["\n" * n + TARGET.format(n=n) for n in range(1, versions + 1)]
        written = [0]  # index in texts of the version on disk
        done = threading.Event()

        def writer() -> None:
            for i, text in enumerate(texts[1:], 1):
                path.write_text(text)
                written[0] = i
                time.sleep(0.15)
            done.set()

        t = threading.Thread(target=writer)
        t.start()
        problems, searched = [], 0
        try:
            while not done.is_set() or searched == 0:
                began = written[0]
                result = self.search("moving_target")
                searched += 1
                for h in result["hits"]:
                    if h["path"] != "pkg/target.py":
                        continue
                    if h["current_lines"] is None:
                        if not (h["stale"] and h["note"]):
                            problems.append(("old text without a note", h))
                        continue
                    ok = any(h["text"] in ("\n".join(text.split("\n")[h["start_line"] - 1:h["end_line"]]) + "\n")
                             for text in texts[began:])
                    if not ok:
                        problems.append(("lines not current", began, h))
        finally:
            t.join(30)
        assert problems == [] and searched >= 1, problems[:3]
        final = self.find("moving_target", f"moving_target_{versions}")
        assert final is not None and final["path"] == "pkg/target.py", final
