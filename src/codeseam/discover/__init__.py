"""Discovery: which files of a repository are indexed, and why the others are not.

``discover(root)`` lists candidates (``listing.py``: git-aware, or a walk honouring nested
ignore files), then classifies each one here, in sorted order:

- a name that is not valid UTF-8 → ``bad-name``;
- inside the index's own data dir (``exclude``: the settings' data dir, wherever it lies
  under the root) → one ``index-data`` skip for the folder; its files are never opened;
- under a folder that is a symlink (git still lists a tracked folder's files after the
  folder is swapped for a link): to a place outside the root → ``symlink-escape``, inside it
  → ``not-a-file``; never followed, so nothing outside the root is read (``contain.py``);
- a symlink: a loop → ``symlink-loop``; dangling → ``broken-symlink``; resolving outside the
  root or into ``.git/`` → ``symlink-escape``; into the data dir → ``index-data``; to a directory → ``not-a-file`` (never followed:
  the files inside the root are listed under their own paths); to a file that is itself
  indexed, or that an earlier link already brought in → ``symlink-duplicate``; otherwise the
  link is indexed once, under its own path, with ``abs_path`` set to the resolved target;
- a git submodule or nested repository → ``submodule``; a FIFO, socket or device → ``not-a-file``;
- a lock file by name → ``lockfile``; ``*.min.js``/``*.min.css`` → ``minified``;
- stat size over ``max_file_bytes`` → ``too-large`` (the file is not opened);
- the sniff (first 8 KiB, rarely up to 64 KiB): a NUL byte → ``binary``; an average line
  over 1000 bytes → ``minified``; permission denied → ``unreadable``.

Files are not read beyond that sniff; ``read_text`` (``reading.py``) reads and decodes them
later. Ignored files are not listed and not reported; when nothing is left, a warning says so.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..chunk.languages import language_for, language_label
from ..errors import ConfigError
from ..records import Skip, SourceFile
from . import rules
from .contain import Containment, inside
from .ignore import IgnoreRules
from .listing import ExtraIgnores, Listing, git_listing, read_ignore_lines, walk_listing
from .reading import decode_bytes, file_signature, read_text, sniff

__all__ = ["Discovery", "discover", "read_text", "file_signature", "decode_bytes", "rules"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Discovery:
    root: str  # absolute, resolved
    files: tuple[SourceFile, ...]  # sorted by path
    skips: tuple[Skip, ...]  # sorted by path, each with a reason code and a detail
    warnings: tuple[str, ...]
    is_git: bool

    def counts_by_language(self) -> dict[str, int]:
        """Files per language label (the grammar, ``cobol`` for an excluded one, else ``text``),
        most common first."""
        counts = Counter(language_label(f.path) for f in self.files)
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    def counts_by_reason(self) -> dict[str, int]:
        counts = Counter(s.reason for s in self.skips)
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _resolve_root(root: str | Path) -> str:
    path = Path(root).expanduser()
    if not path.exists():
        raise ConfigError(f"cannot index {str(root)!r}: no such directory")
    if not path.is_dir():
        raise ConfigError(f"cannot index {str(root)!r}: not a directory")
    return str(path.resolve())


def _printable(rel: str) -> str | None:
    """``rel`` when it is valid UTF-8 text, else None (a name with undecodable bytes)."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return rel


class _Classifier:
    def __init__(self, root: str, max_file_bytes: int, is_git: bool, contain: Containment) -> None:
        self.root, self.max_file_bytes, self.is_git = root, max_file_bytes, is_git
        self.contain = contain
        self.files: dict[str, SourceFile] = {}
        self.skips: list[Skip] = []
        self._link_targets: dict[str, str] = {}  # resolved target -> the path that indexes it

    def skip(self, rel: str, reason: str, detail: str = "") -> None:
        self.skips.append(Skip(rel, reason, detail))

    def regular(self, rel: str, abs_path: str, st: os.stat_result) -> None:
        """The checks every file (or a link's target) goes through, cheapest first."""
        if rules.is_lockfile(rel):
            return self.skip(rel, rules.LOCKFILE, "lock file")
        if rules.is_minified_name(rel):
            return self.skip(rel, rules.MINIFIED, "minified by name")
        if st.st_size > self.max_file_bytes:
            return self.skip(rel, rules.TOO_LARGE, f"{st.st_size} bytes > {self.max_file_bytes}")
        found = sniff(abs_path, st.st_size, self.root, st)
        if found is not None:
            return self.skip(rel, *found)
        self.files[rel] = SourceFile(rel, abs_path, language_for(rel), st.st_size, st.st_mtime_ns)

    def path(self, rel: str) -> bool:
        """Classify a path; True when it is a symlink, left for ``link`` (links are classified
        after all regular files, so duplicates are known)."""
        if _printable(rel) is None:
            shown = rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            self.skip(shown, rules.BAD_NAME, "file name is not valid UTF-8")
            return False
        escape = self.contain.folder_escape(rel)
        if escape is not None:
            reason, detail = escape
            self.skip(rel, reason, detail)
            return False
        abs_path = os.path.join(self.root, rel)
        try:
            st = os.lstat(abs_path)
        except FileNotFoundError:
            if not self.is_git:
                self.skip(rel, rules.VANISHED, "deleted while listing")
            else:  # tracked but deleted from the work tree: nothing to index
                log.debug("tracked but missing: %s", rel)
            return False
        except OSError as exc:
            self.skip(rel, rules.UNREADABLE, exc.strerror or str(exc))
            return False
        if stat.S_ISLNK(st.st_mode):
            return True
        if stat.S_ISDIR(st.st_mode):
            self.skip(rel, rules.SUBMODULE, "git submodule: index it on its own")
        elif not stat.S_ISREG(st.st_mode):
            self.skip(rel, rules.NOT_A_FILE, "not a regular file (FIFO, socket or device)")
        else:
            self.regular(rel, abs_path, st)
        return False

    def link(self, rel: str) -> None:
        abs_path = os.path.join(self.root, rel)
        try:
            st = os.stat(abs_path)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return self.skip(rel, rules.SYMLINK_LOOP, "symlink loop")
            if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                return self.skip(rel, rules.BROKEN_SYMLINK, f"-> {os.readlink(abs_path)}")
            return self.skip(rel, rules.UNREADABLE, exc.strerror or str(exc))
        real = os.path.realpath(abs_path)
        if not inside(real, self.root):
            return self.skip(rel, rules.SYMLINK_ESCAPE, f"resolves outside the root: {real}")
        target = os.path.relpath(real, self.root).replace(os.sep, "/")
        if target == ".git" or target.startswith(".git/"):
            return self.skip(rel, rules.SYMLINK_ESCAPE, "resolves into .git/")
        if self.contain.excluded(target) is not None:
            return self.skip(rel, rules.INDEX_DATA, f"resolves into the index's own data dir ({target})")
        if stat.S_ISDIR(st.st_mode):
            return self.skip(rel, rules.NOT_A_FILE, f"symlink to a folder ({target}/), not followed")
        if not stat.S_ISREG(st.st_mode):
            return self.skip(rel, rules.NOT_A_FILE, f"symlink to a non-regular file ({target})")
        owner = target if target in self.files else self._link_targets.get(real)
        if owner is not None:
            return self.skip(rel, rules.SYMLINK_DUPLICATE, f"same file as {owner}")
        self._link_targets[real] = rel
        self.regular(rel, real, st)


