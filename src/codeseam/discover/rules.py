"""The skip rules of discovery, as data and small pure functions.

Every rule here decides on a name or on the first bytes of a file, never on a whole file:
discovery sits on the no-op re-sync path and must stay cheap.
"""

from __future__ import annotations

import codecs

# Stable skip reason codes (used in reports, the CLI and tests).
BINARY = "binary"  # a NUL byte in the first 8 KiB (after a UTF-16/32 BOM: a NUL character)
TOO_LARGE = "too-large"  # size over max_file_bytes (from stat; the file is never read)
SYMLINK_ESCAPE = "symlink-escape"  # a symlink that resolves outside the root (or into .git/)
SYMLINK_LOOP = "symlink-loop"
BROKEN_SYMLINK = "broken-symlink"
SYMLINK_DUPLICATE = "symlink-duplicate"  # a symlink to a file that is indexed under its own path
UNREADABLE = "unreadable"  # permission denied (or another OS error on open/list)
LOCKFILE = "lockfile"
MINIFIED = "minified"
VANISHED = "vanished"  # deleted between listing and reading
NOT_A_FILE = "not-a-file"  # FIFO, socket, device, or a symlink to a directory (never followed)
BAD_NAME = "bad-name"  # a name that is not valid UTF-8 (cannot be stored or printed faithfully)
SUBMODULE = "submodule"  # a git submodule or a nested git repository: index it on its own
INDEX_DATA = "index-data"  # the index's own data dir (its lock must never be opened by a reader)

REASONS = (BINARY, TOO_LARGE, SYMLINK_ESCAPE, SYMLINK_LOOP, BROKEN_SYMLINK, SYMLINK_DUPLICATE,
           UNREADABLE, LOCKFILE, MINIFIED, VANISHED, NOT_A_FILE, BAD_NAME, SUBMODULE, INDEX_DATA)

SNIFF_BYTES = 8 * 1024  # the binary check looks at this much
MINIFIED_SAMPLE_BYTES = 64 * 1024  # the line-length check looks at this much
MINIFIED_MIN_SAMPLE = 4 * 1024  # smaller files are never called minified by line length
MINIFIED_AVG_LINE = 1000  # average bytes per line above which a file is a minified bundle

# Lock files: generated, huge, and useless to search. Matched on the exact file name.
LOCKFILE_NAMES = frozenset({
    "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "bun.lock",
    "bun.lockb", "deno.lock", "cargo.lock", "poetry.lock", "pipfile.lock", "pdm.lock", "uv.lock",
    "pixi.lock", "conda-lock.yml", "composer.lock", "gemfile.lock", "go.sum", "go.work.sum",
    "mix.lock", "podfile.lock", "pubspec.lock", "packages.lock.json", "paket.lock",
    "gradle.lockfile", "package.resolved", "flake.lock", "cabal.project.freeze",
    ".terraform.lock.hcl", "module.bazel.lock", "shrinkwrap.yaml", "manifest.lock",
})

MINIFIED_SUFFIXES = (".min.js", ".min.mjs", ".min.cjs", ".min.css")

# Ignore patterns (gitignore syntax) applied to folders that are NOT git repositories, as
# the lowest-priority rules at the root: any .gitignore or .codeseamignore can re-include
# with a negation (``!node_modules/``). In a git repository git alone decides what is listed
# (tracked + untracked-not-ignored); add a .codeseamignore to exclude more there.
# Why these: caches and dependency trees that are never the user's code, and that would
# otherwise flood a plain-folder listing (a Python install holds thousands of .pyc files).
DEFAULT_IGNORES = (
    "__pycache__/", "*.py[cod]", "node_modules/", ".venv/", ".tox/", ".nox/",
    ".mypy_cache/", ".pytest_cache/", ".ruff_cache/", ".hypothesis/", ".hg/", ".svn/",
    ".DS_Store",
)

# Always skipped while walking, never indexed, not even through an ignore negation.
ALWAYS_SKIPPED_NAMES = frozenset({".git"})

IGNORE_FILES = (".gitignore", ".codeseamignore")

_BOMS_WIDE = (
    (codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"),
)


def wide_bom_codec(data: bytes) -> str | None:
    """``utf-32``/``utf-16`` when ``data`` starts with such a BOM (UTF-32 is checked first:
    its little-endian BOM starts with the UTF-16 one), else None."""
    if data[:1] not in (b"\xff", b"\xfe", b"\x00"):
        return None
    for bom, codec in _BOMS_WIDE:
        if data.startswith(bom):
            return codec
    return None


def _name(path: str) -> str:
    return path.rpartition("/")[2].lower()


def is_lockfile(path: str) -> bool:
    return _name(path) in LOCKFILE_NAMES


def is_minified_name(path: str) -> bool:
    return _name(path).endswith(MINIFIED_SUFFIXES)


def looks_binary(head: bytes) -> bool:
    """A NUL byte in ``head`` (the first 8 KiB). Text in UTF-16/32 with a BOM is decoded
    first, so only a real NUL character counts; UTF-16 without a BOM reads as binary."""
    codec = wide_bom_codec(head)
    if codec is None:
        return b"\0" in head
    width = 4 if codec == "utf-32" else 2
    usable = head[: len(head) - len(head) % width]
    return "\0" in usable.decode(codec, errors="replace")


def newline_count_clears_minified(newlines: int) -> bool:
    """True when a head with this many newlines proves the 64 KiB sample cannot average more
    than MINIFIED_AVG_LINE bytes per line (so the rest need not be read)."""
    return MINIFIED_SAMPLE_BYTES / max(1, newlines) <= MINIFIED_AVG_LINE


def looks_minified(sample: bytes) -> bool:
    """The line-length rule for minified bundles: over the first 64 KiB (``sample``), at least
    4 KiB long, the average line is longer than 1000 bytes (so fewer than 66 lines). Hand
    written code almost never averages 1000 bytes per line; bundles, source maps and packed
    data do. Small files are left alone: the chunker windows a long line safely."""
    if len(sample) < MINIFIED_MIN_SAMPLE:
        return False
    return len(sample) / max(1, sample.count(b"\n")) > MINIFIED_AVG_LINE
