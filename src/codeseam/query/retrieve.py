"""Retrieval: one query through both signals, fusion, the ranking levers, pieces, top k.

``retrieve`` embeds the query, asks the store for dense and BM25 candidates, decides the weak
flag (``evidence``), fuses (``fusion``), applies the levers its ``RetrieveOptions`` switch on
(``rank``, ``analysis.query_names``), merges and expands pieces of split definitions
(``pieces``), drops overlapping spans and keeps the top k.

Weak evidence
    A result is *weak* when the evidence score (``evidence.py``) is below the embedder's
    calibrated threshold: the index holds nothing close to the query, so ``ask`` abstains
    instead of guessing. A result far from the query (the score without its last term, which
    reads the first results and so is known only after ranking) is also fused with less weight
    on the dense list (``WEAK_DENSE_WEIGHT``). Without any dense similarity (no vector in
    scope: a keyword-only repo, or one whose vectors are still being written) the flag is
    ``evidence.lexical_weak``: BM25's first results must hold most of the query's words.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from . import rank, stack
from .analysis import (NOISE_WORDS, analyze, bm25_query, is_lookup, names_definition, project_words, query_names,
                       strip_noise)
from .evidence import COVERAGE_TOP, agreement, covered_score, far_threshold, is_weak, lexical_weak, weak_threshold
from .fusion import dedupe, rrf, weighted
from .intent import is_change, language
from .pieces import SPLIT_KINDS, Piece, as_piece, expand_pieces, merge_pieces
from .rank import CHANGE_WORDS, RARE_WORD

MODES = ("hybrid", "dense", "bm25")
DEPTH = 80  # candidates per signal (dense, BM25): fixed, so a page does not depend on k

# Dense weight for fusion when the result is weak: the dense model found nothing close to the
# query (a language it was not trained on, or nothing relevant indexed), so its ranking says
# little and BM25's exact words count more. Measured in bench/results/eval.md (lever +wk0.5).
WEAK_DENSE_WEIGHT = 0.25


@dataclass(frozen=True)
class RetrieveOptions:
    """How ``retrieve`` ranks, beyond the settings (the eval measures each choice, one at a
    time, on all three dev sets: bench/bench_rank.py, bench/results/rank-ablation.md).

    Candidates: ``depth`` per signal (None: ``DEPTH``, at least k: never k-dependent below k).
    BM25 query: ``split_query`` adds identifier splits, ``strip_noise`` drops question words,
    ``strip_change`` drops the change words of a change description (``rank.CHANGE_WORDS``,
    ``intent.is_change``), ``forms`` adds each word's other forms (``analysis.with_forms``).
    Fusion: ``weak_dense_weight`` is the dense weight when the result is weak. Priors after
    fusion: ``def_weight`` (pieces of one definition ranked together), ``symbols_first`` /
    ``symbol_bonus`` (definitions the query names: first in a lookup, a bonus elsewhere;
    ``package_names``: ``assert.Contains`` also names ``Contains`` in ``assert/``),
    ``kind_prior`` (``behaviour_kinds``: for a description of one behaviour, chunks that are
    not one routine weigh this much of their kind weight), ``role_prior`` (``rare_exempt``: when every query word the index holds is
    rare, or held by one file's candidates only, a non-source candidate holding one that no
    source candidate holds keeps its score: a name only a test or a doc page has). The stack: ``decl_weight`` (declarations of a looked-up name; with
    ``decl_fetch`` also found by symbol in the store; for the intents in ``decl_levers``: a
    behaviour's named type is where it happens, its routine is what it is), ``path_weight`` (query words naming the
    file or folder, earlier words weighing more: ``path_decay``; for the intents in
    ``path_levers``), ``named_file`` (a code name in a question that is a file's name:
    ``ManageHook`` -> ``ManageHook.hs``), ``file_names`` (a file the query names with its
    extension, any intent: ``framework.dart``), ``scope_weight`` (a behaviour's closing "in bash":
    the path match on that word alone), ``legacy`` (older copies),
    ``coherence`` and ``saturation`` / ``saturation_free`` (file-level: for the intents in
    ``file_levers``). Pieces: ``merge`` joins adjacent retrieved pieces, ``expand`` turns a piece
    among the first k (or ``expand_head``, when more) into its whole definition.
    """

    depth: int | None = None  # None: DEPTH (at least k), the same for every k
    split_query: bool = True
    merge: bool = True
    symbols_first: bool = True
    symbol_bonus: float | None = 1.0
    package_names: bool = True  # a qualified name also names a definition through its folder (Go's assert.Contains)
    expand: bool = True
    strip_noise: bool = True
    strip_change: bool = True  # rank.CHANGE_WORDS out of a change description's BM25 query (intent.is_change)
    weak_dense_weight: float | None = WEAK_DENSE_WEIGHT
    role_prior: bool = True
    def_weight: float = 0.5
    kind_prior: bool = True
    behaviour_kinds: float = rank.BEHAVIOUR_KIND_WEIGHT  # a behaviour query: module, header and class chunks weigh this share of their kind weight
    # issue 20 levers (each measured alone on the three dev sets; see bench/bench_rank.py)
    expand_head: int | None = None  # candidates whose pieces may be expanded (None: k; at least k)
    saturation: float = 0.5  # a file's n-th candidate past ``saturation_free`` counts saturation**n
    saturation_free: int = 1
    coherence: float = 0.1  # each file's best candidate gains coherence * top * file share
    path_weight: float = 0.5  # query words naming the file or folder: path_weight * top * share
    path_singular: bool = True  # a plural file or folder name also counts without its s (utils: utility)
    path_decay: float = 0.5  # in that share the i-th query word weighs 1 / (1 + path_decay * i): the subject first
    decl_weight: float = 1.0  # a declaration of the name a query looks up: decl_weight * top * tier
    decl_fetch: bool = True  # for a one-name query, also fetch its declarations by symbol from the store
    named_file: float = 0.3  # a topic query's code name that is a file's name: that file's best candidate gains named_file * top
    file_names: float = 1.0  # a file the query names with its extension (framework.dart): its best candidate gains file_names * top
    legacy: float = 0.5  # older copies (deprecated/, compat/, v3/ beside v4/) weigh this much
    file_levers: str = "topic+symbol"  # which intents get coherence and saturation: all, topic, or topic+symbol
    path_levers: str = "topic+symbol"  # which intents get the path match: all, or topic+symbol
    decl_levers: str = "topic+symbol"  # which intents get the declaration boost: all, or topic+symbol
    scope_weight: float = 0.5  # a behaviour's closing "in bash" / "for blueprints": files named so gain scope_weight * top
    project_words: bool = True  # the searched repository's name out of the BM25 query and the path match
    forms: bool = True  # the BM25 query carries each word twice and its other forms once (analysis.with_forms)
    rare_exempt: bool = True  # when every word the index holds is rare, a non-source candidate holding one no source holds keeps its score


DEFAULT_OPTIONS = RetrieveOptions()


def retrieve(store, embedder, settings, query: str, filters, k: int, *, mode: str = "hybrid",
             lock=None, options: RetrieveOptions = DEFAULT_OPTIONS, scope: Sequence[str] = (), files: bool = False):
    """Dense and/or BM25 retrieval from the one collection, fused, de-duplicated, top k.
    ``scope``: the repositories searched when ``filters.repos`` is empty (every indexed one).
    ``files``: the result also ranks files (``files.rank_files``). An issue-sized query (a pasted
    report or trace) is ``retrieve_issue``'s (``search`` chooses)."""
    from ..records import Hit, SearchResult

    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    depth = max(options.depth or DEPTH, k)  # never k-dependent below k: the first page is the same for any k
    info = analyze(query)
    project = project_words(filters.repos or scope) if options.project_words else frozenset()
    if project:
        info = dataclasses.replace(info, words=tuple(w for w in info.words if w not in project),
                                   scope="" if info.scope in project else info.scope)
    if options.strip_noise:
        text = strip_noise(query, (CHANGE_WORDS if options.strip_change and is_change(query) else frozenset()) | project)
    else:
        text = query
    text = bm25_query(text) if options.split_query else text
    if options.forms:
        from .analysis import with_forms

        text = with_forms(text)
    fetch = options.decl_fetch and options.decl_weight and info.symbol  # a lookup: one name
    with lock or contextlib.nullcontext():
        # the store answers BM25 and the declarations (in its own process, for Lite) while this
        # process embeds the query: a search costs the longer of the two, not their sum
        sparse_job = _background(store.bm25_search, text, depth, filters) if mode != "dense" else None
        decls_job = _background(store.definitions, info.names, filters) if fetch else None
        evidence_job = _background(_evidence_inputs, store, embedder, query, filters)
        try:
            qvec = embedder.embed_query(query)
            dense = store.dense_search(qvec, depth, filters)
        finally:
            sparse = sparse_job.result() if sparse_job else []
            decls = decls_job.result() if decls_job else []
            null, counts = evidence_job.result()
    words = list(counts)  # the query's words, whatever the dense list holds
    best = max((c.score for c in dense), default=None)
    base, counts = _evidence(best, null, counts)
    # the dense list counts less when it found nothing close, whatever the query's language (a
    # Turkish query's dense ranking is no more reliable for not being flagged)
    far = is_weak(base, far_threshold(settings, embedder.id))
    if far and options.weak_dense_weight is not None:
        settings = settings.replace(dense_weight=options.weak_dense_weight)
    ranked = [(as_piece(c), s) for c, s in _rank(dense, sparse, mode, settings)]
    if decls:
        seen = {(p.path, p.start_line) for p, _ in ranked}
        ranked += [(as_piece(c), 0.0) for c in decls if (c.path, c.start_line) not in seen]
    names = query_names(query) if options.symbols_first else []
    hard = bool(names) and (options.symbol_bonus is None or is_lookup(query))
    # the exemption of the role prior: only when every word of the query that the index holds
    # is rare, the query is about what only a test or a doc page may hold (a name, a marker); a
    # rare word beside common ones ("fix hang on revalidated cached responses") is not
    held = [c for c in counts.values() if c > 0]
    one_file = _one_file_words(ranked, [w for w, c in counts.items() if c > RARE_WORD])
    rare = [w for w, c in counts.items() if 0 < c <= RARE_WORD or w in one_file]
    rare = rare if held and len(rare) == len(held) else []
    ranked = _priors(ranked, query, mode, settings, options, [] if hard else names, rare, info.intent)
    spread = _spreads(info, options)
    ranked = _stack(ranked, info, options, spread)
    if hard:
        ranked = sorted(ranked, key=lambda ps: not names_definition(ps[0].path, ps[0].symbol, names,
                                                                    options.package_names))
    if options.merge:
        ranked = merge_pieces(ranked)
    kept = dedupe(ranked, _span)
    if spread and options.saturation < 1.0:
        kept = stack.saturate(kept, lambda p: p.path, decay=options.saturation, free=options.saturation_free)
    # the first results before expansion: the same for every k
    agree = agreement(((c.repo_id, c.path) for c in dense), ((c.repo_id, c.path) for c in sparse))
    score = covered_score(base, list(counts), (p.path + "\n" + p.text for p, _ in kept[:COVERAGE_TOP]), embedder.id,
                          agree=agree)
    weak = is_weak(score, weak_threshold(settings, embedder.id, language(query)))
    if best is None and mode != "dense":  # no vector in scope (keyword-only, or not embedded yet)
        weak = lexical_weak(words, (p.path + "\n" + p.text for p, _ in kept[:COVERAGE_TOP]))
    ranked_files = None
    if files:
        from .files import rank_files

        ranked_files = rank_files(kept, k)
    if options.expand:
        kept = _expand(kept, store, lock, max(options.expand_head or 0, k))
    hits = tuple(
        Hit(c.repo, c.path, c.symbol, c.kind, c.language, c.start_line, c.end_line, float(s), c.text, c.role)
        for c, s in kept[:k]
    )
    signals = tuple(name for name, found in (("dense", dense), ("bm25", sparse)) if found)
    return SearchResult(query=query, weak=weak, hits=hits, best_similarity=best, evidence=score, signals=signals,
                        files=ranked_files)


