"""Where a description goes: one ``description: ...`` line in ``indexed_text``, after the
header and before the code. ``text`` is never touched.

The chunker guarantees ``count_tokens(indexed_text) <= max_tokens`` for the embedder. A
description must not break that: it is capped to ``max_chars`` when cleaned, and, when a
token counter is given, trimmed word by word (never the code, never the header) until the
whole fits; when not even one word fits, the chunk goes on without a description.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from ..records import Chunk

DEFAULT_MAX_CHARS = 400  # a description's characters after cleaning
PREFIX = "description: "
_SPACE = re.compile(r"\s+")


def clean(description: str, max_chars: int = DEFAULT_MAX_CHARS) -> tuple[str, bool]:
    """One line of prose: whitespace collapsed, wrapping quotes and markdown bullets
    dropped, cut at a word boundary to ``max_chars``. Returns ``(text, was_capped)``."""
    text = _SPACE.sub(" ", description).strip()
    text = text.lstrip("-*• ").strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'`":
        text = text[1:-1].strip()
    if len(text) <= max_chars:
        return text, False
    cut = text[:max_chars]
    space = cut.rfind(" ")
    if space > max_chars // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…", True


def with_description(indexed_text: str, text: str, description: str) -> str:
    """``indexed_text`` with the description line between its header and the code."""
    line = PREFIX + description
    if text and indexed_text.endswith(text):
        head = indexed_text[: len(indexed_text) - len(text)]
        if head and not head.endswith("\n"):
            head += "\n"
        return head + line + "\n" + text
    return line + "\n" + indexed_text


def fit(chunk: Chunk, description: str, count_tokens: Callable[[str], int] | None = None,
        max_tokens: int | None = None) -> tuple[Chunk, str]:
    """The chunk with the description placed, and what happened: ``"placed"``,
    ``"trimmed"`` (shortened to fit ``max_tokens``) or ``"dropped"`` (nothing fits)."""
    full = with_description(chunk.indexed_text, chunk.text, description)
    if count_tokens is None or max_tokens is None or count_tokens(full) <= max_tokens:
        return dataclasses.replace(chunk, indexed_text=full), "placed"
    words = description.split(" ")
    lo, hi = 0, len(words) - 1  # the longest prefix of words that fits, by bisection
    while lo < hi:
        mid = (lo + hi + 1) // 2
        trial = with_description(chunk.indexed_text, chunk.text, " ".join(words[:mid]) + "…")
        if count_tokens(trial) <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    if lo == 0:
        return chunk, "dropped"
    trimmed = with_description(chunk.indexed_text, chunk.text, " ".join(words[:lo]) + "…")
    return dataclasses.replace(chunk, indexed_text=trimmed), "trimmed"
