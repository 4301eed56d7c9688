"""Retrieval levers measured by the eval: merging the pieces of a split definition.

Oracle: the real chunker's output for a real file. Whatever subset of chunks is retrieved
and in whatever order, a merged hit's text is exactly the file's lines start..end, only
pieces of one split definition are joined, and nothing retrieved is lost or invented.
"""
from __future__ import annotations

import textwrap
from itertools import pairwise

from hypothesis import given, settings, strategies as st

from codeseam.chunk import Budget, chunk_file
from codeseam.query.pieces import Piece, SPLIT_KINDS, adjacent, merge_pieces
from codeseam.query.fusion import dedupe, Span

SOURCE = textwrap.dedent('''\
    import os


    def long_function(items, limit=10):
        """A function long enough to be cut statement by statement."""
        total = 0
        for item in items:
            if item is None:
                continue
            total += len(str(item))
        seen = set()
        for item in items:
            if item in seen:
                raise ValueError("duplicate item: %r" % (item,))
            seen.add(item)
        result = []
        for i, item in enumerate(items):
            if i >= limit:
                break
            result.append((i, item, total))
        return result


    class Holder:
        def first(self):
            value = os.environ.get("HOLDER_FIRST", "default-value-for-first")
            return value.strip().lower()

        def second(self, other):
            merged = {**self.__dict__, **other.__dict__}
            return sorted(merged.items(), key=lambda kv: kv[0])
    ''')
PATH = "pkg/mod.py"
CHUNKS = chunk_file(PATH, SOURCE, budget=Budget(max_bytes=160, min_bytes=40))
LINES = SOURCE.split("\n")


def piece(c) -> Piece:
    return Piece("r", c.path, c.symbol, c.kind, c.language, c.start_line, c.end_line, c.text)


def file_lines(a: int, b: int) -> str:
    text = "\n".join(LINES[a - 1:b])
    return text + ("\n" if b < len(LINES) else "")


def test_fixture_has_split_definitions():
    long = [c for c in CHUNKS if c.symbol == "long_function"]
    assert len(long) >= 3 and all(c.kind == "function" for c in long)


def test_adjacent_pieces_of_one_function_merge_into_the_exact_lines():
    long = [piece(c) for c in CHUNKS if c.symbol == "long_function"]
    ranked = [(long[2], 0.9), (long[0], 0.8), (long[1], 0.7)]
    merged = merge_pieces(ranked)
    assert len(merged) == 1
    p, score = merged[0]
    assert score == 0.9  # the best piece's rank and score
    assert (p.start_line, p.end_line) == (long[0].start_line, long[2].end_line)
    assert p.text == file_lines(p.start_line, p.end_line)


def test_gap_between_pieces_keeps_them_apart():
    long = [piece(c) for c in CHUNKS if c.symbol == "long_function"]
    merged = merge_pieces([(long[0], 1.0), (long[2], 0.5)])
    assert [m for m, _ in merged] == [long[0], long[2]]


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_merge_properties_on_any_retrieved_subset(data):
    idx = data.draw(st.lists(st.integers(0, len(CHUNKS) - 1), unique=True, min_size=1, max_size=len(CHUNKS)))
    ranked = [(piece(CHUNKS[i]), 1.0 / (r + 1)) for r, i in enumerate(idx)]
    merged = merge_pieces(ranked)
    # scores stay in the ranked order; every merged hit is exact file text
    assert [s for _, s in merged] == sorted((s for _, s in merged), reverse=True)
    covered = []
    for p, _ in merged:
        assert p.text == file_lines(p.start_line, p.end_line)
        parts = [q for q, _ in ranked if p.start_line <= q.start_line and q.end_line <= p.end_line]
        if len(parts) > 1:  # a merge: one symbol, split kinds, a contiguous run
            assert {q.symbol for q in parts} == {p.symbol} and p.kind in SPLIT_KINDS
            parts.sort(key=lambda q: q.start_line)
            assert all(adjacent(a, b) for a, b in pairwise(parts))
        covered.extend(parts)
    # nothing lost, nothing invented
    assert sorted(covered, key=lambda q: q.start_line) == sorted((q for q, _ in ranked), key=lambda q: q.start_line)


def test_dedupe_after_merge_keeps_spans_disjoint():
    ranked = [(piece(c), 1.0 / (i + 1)) for i, c in enumerate(CHUNKS)]
    kept = dedupe(merge_pieces(ranked), lambda pair: Span(pair[0].path, pair[0].start_line, pair[0].end_line))
    spans = sorted((p.start_line, p.end_line) for p, _ in kept)
    assert all(a[1] < b[0] for a, b in pairwise(spans))
    assert "".join(p.text for p, _ in sorted(kept, key=lambda x: x[0].start_line)) == SOURCE


# -- names in queries ---------------------------------------------------------------------

import pytest  # noqa: E402

from codeseam.query.analysis import identifier_shaped, names_definition, query_names, strip_noise  # noqa: E402


@pytest.mark.parametrize("query, names", [
    ("ArgumentParser.parse_known_args", [("argumentparser", "parse_known_args")]),
    ("where is ndiff defined", [("ndiff",)]),
    ("heapq nsmallest implementation", [("heapq",), ("nsmallest",)]),
    ("how does fnmatchcase work", [("fnmatchcase",)]),
    # a long query names only what is written like code
    ("insert an item into an already ordered list so it stays ordered", []),
    ("why does getUserById return None for a deleted user record", [("getuserbyid",)]),
])
def test_query_names(query, names):
    assert query_names(query) == names


def test_identifier_shape():
    assert all(map(identifier_shaped, ["parse_json", "getUserById", "a.b", "b85decode", "__next__"]))
    assert not any(map(identifier_shaped, ["merge", "HTTP", "Path", "42"]))


def test_names_definition_matches_the_end_of_the_qualified_name():
    assert names_definition("urllib/parse.py", "urljoin", [("urljoin",)])
    assert names_definition("urllib/parse.py", "urljoin", [("parse", "urljoin")])
    assert names_definition("csv.py", "DictReader.__next__", [("dictreader", "__next__")])
    assert not names_definition("csv.py", "DictReader", [("dictreader", "__next__")])
    assert not names_definition("csv.py", "DictWriter.__next__", [("dictreader", "__next__")])
    assert not names_definition("heapq.py", "nsmallest", [("heapq",)])  # a module is not a definition
    assert not names_definition("a.py", "<module>", [("module",)])


def test_a_qualified_name_also_names_a_definition_through_its_folder():
    """Where the package is the folder (Go): ``assert.Contains`` is ``Contains`` in any file
    of ``assert/``; a bare name or a folder alone still names nothing new."""
    assert names_definition("assert/assertions.go", "Contains", [("assert", "contains")])
    assert not names_definition("assert/assertions.go", "Contains", [("assert", "contains")], packages=False)
    assert names_definition("pkg/assert/assertions.go", "Contains", [("pkg", "assert", "contains")])
    assert not names_definition("assert/assertions.go", "Contains", [("mock", "contains")])
    assert not names_definition("assert/assertions.go", "Contains", [("assert",)])
    assert not names_definition("assert/assertions.go", "ObjectsAreEqual", [("assert", "contains")])
    assert names_definition("mock/mock.go", "MatchedBy", [("mock", "matchedby")], packages=False)  # file and folder alike


def test_strip_noise():
    assert strip_noise("where is parsedate_to_datetime implemented") == "parsedate_to_datetime"
    assert strip_noise("how does it work") == "how does it work"  # nothing left: unchanged
