"""From packed segments to ``Chunk`` records: text, lines, symbol, kind, header.

Symbol and kind of a chunk:

- a whole definition that fills at least half the chunk names it (``Class.method``);
- else the scope most of its bytes belong to: a split function (``kind`` function or
  method: a piece packed statement by statement), a split class (``header`` when the
  chunk holds its opening line, else ``class``), or a section; at the top level, the
  largest whole definition in the chunk (small definitions merged with their
  neighbours are named by the main one, the others listed on the ``defines:`` line),
  else the outermost definition nested in its top-level code (a helper inside a
  ``describe(...)`` callback, a class under ``try:``: ``nested_definition``); only a
  chunk of top-level code that holds no definition is the module (``<module>``, kind
  ``module``);
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
from .header import MAX_DEFINES, FileWords, HeaderFitter, HeaderParts, header_lines, indexed_text
from .pack import Segment
from .vocab import is_comment_type

MODULE = "<module>"
DOC_MAX_CHARS = 160
_COMMENT_MARK = re.compile(r"^\s*(?:/{2,}!?|#+!?|--+|;+|/\*+!?|\*+/?|\(\*+|\{-+\|?|%+|@doc\s)\s?")
_STRING_QUOTES = re.compile(r"""^[rRbBuUfF]{0,2}(?:\"\"\"|'''|\"|')|(?:\"\"\"|'''|\"|')$""")
_STRING_OPEN = re.compile(r"""[rRbBuUfF]{0,2}(?:\"\"\"|'''|\"|')""")


@dataclass(slots=True)
class FileInfo:
    path: str
    language: str  # the label stored on chunks
    imports: list[str]
    doc: bool  # markdown / data file: kinds are sections
    window: bool = False  # line windows: kind window, no symbol


def _has_letter(line: str) -> bool:
    if line.isascii():  # ASCII letters are exactly the cased characters
        return line.lower() != line.upper()
    return any(c.isalpha() for c in line)


def _first_line(raw: str, comment: bool) -> str:
    """The first line with a letter in a doc comment or docstring, markers stripped."""
    if not comment:
        raw = _strip_quotes(raw.strip())
    pos = 0
    while True:  # line by line: a long docstring is not split whole
        nl = raw.find("\n", pos)
        line = raw[pos:] if nl < 0 else raw[pos:nl]
        line = _COMMENT_MARK.sub("", line) if comment else line
        line = line.strip().rstrip("*/").strip()
        if line and _has_letter(line):
            return line[:DOC_MAX_CHARS]
        if nl < 0:
            return ""
        pos = nl + 1


def _strip_quotes(s: str) -> str:
    """``_STRING_QUOTES.sub("", s)`` for a stripped ``s``, without scanning it: the
    opening quotes (with their prefix letters), then a closing triple or single quote at
    the end."""
    m = _STRING_OPEN.match(s)
    start = m.end() if m is not None else 0
    end = len(s)
    if end - 3 >= start and s.endswith(('"""', "'''")):
        end -= 3
    elif end - 1 >= start and s.endswith(('"', "'")):
        end -= 1
    return s[start:end]


def doc_line(d: Def) -> str:
    """First line of a definition's documentation: its leading comment block, else a
    docstring (a string that is the first statement of its body). "" when it has none."""
    if d.sig_start > d.start:
        line = _first_line(d.data[d.start:d.sig_start].decode("utf-8", "replace"), comment=True)
        if line:
            return line
    body = d.node.child_by_field_name("body")
    if body is None:
        return ""
    first: Any = None
    for i in range(body.named_child_count):  # one child at a time: a body can be long
        child = body.named_child(i)
        if child is not None and not is_comment_type(child.type):
            first = child
            break
    if first is not None and first.named_child_count == 1 and "expression" in first.type:
        first = first.named_child(0)
    if first is None or "string" not in first.type:
        return ""
    line = _first_line(d.data[first.start_byte:first.end_byte].decode("utf-8", "replace"), comment=False)
    return line if len(line.split()) >= 2 else ""


