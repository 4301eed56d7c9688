"""Every chunk that holds a named definition is named by one, over whole real repositories.

The oracle is independent of the chunker's definition rule: a plain tree-sitter walk that
takes every node whose type says function/method/class/struct/impl/interface/enum/trait
and definition/declaration/item, with a ``name`` field. For every chunk the chunker names
``<module>``, no such node may lie whole inside the chunk's bytes. Run over every file
discovery keeps in the real-repository corpora (``../shared/corpora``: Python, JavaScript,
Go, Rust, TypeScript, with their tests, docs and examples) and over the 22-language
fixtures.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from codeseam.chunk import chunk_file, language_for
from codeseam.discover import discover, read_text
from codeseam.errors import FileSkipped

CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"
FIXTURES = Path(__file__).parent / "fixtures" / "chunk"
_DEF_WORDS = re.compile(r"(function|method|class|struct|impl|interface|enum|trait|constructor)")
_DECL_WORDS = ("definition", "declaration", "item", "method")
DATA = {"markdown", "json", "yaml", "toml", "rst", "html", "css", "xml"}


def oracle_definitions(root) -> list:
    out, stack = [], [root]
    while stack:
        node = stack.pop()
        t = node.type
        if (_DEF_WORDS.search(t) and any(w in t for w in _DECL_WORDS) and "signature" not in t
                and node.child_by_field_name("name") is not None):
            out.append(node)
        stack.extend(node.named_children)
    return out


def unnamed_chunks(rel: str, text: str) -> list[tuple[int, int, list[str]]]:
    """``<module>`` chunks of one file that hold an oracle definition."""
    from tree_sitter_language_pack import get_parser

    language = language_for(rel)
    if language is None or language in DATA:
        return []
    chunks = chunk_file(rel, text)
    data = text.encode("utf-8", "surrogatepass")
    defs = oracle_definitions(get_parser(language).parse(data).root_node)
    starts = [0] + [i + 1 for i, b in enumerate(data) if b == 10]
    bad = []
    for c in chunks:
        if c.symbol != "<module>":
            continue
        a = starts[c.start_line - 1]
        b = starts[c.end_line] if c.end_line < len(starts) else len(data)
        inside = [d for d in defs if d.start_byte >= a and d.end_byte <= b]
        if inside:
            names = [data[d.child_by_field_name("name").start_byte:d.child_by_field_name("name").end_byte]
                     .decode("utf-8", "replace") for d in inside]
            bad.append((c.start_line, c.end_line, names))
    return bad


@pytest.mark.skipif(not CORPORA.is_dir(), reason=f"no real-repository corpora at {CORPORA}")
@pytest.mark.parametrize("repo", sorted(p.name for p in CORPORA.iterdir()) if CORPORA.is_dir() else [])
def test_no_named_definition_sits_in_a_module_chunk(repo: str) -> None:
    found = discover(CORPORA / repo)
    bad = {}
    for f in found.files:
        try:
            text, _ = read_text(f.abs_path)
        except FileSkipped:  # binary, too large, vanished: not chunked by the indexer either
            continue
        miss = unnamed_chunks(f.path, text)
        if miss:
            bad[f.path] = miss
    assert not bad, bad


def test_fixtures_too() -> None:
    bad = {}
    for p in sorted(FIXTURES.iterdir()):
        if p.is_file():
            miss = unnamed_chunks(p.name, p.read_text(encoding="utf-8"))
            if miss:
                bad[p.name] = miss
    assert not bad, bad
