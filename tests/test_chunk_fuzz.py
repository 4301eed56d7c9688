"""Property test: random texts in several languages, the invariants always hold."""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from codeseam.chunk import Budget, chunk_file, window_chunks
from tests.test_chunk import check_invariants

PATHS = ["a.py", "a.js", "a.go", "a.rs", "a.c", "a.rb", "a.md", "a.json", "a.yaml", "a.toml",
         "a.hs", "a.ex", "a.txt", "a.cob"]

FRAGMENTS = [
    "def f(x):\n", "    return x\n", "class A:\n", "    def m(self):\n", "        pass\n",
    "@dec\n", "# comment\n", "function g() {\n", "}\n", "{", "}", "(", ")", "[", "]",
    "fn main() {\n", "impl T {\n", "func (s *S) M() {\n", "int main(void) {\n",
    "# Heading\n", "## Sub\n", "- item\n", "key: value\n", "  nested: 1\n", '{"a": [1, 2]}\n',
    "[table]\n", "x = 1\n", "defmodule M do\n", "end\n", "f x = x + 1\n", '"""doc\n', '"""\n',
    "'", '"', "\\", "\t", "    ", "\n", "\n\n", "\r\n", "\f", "\x00", "é", "€", "𝄞", "\u2028",
    "\udcff", "a" * 300, "b = [" + "1, " * 200 + "]\n",
]

texts = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=40)), max_size=60).map("".join)
budgets = st.builds(lambda mx, mn: Budget(max_bytes=mx, min_bytes=min(mn, mx - 1)),
                    st.integers(min_value=16, max_value=600), st.integers(min_value=0, max_value=200))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(path=st.sampled_from(PATHS), text=texts, budget=budgets)
@example(path="a.py", text="\udcff", budget=Budget(max_bytes=16, min_bytes=4))  # ast cannot parse a surrogate
@example(path="a.py", text="def f():\n    return 1\n\x00", budget=Budget(max_bytes=16, min_bytes=4))  # nor a NUL
def test_ast_chunker_invariants(path, text, budget):
    check_invariants(path, text, chunk_file(path, text, budget=budget), budget)


@settings(max_examples=150, deadline=None)
@given(text=texts, budget=budgets)
def test_window_invariants(text, budget):
    check_invariants("w.txt", text, window_chunks("w.txt", text, budget=budget), budget)


@settings(max_examples=100, deadline=None)
@given(path=st.sampled_from(PATHS), text=texts, budget=budgets)
def test_baseline_windows_cover_every_line(path, text, budget):
    chunks = chunk_file(path, text, budget=budget, chunker="window")
    if not text:
        assert chunks == []
        return
    covered = set()
    for c in chunks:
        assert c.text and c.nbytes <= budget.max_bytes and c.text in text
        covered.update(range(c.start_line, c.end_line + 1))
    last = text.count("\n") + (0 if text.endswith("\n") else 1)
    assert covered == set(range(1, last + 1))
