"""Query side: retrieval per signal, fusion, de-duplication and the weak-evidence note.

Pure hearts: ``rrf``, ``weighted``, ``dedupe``, ``bm25_query``, ``is_weak``. ``retrieve`` runs
them over a store and an embedder.

Fusion
    ``rrf``: reciprocal rank fusion, ``score(d) = sum_i w_i / (rrf_k + rank_i(d))`` with
    1-based ranks; a document missing from a list contributes nothing from it.
    ``weighted``: each list's scores are min-max normalised to 0..1 (a list with one
    distinct score maps to 1.0), then ``w_dense * dense + (1 - w_dense) * bm25``.
    Ties break by the order of first appearance (dense list first), so results are stable.

Weak evidence
    A result is *weak* when the best dense cosine similarity among the retrieved chunks is
    below the embedder's calibrated threshold: the index holds nothing close to the query,
    so ``ask`` abstains instead of guessing. A weak result is also fused with less weight on
    the dense list (``WEAK_DENSE_WEIGHT``).

Ranking beyond fusion (``RetrieveOptions``, each measured by ``codeseam eval``)
    definitions the query names (``query_names``) go first; adjacent pieces of one split
    definition that are both retrieved become one hit (``merge_pieces``).
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from typing import Hashable, Iterable, Mapping, Sequence, TypeVar

from . import rank
from .rank import CHANGE_WORDS, RARE_WORD
from .pieces import SPLIT_KINDS, Piece, adjacent, as_piece, expand_pieces, merge_pieces  # noqa: F401

T = TypeVar("T", bound=Hashable)

MODES = ("hybrid", "dense", "bm25")


def rrf(rankings: Sequence[Sequence[T]], *, k: int = 60, weights: Sequence[float] | None = None) -> list[tuple[T, float]]:
    """Reciprocal rank fusion of ranked id lists, best first."""
    weights = weights or [1.0] * len(rankings)
    scores: dict[T, float] = {}
    for ranking, w in zip(rankings, weights):
        for place, doc in enumerate(ranking, start=1):
            scores[doc] = scores.get(doc, 0.0) + w / (k + place)
    return _ordered(scores, rankings)


def weighted(scored: Sequence[Sequence[tuple[T, float]]], weights: Sequence[float]) -> list[tuple[T, float]]:
    """Weighted sum of min-max normalised scores, best first."""
    scores: dict[T, float] = {}
    for lst, w in zip(scored, weights):
        if not lst:
            continue
        vals = [s for _, s in lst]
        lo, hi = min(vals), max(vals)
        for doc, s in lst:
            norm = 1.0 if hi == lo else (s - lo) / (hi - lo)
            scores[doc] = scores.get(doc, 0.0) + w * norm
    return _ordered(scores, [[d for d, _ in lst] for lst in scored])


def _ordered(scores: Mapping[T, float], rankings: Iterable[Sequence[T]]) -> list[tuple[T, float]]:
    first_seen: dict[T, int] = {}
    for ranking in rankings:
        for doc in ranking:
            first_seen.setdefault(doc, len(first_seen))
    return sorted(scores.items(), key=lambda item: (-item[1], first_seen[item[0]]))


@dataclass(frozen=True)
class Span:
    path: str
    start_line: int
    end_line: int


def dedupe(items: Sequence[T], span_of) -> list[T]:
    """Drop every item whose span overlaps a better-ranked item's span in the same file."""
    kept: list[T] = []
    taken: dict[str, list[tuple[int, int]]] = {}
    for item in items:
        s = span_of(item)
        ranges = taken.setdefault(s.path, [])
        if any(s.start_line <= e and b <= s.end_line for b, e in ranges):
            continue
        ranges.append((s.start_line, s.end_line))
        kept.append(item)
    return kept


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def bm25_query(query: str) -> str:
    """The text sent to BM25: the query plus the word splits of its identifiers
    (``parse_json`` → ``parse_json parse json``), matching the identifier splits that the
    chunker puts in ``indexed_text``."""
    from .chunk import split_identifier

    extra: list[str] = []
    for ident in _IDENT.findall(query):
        parts = split_identifier(ident)
        if len(parts) > 1:
            extra.extend(parts)
    return f"{query} {' '.join(extra)}" if extra else query


# Words that say how a question is asked, not what it is about ("where is X defined",
# "X source code", "how does X work"): English function words plus code-search boilerplate.
NOISE_WORDS = frozenset("""
a an the this that these those is are was were be been of in on at to for from with by into as and or
how does do did what where when why who whose there here it its i me my we you your please
implemented implement implementation implementations defined define definition declared declaration
source code function functions method methods class classes module modules work works working
show find look locate see
""".split())
SHORT_QUERY_WORDS = 3  # a query with at most this many content words is a lookup
_QUERY_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_CAMEL = re.compile(r"[a-z][A-Z]")


def content_words(query: str) -> list[str]:
    """The query's names and words minus ``NOISE_WORDS`` (dotted names kept whole)."""
    return [t for t in _QUERY_NAME.findall(query) if t.lower() not in NOISE_WORDS and re.search("[A-Za-z]", t)]