class _Docs:
    """``doc_line`` per definition of one file, computed once.

    ``span`` is the byte span of the chunk being built. A definition that lies whole in
    it has its documentation in the chunk's text, so its own line is not computed: it
    would be dropped as already there (``doc_line`` returns a piece of the source, or "").
    Only for ASCII files (``ascii``), where a slice decodes to the very characters of the
    text (undecodable bytes would become U+FFFD in the doc line, not in the text).
    """

    def __init__(self, ascii: bool = False) -> None:
        self.seen: dict[Def, str] = {}  # Def hashes by identity
        self.ascii = ascii
        self.span = (0, 0)

    def of(self, d: Def | None) -> str:
        if d is None:
            return ""
        line = self.seen.get(d)
        if line is None:
            line = self.seen[d] = doc_line(d)
        return line

    def lines(self, d: Def | None, text: str) -> tuple[str, str]:
        """(own doc, parent doc) for a chunk named after ``d``, each only when ``text``
        does not already hold it."""
        if d is None:
            return "", ""
        a, b = self.span
        if self.ascii and a <= d.start and d.node.end_byte <= b:
            own = ""  # whole in this chunk: the text holds its documentation
        else:
            own = self.of(d)
            own = "" if own[:40] in text else own
        parent = self.of(d.parent)
        return own, ("" if parent[:40] in text else parent)


def _owner_kind(owner: Def, seg: Segment, doc: bool) -> str:
    if doc or owner.kind == "section":
        return "section"
    if owner.kind == "class":
        return "header" if any(u.start == owner.start for u in seg) else "class"
    return owner.kind


def _resolve_def(seg: Segment, total: int, info: FileInfo):
    """``(symbol, kind, parent, defs, context, named definition)`` of one chunk."""
    first = seg[0]
    if len(seg) == 1:  # the common case: one whole definition, or one piece of a scope
        w = first.whole
        if w is not None:
            return w.path, "section" if info.doc else w.kind, w.parent_path, [w], None, w
        owner = first.owner
        if owner is None:
            return MODULE, "section" if info.doc else "module", "", [], None, None
        ctx = owner if first.start > owner.start else None
        return owner.path, _owner_kind(owner, seg, info.doc), owner.parent_path, [], ctx, owner
    best: Def | None = None
    best_bytes = 0
    defs: list[Def] = []
    owner = first.owner
    mixed = False  # units of more than one owner
    for u in seg:
        w = u.whole
        if w is not None:
            defs.append(w)
            n = u.end - u.start
            if n > best_bytes:
                best, best_bytes = w, n
        if u.owner is not owner:
            mixed = True
    ctx = owner if first.whole is None and owner is not None and first.start > owner.start else None
    if best is not None and best_bytes * 2 >= total:
        kind = "section" if info.doc else best.kind
        return best.path, kind, best.parent_path, defs, ctx, best
    if mixed:
        owner = _main_owner(seg)
    if owner is None:
        if best is not None:  # top-level code around small definitions: named by the main one
            return best.path, "section" if info.doc else best.kind, best.parent_path, defs, ctx, best
        return MODULE, "section" if info.doc else "module", "", defs, ctx, None
    return owner.path, _owner_kind(owner, seg, info.doc), owner.parent_path, defs, ctx, owner


def _main_owner(seg: Segment) -> Def | None:
    """The owner most of a segment's bytes belong to (the first one on a tie)."""
    owners: dict[int, list] = {}
    for u in seg:
        key = id(u.owner)
        slot = owners.get(key)
        if slot is None:
            owners[key] = [u.owner, u.end - u.start]
        else:
            slot[1] += u.end - u.start
    return max(owners.values(), key=lambda s: s[1])[0]


def _define_paths(defs: list[Def], symbol: str) -> list[str]:
    """Paths of the whole definitions in a chunk, deduplicated; [] when the chunk is
    that one definition (nothing more to list)."""
    if not defs:
        return []
    if len(defs) == 1:
        path = defs[0].path
        return [] if path == symbol else [path]
    paths = list(dict.fromkeys([d.path for d in defs]))
    return [] if paths == [symbol] else paths


