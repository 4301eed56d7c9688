"""Listing the candidate paths of a root: through git, or by walking a plain folder.

Both return repo-relative posix paths of everything that is not ignored; what to do with
each path (index it or skip it with a reason) is decided afterwards, in one place.

Ignore semantics (both modes agree with git on the common cases; a property test compares
the walker with ``git ls-files`` on generated trees):

- git repository: git decides (tracked files + untracked files that are not ignored, which
  covers nested .gitignore, ``.git/info/exclude`` and the global excludes file). Then every
  ``.codeseamignore`` in a folder that holds or encloses a listed file (read even when git
  ignores it) can exclude more; it cannot bring back what git excludes.
- plain folder: every nested ``.gitignore`` (each relative to its own directory, negations
  included, deeper files winning) over the visible ``rules.DEFAULT_IGNORES``; then every
  ``.codeseamignore`` can exclude more. An excluded directory is not entered, so as in git a
  file inside it cannot be re-included. ``.git`` is never entered.
"""

from __future__ import annotations

import logging
import os
import subprocess
from dataclasses import dataclass, field

from ..records import Skip
from . import rules
from .ignore import IgnoreRules

log = logging.getLogger(__name__)

_GIT_ENV_DROP = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
                 "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_PREFIX")
GIT_TIMEOUT_S = 300


@dataclass
class Listing:
    paths: list[str] = field(default_factory=list)  # candidate files (and symlinks), unsorted
    skips: list[Skip] = field(default_factory=list)  # directories that could not be listed, submodules
    warnings: list[str] = field(default_factory=list)
    ignored: int = 0  # entries left out by ignore rules (only counted where it is cheap)
    is_git: bool = False


# -- ignore files -------------------------------------------------------------------------

def read_ignore_lines(abs_path: str, warnings: list[str], label: str) -> list[str]:
    """The lines of one ignore file ([] and a warning when it cannot be read)."""
    try:
        with open(abs_path, "rb") as fh:
            data = fh.read(1 << 20)
    except OSError as exc:
        warnings.append(f"cannot read {label}: {exc.strerror or exc}")
        return []
    return data.decode("utf-8", errors="replace").splitlines()


class ExtraIgnores:
    """``.codeseamignore`` rules over a path list from git: a path is excluded when it or
    any folder above it is matched (as the walker would not enter that folder)."""

    def __init__(self, rules_: IgnoreRules) -> None:
        self.rules = rules_
        self._dirs: dict[str, bool] = {}

    def _dir_excluded(self, rel_dir: str) -> bool:
        chain = []  # rel_dir and its ancestors not judged yet, deepest first (no recursion:
        while rel_dir and rel_dir not in self._dirs:  # folders can nest thousands deep)
            chain.append(rel_dir)
            rel_dir = rel_dir.rpartition("/")[0]
        hit = self._dirs.get(rel_dir, False)
        for folder in reversed(chain):
            hit = hit or self.rules.ignored(folder, True)
            self._dirs[folder] = hit
        return hit

    def excluded(self, rel: str) -> bool:
        parent = rel.rpartition("/")[0]
        if parent and self._dir_excluded(parent):
            return True
        return self.rules.ignored(rel, False)


# -- git ----------------------------------------------------------------------------------

