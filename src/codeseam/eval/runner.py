"""Run a golden set against variants, side by side, in one process.

For each index a variant needs (:class:`~.variants.IndexSpec`) the corpus is indexed
(incrementally: a re-run with nothing changed embeds nothing; a rebuild embeds only texts
the eval's vector cache has not seen, ``embcache``) into the eval's own Milvus Lite file,
then every query runs through ``query.retrieve.retrieve`` for each variant on that
index, top ``CURVE_K`` results. An enriched index whose LLM is unavailable is reported as
skipped (with the reason) and the other variants still run.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import IndexMismatchError, LLMError
from ..settings import Settings, load_settings
from . import metrics
from .corpus import CORPUS_MODES, LITE_FILE, collection_name, default_cache_dir, prepare_corpus
from .golden import GoldQuery, gold_paths, load_golden, repo_of
from .variants import IndexSpec, Variant, parse_variants, specs_of

log = logging.getLogger(__name__)

Progress = Callable[..., None]
DEFAULT_KS = (1, 5, 10)
VECTOR_CACHE = "vectors.sqlite"


def _quiet(event: str, **fields: Any) -> None:
    pass


@dataclass
class VariantResult:
    variant: Variant
    outcomes: list[metrics.Outcome] = field(default_factory=list)
    skipped: str | None = None  # why the variant did not run
    seconds: float = 0.0

    @property
    def name(self) -> str:
        return self.variant.name


@dataclass
class EvalResult:
    golden: str
    root: str
    corpus: str
    cache_dir: str
    repo_id: str
    ks: tuple[int, ...]
    queries: list[GoldQuery]
    results: list[VariantResult]
    indexes: dict[str, dict] = field(default_factory=dict)  # spec key -> what was indexed
    run: dict[str, Any] = field(default_factory=dict)  # timings, counts that vary by run

    def summary(self, name: str) -> dict | None:
        for r in self.results:
            if r.name == name and r.skipped is None:
                return metrics.summarize(r.outcomes, self.ks)
        return None


def run_eval(golden: str | Path, root: str | Path, *, variants: str | Sequence[str] | None = None,
             ks: Sequence[int] = DEFAULT_KS, settings: Settings | None = None,
             cache_dir: str | Path | None = None, corpus: str = "gold",
             progress: Progress | None = None) -> EvalResult:
    """Index the corpus for each variant's index spec and run every query of ``golden``."""
    from ..errors import ConfigError

    progress = progress or _quiet
    if corpus not in CORPUS_MODES:
        raise ConfigError(f"corpus must be one of {', '.join(CORPUS_MODES)}, not {corpus!r}")
    if not ks or any(k < 1 or k > metrics.CURVE_K for k in ks):
        raise ConfigError(f"each k must be within 1..{metrics.CURVE_K}")
    golden_p, root_p = Path(golden), Path(root)
    if not root_p.is_dir():
        raise ConfigError(f"corpus root {root_p} is not a folder")
    queries = load_golden(golden_p)
    chosen = parse_variants(variants)
    base = settings if settings is not None else load_settings()
    cache = Path(cache_dir) if cache_dir else default_cache_dir(golden_p, root_p, corpus)
    cache.mkdir(parents=True, exist_ok=True)
    corpus_root = prepare_corpus(root_p, gold_paths(queries), cache / "corpus") if corpus == "gold" \
        else root_p.resolve()
    result = EvalResult(golden=str(golden_p), root=str(root_p.resolve()), corpus=corpus, cache_dir=str(cache),
                        repo_id=repo_of(queries), ks=tuple(sorted(set(ks))), queries=queries, results=[])
    by_spec: dict[IndexSpec, list[Variant]] = {}
    for v in chosen:
        by_spec.setdefault(v.spec, []).append(v)
    uri = str(cache / LITE_FILE)
    for spec in specs_of(chosen):
        result.results.extend(_run_spec(spec, by_spec[spec], base.replace(milvus_uri=uri), corpus_root,
                                        result, progress))
    order = {v.name: i for i, v in enumerate(chosen)}
    result.results.sort(key=lambda r: order[r.name])
    return result


def _run_spec(spec: IndexSpec, variants: list[Variant], base: Settings, corpus_root: Path,
              result: EvalResult, progress: Progress) -> list[VariantResult]:
    t0 = time.perf_counter()
    progress("index", spec=spec.key)
    try:
        session = _open_spec(spec, base, corpus_root, result.repo_id, progress,
                             Path(result.cache_dir) / VECTOR_CACHE)
    except LLMError as exc:
        reason = f"index {spec.key} not built: {exc.message}"
        log.warning("%s", reason)
        progress("skipped", spec=spec.key, reason=reason)
        return [VariantResult(v, skipped=reason) for v in variants]
    try:
        result.indexes[spec.key] = session.info
        result.run.setdefault("index_seconds", {})[spec.key] = round(time.perf_counter() - t0, 2)
        result.run.setdefault("index_report", {})[spec.key] = session.report
        from .memo import MemoEmbedder, MemoStore

        memo = _Session(MemoStore(session.store), MemoEmbedder(session.embedder), session.settings, session.info,
                        session.report, session.closer)
        return [_run_variant(v, memo, result.queries, result.repo_id, progress) for v in variants]
    finally:
        session.close()


