"""Ranking levers after fusion (codeseam.query.rank, codeseam.query.pieces.expand_pieces), against
brute-force references and the real chunker's output."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings, strategies as st

from codeseam.query import rank
from codeseam.query.pieces import SPLIT_KINDS, expand_pieces
from codeseam.query.retrieve import RetrieveOptions
from codeseam.query.analysis import is_lookup
from tests.test_eval_search import CHUNKS, PATH, file_lines, piece


# -- role prior ----------------------------------------------------------------------------------

@pytest.mark.parametrize("query,asked", [
    ("where does the retry delay get computed?", set()),
    ("Fix infinite loop when retrying", set()),
    ("tests for the retry delay", {"test", "fixture"}),
    ("which test covers parse_json", {"test", "fixture"}),
    ("docs about the config file", {"docs"}),
    ("changelog entry for 2.0", {"changelog"}),
    ("release notes of the last version", {"changelog"}),
    ("an example of streaming uploads", {"example"}),
    ("benchmark for the parser", {"benchmark"}),
    ("where are the i18n error messages translated", {"locale"}),
    ("ZodError structure and issue formatting", set()),
])
def test_asked_roles(query, asked):
    assert rank.asked_roles(query) == asked


def test_role_prior_prefers_source_unless_asked_or_alone():
    ranked = [("test-hit", 0.030), ("src-hit", 0.020), ("docs-hit", 0.019)]
    role = {"test-hit": "test", "src-hit": "source", "docs-hit": "docs"}.get
    out = rank.apply_role_prior(ranked, role, "where is the retry delay computed")
    assert [x for x, _ in out] == ["src-hit", "test-hit", "docs-hit"]
    assert dict(out)["test-hit"] == pytest.approx(0.030 * rank.ROLE_WEIGHTS["test"])
    asked = rank.apply_role_prior(ranked, role, "tests for the retry delay")
    assert [x for x, _ in asked] == ["test-hit", "src-hit", "docs-hit"]
    # a prior, not a wall: a test that matches far better than any source still wins
    far = rank.apply_role_prior([("test-hit", 0.05), ("src-hit", 0.01)], role, "retry delay")
    assert far[0][0] == "test-hit"
    alone = rank.apply_role_prior([("docs-hit", 0.01)], role, "retry delay")
    assert alone == [("docs-hit", pytest.approx(0.01 * rank.ROLE_WEIGHTS["docs"]))]


def test_a_rare_word_only_another_role_holds_keeps_its_score():
    """Rare words are BM25's words (``evidence.query_words``: letter-and-digit runs), matched
    whole: a text that holds them only inside a longer word does not hold them."""
    text = {"src-hit": "def retry(): pass", "docs-hit": "The ZQMARKER flag", "test-hit": "retry zqmarker()"}.get
    role = {"test-hit": "test", "src-hit": "source", "docs-hit": "docs"}.get
    ranked = [("src-hit", 0.03), ("docs-hit", 0.02), ("test-hit", 0.01)]
    out = dict(rank.apply_role_prior(ranked, role, "zqmarker retry", rare=["zqmarker"], text_of=text))
    assert out == {"src-hit": 0.03, "docs-hit": 0.02, "test-hit": 0.01}
    # once a source candidate holds the word too, the others weigh as usual
    held = {"src-hit": "ZQMARKER = 1", "docs-hit": "The ZQMARKER flag", "test-hit": "retry"}.get
    out = dict(rank.apply_role_prior(ranked, role, "zqmarker retry", rare=["zqmarker"], text_of=held))
    assert out["docs-hit"] == pytest.approx(0.02 * rank.ROLE_WEIGHTS["docs"])
    # a longer word holding it is not the word
    longer = {"src-hit": "def retry(): pass", "docs-hit": "The ZQMARKERS flag", "test-hit": "retry"}.get
    out = dict(rank.apply_role_prior(ranked, role, "zqmarker retry", rare=["zqmarker"], text_of=longer))
    assert out["docs-hit"] == pytest.approx(0.02 * rank.ROLE_WEIGHTS["docs"])


# -- definition evidence (candidates ranked by group) -----------------------------------------------------------------

scored = st.lists(st.tuples(st.sampled_from("abcde"), st.floats(0.001, 0.04)), min_size=1, max_size=30)


@given(scored, st.floats(0.1, 3))
@settings(max_examples=200, deadline=None)
def test_group_evidence_matches_a_brute_force_reference(items, weight):
    ranked = [((f, i), s) for i, (f, s) in enumerate(items)]
    out = rank.apply_group_evidence(ranked, lambda x: x[0], weight=weight, unit=1 / 61, rrf_k=60)
    # reference: files by the sum of their best three scores (first seen first on ties)
    totals: dict[str, list[float]] = {}
    for (f, _), s in ranked:
        totals.setdefault(f, []).append(s)
    order = sorted(totals, key=lambda f: (-sum(sorted(totals[f], reverse=True)[:3]),
                                          next(i for i, ((g, _), _) in enumerate(ranked) if g == f)))
    frank = {f: i for i, f in enumerate(order, 1)}
    want = {x: s + weight / (60 + frank[x[0]]) for x, s in ranked}
    assert sorted(out, key=lambda p: p[0][1]) == sorted(((x, pytest.approx(v)) for x, v in want.items()),
                                                       key=lambda p: p[0][1])
    scores = [s for _, s in out]
    assert scores == sorted(scores, reverse=True)


def test_kind_prior():
    ranked = [("imports", 0.03), ("fn", 0.028)]
    kinds = {"imports": "module", "fn": "function"}.get
    assert [x for x, _ in rank.apply_kind_prior(ranked, kinds)] == ["fn", "imports"]


def test_a_behaviour_query_weighs_what_is_not_a_routine_less():
    """A description of one behaviour or change is answered by a routine: a class's header,
    its other code outside methods and top-level code weigh ``BEHAVIOUR_KIND_WEIGHT`` of their
    usual weight for it, and nothing changes for a question, a lookup, or with the lever off."""
    w = rank.BEHAVIOUR_KIND_WEIGHT
    assert rank.kind_weights("behaviour") == {k: rank.KIND_WEIGHTS.get(k, 1.0) * w for k in rank.NOT_A_ROUTINE}
    for intent in ("topic", "symbol"):
        assert rank.kind_weights(intent) == rank.KIND_WEIGHTS
    assert rank.kind_weights("behaviour", 1.0) == rank.KIND_WEIGHTS
    assert RetrieveOptions().behaviour_kinds == w
    ranked = [("class Cache:", 0.030), ("def on_revalidated", 0.020), ("import x", 0.019)]
    kinds = {"class Cache:": "class", "def on_revalidated": "method", "import x": "module"}.get
    for intent, first in (("behaviour", "def on_revalidated"), ("topic", "class Cache:")):
        out = rank.apply_kind_prior(ranked, kinds, rank.kind_weights(intent))
        assert out[0][0] == first
        assert dict(out)["def on_revalidated"] == 0.020  # a routine keeps its score


def test_lookups_and_longer_queries():
    assert is_lookup("where is ndiff defined") and is_lookup("heapq nsmallest implementation")
    assert not is_lookup("Fix `options.context` being not extensible")
    assert RetrieveOptions().role_prior


# -- whole definitions from their pieces --------------------------------------------------------

@dataclass(frozen=True)
class Stored:
    id: str
    repo_id: str
    path: str
    symbol: str
    kind: str
    language: str
    start_line: int
    end_line: int
    text: str
    role: str = "source"


STORED = [Stored(f"c{i}", "r", c.path, c.symbol, c.kind, c.language, c.start_line, c.end_line, c.text)
          for i, c in enumerate(CHUNKS)]


def spans(repo, paths):
    assert (repo, paths) == ("r", [PATH])
    return {PATH: [Stored(s.id, s.repo_id, s.path, s.symbol, s.kind, "", s.start_line, s.end_line, "") for s in STORED]}


def texts(ids):
    by = {s.id: s for s in STORED}
    return [by[i] for i in ids if i in by]


def whole_span(symbol):
    lines = [(c.start_line, c.end_line) for c in CHUNKS if c.symbol == symbol or c.symbol.startswith(symbol + ".")]
    return min(a for a, _ in lines), max(b for _, b in lines)


def test_the_fixture_has_a_split_function():
    assert sum(1 for c in CHUNKS if c.symbol == "long_function") >= 3


@given(st.lists(st.sampled_from(range(len(CHUNKS))), min_size=1, max_size=len(CHUNKS), unique=True))
@settings(max_examples=150, deadline=None)
def test_expanded_hits_are_whole_definitions_with_the_files_text(order):
    ranked = [(piece(CHUNKS[i]), 1.0 / (60 + n)) for n, i in enumerate(order, 1)]
    out = expand_pieces(ranked, spans, texts, k=len(ranked))
    assert [s for _, s in out] == [s for _, s in ranked]  # scores and order kept
    for (before, _), (after, _) in zip(ranked, out, strict=True):
        assert after.text == file_lines(after.start_line, after.end_line)
        assert (after.symbol, after.kind, after.path) == (before.symbol, before.kind, before.path)
        assert after.start_line <= before.start_line and before.end_line <= after.end_line
        split = before.kind in SPLIT_KINDS and sum(1 for c in CHUNKS if c.symbol == before.symbol) > 1
        if split:
            assert (after.start_line, after.end_line) == whole_span(before.symbol)
        else:
            assert after == before


def test_a_long_definition_stays_in_pieces():
    first = next(c for c in CHUNKS if c.symbol == "long_function")
    out = expand_pieces([(piece(first), 0.1)], spans, texts, k=1, max_lines=5)
    assert out[0][0] == piece(first)


def test_a_file_changed_between_the_reads_keeps_the_piece():
    first = next(c for c in CHUNKS if c.symbol == "long_function")
    out = expand_pieces([(piece(first), 0.1)], spans, lambda ids: texts(ids[:-1]), k=1)
    assert out[0][0] == piece(first)
