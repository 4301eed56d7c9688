"""Documentation lines in the chunk header (a retrieval lever measured by the eval, see
bench/results/eval.md): a piece of a split definition, or a member whose class docstring is
not in its text, carries the first line of that documentation in ``indexed_text`` only."""
from __future__ import annotations

import textwrap

import pytest

from codeseam.chunk import Budget, chunk_file
from codeseam.embed import FakeEmbedder

PY = textwrap.dedent('''\
    class Ledger:
        """Double-entry bookkeeping for small shops.

        More words that are not the first line.
        """

        def settle(self, entries, currency="EUR"):
            """Balance every open account and close the period."""
            total = 0
            for e in entries:
                total += e.amount
                if e.currency != currency:
                    raise ValueError("mixed currencies in one period")
            for e in entries:
                e.closed = True
                e.period = self.period
            self.period += 1
            self.history.append((self.period, total, currency, len(entries)))
            return total

        def audit(self):
            return [e for e in self.entries if not e.closed]
    ''')

SMALL = Budget(max_bytes=260, min_bytes=40)


def header(c) -> str:
    return c.indexed_text[: len(c.indexed_text) - len(c.text)]


def test_continuation_pieces_carry_the_definition_doc_and_the_class_doc():
    chunks = chunk_file("ledger.py", PY, budget=SMALL)
    pieces = [c for c in chunks if c.symbol == "Ledger.settle"]
    assert len(pieces) >= 2
    first, rest = pieces[0], pieces[1:]
    assert "doc: Balance every open account" not in header(first)  # its text holds the docstring
    for p in rest:
        assert "doc: Balance every open account and close the period." in header(p)
        assert "Ledger: Double-entry bookkeeping for small shops." in header(p)
        assert "doc:" not in p.text and "Double-entry" not in p.text  # text stays the clean source
    [audit] = [c for c in chunks if c.symbol == "Ledger.audit"]
    assert "Ledger: Double-entry bookkeeping for small shops." in header(audit)
    assert "\ndoc: " not in header(audit)  # audit has no docstring of its own


def test_leading_comment_blocks_are_documentation_in_other_languages():
    go = "package main\n\n// Sum adds the numbers.\n// It never overflows.\nfunc Sum(xs []int) int {\n" + \
        "".join(f"\tx{i} := xs[{i}] * {i}\n" for i in range(12)) + "\treturn 0\n}\n"
    chunks = chunk_file("sum.go", go, budget=Budget(max_bytes=120, min_bytes=20))
    later = [c for c in chunks if c.symbol == "Sum" and "// Sum adds" not in c.text]
    assert later and all("doc: Sum adds the numbers." in header(c) for c in later)


def test_no_doc_no_line():
    src = "def f(x):\n" + "".join(f"    y{i} = x * {i}\n" for i in range(30)) + "    return x\n"
    chunks = chunk_file("f.py", src, budget=Budget(max_bytes=200, min_bytes=40))
    assert len(chunks) > 1 and not any("doc:" in header(c) for c in chunks)


@pytest.mark.parametrize("max_tokens", [40, 64, 128])
def test_doc_lines_respect_the_token_budget(max_tokens):
    emb = FakeEmbedder(max_tokens=max_tokens)
    budget = Budget(max_bytes=2000, min_bytes=100, max_tokens=max_tokens, count_tokens=emb.count_tokens)
    chunks = chunk_file("ledger.py", PY, budget=budget)
    assert "".join(c.text for c in chunks) == PY
    for c in chunks:
        assert emb.count_tokens(c.indexed_text) <= max_tokens
        assert emb.count_tokens(header(c)) <= budget.header_tokens + 1