@dataclass
class _Session:
    store: Any
    embedder: Any
    settings: Settings
    info: dict
    report: dict
    closer: Callable[[], None]

    def close(self) -> None:
        self.closer()


def _open_spec(spec: IndexSpec, base: Settings, corpus_root: Path, repo_id: str,
               progress: Progress, vector_cache: Path) -> _Session:
    from ..embed import make_embedder

    if spec.plain:
        from ..store import SCHEMA_VERSION, IndexMeta, Store
        from .baseline import PLAIN_CHUNKER, build_plain_index, plain_settings

        from .embcache import CachedEmbedder

        s = plain_settings(base, dense=spec.dense)
        embedder = make_embedder(s)
        s = s.replace(collection=collection_name(spec.key, embedder.id))
        cached = CachedEmbedder(embedder, vector_cache)
        try:
            report = build_plain_index(s, corpus_root, repo_id, progress, embedder=cached)
            store = Store.open(s, expect=IndexMeta(embedder.id, embedder.dim, PLAIN_CHUNKER, SCHEMA_VERSION),
                               create=False)
        finally:
            cached.close()
        info = {"embedder": embedder.id, "chunker": PLAIN_CHUNKER, "collection": s.collection,
                "chunks": report["chunks"], "budget": f"{s.chunk_max_bytes} bytes, no token limit",
                "indexed_text": "text only (no header)"}
        if spec.dense:
            info["truncated"] = report.get("truncated", 0)
        return _Session(store, embedder, s, info, {"embedded": report["embedded"]}, store.close)
    from .. import api

    s = base.replace(chunker=spec.chunker, enrich=spec.enrich)
    s = s.replace(collection=collection_name(spec.key, make_embedder(s).id))
    try:
        ix = api.Index(s, create=True)
    except IndexMismatchError:
        from ..store import Store

        log.info("eval index %s was built differently; rebuilding it", s.collection)
        Store.drop(s)
        ix = api.Index(s, create=True)
    from .embcache import CachedEmbedder

    cached = ix.embedder = CachedEmbedder(ix.embedder, vector_cache)

    def close() -> None:
        ix.close()
        cached.close()
    try:
        rep = ix.index(corpus_root, repo_id=repo_id, progress=progress)
        budget = _budget_text(s, ix.embedder)
        info = {"embedder": ix.embedder.id, "chunker": ix.meta.chunker_version, "collection": s.collection,
                "chunks": _count(ix, repo_id),
                "files": rep.files_seen, "budget": budget, "indexed_text": "header + text",
                "enrich": s.enrich}
        report = {"files_indexed": rep.files_indexed, "files_unchanged": rep.files_unchanged,
                  "embedded": rep.chunks_embedded, "reused": rep.chunks_reused,
                  "skips": [f"{k.path}: {k.reason}" for k in rep.skips], "enrich": rep.enrich,
                  "vector_cache": {"hits": cached.hits, "misses": cached.misses}}
    except BaseException:
        close()
        raise
    return _Session(ix.store, cached.inner, s, info, report, close)


def _count(ix, repo_id: str) -> int:
    return int(ix.store.stats().get(repo_id, {}).get("chunks", 0))


def _budget_text(s: Settings, embedder) -> str:
    from ..indexing.pipeline import make_budget

    b = make_budget(s, embedder)
    if b.max_tokens:
        return f"{b.max_bytes} bytes and {b.max_tokens} tokens of indexed_text ({b.text_tokens} for the code)"
    return f"{b.max_bytes} bytes"


def _run_variant(v: Variant, session: _Session, queries: list[GoldQuery], repo_id: str,
                 progress: Progress) -> VariantResult:
    from ..query.retrieve import RetrieveOptions, retrieve
    from ..store import Filters

    settings = session.settings.replace(**dict(v.settings)) if v.settings else session.settings
    options = RetrieveOptions(**dict(v.options))
    filters = Filters(repos=(repo_id,))
    out = VariantResult(v)
    t0 = time.perf_counter()
    for i, q in enumerate(queries, 1):
        res = retrieve(session.store, session.embedder, settings, q.query, filters, metrics.CURVE_K,
                       mode=v.mode, options=options)
        hits = [(h.path, h.start_line, h.end_line) for h in res.hits]
        weak = res.weak if v.calibrated else None
        best = res.best_similarity if v.calibrated else None
        score = res.evidence if v.calibrated else None
        out.outcomes.append(metrics.outcome(q, hits, weak, best, score))
        progress("query", variant=v.name, done=i, total=len(queries))
    out.seconds = time.perf_counter() - t0
    return out