def _spreads(info, options: RetrieveOptions) -> bool:
    """Do the file-level levers (coherence, saturation) apply to this query's intent?"""
    if options.file_levers == "all":
        return True
    return info.intent == "topic" or (info.intent == "symbol" and options.file_levers == "topic+symbol")


def _expand(kept: list, store, lock, head: int) -> list:
    """Each piece among the first ``head`` becomes its whole definition, on the final order.
    A whole drops what it absorbed (``dedupe``), which lets later candidates into the first
    ``head``: those are expanded in turn, so the first ``head`` never depend on how many
    candidates came after them, and the first j <= k hits are the same for every k (expanding
    a later piece only drops what ranks after it). The files' chunk layouts are read once."""
    layouts: dict[tuple[str, str], list] = {}

    def spans(repo: str, paths: list[str]) -> dict[str, list]:
        missing = [p for p in paths if (repo, p) not in layouts]
        if missing:
            got = _locked(lock, store.chunk_spans, repo, missing)
            layouts.update(((repo, p), got.get(p, [])) for p in missing)
        return {p: layouts[(repo, p)] for p in paths}

    seen: set[tuple[str, str, int, int]] = set()
    while True:
        todo = [i for i, (p, _) in enumerate(kept[:head]) if (p.repo, p.path, p.start_line, p.end_line) not in seen]
        if not todo:
            return kept
        seen.update((p.repo, p.path, p.start_line, p.end_line) for p, _ in kept[:head])
        kept = dedupe(expand_pieces(kept, spans, lambda ids: _locked(lock, store.chunks_by_ids, ids), head,
                                    only=todo), _span)


