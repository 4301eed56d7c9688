"""Retrieval over the chunk collection (a mixin of ``Store``): dense, BM25 and Milvus' own
hybrid search, the word counts the weak-evidence signal uses, and the filter expression.

Every search returns the top ``k`` by score with ties broken by id, so a result never depends
on the order rows were written in; keyword-only rows (no vector yet) never come back from the
dense side. Fusion beyond Milvus' RRFRanker is the caller's (``query/``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from ..errors import ConfigError, StoreError
from ..records import ROLES
from . import schema as sch
from .client import MAX_WINDOW, MilvusCalls
from .expr import all_of, compile_glob, eq, is_in, quotable
from .model import Filters, IndexMeta, StoredChunk, check_repo_id, check_vector

TIE_MARGIN = 8  # rows fetched past k to settle ties at the k-th place


class Retrieval:
    """Mixin of ``Store``: needs ``self._m``, ``self.names``, ``self.meta``, ``self.server``,
    ``_ensure_known`` and ``_ensure_any``."""

    # Store's (declared for the type checker: annotations only, nothing set here)
    _m: MilvusCalls
    names: sch.Names
    meta: IndexMeta | None
    server: bool
    _ensure_known: Callable[[Iterable[str]], None]
    _ensure_any: Callable[[], None]

    def dense_search(self, vector: Sequence[float], k: int, filters: Filters) -> list[StoredChunk]:
        """Nearest chunks; ``score`` is the cosine similarity (inner product of unit vectors).
        Keyword-only rows (not embedded yet) are never among them."""
        assert self.meta is not None
        vec = check_vector(vector, self.meta.dim, "query")

        def run(expr: str, limit: int) -> list[dict]:
            return self._m.call("search (dense)", "search", self.names.chunks, data=[vec], anns_field="dense",
                                filter=all_of(expr, sch.DENSE_READY), limit=limit, output_fields=list(sch.CHUNK_FIELDS),
                                search_params=sch.dense_search_params(limit, server=self.server))[0]
        return self._search(filters, k, run)

    def bm25_search(self, query_text: str, k: int, filters: Filters) -> list[StoredChunk]:
        """Best chunks by BM25 over ``indexed_text`` (global IDF); ``score`` is BM25."""
        if not query_text.strip():
            self._filter(filters)  # unknown repos still raise
            return []

        def run(expr: str, limit: int) -> list[dict]:
            return self._m.call("search (BM25)", "search", self.names.chunks, data=[query_text],
                                anns_field="sparse", filter=expr, limit=limit,
                                output_fields=list(sch.CHUNK_FIELDS), search_params={"metric_type": "BM25"})[0]
        try:
            return self._search(filters, k, run)
        except StoreError:
            # Milvus cannot score BM25 over a collection without rows (its average document
            # length is 0: "NaN or Inf"); an index whose repos hold no chunks has no hits
            if self._m.exists(self.names.chunks, ""):
                raise
            return []

    def term_counts(self, words: Sequence[str], repo_ids: Sequence[str] = (), cap: int = 8) -> dict[str, int]:
        """How many chunks (up to ``cap``) hold each word in ``indexed_text``, in the repos
        (all when empty): one batched BM25 search."""
        words = [w for w in dict.fromkeys(words) if w.strip()]
        if not words:
            return {}
        for r in repo_ids:
            check_repo_id(r)
        expr = is_in("repo_id", sorted(set(repo_ids))) if repo_ids else ""
        try:
            found = self._m.call("search (BM25 word counts)", "search", self.names.chunks, data=words,
                                 anns_field="sparse", filter=expr, limit=cap, output_fields=["id"],
                                 search_params={"metric_type": "BM25"})
        except StoreError:
            if self._m.exists(self.names.chunks, ""):
                raise
            return {w: 0 for w in words}  # no rows: BM25 cannot score (see bm25_search)
        return {w: len(hits) for w, hits in zip(words, found, strict=True)}

    def bm25_paths(self, words: str, filters: Filters, limit: int = MAX_WINDOW) -> tuple[set[tuple[str, str]], bool]:
        """``(repo_id, path)`` of the chunks whose ``indexed_text`` holds any of ``words`` (BM25
        scores only chunks that hold a query word), and whether that is all of them (False when
        ``limit`` rows came back: more may hold it). Reads the path alone, not the text."""
        expr, glob = self._filter(filters)
        if not words.strip():
            return set(), True
        limit = min(limit, MAX_WINDOW)
        try:
            hits = self._m.call("search (BM25 paths)", "search", self.names.chunks, data=[words],
                                anns_field="sparse", filter=expr, limit=limit, output_fields=["repo_id", "path"],
                                search_params={"metric_type": "BM25"})[0]
        except StoreError:
            if self._m.exists(self.names.chunks, ""):
                raise
            return set(), True  # no rows: BM25 cannot score (see bm25_search)
        found = {(h["entity"]["repo_id"], h["entity"]["path"]) for h in hits}
        if glob is not None:
            found = {(r, p) for r, p in found if glob.match(p)}
        return found, len(hits) < limit

    def definitions(self, names: Sequence[str], filters: Filters, limit: int = 64) -> list[StoredChunk]:
        """Chunks whose symbol is one of ``names`` or ends with ``.<name>`` (exact case), in
        the filters' scope: the declarations a symbol query looks up, found by the symbol field
        whether or not dense or BM25 ranked them (at most ``limit``, by id)."""
        wanted = [n for n in dict.fromkeys(names) if n and quotable(n) and '"' not in n and "%" not in n]
        if not wanted:
            return []
        expr, glob = self._filter(filters)
        named = " or ".join([is_in("symbol", wanted)] + [f'symbol like "%.{n}"' for n in wanted])
        rows = self._m.query(self.names.chunks, all_of(expr, named), list(sch.CHUNK_FIELDS), limit=limit)
        found = sorted((stored(r) for r in rows), key=lambda c: c.id)
        if glob is not None:
            found = [c for c in found if glob.match(c.path)]
        return [c for c in found if c.symbol in wanted or any(c.symbol.endswith("." + n) for n in wanted)]

    def hybrid_search(self, vector: Sequence[float], query_text: str, k: int, filters: Filters,
                      rrf_k: int = 60) -> list[StoredChunk]:
        """Milvus' own dense + BM25 search fused by RRFRanker(rrf_k); ``score`` is RRF."""
        from pymilvus import AnnSearchRequest, RRFRanker

        assert self.meta is not None
        vec = check_vector(vector, self.meta.dim, "query")

        def run(expr: str, limit: int) -> list[dict]:
            reqs = [AnnSearchRequest([vec], "dense", sch.dense_search_params(limit, server=self.server),
                                     limit, expr=all_of(expr, sch.DENSE_READY))]
            if query_text.strip():
                reqs.append(AnnSearchRequest([query_text], "sparse", {"metric_type": "BM25"}, limit,
                                             expr=expr or None))
            return self._m.call("search (hybrid)", "hybrid_search", self.names.chunks, reqs, RRFRanker(rrf_k),
                                limit=limit, output_fields=list(sch.CHUNK_FIELDS))[0]
        return self._search(filters, k, run)

    def _search(self, filters: Filters, k: int, run: Callable[[str, int], list[dict]]) -> list[StoredChunk]:
        """Top ``k`` by score, ties broken by id: the result does not depend on the order the
        rows were written in. Fetches past ``k`` until the k-th score is strictly above the
        lowest fetched (so no unseen row can tie with it) and, for a path glob, until ``k``
        rows match the glob exactly."""
        if k < 1:
            raise ValueError(f"k must be positive, not {k}")
        expr, glob = self._filter(filters)
        k = min(k, MAX_WINDOW)
        limit = min(k + TIE_MARGIN if glob is None else max(4 * k, 64), MAX_WINDOW)
        while True:
            hits = run(expr, limit)
            found = sorted((stored(h["entity"], h["id"], float(h["distance"])) for h in hits),
                           key=lambda c: (-c.score, c.id))
            if glob is not None:
                found = [c for c in found if glob.match(c.path)]
            if len(hits) < limit or limit >= MAX_WINDOW:
                return found[:k]
            lowest = min(float(h["distance"]) for h in hits)
            if len(found) >= k and found[k - 1].score > lowest:
                return found[:k]
            limit = min(limit * 4, MAX_WINDOW)

    def _filter(self, filters: Filters):
        if filters.repos:
            for r in filters.repos:
                check_repo_id(r)
            self._ensure_known(filters.repos)
        else:
            self._ensure_any()
        language = None
        if filters.language:
            if not quotable(filters.language):
                raise ConfigError(f"invalid language {filters.language!r}")
            language = eq("language", filters.language)
        roles = None
        if filters.roles:
            bad = [r for r in filters.roles if r not in ROLES]
            if bad:
                raise ConfigError(f"unknown role {bad[0]!r}", hint="roles: " + ", ".join(ROLES))
            roles = is_in("role", sorted(set(filters.roles)))
        glob = compile_glob(filters.path_glob) if filters.path_glob else None
        repos = is_in("repo_id", sorted(set(filters.repos))) if filters.repos else None
        return all_of(repos, language, roles, glob.like if glob else None), glob


def stored(row: dict, id_: str | None = None, score: float = 0.0) -> StoredChunk:
    return StoredChunk(
        id=id_ if id_ is not None else row["id"], repo_id=row["repo_id"], path=row["path"],
        language=row["language"], symbol=row["symbol"], parent=row["parent"], kind=row["kind"],
        start_line=int(row["start_line"]), end_line=int(row["end_line"]), text=row["text"],
        chunk_hash=row["chunk_hash"], file_hash=row["file_hash"], score=score, role=row["role"])