def _git(root: str, *args: str, input: bytes | None = None,
         timeout: float = GIT_TIMEOUT_S) -> subprocess.CompletedProcess[bytes] | None:
    env = {k: v for k, v in os.environ.items() if k not in _GIT_ENV_DROP}
    env.update(GIT_OPTIONAL_LOCKS="0", LC_ALL="C", LANGUAGE="C")
    try:
        return subprocess.run(["git", "-c", "core.quotepath=off", *args], cwd=root, env=env, input=input,
                              capture_output=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.debug("git %s failed in %s: %s", args[0], root, exc)
        return None


def _nul_split(out: bytes) -> list[str]:
    return [os.fsdecode(p) for p in out.split(b"\0") if p]


def git_listing(root: str) -> Listing | None:
    """Tracked + untracked-not-ignored files under ``root`` via ``git ls-files``; None when
    ``root`` is not inside a git work tree (or git is missing, or ``root`` is git-ignored)."""
    proc = _git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    if proc is None:
        if os.path.exists(os.path.join(root, ".git")):
            return Listing(warnings=["git is not available; listing the repository as a plain folder"])
        return None
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", errors="replace").strip()
        if "not a git repository" in err:
            return None
        last = err.splitlines()[-1] if err else f"exit {proc.returncode}"
        return Listing(warnings=[f"git ls-files failed ({last}); listing as a plain folder"])
    listing = Listing(is_git=True)
    listing.warnings.extend(f"git: {ln}" for ln in proc.stderr.decode("utf-8", "replace").splitlines()
                            if ln.strip())
    seen: set[str] = set()
    for path in _nul_split(proc.stdout):
        if path in seen:  # unmerged paths are listed once per stage
            continue
        seen.add(path)
        if path.endswith("/"):  # an untracked nested repository
            listing.skips.append(Skip(path.rstrip("/"), rules.SUBMODULE,
                                      "nested git repository: index it on its own"))
        else:
            listing.paths.append(path)
    if not listing.paths and _root_is_git_ignored(root):
        return None
    if not listing.paths:
        ignored = _git(root, "ls-files", "-z", "--others", "--ignored", "--exclude-standard",
                       "--directory")
        if ignored is not None and ignored.returncode == 0:  # "./" is root itself, not a path
            listing.ignored = sum(p != "./" for p in _nul_split(ignored.stdout))
    return listing


def _root_is_git_ignored(root: str) -> bool:
    """True when the enclosing repository ignores ``root`` itself: then the user asked for
    exactly that folder, and it is listed as a plain folder."""
    parent, name = os.path.split(root)
    if not name:
        return False
    proc = _git(parent, "check-ignore", "-q", "--", name)
    return proc is not None and proc.returncode == 0


# -- plain folder -------------------------------------------------------------------------

def walk_listing(root: str) -> Listing:
    """Walk ``root`` iteratively (os.scandir), honouring nested ignore files; never follows a
    directory symlink (it is listed as a path and classified later)."""
    listing = Listing()
    defaults = IgnoreRules(rules.DEFAULT_IGNORES)
    stack: list[tuple[str, str, IgnoreRules, IgnoreRules]] = [("", root, defaults, IgnoreRules())]
    while stack:
        rel_dir, abs_dir, git_rules, extra_rules = stack.pop()
        try:
            with os.scandir(abs_dir) as it:
                entries = list(it)
        except FileNotFoundError:
            listing.skips.append(Skip(rel_dir.rstrip("/"), rules.VANISHED, "folder deleted while listing"))
            continue
        except OSError as exc:
            listing.skips.append(Skip(rel_dir.rstrip("/") or ".", rules.UNREADABLE,
                                      f"cannot list folder: {exc.strerror or exc}"))
            continue
        by_name = {e.name: e for e in entries}
        for fname in rules.IGNORE_FILES:
            entry = by_name.get(fname)
            if entry is not None and entry.is_file(follow_symlinks=False):
                lines = read_ignore_lines(entry.path, listing.warnings, rel_dir + fname)
                if fname == ".gitignore":
                    git_rules = git_rules.extend(lines, rel_dir)
                else:
                    extra_rules = extra_rules.extend(lines, rel_dir)
        for entry in entries:
            if entry.name in rules.ALWAYS_SKIPPED_NAMES:
                continue
            rel = rel_dir + entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if git_rules.ignored(rel, is_dir) or extra_rules.ignored(rel, is_dir):
                listing.ignored += 1
            elif is_dir:
                stack.append((rel + "/", entry.path, git_rules, extra_rules))
            else:
                listing.paths.append(rel)
    return listing
