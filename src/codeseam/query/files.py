"""Files as answers: the ranked chunk candidates of a search, aggregated into ranked files.

"Which files do I open?" is what a coding agent needs first. A file's score is the sum of its
candidates' scores, the i-th best counted ``FILE_DECAY ** i`` (one strong chunk beats many weak
ones; a second good chunk of the same file still adds), over every candidate the search ranked
(not only the first k hits); each file keeps its best ``FILE_SPANS`` spans, best first. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

FILE_DECAY = 0.5
FILE_SPANS = 3


def rank_files(ranked: Sequence[tuple[object, float]], k: int) -> tuple:
    """The first ``k`` files of ``ranked`` (``(piece, score)`` pairs, best first)."""
    from ..records import FileHit, FileSpan

    files: dict[tuple[str, str], list[tuple[object, float]]] = {}
    for piece, score in ranked:
        files.setdefault((piece.repo, piece.path), []).append((piece, score))  # type: ignore[attr-defined]
    scored = []
    for (repo, path), items in files.items():
        items.sort(key=lambda ps: -ps[1])
        total = sum(s * FILE_DECAY ** i for i, (_, s) in enumerate(items))
        first = items[0][0]
        spans = tuple(FileSpan(p.start_line, p.end_line, p.symbol, float(s))  # type: ignore[attr-defined]
                      for p, s in items[:FILE_SPANS])
        scored.append(FileHit(repo, path, first.language, first.role, float(total), spans))  # type: ignore[attr-defined]
    scored.sort(key=lambda f: -f.score)  # stable: ties keep the order of their best candidate
    return tuple(scored[:k])
