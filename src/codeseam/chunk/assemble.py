"""From packed segments to ``Chunk`` records: text, lines, symbol, kind, header.

Symbol and kind of a chunk:

- a whole definition that fills at least half the chunk names it (``Class.method``);
- else the scope most of its bytes belong to: a split function (``kind`` function or
  method: a piece packed statement by statement), a split class (``header`` when the
  chunk holds its opening line, else ``class``), a section, or the module
  (``<module>``, kind ``module``);
- markdown and data files use ``section``; windows use ``window`` with no symbol.

When a chunk starts inside a definition (a continuation piece), the definition's
signature (decorators included) goes into the header of ``indexed_text``. The first line
of the named definition's documentation (``doc_line``) goes there too when the chunk's
text does not hold it, and so does its parent's (the class of a method): a piece of a
long function, or a method, then carries what it belongs to in words, which dense
retrieval reads best (measured in bench/results/eval.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..records import Chunk
from .budget import Budget
from .definitions import Def
from .header import MAX_DEFINES, FileWords, HeaderFitter, HeaderParts, indexed_text
from .pack import Segment
from .vocab import is_comment_type

MODULE = "<module>"
DOC_MAX_CHARS = 160
_COMMENT_MARK = re.compile(r"^\s*(?:/{2,}!?|#+!?|--+|;+|/\*+!?|\*+/?|\(\*+|\{-+\|?|%+|@doc\s)\s?")
_STRING_QUOTES = re.compile(r"""^[rRbBuUfF]{0,2}(?:\"\"\"|'''|\"|')|(?:\"\"\"|'''|\"|')$""")


@dataclass(slots=True)
class FileInfo:
    path: str
    language: str  # the label stored on chunks
    imports: list[str]
    doc: bool  # markdown / data file: kinds are sections
    window: bool = False  # line windows: kind window, no symbol


def _first_line(raw: str, comment: bool) -> str:
    """The first line with a letter in a doc comment or docstring, markers stripped."""
    if not comment:
        raw = _STRING_QUOTES.sub("", raw.strip())
    for line in raw.split("\n"):
        line = _COMMENT_MARK.sub("", line) if comment else line
        line = line.strip().rstrip("*/").strip()
        if any(c.isalpha() for c in line):
            return line[:DOC_MAX_CHARS]
    return ""


def doc_line(d: Def) -> str:
    """First line of a definition's documentation: its leading comment block, else a
    docstring (a string that is the first statement of its body). "" when it has none."""
    if d.sig_start > d.start:
        line = _first_line(d.data[d.start:d.sig_start].decode("utf-8", "replace"), comment=True)
        if line:
            return line
    body = d.node.child_by_field_name("body")
    first: Any = None
    for child in body.named_children if body is not None else ():
        if not is_comment_type(child.type):
            first = child
            break
    if first is not None and first.named_child_count == 1 and "expression" in first.type:
        first = first.named_children[0]
    if first is None or "string" not in first.type:
        return ""
    line = _first_line(d.data[first.start_byte:first.end_byte].decode("utf-8", "replace"), comment=False)
    return line if len(line.split()) >= 2 else ""


class _Docs:
    """``doc_line`` per definition of one file, computed once."""

    def __init__(self) -> None:
        self.seen: dict[int, str] = {}

    def of(self, d: Def | None) -> str:
        if d is None:
            return ""
        key = id(d)
        if key not in self.seen:
            self.seen[key] = doc_line(d)
        return self.seen[key]

    def lines(self, d: Def | None, text: str) -> tuple[str, str]:
        """(own doc, parent doc) for a chunk named after ``d``, each only when ``text``
        does not already hold it."""
        if d is None:
            return "", ""
        own = self.of(d)
        parent = self.of(d.parent)
        return ("" if own[:40] in text else own), ("" if parent[:40] in text else parent)


def _resolve_def(seg: Segment, total: int, info: FileInfo):
    """``(symbol, kind, parent, defs, context, named definition)`` of one chunk."""
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
        return best.path, kind, best.parent_path, defs, ctx, best
    owner = max(owners.values(), key=lambda s: s[1])[0] if len(owners) > 1 else first.owner
    if owner is None:
        return MODULE, "section" if info.doc else "module", "", defs, ctx, None
    if info.doc or owner.kind == "section":
        kind = "section"
    elif owner.kind == "class":
        kind = "header" if any(u.start == owner.start for u in seg) else "class"
    else:
        kind = owner.kind
    return owner.path, kind, owner.parent_path, defs, ctx, owner


def build_chunks(info: FileInfo, data: bytes, segs: list[Segment], budget: Budget) -> list[Chunk]:
    """Chunk records for packed segments (segments may overlap for the baseline)."""
    chunks: list[Chunk] = []
    fitter = HeaderFitter(budget) if budget.token_mode else None
    words = FileWords(data, [(seg[0].start, seg[-1].end) for seg in segs])
    docs = _Docs()
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
            symbol, kind, parent, defs, ctx, named = "", "window", "", [], None, None
        else:
            symbol, kind, parent, defs, ctx, named = _resolve_def(seg, b - a, info)
        doc, parent_doc = docs.lines(None if info.doc else named, text)
        names = [symbol] if symbol and symbol != MODULE else []
        define_paths = list(dict.fromkeys(d.path for d in defs))
        if define_paths == [symbol]:
            define_paths = []  # the chunk is that one definition: nothing more to list
        names.extend(define_paths)
        parts = HeaderParts(
            path=info.path, language=info.language, kind=kind, symbol=symbol, parent=parent,
            imports=info.imports, defines=define_paths[:MAX_DEFINES],
            words=words.words(index, names), sig=ctx.sig if ctx is not None else "",
            doc=doc, parent_doc=parent_doc,
        )
        chunks.append(Chunk(
            path=info.path, language=info.language, symbol=symbol, parent=parent, kind=kind,
            start_line=start_line, end_line=end_line, text=text,
            indexed_text=indexed_text(parts, text, budget, fitter),
        ))
    return chunks