def identifier_shaped(token: str) -> bool:
    """Written like code, not like a word: ``parse_json``, ``getUserById``, ``a.b``,
    ``b85decode``."""
    return ("_" in token or "." in token or bool(_CAMEL.search(token))
            or (any(c.isdigit() for c in token) and any(c.isalpha() for c in token)))


def query_names(query: str) -> list[tuple[str, ...]]:
    """Definition names the query asks for, as lower-cased dotted parts: every identifier-
    shaped token, and in a short query (a lookup such as "where is ndiff defined",
    "heapq nsmallest implementation") every content word."""
    words = content_words(query)
    short = len(words) <= SHORT_QUERY_WORDS
    return list(dict.fromkeys(tuple(p.lower() for p in w.split("."))
                              for w in words if short or identifier_shaped(w)))


def names_definition(path: str, symbol: str, names: Sequence[tuple[str, ...]]) -> bool:
    """Does one of ``names`` name the definition ``symbol`` of ``path``? A name matches
    the end of the module-qualified symbol (``urllib/parse.py`` + ``urljoin`` is matched by
    ``urljoin``, ``parse.urljoin`` and ``urllib.parse.urljoin``)."""
    if not symbol or symbol.startswith("<") or not names:
        return False
    module = path.rsplit(".", 1)[0].replace("/", ".").split(".") if path else []
    full = tuple(p.lower() for p in [*module, *symbol.split(".")])
    return any(0 < len(n) <= len(full) and full[-len(n):] == n for n in names)


def strip_noise(query: str, extra: Iterable[str] = ()) -> str:
    """The query without ``NOISE_WORDS`` and ``extra`` words (unchanged when nothing else
    is left)."""
    drop = {w.lower() for w in extra}
    words = [w for w in content_words(query) if w.lower() not in drop]
    return " ".join(words) if words else query


def is_weak(score: float | None, threshold: float) -> bool:
    """Weak when there is no score (no dense hit) or it is below the threshold."""
    return score is None or score < threshold


# -- retrieval over a store ------------------------------------------------------------------

# The earlier weak-evidence signal, kept as the ``weak_signal="similarity"`` arm: thresholds
# on the best dense cosine alone, per embedder id (bench/results/eval.md).
#
# bundled:all-MiniLM-L6-v2: `python bench/bench_eval.py` (stdlib-dev, hybrid-ast, chunker
# ast-2): the balanced-accuracy threshold over 68 positives vs 12 negatives is 0.4708, the
# middle of the gap 0.4671..0.4744 between observed scores; 0.47 lies in that gap. There:
# abstain 0.833 on negatives, false-weak 0.096 on English positives, 0.294 on all positives
# (the English-only model puts 15 of 16 Turkish/German queries below it). Sensitivity in
# bench/results/eval.md (0.46: abstain 0.75; 0.50: false-weak 0.37).
SIMILARITY_THRESHOLDS: dict[str, float] = {
    "bundled:all-MiniLM-L6-v2": 0.47,
    # the int8 fast path (embed/quantize.py), stdlib-dev hybrid-ast, chunker ast-3: at 0.47 the
    # abstain rate on negatives is fp32's (0.833) and false-weak 0.309 (fp32 0.294: one query,
    # prose-33 at 0.468, drops below); the balanced-accuracy optimum moved to a sliver at 0.506
    # (gap 0.50607..0.50610), too narrow to trust, so the fp32 value is kept
    "bundled:all-MiniLM-L6-v2@int8-mm-keepffn2": 0.47,
}
# Calibrated thresholds on the evidence score (``evidence.py``), per embedder id, measured on
# both dev sets together (bench/bench_eval_repos.py, bench/results/eval-repos.md "Weak evidence"):
#
# bundled:all-MiniLM-L6-v2 (hybrid-ast defaults, 37 negatives, 221 English positives): the most
# negatives flagged with at most 14% of the English positives weak is at 0.2614 (abstain 0.784,
# false-weak 0.122); the next negative is crossed near 0.275 (abstain 0.84, false-weak on the
# commit queries 0.142). 0.265 lies between: repos-dev commit false-weak 0.124.
# The int8 path (embed/quantize.py) takes the same value: its vectors are within cosine 0.997 of
# fp32's; it was not calibrated on its own.
WEAK_THRESHOLDS: dict[str, float] = {
    "bundled:all-MiniLM-L6-v2": 0.265,
    "bundled:all-MiniLM-L6-v2@int8-mm-keepffn2": 0.265,
}
# An embedder nobody calibrated flags nothing weak (but a search with no dense hit).
UNCALIBRATED_THRESHOLD = float("-inf")
DEFAULT_WEAK_THRESHOLD = 0.0


def weak_threshold(settings, embedder_id: str, table: dict[str, float] = WEAK_THRESHOLDS,
                   default: float = UNCALIBRATED_THRESHOLD) -> float:
    """The threshold set in ``settings``, else the embedder's calibrated one in ``table``."""
    if settings.weak_threshold >= 0:
        return settings.weak_threshold
    return table.get(embedder_id, default)


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
    from .records import Hit, SearchResult

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


def is_lookup(query: str) -> bool:
    """A short query that looks a definition up ("where is ndiff defined", "bisect_left")."""
    return len(content_words(query)) <= SHORT_QUERY_WORDS


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
