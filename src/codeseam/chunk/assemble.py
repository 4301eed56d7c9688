"""From packed segments to ``Chunk`` records: text, lines, symbol, kind, header.

Symbol and kind of a chunk:

- a whole definition that fills at least half the chunk names it (``Class.method``);
- else the scope most of its bytes belong to: a split function (``kind`` function or
  method: a piece packed statement by statement), a split class (``header`` when the
  chunk holds its opening line, else ``class``), a section, or the module
  (``<module>``, kind ``module``);
- markdown and data files use ``section``; windows use ``window`` with no symbol.

When a chunk starts inside a definition (a continuation piece), the definition's
signature (decorators included) goes into the header of ``indexed_text``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..records import Chunk
from .budget import Budget
from .definitions import Def
from .header import MAX_DEFINES, FileWords, HeaderFitter, HeaderParts, indexed_text
from .pack import Segment

MODULE = "<module>"


@dataclass(slots=True)
class FileInfo:
    path: str
    language: str  # the label stored on chunks
    imports: list[str]
    doc: bool  # markdown / data file: kinds are sections
    window: bool = False  # line windows: kind window, no symbol


def _resolve(seg: Segment, total: int, info: FileInfo) -> tuple[str, str, str, list[Def], Def | None]:
    """``(symbol, kind, parent, defs, context)`` of one chunk."""
    best: Def | None = None
    best_bytes = 0
    defs: list[Def] = []
    owners: dict[int, list] = {}
    for u in seg:
        n = u.end - u.start
        w = u.whole
        if w is not None:
            defs.append(w)
            if n > best_bytes:
                best, best_bytes = w, n
        key = id(u.owner)
        slot = owners.get(key)
        if slot is None:
            owners[key] = [u.owner, n]
        else:
            slot[1] += n
    first = seg[0]
    ctx = first.owner if first.whole is None and first.owner is not None \
        and first.start > first.owner.start else None
    if best is not None and best_bytes * 2 >= total:
        kind = "section" if info.doc else best.kind
        return best.path, kind, best.parent_path, defs, ctx
    owner = max(owners.values(), key=lambda s: s[1])[0] if len(owners) > 1 else first.owner
    if owner is None:
        return MODULE, "section" if info.doc else "module", "", defs, ctx
    if info.doc or owner.kind == "section":
        kind = "section"
    elif owner.kind == "class":
        kind = "header" if any(u.start == owner.start for u in seg) else "class"
    else:
        kind = owner.kind
    return owner.path, kind, owner.parent_path, defs, ctx


def build_chunks(info: FileInfo, data: bytes, segs: list[Segment], budget: Budget) -> list[Chunk]:
    """Chunk records for packed segments (segments may overlap for the baseline)."""
    chunks: list[Chunk] = []
    fitter = HeaderFitter(budget) if budget.token_mode else None
    words = FileWords(data, [(seg[0].start, seg[-1].end) for seg in segs])
    row, row_pos = 0, 0
    for index, seg in enumerate(segs):
        a, b = seg[0].start, seg[-1].end
        raw = data[a:b]
        row += data.count(b"\n", row_pos, a)
        row_pos = a
        text = raw.decode("utf-8", "surrogatepass")
        nl = raw.count(b"\n")
        start_line = row + 1
        end_line = start_line + nl - (1 if raw.endswith(b"\n") else 0)
        if info.window:
            symbol, kind, parent, defs, ctx = "", "window", "", [], None
        else:
            symbol, kind, parent, defs, ctx = _resolve(seg, b - a, info)
        names = [symbol] if symbol and symbol != MODULE else []
        define_paths = list(dict.fromkeys(d.path for d in defs))
        if define_paths == [symbol]:
            define_paths = []  # the chunk is that one definition: nothing more to list
        names.extend(define_paths)
        parts = HeaderParts(
            path=info.path, language=info.language, kind=kind, symbol=symbol, parent=parent,
            imports=info.imports, defines=define_paths[:MAX_DEFINES],
            words=words.words(index, names), sig=ctx.sig if ctx is not None else "",
        )
        chunks.append(Chunk(
            path=info.path, language=info.language, symbol=symbol, parent=parent, kind=kind,
            start_line=start_line, end_line=end_line, text=text,
            indexed_text=indexed_text(parts, text, budget, fitter),
        ))
    return chunks
