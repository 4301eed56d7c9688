"""Retrieval for an issue-sized question (``issue.is_issue``): a pasted report or stack trace.

The same signals and stack as ``retrieve``, fed by the issue's analysis (``issue.py``) instead
of its raw text:

- BM25 gets ``issue.bm25_text`` (the title twice, the code names, the error lines, each other
  content word once), not the whole text, so an issue's common words do not outvote its names;
- the dense signal embeds each of ``issue.passages`` (each within the model's window) and keeps,
  per chunk, its best similarity over them: the part that names the failing routine is read even
  when it comes after the first 256 word pieces;
- traceback frames in files the index holds are direct evidence (``FRAME_WEIGHT``): the chunk
  that holds the frame's line, or its routine, gains a bonus (less in vendored code or tests);
- file names the issue says (``fitsrec.py``) are the lever ``file_names`` of the stack;
- no role is asked for in words: "test", "docs" and "fixture" are an issue's vocabulary, not a
  request for tests (``--role`` still filters).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from . import rank
from . import retrieve as base
from .analysis import QueryInfo
from .evidence import COVERAGE_TOP, agreement, covered_score, far_threshold, is_weak, lexical_weak, weak_threshold
from .fusion import dedupe
from .intent import language
from .issue import IssueText, bm25_text, parse_issue, passages, resolve_frames
from .pieces import as_piece, merge_pieces

FRAME_WEIGHT = 1.0  # a frame's chunk gains FRAME_WEIGHT * U (times its role's weight)
MAX_FRAMES = 8
NAMES = 8  # the issue's most mentioned code names looked up as declarations
# An issue describes a behaviour (what goes wrong: ``intent.intent`` says so of all 21 swe-dev
# issues): its hits are ranked as a behaviour's (routines before module, header and class
# chunks; a file's later chunks not pushed down), and its files as a topic's (the file-level
# levers: a file with several good candidates is likelier the one to open)
INTENT = "behaviour"
FILE_INTENT = "topic"


def retrieve_issue(store, embedder, settings, query: str, filters, k: int, *, mode: str = "hybrid", lock=None,
                   options: base.RetrieveOptions = base.DEFAULT_OPTIONS, scope: Sequence[str] = (),
                   files: bool = False):
    """``retrieve`` for an issue-sized ``query`` (see the module's doc); the same result shape."""
    from ..records import Hit, SearchResult

    depth = max(options.depth or base.DEPTH, k)
    issue = parse_issue(query)
    text = bm25_text(issue)
    texts = passages(issue) or (query[:900],)
    repos = tuple(filters.repos or scope)
    with lock or contextlib.nullcontext():
        sparse_job = base._background(store.bm25_search, text, depth, filters) if mode != "dense" else None
        evidence_job = base._background(base._evidence_inputs, store, embedder, _evidence_text(issue), filters)
        frames_job = base._background(_frame_chunks, store, issue, repos) if issue.frames else None
        try:
            dense = _dense(store, embedder, texts, depth, filters)
        finally:
            sparse = sparse_job.result() if sparse_job else []
            null, counts = evidence_job.result()
            framed = frames_job.result() if frames_job else []
    words = list(counts)  # the title's and the code names' words, whatever the dense list holds
    best = max((c.score for c in dense), default=None)
    score0, counts = base._evidence(best, null, counts)
    if is_weak(score0, far_threshold(settings, embedder.id)) and options.weak_dense_weight is not None:
        settings = settings.replace(dense_weight=options.weak_dense_weight)
    fused = _frame_evidence([(as_piece(c), s) for c, s in base._rank(dense, sparse, mode, settings)], framed, mode,
                            settings)
    kept = _ranked(fused, issue, INTENT, mode, settings, options)
    agree = agreement(((c.repo_id, c.path) for c in dense), ((c.repo_id, c.path) for c in sparse))
    score = covered_score(score0, list(counts), (p.path + "\n" + p.text for p, _ in kept[:COVERAGE_TOP]),
                          embedder.id, agree=agree)
    weak = is_weak(score, weak_threshold(settings, embedder.id, language(issue.title or query[:400])))
    if best is None and mode != "dense":  # no vector in scope (keyword-only, or not embedded yet)
        weak = lexical_weak(words, (p.path + "\n" + p.text for p, _ in kept[:COVERAGE_TOP]))
    ranked_files = None
    if files:
        from .files import rank_files

        ranked_files = rank_files(_ranked(fused, issue, FILE_INTENT, mode, settings, options), k)
    if options.expand:
        kept = base._expand(kept, store, lock, max(options.expand_head or 0, k))
    hits = tuple(Hit(c.repo, c.path, c.symbol, c.kind, c.language, c.start_line, c.end_line, float(s), c.text, c.role)
                 for c, s in kept[:k])
    signals = tuple(name for name, found in (("dense", dense), ("bm25", sparse)) if found)
    return SearchResult(query=query, weak=weak, hits=hits, best_similarity=best, evidence=score, signals=signals,
                        files=ranked_files)


def _ranked(fused: list, issue: IssueText, intent: str, mode: str, settings, options: base.RetrieveOptions) -> list:
    """The fused candidates through the priors and the stack as a query of ``intent`` would go,
    merged and de-duplicated (saturated when that intent spreads a list over files)."""
    info = QueryInfo(issue.title, False, issue.identifiers[:NAMES], _title_words(issue.title), intent,
                     issue.files, "")
    ranked = base._priors(fused, "", mode, settings, options, (), (), info.intent)
    spread = base._spreads(info, options)
    ranked = base._stack(ranked, info, options, spread)
    if options.merge:
        ranked = merge_pieces(ranked)
    kept = dedupe(ranked, base._span)
    if spread and options.saturation < 1.0:
        from . import stack

        kept = stack.saturate(kept, lambda p: p.path, decay=options.saturation, free=options.saturation_free)
    return kept


def _dense(store, embedder, texts: Sequence[str], depth: int, filters) -> list:
    """Each passage's nearest chunks; per chunk its best similarity over the passages."""
    best: dict[str, object] = {}
    for t in texts:
        for c in store.dense_search(embedder.embed_query(within_window(embedder, t)), depth, filters):
            had = best.get(c.id)
            if had is None or c.score > had.score:  # type: ignore[attr-defined]
                best[c.id] = c
    return sorted(best.values(), key=lambda c: -c.score)[:depth]  # type: ignore[attr-defined]


def within_window(embedder, text: str) -> str:
    """``text`` cut (at a space) to what the model reads: a passage of code holds more word
    pieces than its length in characters suggests, and a cut passage is no news to log."""
    limit = getattr(embedder, "max_tokens", None)
    for _ in range(4):
        if not limit or len(text) <= limit:  # a token is at least one character
            return text
        n = embedder.count_tokens(text)
        if n <= limit:
            return text
        keep = max(1, int(len(text) * limit / n * 0.95))
        cut = text.rfind(" ", 0, keep)
        text = text[:cut if cut > keep // 2 else keep]
    return text


def _evidence_text(issue: IssueText) -> str:
    """The words the weak-evidence score counts: the title and the issue's code names."""
    return " ".join([issue.title, *issue.identifiers[:NAMES]])


def _title_words(title: str) -> tuple[str, ...]:
    from .analysis import PATH_STOP, _WORD

    return tuple(dict.fromkeys(w.lower() for w in _WORD.findall(title) if len(w) > 2 and w.lower() not in PATH_STOP))


def _frame_chunks(store, issue: IssueText, repos: Sequence[str]) -> list:
    """The chunks the issue's traceback frames point at, innermost frame first: in each frame's
    file (resolved against the index's paths), the chunk that holds its line when the line is in
    the file, else the chunk of its routine."""
    out: list = []
    seen: set[str] = set()
    for repo in repos:
        paths = list(store.file_entries(repo))
        resolved = resolve_frames(issue.frames, paths)[:MAX_FRAMES]
        if not resolved:
            continue
        layouts = store.chunk_spans(repo, [p for p, _ in resolved])
        ids = []
        for path, frame in resolved:
            spans = layouts.get(path, [])
            pick = None
            if frame.function:
                pick = next((s for s in spans if s.symbol and s.symbol.rsplit(".", 1)[-1] == frame.function), None)
            if pick is None and frame.line is not None:
                pick = next((s for s in spans if s.start_line <= frame.line <= s.end_line), None)
            if pick is not None and pick.id not in seen:
                seen.add(pick.id)
                ids.append(pick.id)
        out.extend(store.chunks_by_ids(ids))
    return out


def _frame_evidence(ranked: list, framed: list, mode: str, settings) -> list:
    """Each frame chunk gains ``FRAME_WEIGHT * U`` times its file role's weight (``U``: a first place
    in one list): a frame in vendored code (``requests/packages/urllib3``) or a test says less
    about where the project's fix goes than a frame in its source."""
    if not framed:
        return ranked
    if mode != "hybrid":
        ranked = [(p, 1.0 / (settings.rrf_k + i)) for i, (p, _) in enumerate(ranked, 1)]
    unit = 1.0 if mode == "hybrid" and settings.fusion == "weighted" else 1.0 / (settings.rrf_k + 1)
    bonus: dict[tuple[str, str, int], float] = {}
    for c in framed:  # the project's own frames alike: the fix may be in any of them
        bonus.setdefault((c.repo_id, c.path, c.start_line), FRAME_WEIGHT * unit * rank.ROLE_WEIGHTS.get(c.role, 1.0))
    have = {(p.repo, p.path, p.start_line) for p, _ in ranked}
    ranked = ranked + [(as_piece(c), 0.0) for c in framed if (c.repo_id, c.path, c.start_line) not in have]
    return sorted(((p, s + bonus.get((p.repo, p.path, p.start_line), 0.0)) for p, s in ranked),
                  key=lambda ps: -ps[1])
