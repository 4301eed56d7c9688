"""The invariants on the whole CPython stdlib (tests included: ~1,790 .py files, some
deliberately broken or not UTF-8), plus Python's own ``ast`` as an oracle for symbols."""

from __future__ import annotations

import ast
import os
import sysconfig
from pathlib import Path

import pytest

from codeseam.chunk import Budget, chunk_file
from tests.test_chunk import check_invariants

STDLIB = sysconfig.get_paths()["stdlib"]


def stdlib_files(include_tests: bool = True) -> list[str]:
    out = []
    for folder, dirs, files in os.walk(STDLIB):
        dirs[:] = sorted(d for d in dirs if d not in ("site-packages", "__pycache__"))
        if not include_tests:
            dirs[:] = [d for d in dirs if d not in ("test", "tests", "idle_test")]
        out += [os.path.join(folder, f) for f in sorted(files) if f.endswith(".py")]
    return out


def read(path: str) -> str:
    raw = Path(path).read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")  # a few test files are deliberately not UTF-8


@pytest.mark.slow
def test_whole_stdlib_invariants():
    files = stdlib_files()
    assert len(files) > 1500
    budget = Budget()
    windows = 0
    for path in files:
        rel = os.path.relpath(path, STDLIB).replace(os.sep, "/")
        text = read(path)
        chunks = chunk_file(rel, text, budget=budget)
        check_invariants(rel, text, chunks, budget)
        windows += bool(chunks) and all(c.kind == "window" for c in chunks)
    assert windows < len(files) * 0.01  # nearly every file keeps its syntax tree


@pytest.mark.slow
def test_stdlib_symbols_match_python_ast():
    """Oracle: Python's ``ast``. The chunk where a top-level ``def``/``class`` or a method
    starts (decorators included) is named after it (``Class.method``) or after the whole
    class that holds it, or lists it in its
    header's ``defines`` (small definitions merged), or hands it to the next chunk (the
    opening lines of a definition too big for one chunk joined the chunk above; the
    pieces that follow carry its name and signature)."""
    checked = 0
    for path in stdlib_files(include_tests=False)[:300]:
        text = read(path)
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        defs = []
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defs.append((node, node.name))
                if isinstance(node, ast.ClassDef):
                    defs += [(sub, f"{node.name}.{sub.name}") for sub in node.body
                             if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef))]
        chunks = chunk_file(os.path.basename(path), text)
        for node, name in defs:
            first = min([d.lineno for d in node.decorator_list] + [node.lineno])
            [i] = [i for i, c in enumerate(chunks) if c.start_line <= first <= c.end_line]
            c = chunks[i]
            head = c.indexed_text[: -len(c.text)]
            defines = [ln[9:].split(", ") for ln in head.split("\n") if ln.startswith("defines: ")]
            # the chunk is the definition, a piece of it, or the whole class holding it
            named = c.symbol == name or c.symbol.startswith(name + ".") or (
                name.startswith(c.symbol + ".") and c.kind == "class" and c.end_line >= node.end_lineno)
            listed = bool(defines) and any(name == d or name.startswith(d + ".") for d in defines[0])
            nxt = chunks[i + 1] if i + 1 < len(chunks) else None
            handed = nxt is not None and node.end_lineno > c.end_line and (
                nxt.symbol == name or nxt.symbol.startswith(name + "."))
            assert named or listed or handed, (path, first, c.symbol, name)
            checked += 1
    assert checked > 2000
