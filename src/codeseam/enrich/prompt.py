"""Requests and replies: what the LLM is shown and how its answer is read (pure functions).

One request per file: the file with line numbers, then the list of chunks to describe
(short ids ``c1``, ``c2``, ... with line spans, kind and symbol), asking for one JSON object
``{id: description}``. A file whose numbered text is over ``max_chars`` is sent as views:
the file's head (docstring, imports) plus consecutive chunks with ``around`` lines of
context on each side, as many chunks per view as fit. Nothing is cut silently: every
omitted stretch is marked in the text (``... lines 40-310 not shown ...``), and a chunk is
always shown whole, even when it alone is over the budget.

Bump ``PROMPT_VERSION`` when the prompt, the reply reading or the placement of the
description changes: it is part of the cache key and of the index's pipeline fingerprint.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

PROMPT_VERSION = "1"

DEFAULT_MAX_CHARS = 24_000  # numbered file text per request (about 6-8k tokens)
DEFAULT_AROUND = 20  # context lines on each side of a chunk in a view
DEFAULT_HEAD_LINES = 30  # file head (docstring, imports) shown in every view

SYSTEM = (
    "You write short descriptions of source code for a code search index. "
    "For each chunk you are given, write two or three plain sentences in {name} that say "
    "what the code does, what it is for and when someone would look for it. Mention the key "
    "names (functions, classes, parameters) as they are written in the code. Do not repeat "
    "the code, do not use markdown, do not invent behaviour the code does not have. "
    "Reply with one JSON object only, mapping every chunk id to its description."
)


@dataclass(frozen=True)
class Item:
    """One chunk to describe: its request id and where it lies in the file."""

    id: str
    start: int  # 1-based inclusive
    end: int
    kind: str
    symbol: str


@dataclass(frozen=True)
class View:
    """A part of a file shown in one request: line ranges (1-based, inclusive) and the ids
    of the chunks it asks about."""

    ranges: tuple[tuple[int, int], ...]
    ids: tuple[str, ...]


class BadReply(ValueError):
    """The model's text is not one JSON object."""


def split_lines(text: str) -> list[str]:
    """Lines on ``\\n`` only, as the chunker counts them (a trailing newline adds no line)."""
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def _width(n_lines: int) -> int:
    return len(str(max(1, n_lines)))


class _Costs:
    """Characters of numbered line ranges (``width`` digits + ``| `` + line + newline),
    from prefix sums."""

    def __init__(self, lines: Sequence[str]) -> None:
        self.n = len(lines)
        per_line = _width(self.n) + 3
        self.prefix = [0]
        for line in lines:
            self.prefix.append(self.prefix[-1] + len(line) + per_line)

    def __call__(self, a: int, b: int) -> int:
        return self.prefix[b] - self.prefix[a - 1] if a <= b else 0


