"""Discovery of a few paths: the same verdicts as ``discover``, for just the files that changed.

A watcher or a stat scan names the paths that changed; re-listing the whole tree for them
would cost as much as a full scan. ``discover_paths`` decides each one as ``discover`` would:

- a path the manifest already has was listed before; unless ignore files changed (the caller
  then runs a full ``discover``), it still is, so only the file itself is classified again;
- a new path is listed when git lists it (``git ls-files --cached --others
  --exclude-standard`` on exactly those paths) or, outside git, when no ignore file on its
  way down from the root ignores it or a folder above it (``walk_listing``'s rules); then
  ``.codeseamignore`` files may exclude it;
- every listed path goes through the same classifier (symlinks, size, binary, minified ...).

A path that is gone or no longer listed is simply not in the result: the sync, scoped to the
changed paths, then deletes it.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable

from . import rules
from .ignore import IgnoreRules
from .listing import ExtraIgnores, Listing, _git, _nul_split, read_ignore_lines


def is_ignore_file(path: str) -> bool:
    return path.rpartition("/")[2] in rules.IGNORE_FILES


def discover_paths(root: str, paths: Iterable[str], *, known: Collection[str], is_git: bool,
                   max_file_bytes: int = 1 << 20, exclude: Iterable[str] = ()):
    """A ``Discovery`` of ``paths`` (repo-relative) under ``root`` (absolute, resolved).
    A known path is classified again whole: the folders above it are re-checked too (a
    tracked folder swapped for a symlink is never followed), and ``exclude`` applies."""
    from . import Discovery, _classify, _extra_ignores, _printable

    wanted = sorted({p for p in paths if p and _printable(p) is not None})
    new = [p for p in wanted if p not in known]
    listing = Listing(is_git=is_git)
    listed = set(wanted) - set(new)
    if new:
        listed |= (_git_listed(root, new) if is_git else _walk_listed(root, new, listing.warnings))
    listing.paths = sorted(listed)
    if is_git:
        extra = _extra_ignores(root, listing)
        if extra is not None:
            listing.paths = [p for p in listing.paths if not extra.excluded(p)]
    files, skips = _classify(root, listing.paths, max_file_bytes, is_git, exclude)
    return Discovery(root, files, tuple(sorted(skips, key=lambda s: (s.path, s.reason))),
                     tuple(listing.warnings), is_git)


def _git_listed(root: str, paths: list[str]) -> set[str]:
    """Which of ``paths`` git lists (tracked, or untracked and not ignored)."""
    spec = b"".join(os.fsencode(":(literal)" + p) + b"\0" for p in paths)
    proc = _git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard",
                "--pathspec-from-file=-", "--pathspec-file-nul", input=spec, timeout=120)
    if proc is None or proc.returncode != 0:  # an old git without --pathspec-from-file
        listed: set[str] = set()
        for i in range(0, len(paths), 200):
            chunk = [":(literal)" + p for p in paths[i:i + 200]]
            done = _git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *chunk)
            if done is not None and done.returncode == 0:
                listed |= set(_nul_split(done.stdout))
        return {p for p in listed if not p.endswith("/")}
    return {p for p in _nul_split(proc.stdout) if not p.endswith("/")}


def _walk_listed(root: str, paths: list[str], warnings: list[str]) -> set[str]:
    """Which of ``paths`` ``walk_listing`` would list: no folder on the way is ignored (or
    always skipped), and the path itself is not, under the ignore files met on the way."""
    from .contain import Containment

    cache: dict[str, tuple[IgnoreRules, IgnoreRules]] = {}
    contain = Containment(root)

    def rules_at(rel_dir: str) -> tuple[IgnoreRules, IgnoreRules]:
        """The rules in force inside folder ``rel_dir`` ("" or "a/b/"), its own files included."""
        if rel_dir in cache:
            return cache[rel_dir]
        if rel_dir:
            parent = rel_dir[:-1].rpartition("/")[0]
            git_rules, extra_rules = rules_at(parent + "/" if parent else "")
        else:
            git_rules, extra_rules = IgnoreRules(rules.DEFAULT_IGNORES), IgnoreRules()
        real_folder = contain.folder(rel_dir.rstrip("/")) is None  # never read through a link
        for fname in rules.IGNORE_FILES:
            full = os.path.join(root, rel_dir + fname)
            if real_folder and os.path.isfile(full) and not os.path.islink(full):
                lines = read_ignore_lines(full, warnings, rel_dir + fname)
                if fname == ".gitignore":
                    git_rules = git_rules.extend(lines, rel_dir)
                else:
                    extra_rules = extra_rules.extend(lines, rel_dir)
        cache[rel_dir] = (git_rules, extra_rules)
        return cache[rel_dir]

    listed = set()
    for path in paths:
        parts = path.split("/")
        if any(p in rules.ALWAYS_SKIPPED_NAMES for p in parts):
            continue
        ok, rel_dir = True, ""
        for i, name in enumerate(parts):
            git_rules, extra_rules = rules_at(rel_dir)
            rel = rel_dir + name
            is_dir = i < len(parts) - 1
            if git_rules.ignored(rel, is_dir) or extra_rules.ignored(rel, is_dir):
                ok = False
                break
            rel_dir = rel + "/"
        if ok:
            listed.add(path)
    return listed


__all__ = ["discover_paths", "is_ignore_file", "ExtraIgnores"]
