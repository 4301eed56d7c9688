"""The chunking stage: files to chunks cut at syntax boundaries (see ``chunk_file``).

Invariants (tested on fixtures in 22 languages, the whole CPython stdlib, and fuzzed):

- the ast chunker and ``window_chunks(overlap_tokens=0)`` are exact covers:
  concatenating the chunks' ``text`` in order gives the file back; no chunk is empty;
- line numbers are 1-based and counted on ``\\n`` only (tree-sitter rows);
- no chunk's text is over ``Budget.max_bytes``, and in token mode no chunk's
  ``indexed_text`` is over ``Budget.max_tokens`` tokens;
- a chunk under ``Budget.min_bytes`` has no neighbour it could join within the budget, but
  for one holding pieces of other routines (a piece of a split function or method is packed
  with pieces of it only).

tree-sitter is imported only when a file is parsed, so ``import codeseam.chunk`` is cheap.
"""

from __future__ import annotations

import logging

from ..errors import ConfigError
from ..records import Chunk
from .budget import Budget
from .header import identifier_splits, split_identifier
from .languages import language_for, language_label
from .window import BASELINE_OVERLAP_TOKENS, window_chunks

__all__ = [
    "CHUNKER_VERSION", "Budget", "Chunk", "chunk_file", "window_chunks", "language_for",
    "language_label", "split_identifier", "identifier_splits",
]

# Bump whenever chunk output (spans, symbols, kinds, indexed_text) changes: the index
# stores it and asks for a rebuild when it differs.
CHUNKER_VERSION = "ast-9"  # ast-9: a Rust struct literal (a value whose node type says expression) no longer
# makes its variable a class (`let fp = ExtendedFloat {` cut a long test routine as `f.fp`);
# ast-8: a definition is named through a C++ reference declarator (Emitter& Emitter::Write(...):
# Emitter.Write, not "Emitter.Write(const std.string& str") and a Rust impl for a reference type
# (impl Serialize for &'a mut Serializer: Serializer, not "a mut Serializer");
# ast-7: a split routine met again through its own signature node keeps its name (not f.f);
# ast-6: a doc comment (/** */, ///) documents the definition up to two blank lines below it;
# ast-5: a piece of a split function or method joins pieces of it only (no
# head of one method riding with the tail of the one before); ast-4: top-level chunks named by their main definition, no names from a
# split definition's own signature; ast-3: one-line classes without a body (Kotlin); ast-2: doc lines

# A tree with more than this share of its bytes in ERROR nodes is chunked as windows.
MAX_ERROR_SHARE = 0.5

log = logging.getLogger(__name__)


def chunk_file(path: str, text: str, *, budget: Budget = Budget(), chunker: str = "ast") -> list[Chunk]:
    """Cut one file into chunks.

    ``path`` is the repo-relative posix path (it also selects the grammar); ``text`` the
    decoded file. ``chunker="window"`` gives the baseline (line windows with about 64
    tokens of overlap). Never raises on bad input: broken syntax, deep nesting, odd
    bytes, a grammar that fails all fall back to line windows. Returns ``[]`` only for
    an empty file.
    """
    if chunker == "window":
        return window_chunks(path, text, budget=budget, overlap_tokens=BASELINE_OVERLAP_TOKENS)
    if chunker != "ast":
        raise ConfigError(f"unknown chunker {chunker!r}: use 'ast' or 'window'")
    if not text:
        return []
    language = language_for(path)
    if language is None:
        return window_chunks(path, text, budget=budget)
    try:
        chunks = _ast_chunks(path, language, text, budget)
    except Exception as exc:  # noqa: BLE001 - never fail a file over a parser error: windows always work
        log.warning("%s: %s chunking failed, using line windows: %s", path, language, exc)
        chunks = None
    if chunks is None:
        return window_chunks(path, text, budget=budget)
    return chunks


def _ast_chunks(path: str, language: str, text: str, budget: Budget) -> list[Chunk] | None:
    from .assemble import FileInfo, build_chunks
    from .ast_chunker import ast_units
    from .budget import Sizer
    from .vocab import DATA_LANGUAGES, is_import_type
    from .header import import_summary
    from .pack import pack
    from .parse import ParseFailed, error_share, parse

    data = text.encode("utf-8", "surrogatepass")
    try:
        tree = parse(language, data)
    except ParseFailed as exc:
        log.warning("%s: %s", path, exc)
        return None
    root = tree.root_node
    share = error_share(root)
    if share > MAX_ERROR_SHARE:
        log.info("%s: %.0f%% of the tree is parse errors, using line windows", path, 100 * share)
        return None
    sizer = Sizer(data, budget)
    data_lang = language in DATA_LANGUAGES
    segs = pack(ast_units(root, data, sizer, data_lang), sizer)
    if not _tiles(segs, len(data)):  # defensive: never hand out a broken cover
        log.error("%s: chunk spans do not tile the file, using line windows", path)
        return None
    imports = import_summary(data, (c for c in root.named_children if is_import_type(c.type)))
    doc = data_lang or language in ("markdown", "rst")
    info = FileInfo(path=path, language=language_label(path), imports=imports, doc=doc)
    return build_chunks(info, data, segs, budget, root)


def _tiles(segs: list, size: int) -> bool:
    pos = 0
    for seg in segs:
        for u in seg:
            if u.start != pos or u.end <= u.start:
                return False
            pos = u.end
    return pos == size
