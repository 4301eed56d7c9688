"""Fitting results to a token budget (``fit.py``): the pure greedy against its invariants, and
hits fitted with the bundled model's real tokenizer."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from codeseam.errors import ConfigError
from codeseam.fit import default_counter, fit, fit_hits, fit_lines, fit_result, hit_view, left_out_note
from codeseam.records import Cut, Hit, LeftOut, SearchResult
from codeseam.safety import check_max_tokens


@given(st.lists(st.tuples(st.integers(1, 60), st.booleans()), max_size=20), st.integers(1, 200))
def test_fit_keeps_the_best_that_fit_definitions_first(items, budget) -> None:
    costs = [c for c, _ in items]
    first = [f for _, f in items]
    r = fit(costs, budget, first)
    assert r.tokens == sum(costs[i] for i in r.kept) <= budget
    assert list(r.kept) == sorted(r.kept) and sorted(r.kept + r.left_out) == list(range(len(costs)))
    assert all(costs[i] > budget - r.tokens for i in r.left_out)  # nothing left out would still fit
    # the definitions kept are exactly those a greedy over the definitions alone keeps
    defs = [i for i in range(len(costs)) if first[i]]
    alone = fit([costs[i] for i in defs], budget)
    assert [i for i in r.kept if first[i]] == [defs[j] for j in alone.kept]
    # with everything fitting, everything is kept
    assert fit(costs, max(sum(costs), 1), first).kept == tuple(range(len(costs)))


def _hit(i: int, lines: int, kind: str = "function") -> Hit:
    text = "".join(f"    value_{i}_{n} = compute(value_{i}_{n - 1}, {n})\n" for n in range(lines))
    return Hit("r", f"src/m{i}.py", f"f{i}", kind, "python", 10, 10 + lines - 1, 1.0 / (i + 1), text)


def test_fit_hits_with_the_real_tokenizer() -> None:
    count = default_counter()
    hits = [_hit(0, 40, "module"), _hit(1, 3), _hit(2, 60), _hit(3, 2), _hit(4, 5, "window")]
    costs = [count(hit_view(h)) for h in hits]
    budget = costs[1] + costs[3] + costs[4] + 5
    kept, report = fit_hits(hits, budget)
    assert [h.symbol for h in kept] == ["f1", "f3", "f4"]
    assert report.tokens == sum(count(hit_view(h)) for h in kept) <= budget and report.max_tokens == budget
    assert report.left_out == (LeftOut("r", "src/m0.py", 10, 49, "f0", "module", costs[0]),
                               LeftOut("r", "src/m2.py", 10, 69, "f2", "function", costs[2]))
    assert report.cut is None
    fitted = fit_result(SearchResult("q", False, tuple(hits)), budget)
    assert fitted.hits == kept and fitted.fit == report
    assert left_out_note(report).startswith(f"max tokens: {report.tokens} of {budget} tokens; 2 hit(s) left out: "
                                            f"src/m0.py:10-49 f0 ({costs[0]} tokens)")
    # definitions first: with room for the module chunk or the two small definitions, the definitions win
    kept, _ = fit_hits([hits[0], hits[1], hits[3]], costs[0] + 2)
    assert [h.symbol for h in kept][:2] == ["f1", "f3"]


def test_when_nothing_fits_the_best_hit_is_cut_at_a_line() -> None:
    count = default_counter()
    big = _hit(0, 200)
    kept, report = fit_hits([big, _hit(1, 300)], 120)
    assert len(kept) == 1 and kept[0].text and big.text.startswith(kept[0].text)
    assert count(hit_view(kept[0])) <= 120
    assert kept[0].end_line == big.start_line + kept[0].text.count("\n") - 1
    assert report.cut == Cut(big.path, 10, kept[0].end_line, 209)
    assert [x.symbol for x in report.left_out] == ["f1"]


def test_fit_lines_and_budget_checks() -> None:
    count = default_counter()
    lines = [f"src/a.py:{n}:1 call in f: x = parse(y)" for n in range(50)]
    n, used = fit_lines(lines, 100)
    assert 0 < n < 50 and used <= 100 < used + count(lines[n] + "\n")
    assert check_max_tokens(None) is None and check_max_tokens(500) == 500
    for bad in (0, 3, -1, True, 2.5, 10**7):
        with pytest.raises(ConfigError, match="max_tokens must be"):
            check_max_tokens(bad)
