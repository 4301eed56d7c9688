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
import re
import subprocess
from dataclasses import dataclass, field
from typing import Sequence

from ..records import Skip
from . import rules

log = logging.getLogger(__name__)

Levels = tuple[tuple[str, "IgnoreSpec"], ...]  # (directory prefix "" or "a/b/", its patterns)

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

class IgnoreSpec:
    """One ignore file's patterns (pathspec's GitIgnoreSpec), with a prefilter: one combined
    regex answers "no pattern matches" (the common case) in a single search instead of one
    search per pattern; only a path that some pattern matches is checked pattern by pattern."""

    def __init__(self, lines: Sequence[str]) -> None:
        import pathspec

        self.spec = pathspec.GitIgnoreSpec.from_lines(lines)
        parts = [_NAMED_GROUP.sub("(?:", p.regex.pattern) for p in self.spec.patterns
                 if p.include is not None and p.regex is not None]
        try:
            self._any = re.compile("|".join(f"(?:{p})" for p in parts)) if parts else None
        except re.error:  # never expected; fall back to the plain spec
            self._any = _MATCH_ALL
        self.empty = not parts

    def check(self, path: str) -> bool | None:
        """True: ignored; False: re-included by a negation; None: no pattern matches."""
        if self._any is None or self._any.search(path) is None:
            return None
        return self.spec.check_file(path).include


_NAMED_GROUP = re.compile(r"\(\?P<\w+>")
_MATCH_ALL = re.compile("")


def compile_patterns(lines: Sequence[str]) -> IgnoreSpec:
    return IgnoreSpec(lines)


def load_ignore_file(abs_path: str, warnings: list[str], label: str):
    """The compiled spec of one ignore file, or None (empty, or unreadable: a warning)."""
    try:
        with open(abs_path, "rb") as fh:
            data = fh.read(1 << 20)
    except OSError as exc:
        warnings.append(f"cannot read {label}: {exc.strerror or exc}")
        return None
    spec = compile_patterns(data.decode("utf-8", errors="replace").splitlines())
    return None if spec.empty else spec


def match_levels(levels: Levels, rel: str, is_dir: bool) -> bool | None:
    """Ignored (True), re-included (False) or not matched (None) by the deepest level whose
    patterns match. A level's patterns apply below its directory, not to the directory."""
    target = rel + "/" if is_dir else rel
    for prefix, spec in reversed(levels):
        if prefix and (target == prefix or not target.startswith(prefix)):
            continue
        include = spec.check(target[len(prefix):])
        if include is not None:
            return include
    return None


class ExtraIgnores:
    """``.codeseamignore`` rules over a path list from git: a path is excluded when it or
    any of its parent directories is matched (as the walker would not enter that folder)."""

    def __init__(self, levels: Levels) -> None:
        self.levels = tuple(sorted(levels, key=lambda lv: lv[0].count("/")))
        self._dirs: dict[str, bool] = {}

    def _dir_excluded(self, rel_dir: str) -> bool:
        hit = self._dirs.get(rel_dir)
        if hit is None:
            parent, _, _ = rel_dir.rpartition("/")
            hit = (bool(parent) and self._dir_excluded(parent)) or bool(
                match_levels(self.levels, rel_dir, True))
            self._dirs[rel_dir] = hit
        return hit

    def excluded(self, rel: str) -> bool:
        parent, _, _ = rel.rpartition("/")
        if parent and self._dir_excluded(parent):
            return True
        return bool(match_levels(self.levels, rel, False))


# -- git ----------------------------------------------------------------------------------

def _git(root: str, *args: str) -> subprocess.CompletedProcess[bytes] | None:
    env = {k: v for k, v in os.environ.items() if k not in _GIT_ENV_DROP}
    env.update(GIT_OPTIONAL_LOCKS="0", LC_ALL="C", LANGUAGE="C")
    try:
        return subprocess.run(["git", "-c", "core.quotepath=off", *args], cwd=root, env=env,
                              capture_output=True, timeout=GIT_TIMEOUT_S, check=False)
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
    defaults: Levels = (("", compile_patterns(rules.DEFAULT_IGNORES)),)
    stack: list[tuple[str, str, Levels, Levels]] = [("", root, defaults, ())]
    while stack:
        rel_dir, abs_dir, git_lv, extra_lv = stack.pop()
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
                spec = load_ignore_file(entry.path, listing.warnings, rel_dir + fname)
                if spec is not None and fname == ".gitignore":
                    git_lv = (*git_lv, (rel_dir, spec))
                elif spec is not None:
                    extra_lv = (*extra_lv, (rel_dir, spec))
        for entry in entries:
            if entry.name in rules.ALWAYS_SKIPPED_NAMES:
                continue
            rel = rel_dir + entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if match_levels(git_lv, rel, is_dir) or match_levels(extra_lv, rel, is_dir):
                listing.ignored += 1
            elif is_dir:
                stack.append((rel + "/", entry.path, git_lv, extra_lv))
            else:
                listing.paths.append(rel)
    return listing