def _one_file_words(ranked: list, words: list[str]) -> set[str]:
    """The ``words`` that only one file's candidates hold (in their text): as good as rare for
    the role prior's exemption (a word all of one JSON file's chunks carry in their header)."""
    if not words:
        return set()
    files: dict[str, set[str]] = {w: set() for w in words}
    for p, _ in ranked:
        low = p.text.lower()  # once per candidate, not once per word
        for w in words:
            if w in low:
                files[w].add(p.path)
    return {w for w, fs in files.items() if len(fs) == 1}


def _span(pair) -> Piece:
    """A ranked pair's span: its piece has the path and lines ``dedupe`` reads (no copy made)."""
    return pair[0]


def _stack(ranked: list, info, options: RetrieveOptions, spread: bool = True) -> list:
    """The issue-20 levers after the priors: declarations of a looked-up name, file and folder
    names the query says, older copies, file coherence."""
    ranked = _boosts(ranked, info, options)
    if options.legacy < 1.0:
        ranked = stack.apply_legacy_prior(ranked, lambda p: p.path, weight=options.legacy)
    if options.coherence and spread:
        ranked = stack.boost_file_coherence(ranked, lambda p: p.path, frac=options.coherence)
    return ranked


def _boosts(ranked: list, info, options: RetrieveOptions) -> list:
    """Declarations of a looked-up name, file and folder names the query says, and files
    named after a code name the question says."""
    if options.decl_weight and info.names and (options.decl_levers == "all" or info.intent != "behaviour"):
        def tier(p: Piece) -> float:
            last = p.symbol.rsplit(".", 1)[-1] if p.symbol else ""
            if last not in info.names:
                return 0.0
            t = max(stack.declaration_tier(p.text, n) for n in info.names)
            stem = stack.file_stem(p.path).lower()
            bonus = 1.5 if any(stem == n.lower() or stem.replace("_", "") == n.lower() for n in info.names) else 1.0
            scale = 1.0 if info.symbol else 0.5
            return t * bonus * scale * _role_weight(p)  # a test double declares nothing
        ranked = stack.boost_declarations(ranked, tier, weight=options.decl_weight)
    if options.path_weight and info.words and (options.path_levers == "all" or info.intent != "behaviour"):
        ranked = stack.boost_path_match(ranked, lambda p: p.path, info.words, weight=options.path_weight,
                                       decay=options.path_decay, singular=options.path_singular)
    if options.scope_weight and info.scope:  # a behaviour's "... in bash": the path match on that word alone
        ranked = stack.boost_path_match(ranked, lambda p: p.path, (info.scope,), weight=options.scope_weight,
                                       singular=options.path_singular)
    if options.named_file and info.names and info.intent == "topic":
        keys = frozenset(stack.name_key(n) for n in info.names)
        ranked = stack.boost_named_files(ranked, lambda p: p.path, _role_weight, keys, weight=options.named_file)
    if options.file_names and info.files:
        ranked = stack.boost_named_files(ranked, lambda p: p.path, _role_weight, frozenset(info.files),
                                        weight=options.file_names, key=stack.file_name_key)
    return ranked


