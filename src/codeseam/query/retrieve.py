"""Retrieval: one query through both signals, fusion, the ranking levers, pieces, top k.

``retrieve`` embeds the query, asks the store for dense and BM25 candidates, decides the weak
flag (``evidence``), fuses (``fusion``), applies the levers its ``RetrieveOptions`` switch on
(``rank``, ``analysis.query_names``), merges and expands pieces of split definitions
(``pieces``), drops overlapping spans and keeps the top k.

Weak evidence
    A result is *weak* when the evidence score (``evidence.py``) is below the embedder's
    calibrated threshold: the index holds nothing close to the query, so ``ask`` abstains
    instead of guessing. A weak result is also fused with less weight on the dense list
    (``WEAK_DENSE_WEIGHT``).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Sequence

from . import rank
from .analysis import NOISE_WORDS, bm25_query, is_lookup, names_definition, query_names, strip_noise
from .evidence import DEFAULT_WEAK_THRESHOLD, SIMILARITY_THRESHOLDS, is_weak, weak_threshold
from .fusion import Span, dedupe, rrf, weighted
from .pieces import SPLIT_KINDS, Piece, as_piece, expand_pieces, merge_pieces
from .rank import CHANGE_WORDS, RARE_WORD

MODES = ("hybrid", "dense", "bm25")

# Dense weight for fusion when the result is weak: the dense model found nothing close to the
# query (a language it was not trained on, or nothing relevant indexed), so its ranking says
# little and BM25's exact words count more. Measured in bench/results/eval.md (lever +wk0.5).
WEAK_DENSE_WEIGHT = 0.25


@dataclass(frozen=True)
class RetrieveOptions:
    """How ``retrieve`` ranks, beyond the settings (the eval measures each choice).

    ``depth``: candidates fetched per signal (None: ``max(4 * k, 40)``). ``split_query``:
    add identifier splits to the BM25 query. ``merge``: merge adjacent pieces of one split
    definition that are both among the candidates into one hit (see ``merge_pieces``).
    ``symbols_first``: candidates whose definition the query names (``query_names``) go
    first, in fused order; with ``symbol_bonus`` set, only in a lookup (at most
    ``SHORT_QUERY_WORDS`` content words: "where is ndiff defined"), while in a longer
    query (a change description that mentions names) they gain ``symbol_bonus`` first
    places' worth of score instead. ``expand``: a piece of a split definition among the
    first candidates becomes the whole definition when it is short enough
    (``pieces.expand_pieces``). ``strip_noise``: drop ``NOISE_WORDS`` from the BM25 query,
    and with ``strip_change`` the words that say what kind of change a commit is
    (``rank.CHANGE_WORDS``: fix, add, support, ...). ``role_scale``: one weight for every
    role but source instead of ``rank.ROLE_WEIGHTS``.
    ``weak_dense_weight``: the dense weight used for fusion when the result is weak (the
    dense model found nothing close, so its ranking says little); None: no change.
    ``role_prior``: scores times their file role's weight (``rank.ROLE_WEIGHTS``) unless
    the query asks for that role. ``file_weight``: weight of the file-evidence list
    (``rank.apply_file_evidence``; 0: off). ``name_weight``: weight of the name-match bonus
    (``rank.apply_name_match``; 0: off). ``def_weight``: weight of the definition-evidence
    list (pieces of one definition ranked together; 0: off). ``kind_prior``: module-level
    and class-header chunks weigh less (``rank.KIND_WEIGHTS``). ``weak_signal``: what the
    weak flag is decided on: ``evidence`` (``evidence.py``: closeness above the corpus's
    floor and the rarest query word) or ``similarity`` (the best dense similarity alone).
    """

    depth: int | None = None
    split_query: bool = True
    merge: bool = True
    symbols_first: bool = True
    symbol_bonus: float | None = 1.0
    expand: bool = True
    strip_noise: bool = True
    strip_change: bool = False
    role_scale: float | None = None
    weak_dense_weight: float | None = WEAK_DENSE_WEIGHT
    role_prior: bool = True
    file_weight: float = 0.0
    name_weight: float = 0.0
    def_weight: float = 0.5
    kind_prior: bool = True
    weak_signal: str = "evidence"


DEFAULT_OPTIONS = RetrieveOptions()


def retrieve(store, embedder, settings, query: str, filters, k: int, *, mode: str = "hybrid",
             lock=None, options: RetrieveOptions = DEFAULT_OPTIONS):
    """Dense and/or BM25 retrieval from the one collection, fused, de-duplicated, top k."""
    from ..records import Hit, SearchResult

    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    depth = options.depth or max(4 * k, 40)
    qvec = embedder.embed_query(query)
    if options.strip_noise:
        text = strip_noise(query, CHANGE_WORDS if options.strip_change else ())
    else:
        text = query
    text = bm25_query(text) if options.split_query else text
    with lock or contextlib.nullcontext():
        dense = store.dense_search(qvec, depth, filters)
        sparse = store.bm25_search(text, depth, filters) if mode != "dense" else []
    best = max((c.score for c in dense), default=None)
    counts: dict[str, int] = {}
    if options.weak_signal == "similarity":
        score = best
        threshold = weak_threshold(settings, embedder.id, SIMILARITY_THRESHOLDS, DEFAULT_WEAK_THRESHOLD)
    else:
        score, counts = _evidence(store, embedder, query, filters, best, lock)
        threshold = weak_threshold(settings, embedder.id)
    weak = is_weak(score, threshold)
    if weak and options.weak_dense_weight is not None:
        settings = settings.replace(dense_weight=options.weak_dense_weight)
    ranked = [(as_piece(c), s) for c, s in _rank(dense, sparse, mode, settings)]
    names = query_names(query) if options.symbols_first else []
    hard = bool(names) and (options.symbol_bonus is None or is_lookup(query))
    rare = [w for w, c in counts.items() if 0 < c <= RARE_WORD]
    ranked = _priors(ranked, query, mode, settings, options, [] if hard else names, rare)
    if hard:
        ranked = sorted(ranked, key=lambda ps: not names_definition(ps[0].path, ps[0].symbol, names))
    if options.merge:
        ranked = merge_pieces(ranked)
    if options.expand:
        ranked = expand_pieces(ranked, lambda repo, paths: _locked(lock, store.chunk_spans, repo, paths),
                               lambda ids: _locked(lock, store.chunks_by_ids, ids), k)
    kept = dedupe(ranked, lambda pair: Span(pair[0].path, pair[0].start_line, pair[0].end_line))[:k]
    hits = tuple(
        Hit(c.repo, c.path, c.symbol, c.kind, c.language, c.start_line, c.end_line, float(s), c.text, c.role)
        for c, s in kept
    )
    signals = tuple(name for name, found in (("dense", dense), ("bm25", sparse)) if found)
    return SearchResult(query=query, weak=weak, hits=hits, best_similarity=best, evidence=score, signals=signals)


def _evidence(store, embedder, query: str, filters, best: float | None, lock) -> tuple[float | None, dict]:
    """The weak-evidence score (``evidence.py``) of a query over the repos in scope, and
    the document counts of its words (capped)."""
    from . import evidence

    if best is None:
        return None, {}
    words = evidence.query_words(query, NOISE_WORDS | CHANGE_WORDS)
    with lock or contextlib.nullcontext():
        counts = store.term_counts(words, filters.repos, evidence.RARE_CAP)
        null = evidence.null_for(store, embedder, filters.repos)
    return evidence.evidence_score(best, null, evidence.rarest_count(counts)), counts


def _priors(ranked: list, query: str, mode: str, settings, options: RetrieveOptions,
            names: Sequence[tuple[str, ...]] = (), rare: Sequence[str] = ()) -> list:
    """The ranking levers after fusion (``rank``): file and definition evidence, name
    match, the bonus of definitions the query names (``names``), kind and role priors."""
    bonus = options.symbol_bonus if names else 0.0
    if options.file_weight or options.name_weight or options.def_weight or bonus:
        if mode != "hybrid":  # raw cosine or BM25 scores: bonuses are in rank units
            ranked = [(p, 1.0 / (settings.rrf_k + i)) for i, (p, _) in enumerate(ranked, 1)]
        unit = 1.0 if mode == "hybrid" and settings.fusion == "weighted" else 1.0 / (settings.rrf_k + 1)
        if options.file_weight:
            ranked = rank.apply_file_evidence(ranked, lambda p: p.path, weight=options.file_weight, unit=unit,
                                              rrf_k=settings.rrf_k)
        if options.def_weight:
            ranked = rank.apply_file_evidence(ranked, _def_key, weight=options.def_weight, unit=unit,
                                              rrf_k=settings.rrf_k)
        if options.name_weight:
            ranked = rank.apply_name_match(ranked, lambda p: p.symbol, query, weight=options.name_weight,
                                           unit=unit, noise=NOISE_WORDS)
        if bonus:
            ranked = sorted(((p, s + bonus * unit * names_definition(p.path, p.symbol, names)) for p, s in ranked),
                            key=lambda ps: -ps[1])
    if options.kind_prior:
        ranked = rank.apply_kind_prior(ranked, lambda p: p.kind)
    if options.role_prior:
        weights = rank.ROLE_WEIGHTS if options.role_scale is None else \
            {r: (1.0 if r == "source" else options.role_scale) for r in rank.ROLE_WEIGHTS}
        ranked = rank.apply_role_prior(ranked, lambda p: p.role, query, weights, rare=rare,
                                       text_of=lambda p: p.path + "\n" + p.text)
    return ranked


def _locked(lock, fn, *args):
    with lock or contextlib.nullcontext():
        return fn(*args)


def _def_key(p: Piece) -> str:
    """Pieces of one definition share a key; anything else is its own group."""
    if p.symbol and not p.symbol.startswith("<") and p.kind in SPLIT_KINDS:
        return f"{p.path}\0{p.symbol}"
    return f"{p.path}\0{p.start_line}"


def _rank(dense, sparse, mode: str, settings):
    by_id = {c.id: c for c in [*sparse, *dense]}
    if mode == "dense":
        return [(c, c.score) for c in dense]
    if mode == "bm25":
        return [(c, c.score) for c in sparse]
    if settings.fusion == "weighted":
        w = settings.dense_weight
        fused = weighted([[(c.id, c.score) for c in dense], [(c.id, c.score) for c in sparse]], [w, 1 - w])
    else:
        w = settings.dense_weight
        fused = rrf([[c.id for c in dense], [c.id for c in sparse]], k=settings.rrf_k,
                    weights=[2 * w, 2 * (1 - w)])
    return [(by_id[i], s) for i, s in fused]
