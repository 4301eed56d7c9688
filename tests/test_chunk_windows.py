"""Line windows (fallback and baseline), long lines, the budget in tokens, parse limits."""

from __future__ import annotations

import functools

import pytest

from codeseam.chunk import Budget, chunk_file, window_chunks
from codeseam.chunk.window import BASELINE_OVERLAP_TOKENS, BYTES_PER_TOKEN
from tests.test_chunk import FIXTURES, check_invariants

TEXT = "".join(f"    value_{i} = compute_thing({i}, other_{i % 7})  # note {i}\n" for i in range(400))


def test_window_fallback_is_an_exact_balanced_cover():
    budget = Budget(max_bytes=1000, min_bytes=200)
    chunks = window_chunks("a.txt", TEXT, budget=budget)
    check_invariants("a.txt", TEXT, chunks, budget)
    sizes = [c.nbytes for c in chunks]
    assert min(sizes) >= budget.max_bytes // 2  # balanced: no crumb at the end
    assert {c.kind for c in chunks} == {"window"} and {c.symbol for c in chunks} == {""}


def test_baseline_windows_overlap_and_cover():
    budget = Budget(max_bytes=2000, min_bytes=200)
    chunks = chunk_file("a.py", TEXT, budget=budget, chunker="window")
    assert {c.kind for c in chunks} == {"window"}
    lines = TEXT.split("\n")
    covered = set()
    prev = None
    for c in chunks:
        assert c.nbytes <= budget.max_bytes
        assert c.text == "\n".join(lines[c.start_line - 1:c.end_line]) + "\n"
        covered.update(range(c.start_line, c.end_line + 1))
        if prev is not None:
            assert prev.start_line < c.start_line <= prev.end_line + 1
            overlap = "\n".join(lines[c.start_line - 1:prev.end_line])
            assert len(overlap.encode()) <= BASELINE_OVERLAP_TOKENS * BYTES_PER_TOKEN
            assert c.start_line <= prev.end_line  # it does overlap
        prev = c
    assert covered == set(range(1, TEXT.count("\n") + 1))


def test_long_lines_cut_at_character_boundaries_for_every_budget():
    line = "".join(f"é€𝄞{i};" for i in range(2000))
    for max_bytes in (16, 17, 18, 19, 64, 333):
        budget = Budget(max_bytes=max_bytes, min_bytes=1)
        chunks = window_chunks("m.txt", line, budget=budget)
        check_invariants("m.txt", line, chunks, budget)
        for c in chunks:
            c.text.encode("utf-8")  # never half a character


@functools.cache
def _tokenizer():
    from tokenizers import Tokenizer

    from codeseam.embed.bundled import bundled_model_dir

    tok = Tokenizer.from_file(str(bundled_model_dir() / "tokenizer.json"))
    tok.no_truncation()  # the bundled file truncates at 128 and pads: counts would lie
    tok.no_padding()
    return tok


def count_tokens(text: str) -> int:
    return len(_tokenizer().encode(text, add_special_tokens=False).ids)


@pytest.mark.parametrize("name", ["sample.py", "sample.rs", "sample.ts", "sample.md", "sample.json"])
def test_token_budget_nothing_embedded_is_truncated(name):
    """With the embedder's tokenizer (all-MiniLM-L6-v2: 256 word pieces incl. 2 special),
    every chunk's indexed_text (header + text) counts at most 254."""
    budget = Budget(max_bytes=2000, min_bytes=200, max_tokens=254, count_tokens=count_tokens)
    text = (FIXTURES / name).read_text(encoding="utf-8") * 3
    chunks = chunk_file(name, text, budget=budget)
    check_invariants(name, text, chunks, budget)
    counts = [count_tokens(c.indexed_text) for c in chunks]
    assert max(counts) <= 254
    # the header is bounded: the code keeps most of the budget
    for c in chunks:
        header = c.indexed_text[: -len(c.text)]
        assert count_tokens(header) <= budget.header_tokens + 2


def test_token_budget_on_dense_code_and_long_lines():
    budget = Budget(max_bytes=2000, min_bytes=200, max_tokens=64, count_tokens=count_tokens)
    text = "x=" + "+".join(f"f{i}(a,b)" for i in range(400)) + "\n" + TEXT[:3000]
    for path in ("dense.py", "dense.txt"):
        chunks = chunk_file(path, text, budget=budget)
        check_invariants(path, text, chunks, budget)
        baseline = chunk_file(path, text, budget=budget, chunker="window")
        assert all(count_tokens(c.indexed_text) <= 64 for c in baseline)


def test_token_count_with_undecodable_bytes():
    text = b"def f():\n    return '\xff\xfe'\n".decode("utf-8", "surrogateescape") * 40
    budget = Budget(max_tokens=60, count_tokens=count_tokens)
    chunks = chunk_file("odd.py", text, budget=budget)
    check_invariants("odd.py", text, chunks, Budget(max_tokens=60, count_tokens=lambda s: count_tokens(
        s.encode("utf-8", "replace").decode("utf-8"))))


def test_budget_validation():
    with pytest.raises(ValueError):
        Budget(max_bytes=100, min_bytes=100)
    with pytest.raises(ValueError):
        Budget(max_tokens=100)
    assert Budget(max_tokens=254, count_tokens=len).text_tokens == 254 - 63 - 2


def test_parse_time_limit_falls_back_to_windows(monkeypatch):
    from codeseam.chunk import parse as parse_mod

    with pytest.raises(parse_mod.ParseFailed):
        parse_mod.parse("python", b"def f():\n    pass\n" * 20000, timeout=0.0)
    monkeypatch.setattr(parse_mod, "PARSE_SECONDS_BASE", 0.0)
    monkeypatch.setattr(parse_mod, "PARSE_SECONDS_PER_MB", 0.0)
    text = (FIXTURES / "sample.py").read_text() * 20
    chunks = chunk_file("slow.py", text)
    check_invariants("slow.py", text, chunks, Budget())
    assert {c.kind for c in chunks} == {"window"}
    # the parser is usable again afterwards
    monkeypatch.undo()
    assert any(c.kind != "window" for c in chunk_file("ok.py", text))


def test_a_failing_grammar_never_fails_the_file(monkeypatch):
    from codeseam.chunk import ast_chunker

    def boom(*args, **kwargs):
        raise RuntimeError("bug")

    monkeypatch.setattr(ast_chunker, "ast_units", boom)
    text = (FIXTURES / "sample.go").read_text()
    chunks = chunk_file("x.go", text)
    check_invariants("x.go", text, chunks, Budget())
    assert {c.kind for c in chunks} == {"window"}


def test_split_identifier_and_identifier_splits():
    from codeseam.chunk import identifier_splits, split_identifier

    assert split_identifier("getUserById") == ["get", "user", "by", "id"]
    assert split_identifier("parse_json2") == ["parse", "json", "2"]
    assert split_identifier("HTTPServer") == ["http", "server"]
    assert split_identifier("XMLHttpRequest") == ["xml", "http", "request"]
    assert split_identifier("__init__") == ["init"]
    assert split_identifier("MAX_USERS") == ["max", "users"]
    assert split_identifier("x") == ["x"]
    text = "user = getUserById(user_id); self.x = parse_json2(raw); getUserById(2)"
    assert identifier_splits(text) == "get user by id, user id, parse json 2"
    assert identifier_splits("a b c self x") == ""
    assert identifier_splits(text, limit=1) == "get user by id"