NESTED_SEARCH_NODES = 2000  # nodes looked at, at most, for a definition nested in top-level code


def nested_definition(root: Any, data: bytes, a: int, b: int) -> tuple[str, str] | None:
    """``(name, kind)`` of the outermost definition lying whole in bytes ``[a, b)`` of the
    tree, nested in top-level code (a callback's helper inside ``describe(...)``, a class
    under ``try:``), breadth first, bounded by ``NESTED_SEARCH_NODES``."""
    from collections import deque

    from .definitions import classify

    queue = deque([root])
    seen = 0
    while queue and seen < NESTED_SEARCH_NODES:
        node = queue.popleft()
        seen += 1
        if node.start_byte >= a and node.end_byte <= b and node is not root and node.named_child_count:
            found = classify(node, data, False)
            if found is not None and found[1] in ("function", "method", "class"):
                return found
        for child in node.named_children:
            if child.start_byte < b and child.end_byte > a:
                queue.append(child)
    return None


def build_chunks(info: FileInfo, data: bytes, segs: list[Segment], budget: Budget,
                 root: Any = None) -> list[Chunk]:
    """Chunk records for packed segments (segments may overlap for the baseline).

    Per-file parts of the header (path line, imports line, identifier splits) are built
    once; in byte mode the header is joined directly (``header_lines``, the same lines
    as ``HeaderParts.render``).
    """
    chunks: list[Chunk] = []
    token_mode = budget.token_mode
    fitter = HeaderFitter(budget) if token_mode else None
    spans = [(seg[0].start, seg[-1].end) for seg in segs]
    words = FileWords(data, spans)
    docs = _Docs(data.isascii())
    path, language, doc_file = info.path, info.language, info.doc
    head = f"{path} ({language})"
    imports_line = "imports: " + ", ".join(info.imports) if info.imports else ""
    row, row_pos = 0, 0  # row_pos: where the previous chunk starts, row: its row
    prev_end, prev_nl = 0, 0  # where the previous chunk ends, its newlines
    count = data.count
    for index, seg in enumerate(segs):
        a, b = spans[index]
        raw = data[a:b]
        # chunks that tile the file: the previous chunk's newlines are the ones skipped
        row += prev_nl if a == prev_end else count(b"\n", row_pos, a)
        row_pos = a
        text = raw.decode("utf-8", "surrogatepass")
        start_line = row + 1
        prev_nl = raw.count(b"\n")
        prev_end = b
        end_line = start_line + prev_nl - (1 if raw.endswith(b"\n") else 0)
        if info.window:
            symbol, kind, parent, defs, ctx, named = "", "window", "", [], None, None
        else:
            symbol, kind, parent, defs, ctx, named = _resolve_def(seg, b - a, info)
            if symbol == MODULE and root is not None and not doc_file:
                nested = nested_definition(root, data, a, b)
                if nested is not None:
                    symbol, kind = nested
        docs.span = (a, b)
        doc, parent_doc = docs.lines(None if doc_file else named, text)
        define_paths = _define_paths(defs, symbol)
        names = [symbol] if symbol and symbol != MODULE else []
        names.extend(define_paths)
        sig = ctx.sig if ctx is not None else ""
        split_words = words.words(index, names)
        if token_mode:
            parts = HeaderParts(
                path=path, language=language, kind=kind, symbol=symbol, parent=parent,
                imports=info.imports, defines=define_paths[:MAX_DEFINES], words=split_words,
                sig=sig, doc=doc, parent_doc=parent_doc,
            )
            indexed = indexed_text(parts, text, budget, fitter)
        else:
            what = f"{kind} {symbol}".rstrip() if symbol else kind
            if parent:
                what += f" in {parent}"
            lines = header_lines(head, what, doc, parent_doc, parent, imports_line,
                                 define_paths[:MAX_DEFINES], split_words, sig)
            lines.append(text)
            indexed = "\n".join(lines)
        chunks.append(Chunk(
            path=path, language=language, symbol=symbol, parent=parent, kind=kind,
            start_line=start_line, end_line=end_line, text=text, indexed_text=indexed,
        ))
    return chunks
