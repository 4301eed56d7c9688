"""Read-through memo of the store and the query embedder for the eval's query phase.

The eval runs every query once per variant over an index that does not change while the
queries run; variants that differ only in ranking ask the store the same questions (the same
dense vector, the same BM25 text, the same sibling spans). ``MemoStore`` answers a repeated
question from memory, so a lever sweep costs Python time, not Milvus time. Answers are the
store's own (the first call goes through), so results are identical with and without it:
``tests/test_eval_memo.py`` holds that.

Only the read methods the query side uses are memoised; anything else goes straight to the
store. Never use it around writes: it would answer from before them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

MEMOISED = ("dense_search", "bm25_search", "term_counts", "chunk_spans", "chunks_by_ids", "repo_records",
            "definitions")


def _key(value: Any) -> Any:
    """A hashable key for the arguments the query side passes (vectors, sequences, filters)."""
    if isinstance(value, (list, tuple)):
        return tuple(_key(v) for v in value)
    if hasattr(value, "tobytes"):  # a numpy vector
        return ("nd", value.tobytes())
    if isinstance(value, dict):
        return tuple(sorted((k, _key(v)) for k, v in value.items()))
    if isinstance(value, (set, frozenset)):
        return tuple(sorted(_key(v) for v in value))
    return value


class MemoStore:
    """Wraps a ``Store``; the methods in ``MEMOISED`` answer repeated calls from memory."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._memo: dict[tuple, Any] = {}
        self.hits = 0
        self.misses = 0

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if name not in MEMOISED or not callable(attr):
            return attr
        return self._memoised(name, attr)

    def _memoised(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            key = (name, _key(args), _key(kwargs))
            if key in self._memo:
                self.hits += 1
                return _copy(self._memo[key])
            self.misses += 1
            value = fn(*args, **kwargs)
            self._memo[key] = value
            return _copy(value)
        return call


def _copy(value: Any) -> Any:
    """A shallow copy of a list/dict answer, so a caller that sorts or extends it in place
    cannot change what the next caller gets (the records inside are frozen)."""
    if isinstance(value, list):
        return list(value)
    if isinstance(value, dict):
        return {k: (list(v) if isinstance(v, list) else v) for k, v in value.items()}
    return value


class MemoEmbedder:
    """Wraps an embedder; ``embed_query`` answers a repeated query text from memory."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._queries: dict[str, Any] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def embed_query(self, text: str) -> Any:
        if text not in self._queries:
            self._queries[text] = self._inner.embed_query(text)
        return self._queries[text]