def _merge(ranges: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(r for r in ranges if r[0] <= r[1]):
        if out and a <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return tuple(out)


def plan_views(lines: Sequence[str], items: Sequence[Item], *, max_chars: int = DEFAULT_MAX_CHARS,
               around: int = DEFAULT_AROUND, head_lines: int = DEFAULT_HEAD_LINES) -> list[View]:
    """The views that together ask about every item once. The whole file when it fits
    ``max_chars``; otherwise head + consecutive items with context, packed greedily."""
    n = len(lines)
    cost = _Costs(lines)
    if not items:
        return []
    if cost(1, n) <= max_chars:
        return [View(((1, n),), tuple(it.id for it in items))]
    head = (1, min(n, head_lines))
    while head[1] > 1 and cost(*head) > max_chars // 4:
        head = (1, head[1] // 2)
    views: list[View] = []
    group: list[Item] = []
    for it in sorted(items, key=lambda i: (i.start, i.end)):
        trial = group + [it]
        if group and _view_cost(cost, head, trial, around) > max_chars:
            views.append(_view(head, group, around, n))
            trial = [it]
        group = trial
    views.append(_view(head, group, around, n))
    return views


def _span(group: Sequence[Item], around: int, n: int) -> tuple[int, int]:
    return max(1, min(i.start for i in group) - around), min(n, max(i.end for i in group) + around)


def _view(head: tuple[int, int], group: Sequence[Item], around: int, n: int) -> View:
    return View(_merge([head, _span(group, around, n)]), tuple(i.id for i in group))


def _view_cost(cost: _Costs, head: tuple[int, int], group: Sequence[Item], around: int) -> int:
    return sum(cost(a, b) + 40 for a, b in _merge([head, _span(group, around, cost.n)]))


def render_view(lines: Sequence[str], view: View) -> str:
    """The numbered text of a view, every gap marked."""
    n = len(lines)
    width = _width(n)
    out: list[str] = []
    pos = 1
    for a, b in view.ranges:
        if a > pos:
            out.append(f"... lines {pos}-{a - 1} not shown ...")
        out.extend(f"{i:>{width}}| {lines[i - 1]}" for i in range(a, b + 1))
        pos = b + 1
    if pos <= n:
        out.append(f"... lines {pos}-{n} not shown ...")
    return "\n".join(out)


def build_messages(path: str, language: str, numbered: str, items: Sequence[Item], lang_name: str,
                   *, retry: bool = False) -> list[dict[str, str]]:
    """The chat messages of one request."""
    listing = "\n".join(
        f"{it.id}: lines {it.start}-{it.end}" + (f", {it.kind} {it.symbol}".rstrip() if it.kind else "")
        for it in items
    )
    example = json.dumps({it.id: "..." for it in items[:2]})
    again = ("Some descriptions were missing or not in the right language last time. "
             if retry else "")
    user = (
        f"File: {path} ({language or 'text'})\n```\n{numbered}\n```\n\n"
        f"Chunks to describe ({len(items)}):\n{listing}\n\n"
        f"{again}Write a description in {lang_name} for every chunk id above: two or three "
        f"sentences each. Reply with one JSON object and nothing else, e.g. {example}"
    )
    return [{"role": "system", "content": SYSTEM.format(name=lang_name)},
            {"role": "user", "content": user}]


_FENCE = re.compile(r"```[A-Za-z0-9_-]*\s*\n?(.*?)```", re.S)


def parse_reply(content: str) -> dict[str, Any]:
    """The JSON object in a model's reply, tolerant of code fences and chatter around it.
    ``BadReply`` when there is no JSON object."""
    text = (content or "").strip()
    candidates = [text]
    candidates += [m.group(1).strip() for m in _FENCE.finditer(text)]
    first, last = text.find("{"), text.rfind("}")
    if 0 <= first < last:
        candidates.append(text[first:last + 1])
    for cand in candidates:
        try:
            data = json.loads(cand)
        except ValueError:
            continue
        if isinstance(data, dict):
            return data
    raise BadReply(f"not a JSON object: {text[:80]!r}")


def _norm_id(key: Any) -> str:
    k = str(key).strip().strip("\"'").lower()
    return f"c{k}" if k.isdigit() else k


def _as_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for name in ("description", "desc", "text", "summary"):
            if isinstance(value.get(name), str):
                return value[name]
    return None


def descriptions_from(data: dict[str, Any], wanted: Sequence[str]) -> dict[str, str]:
    """``{id: text}`` for the wanted ids found in a parsed reply (keys like ``C1`` or ``1``
    accepted; one wrapper object such as ``{"descriptions": {...}}`` unwrapped). Ids that
    are absent or whose value is not text are left out: the caller counts them missing."""
    want = set(wanted)
    found = {_norm_id(k): v for k, v in data.items()}
    if not want & set(found) and len(data) == 1:
        inner = next(iter(data.values()))
        if isinstance(inner, dict):
            found = {_norm_id(k): v for k, v in inner.items()}
    out: dict[str, str] = {}
    for key, value in found.items():
        text = _as_text(value)
        if key in want and text is not None and text.strip():
            out[key] = text
    return out
