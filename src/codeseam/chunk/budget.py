"""What one chunk may hold, and the one place chunk sizes are measured.

Sizes are bytes by default. With ``max_tokens`` and ``count_tokens`` set (the embedder's
tokenizer), ``indexed_text`` (header + text) must also fit ``max_tokens``, so nothing that
is embedded is ever truncated by the model. The split: the header gets at most
``HEADER_SHARE`` of the tokens, the code keeps the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

# A span longer than this many bytes per token of the limit is taken as too big without
# counting (code averages 3-4 bytes per word piece; a wrong "too big" only means the
# span is split into smaller units, which packing joins again).
DENSE_BYTES_PER_TOKEN = 6
# Word-piece counts of two texts add up across a line break (whitespace splits words);
# sums are trusted this far under a limit, else counted again.
ADDITIVE_MARGIN = 2

# Share of a token budget reserved for the header in indexed_text (path, symbol, imports,
# identifier splits, continuation signature). The code keeps the rest.
HEADER_SHARE = 0.25


@dataclass(frozen=True)
class Budget:
    """What one chunk may hold.

    ``max_bytes`` bounds ``chunk.text`` in UTF-8 bytes; small neighbours merge up to
    ``min_bytes``. When ``max_tokens`` is set, ``count_tokens(chunk.indexed_text)`` is at
    most ``max_tokens`` (``count_tokens`` counts without special tokens).
    """

    max_bytes: int = 2000
    min_bytes: int = 200
    max_tokens: int | None = None
    count_tokens: Callable[[str], int] | None = None

    def __post_init__(self) -> None:
        if self.max_bytes < 16:
            raise ValueError("Budget.max_bytes must be at least 16")
        if not 0 <= self.min_bytes < self.max_bytes:
            raise ValueError("Budget.min_bytes must be within 0..max_bytes-1")
        if self.max_tokens is not None:
            if self.count_tokens is None:
                raise ValueError("Budget.max_tokens needs count_tokens")
            if self.max_tokens < 16:
                raise ValueError("Budget.max_tokens must be at least 16")

    @property
    def token_mode(self) -> bool:
        return self.max_tokens is not None and self.count_tokens is not None

    @property
    def text_tokens(self) -> int | None:
        """Tokens the code (``text``) may use; None in byte mode. Header and text are
        joined by a newline; the margin keeps their sum under ``max_tokens``."""
        if not self.token_mode:
            return None
        assert self.max_tokens is not None
        return self.max_tokens - self.header_tokens - ADDITIVE_MARGIN

    @property
    def header_tokens(self) -> int:
        """Tokens the header may use (token mode)."""
        if self.max_tokens is None:
            return 0
        return max(8, int(self.max_tokens * HEADER_SHARE))


def safe_count(count_tokens: Callable[[str], int], text: str) -> int:
    """Count tokens; text with lone surrogates (undecodable bytes) is counted with
    replacement characters, which Rust tokenizers accept."""
    try:
        return count_tokens(text)
    except (TypeError, UnicodeError, ValueError):
        return count_tokens(text.encode("utf-8", "replace").decode("utf-8"))


class Sizer:
    """Measures byte spans of one file against a budget.

    ``fits(a, b)``: may ``data[a:b]`` be one chunk's text? ``size(a, b)``: its size as a
    fraction of the limit (used to balance packing). Token counts are cached per span.
    Tokens never outnumber bytes for the tokenizers we use (every token covers at least
    one character), so spans no longer than the token limit in bytes are not counted.
    """

    __slots__ = ("data", "max_bytes", "min_bytes", "limit_tokens", "_count", "_cache")

    def __init__(self, data: bytes, budget: Budget) -> None:
        self.data = data
        self.max_bytes = budget.max_bytes
        self.min_bytes = budget.min_bytes
        self.limit_tokens = budget.text_tokens
        self._count = budget.count_tokens
        self._cache: dict[tuple[int, int], int] = {}

    def tokens(self, a: int, b: int) -> int:
        key = (a, b)
        n = self._cache.get(key)
        if n is None:
            assert self._count is not None
            n = safe_count(self._count, self.data[a:b].decode("utf-8", "surrogatepass"))
            self._cache[key] = n
        return n

    def fits(self, a: int, b: int) -> bool:
        n = b - a
        if n > self.max_bytes:
            return False
        limit = self.limit_tokens
        if limit is None or n <= limit:
            return True
        if n > limit * DENSE_BYTES_PER_TOKEN:
            return False  # surely over: not counted (a "no" only makes chunks smaller)
        return self.tokens(a, b) <= limit

    def fits_estimate(self, a: int, b: int, tokens: int) -> bool:
        """``fits`` with a token count estimated by the caller (a sum over pieces)."""
        n = b - a
        if n > self.max_bytes:
            return False
        limit = self.limit_tokens
        return limit is None or n <= limit or tokens <= limit

    def fits_sum(self, a: int, b: int, tokens: int) -> bool:
        """``fits`` where ``tokens`` is the sum of exact counts of pieces split at line
        starts: trusted with a margin (counts add up across line breaks), else counted."""
        n = b - a
        if n > self.max_bytes:
            return False
        limit = self.limit_tokens
        if limit is None or n <= limit or tokens + ADDITIVE_MARGIN <= limit:
            return True
        return self.fits(a, b)

    def estimate(self, a: int, b: int, ratio: float) -> float:
        """Size of ``data[a:b]`` as a fraction of the limit, tokens estimated by ``ratio``."""
        n = b - a
        frac = n / self.max_bytes
        if ratio:
            frac = max(frac, n * ratio / self.limit_tokens)  # type: ignore[operator]
        return frac

    def small(self, a: int, b: int) -> bool:
        return b - a < self.min_bytes
