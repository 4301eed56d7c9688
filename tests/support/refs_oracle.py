"""The references oracle: ``rg -w`` over a repository's code files, less the matches that sit in
the grammar's comment or string nodes.

Independent of ``references/occur.py``: whole-word matches come from ripgrep (its ``\\w``
word boundaries), the exclusions from a plain walk over every node whose type *name* contains
comment, string, char, heredoc, regex or rune (an interpolation inside one is code again). A
match next to a character that the language itself takes into an identifier (``$`` in
JavaScript, ``-`` in CSS) is not a whole word there and is dropped.
"""

from __future__ import annotations

import collections
import random
import re
import shutil
import subprocess
from pathlib import Path

NONCODE = re.compile(r"comment|string|char|heredoc|regex|rune")
INTERP = re.compile(r"interpolat|substitution")
IDENT_EXTRA = {"javascript": b"$", "typescript": b"$", "tsx": b"$", "css": b"-", "scss": b"-"}
NAME = re.compile(r"[A-Za-z_]\w*")


def have_rg() -> bool:
    return shutil.which("rg") is not None


def code_files(root: str | Path) -> dict[str, tuple[str, str]]:
    """``path -> (grammar, text)`` of the files discovery keeps that refs treats as code."""
    from codeseam.chunk import language_for
    from codeseam.discover import discover, read_text
    from codeseam.errors import FileSkipped
    from codeseam.references import is_code_language

    out = {}
    for f in discover(root).files:
        language = language_for(f.path)
        if not is_code_language(language):
            continue
        try:
            text, _ = read_text(f.abs_path)
        except FileSkipped:
            continue
        out[f.path] = (language, text)
    return out


def sample_definitions(files: dict[str, tuple[str, str]], n: int = 30, seed: int = 23) -> list[str]:
    """``n`` names of functions, methods and classes the chunker finds, drawn with a fixed seed."""
    from codeseam.chunk import chunk_file

    names = set()
    for path, (_language, text) in files.items():
        for c in chunk_file(path, text):
            if c.kind in ("function", "method", "class"):
                last = c.symbol.rsplit(".", 1)[-1]
                if NAME.fullmatch(last):
                    names.add(last)
    return random.Random(seed).sample(sorted(names), min(n, len(names)))


def _noncode(root_node) -> list[tuple[int, int, list[tuple[int, int]]]]:
    out, stack = [], [root_node]
    while stack:
        node = stack.pop()
        if NONCODE.search(node.type):
            holes, inner = [], list(node.children)
            while inner:
                c = inner.pop()
                if INTERP.search(c.type):
                    holes.append((c.start_byte, c.end_byte))
                else:
                    inner.extend(c.children)
            out.append((node.start_byte, node.end_byte, holes))
            continue
        stack.extend(node.children)
    return out


class Oracle:
    def __init__(self, root: str | Path, files: dict[str, tuple[str, str]]) -> None:
        self.root, self.files = Path(root), files
        self._trees: dict[str, tuple[list, list[int], bytes]] = {}

    def _tree(self, path: str):
        if path not in self._trees:
            from tree_sitter_language_pack import get_parser

            language, text = self.files[path]
            data = text.encode("utf-8", "surrogatepass")
            starts = [0] + [m.end() for m in re.finditer(b"\n", data)]
            self._trees[path] = (_noncode(get_parser(language).parse(data).root_node), starts, data)
        return self._trees[path]

    def counts(self, name: str) -> collections.Counter:
        """``(path, line) -> whole-word occurrences of name in code`` over the code files."""
        out: collections.Counter = collections.Counter()
        paths = sorted(self.files)
        for i in range(0, len(paths), 200):
            run = subprocess.run(["rg", "--no-config", "-w", "-F", "-n", "--column", "-o", "--no-heading", "-H",
                                  "-e", name, "--", *paths[i:i + 200]],
                                 cwd=self.root, capture_output=True, text=True, check=False)
            if run.returncode not in (0, 1):
                raise RuntimeError(f"rg failed: {run.stderr[:300]}")
            for row in run.stdout.splitlines():
                path, line, col, _ = row.split(":", 3)
                ranges, starts, data = self._tree(path)
                off = starts[int(line) - 1] + int(col) - 1
                extra = IDENT_EXTRA.get(self.files[path][0], b"")
                end = off + len(name.encode())
                if extra and ((off and data[off - 1:off] in extra) or data[end:end + 1] in extra and data[end:end + 1]):
                    continue
                if any(a <= off < b and not any(h0 <= off < h1 for h0, h1 in holes) for a, b, holes in ranges):
                    continue
                out[(path, int(line))] += 1
        return out


def score(found: collections.Counter, oracle: collections.Counter) -> tuple[list, int, int]:
    """``(lines found that the oracle does not have, occurrences matched, occurrences in the oracle)``."""
    false = [k for k in found if k not in oracle]
    matched = sum(min(found[k], n) for k, n in oracle.items())
    return false, matched, sum(oracle.values())