def _role_weight(p: Piece) -> float:
    """The weight of a piece's file role (``rank.ROLE_WEIGHTS``; unknown roles 1.0)."""
    return rank.ROLE_WEIGHTS.get(p.role, 1.0)


def _evidence_inputs(store, embedder, query: str, filters) -> tuple[float, dict]:
    """What the weak-evidence score needs besides the best dense similarity: the null
    similarity of the repos in scope and the document counts of the query's words (capped).
    Neither depends on the query's vector, so ``retrieve`` reads them while it embeds."""
    from . import evidence

    words = evidence.query_words(query, NOISE_WORDS | CHANGE_WORDS)
    counts = store.term_counts(words, filters.repos, evidence.RARE_CAP)
    return evidence.null_for(store, embedder, filters.repos), counts


def _evidence(best: float | None, null: float, counts: dict) -> tuple[float | None, dict]:
    """The weak-evidence score (``evidence.py``) and the word counts it used; no score (and
    no counts) without a dense similarity."""
    from . import evidence

    if best is None:
        return None, {}
    return evidence.evidence_score(best, null, evidence.rarest_count(counts)), counts


def _priors(ranked: list, query: str, mode: str, settings, options: RetrieveOptions,
            names: Sequence[tuple[str, ...]] = (), rare: Sequence[str] = (), intent: str = "topic") -> list:
    """The ranking levers after fusion (``rank``): file and definition evidence, name
    match, the bonus of definitions the query names (``names``), kind and role priors."""
    bonus = options.symbol_bonus if names else 0.0
    if options.def_weight or bonus:
        if mode != "hybrid":  # raw cosine or BM25 scores: bonuses are in rank units
            ranked = [(p, 1.0 / (settings.rrf_k + i)) for i, (p, _) in enumerate(ranked, 1)]
        unit = 1.0 if mode == "hybrid" and settings.fusion == "weighted" else 1.0 / (settings.rrf_k + 1)
        if options.def_weight:
            ranked = rank.apply_group_evidence(ranked, _def_key, weight=options.def_weight, unit=unit,
                                               rrf_k=settings.rrf_k)
        if bonus:
            ranked = sorted(((p, s + bonus * unit * names_definition(p.path, p.symbol, names, options.package_names))
                             for p, s in ranked),
                            key=lambda ps: -ps[1])
    if options.kind_prior:
        ranked = rank.apply_kind_prior(ranked, lambda p: p.kind, rank.kind_weights(intent, options.behaviour_kinds))
    if options.role_prior:
        ranked = rank.apply_role_prior(ranked, lambda p: p.role, query, rare=rare if options.rare_exempt else (),
                                       text_of=lambda p: p.path + "\n" + p.text)
    return ranked


_POOL = None


def _background(fn, *args):
    """``fn(*args)`` on a small shared thread pool (the store's client is thread-safe)."""
    global _POOL
    if _POOL is None:
        from concurrent.futures import ThreadPoolExecutor

        _POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="codeseam-query")
    return _POOL.submit(fn, *args)


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

