"""Pieces of split definitions: candidates, merging adjacent ones, expanding to the whole.

A definition too big for one chunk is cut statement by statement into pieces that share
its symbol and kind (function or method). Retrieval ranks each piece alone; here:

- ``merge_pieces`` joins adjacent pieces of one definition that were *both* retrieved
  into one hit at the rank of the best one;
- ``expand_pieces`` turns a retrieved piece into the whole definition (every piece of it,
  read back from the store) when the whole is at most ``EXPAND_MAX_LINES`` lines, so a
  hit cites the function a change belongs to, not a fragment of it.

Both keep the rule every hit obeys: its text is exactly the file's lines
``start_line..end_line`` as indexed (chunks tile the file, so adjacent pieces' texts
joined in order are the file's text of their lines).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise

SPLIT_KINDS = frozenset({"function", "method"})


@dataclass(frozen=True)
class Piece:
    """A candidate chunk (or a run of adjacent ones merged): what becomes a ``Hit``."""

    repo: str
    path: str
    symbol: str
    kind: str
    language: str
    start_line: int
    end_line: int
    text: str
    role: str = "source"


def as_piece(c) -> Piece:
    """A stored chunk (``store.StoredChunk``) as a candidate."""
    return Piece(c.repo_id, c.path, c.symbol, c.kind, c.language, c.start_line, c.end_line, c.text, c.role)


def adjacent(a: Piece, b: Piece) -> bool:
    """Is ``b`` the chunk right after ``a`` in the file? Chunks cover a file exactly, so
    ``b`` starts on the line after ``a`` ends (or on the same line when ``a`` stops
    mid-line); then ``a.text + b.text`` is exactly the file's text of both."""
    if a.repo != b.repo or a.path != b.path:
        return False
    if a.text.endswith("\n"):
        return b.start_line == a.end_line + 1
    return b.start_line == a.end_line


def _joinable(a: Piece, b: Piece) -> bool:
    return (a.symbol == b.symbol and a.kind == b.kind and a.kind in SPLIT_KINDS and bool(a.symbol)
            and adjacent(a, b))


def merge_pieces(ranked: Sequence[tuple[Piece, float]]) -> list[tuple[Piece, float]]:
    """Merge candidates that are adjacent pieces of one split definition (same symbol, a
    function or method cut statement by statement) into one hit, placed at the rank of
    its best piece with that piece's score. The merged text is the pieces' texts joined
    in file order: exactly the file's lines ``start..end``. Candidates are never
    invented: only pieces that were retrieved are joined."""
    groups: dict[tuple[str, str, str], list[int]] = {}
    for i, (p, _) in enumerate(ranked):
        if p.symbol and p.kind in SPLIT_KINDS:
            groups.setdefault((p.repo, p.path, p.symbol), []).append(i)
    absorbed: dict[int, Piece] = {}  # index of a run's best piece -> the merged piece
    dropped: set[int] = set()
    for idxs in groups.values():
        if len(idxs) < 2:
            continue
        for run in _runs(sorted(idxs, key=lambda i: ranked[i][0].start_line), ranked):
            if len(run) < 2:
                continue
            pieces = [ranked[i][0] for i in run]
            best = min(run)
            absorbed[best] = _join(pieces)
            dropped.update(i for i in run if i != best)
    out = []
    for i, (p, s) in enumerate(ranked):
        if i in dropped:
            continue
        out.append((absorbed.get(i, p), s))
    return out


def _runs(order: list[int], ranked) -> list[list[int]]:
    runs: list[list[int]] = []
    for i in order:
        if runs and _joinable(ranked[runs[-1][-1]][0], ranked[i][0]):
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


def _join(pieces: Sequence[Piece]) -> Piece:
    first, last = pieces[0], pieces[-1]
    return Piece(first.repo, first.path, first.symbol, first.kind, first.language, first.start_line,
                 last.end_line, "".join(p.text for p in pieces), first.role)