def _extra_ignores(root: str, listing: Listing) -> ExtraIgnores | None:
    """The .codeseamignore levels for a git listing: one per folder that holds or encloses a
    listed file and has a .codeseamignore (even one git ignores, as the walker would read it)."""
    dirs = {""}
    for path in listing.paths:
        parent = path.rpartition("/")[0]
        while parent and parent not in dirs:
            dirs.add(parent)
            parent = parent.rpartition("/")[0]
    merged = IgnoreRules()
    contain = Containment(root)
    for rel_dir in sorted(dirs, key=lambda d: (d.count("/") + bool(d), d)):  # root first
        if contain.folder(rel_dir) is not None:
            continue  # a folder swapped for a symlink: its files are skipped, its rules never read
        prefix = rel_dir + "/" if rel_dir else ""
        abs_file = os.path.join(root, prefix + ".codeseamignore")
        if os.path.isfile(abs_file) and not os.path.islink(abs_file):
            lines = read_ignore_lines(abs_file, listing.warnings, prefix + ".codeseamignore")
            merged = merged.extend(lines, prefix)
    return None if merged.empty else ExtraIgnores(merged)


def _list(root: str) -> Listing:
    listing = git_listing(root)
    if listing is not None and listing.is_git:
        extra = _extra_ignores(root, listing)
        if extra is not None:
            kept = [p for p in listing.paths if not extra.excluded(p)]
            listing.ignored += len(listing.paths) - len(kept)
            listing.paths = kept
        return listing
    walked = walk_listing(root)
    walked.warnings[:0] = listing.warnings if listing is not None else []
    return walked


def _zero_warning(listing: Listing, n_skips: int) -> str:
    if listing.ignored:
        return f"ignore rules leave 0 files to index ({listing.ignored} ignored paths)"
    if n_skips:
        return f"0 files to index: all {n_skips} candidate files were skipped"
    return "no files found to index"


def _classify(root: str, paths, max_file_bytes: int, is_git: bool,
              exclude: Iterable[str] = ()) -> tuple[tuple[SourceFile, ...], list[Skip]]:
    """The listed ``paths`` sorted into files to index (by path) and skips (symlinks last:
    a link is judged once every plain file is known). Paths inside an ``exclude`` folder
    (the index's data) are one skip per folder, and are never opened."""
    contain = Containment(root, exclude)
    classifier = _Classifier(root, max_file_bytes, is_git, contain)
    kept, data = [], {}
    for rel in paths:
        real = contain.excluded(rel)
        if real is None:
            kept.append(rel)
        else:
            data[os.path.relpath(real, root).replace(os.sep, "/")] = real
    for folder, real in sorted(data.items()):
        classifier.skip(folder if folder != "." else ".", rules.INDEX_DATA,
                        f"the index's own data ({real}): never indexed")
    links = [rel for rel in sorted(kept) if classifier.path(rel)]
    for rel in links:
        classifier.link(rel)
    return tuple(sorted(classifier.files.values(), key=lambda f: f.path)), list(classifier.skips)


def discover(root: str | Path, *, max_file_bytes: int = 1 << 20, exclude: Iterable[str] = ()) -> Discovery:
    """List the files of ``root`` to index, and every skipped file with its reason.
    ``exclude``: folders never indexed (``Settings.private_dirs``: the index's own data).

    Raises ConfigError when ``root`` does not exist or is not a directory.
    """
    root_s = _resolve_root(root)
    listing = _list(root_s)
    files, found = _classify(root_s, listing.paths, max_file_bytes, listing.is_git, exclude)
    skips = tuple(sorted([*listing.skips, *found], key=lambda s: (s.path, s.reason)))
    warnings = list(listing.warnings)
    if not files:
        warnings.append(_zero_warning(listing, len(skips)))
    log.debug("discovered %d files, %d skips under %s", len(files), len(skips), root_s)
    return Discovery(root_s, files, skips, tuple(warnings), listing.is_git)