EXPAND_MAX_LINES = 160  # a definition longer than this stays in pieces
EXPAND_CANDIDATES = 1  # expand pieces among the first k * EXPAND_CANDIDATES candidates


def expand_pieces(ranked: Sequence[tuple[Piece, float]], spans, texts, k: int,
                  max_lines: int = EXPAND_MAX_LINES, *, only: Collection[int] | None = None) -> list[tuple[Piece, float]]:
    """Candidates with each piece of a split definition among the first
    ``k * EXPAND_CANDIDATES`` replaced by the whole definition: the run of adjacent chunks
    around it that have its symbol and kind, or are nested in it (``symbol.inner``).
    ``spans(repo, paths)`` gives each of the repo's files' chunks in line order, without
    text (each with an ``id``), as ``{path: chunks}``; ``texts(ids)`` gives those chunks whole
    (stored chunks, in the order asked).
    A whole of more than ``max_lines`` lines, or a piece with no stored siblings, is kept
    as it is. Scores and order are kept; the pieces a whole absorbed are left for
    ``dedupe`` to drop. ``only``: the positions among those to consider (default: all)."""
    head = list(ranked[: k * EXPAND_CANDIDATES])
    wanted = set(range(len(head))) if only is None else set(only)
    files = {(p.repo, p.path) for i, (p, _) in enumerate(head) if i in wanted and p.symbol and p.kind in SPLIT_KINDS}
    if not files:
        return list(ranked)
    layout: dict[tuple[str, str], list] = {}
    for repo in sorted({r for r, _ in files}):  # one store call per repo, not per file
        paths = sorted(p for r, p in files if r == repo)
        got_spans = spans(repo, paths)
        layout.update(((repo, p), got_spans.get(p, [])) for p in paths)
    runs: dict[int, list] = {}
    for i, (p, _) in enumerate(head):
        if i in wanted and p.symbol and p.kind in SPLIT_KINDS:
            run = _run_around(p, layout[(p.repo, p.path)], max_lines)
            if run:
                runs[i] = run
    if not runs:
        return list(ranked)
    got = {c.id: as_piece(c) for c in texts(list(dict.fromkeys(c.id for run in runs.values() for c in run)))}
    out = []
    for i, (p, s) in enumerate(head):
        run = runs.get(i)
        found = [got.get(c.id) for c in run] if run else []
        parts = [x for x in found if x is not None]  # all of them, or the file changed in between
        if parts and len(parts) == len(found) and all(adjacent(a, b) for a, b in pairwise(parts)):
            out.append((replace(_join(parts), symbol=p.symbol, kind=p.kind, role=p.role), s))
        else:
            out.append((p, s))  # not whole, or the file changed between the two reads
    return out + list(ranked[len(head):])


def _run_around(p: Piece, layout: list, max_lines: int) -> list | None:
    """The chunks (of ``layout``, in line order) of ``p``'s whole definition, when it is
    split into more than ``p`` and at most ``max_lines`` long; else None."""
    inner = p.symbol + "."
    member = [(c.symbol == p.symbol and c.kind == p.kind) or c.symbol.startswith(inner) for c in layout]
    at = next((i for i, c in enumerate(layout) if c.start_line <= p.start_line <= c.end_line), None)
    if at is None or not member[at]:
        return None
    lo = hi = at
    while lo > 0 and member[lo - 1] and _follows(layout[lo - 1], layout[lo]):
        lo -= 1
    while hi + 1 < len(layout) and member[hi + 1] and _follows(layout[hi], layout[hi + 1]):
        hi += 1
    first, last = layout[lo], layout[hi]
    if (first.start_line, last.end_line) == (p.start_line, p.end_line) or lo == hi:
        return None  # already whole
    if last.end_line - first.start_line + 1 > max_lines:
        return None
    return layout[lo:hi + 1]


def _follows(a, b) -> bool:
    """``b`` starts where ``a`` ends (the next line, or the same line when ``a`` stops
    mid-line: ``adjacent`` checks that on the texts once they are read)."""
    return b.start_line in (a.end_line, a.end_line + 1)
