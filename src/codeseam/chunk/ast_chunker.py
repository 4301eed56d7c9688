"""The tree-sitter chunker: cut where the code does.

The file is tiled by *groups*: the children of a node, grouped so a cut only ever falls
at the start of a line where no child spans across. Comments and attributes right above
a group (no blank line between) join it, so decorators and doc comments stay with their
definition. A group that fits the budget becomes a unit (a whole definition, or loose
code of its scope). A group too big is *expanded*: its multi-line nodes are replaced by
their children and regrouped, inside the scope of the definition it holds; so a class
too big is split into its members (its header and fields become their own pieces), a
function too big into its statements, a statement too big into its children. Nothing
left to expand falls back to line windows, and a single line over the budget is cut at
character boundaries.

The traversal is iterative (an explicit stack): 10,000-deep nesting is fine. Only nodes
that are too big are descended into, so the cost stays close to the parse itself.
"""

from __future__ import annotations

import re
from typing import Any

from .budget import Sizer
from .definitions import Def, find_definition, make_def, sibling_definition
from .vocab import is_comment_type, is_def_type, is_trivia_type
from .pack import Unit
from .window import line_units

# Runs of one-line statements are coalesced into groups of up to max_bytes / this.
COALESCE_SHARE = 4

# Node type flags, computed once per type name: trivia (comment, attribute, decorator),
# definition (a type word says function/class/section), comment.
TRIVIA, DEF, COMMENT = 1, 2, 4
_FLAGS: dict[str, int] = {}

# (first row, last row, byte offset of the first row's start, node, type flags)
Item = tuple[int, int, int, Any, int]
# [start byte, end byte, items, worth a definition check]
Group = list


def _type_flags(node_type: str) -> int:
    flags = _FLAGS.get(node_type)
    if flags is None:
        flags = _FLAGS[node_type] = ((TRIVIA if is_trivia_type(node_type) else 0)
                                     | (DEF if is_def_type(node_type) else 0)
                                     | (COMMENT if is_comment_type(node_type) else 0))
    return flags


def _items(children: list[Any]) -> list[Item]:
    """Items of a node's *named* children (``named_children``): keywords and punctuation
    are left out, so a line of only ``}`` or ``end`` joins the group above."""
    out: list[Item] = []
    append = out.append
    flags_of = _FLAGS.get
    for c in children:
        sb = c.start_byte
        if c.end_byte <= sb:
            continue  # zero-width (MISSING) nodes
        sp = c.start_point
        ep = c.end_point
        srow = sp[0]
        lrow = ep[0] if ep[1] > 0 else ep[0] - 1
        ntype = c.type
        flags = flags_of(ntype)
        if flags is None:
            flags = _type_flags(ntype)
        append((srow, lrow if lrow > srow else srow, sb - sp[1], c, flags))
    return out


# A doc comment documents the declaration after it across blank lines (JSDoc, Javadoc, KDoc,
# PHPDoc, Doxygen ``/** ... */``; Rust, C#, Swift and Zig ``///``): at most this many between.
DOC_GAP_LINES = 2
_DOC_OPEN = (b"/**", b"///")
_NOT_DOC = (b"/***", b"////", b"/**/")
# a file's header, not its first declaration's documentation
_FILE_HEADER = re.compile(rb"@(?:license|copyright|file|fileoverview|module|packageDocumentation|preserve)\b|"
                          rb"\bCopyright\b|\bSPDX-License", re.IGNORECASE)


def _doc_comment(items: list[Item], data: bytes) -> bool:
    """Are ``items`` one doc comment (consecutive ``/**`` or ``///`` comments) that does not
    head the file? (The text is sliced from ``data``, never read through ``Node.text``: with a
    source given as a read callback, as ``parse`` does, py-tree-sitter 0.26 can crash there,
    tree-sitter/py-tree-sitter#435.)"""
    for it in items:
        if not it[4] & COMMENT:
            return False
        node = it[3]
        text = data[node.start_byte:node.end_byte]
        if not text.startswith(_DOC_OPEN) or text.startswith(_NOT_DOC) or _FILE_HEADER.search(text):
            return False
    return True


def _groups(items: list[Item], lo: int, hi: int, data: bytes, cap: int = 0) -> list[Group]:
    """Group items so that boundaries fall only at line starts no item spans across.

    A group is ``[start, end, items, check]``; ``check``: worth looking at as a
    definition (a node other than a comment spans several lines, a node type says
    function/class/section, or it opens with an attribute or signature line such as
    Haskell's ``f :: Int -> Int``). Comments and attributes directly above the next group
    (no blank line) join it, and so does a doc comment up to ``DOC_GAP_LINES`` blank lines above
    it (express's ``/** ... */``, a blank line, ``res.links = function``). With ``cap``, runs of
    one-line plain statements are coalesced
    up to ``cap`` bytes: they would be packed together anyway, and fewer groups cost less.
    """
    groups: list[Group] = []
    cur: Group | None = None
    maxrow = -1
    trivia = plain = False
    for it in items:
        srow, lrow, ls, _node, flags = it
        item_trivia = flags & TRIVIA
        item_def = flags & DEF
        if cur is not None and srow > maxrow and not (trivia and (
                srow == maxrow + 1 or (srow - maxrow <= DOC_GAP_LINES + 1 and not item_trivia
                                       and _doc_comment(cur[2], data)))):
            if plain and srow == lrow and ls - cur[0] <= cap and not item_trivia and not item_def:
                cur[2].append(it)
                maxrow = lrow
                continue
            cur[1] = ls
            groups.append(cur)
            cur = None
        if cur is None:
            multi = lrow > srow
            cur = [ls if groups else lo, hi, [it], bool(item_def) or (multi and not item_trivia)]
            maxrow = lrow
            trivia = bool(item_trivia)
            plain = not multi and not item_trivia and not item_def
            continue
        if trivia and not item_trivia and not cur[2][0][4] & COMMENT:
            cur[3] = True  # an attribute or signature line opens the group
        cur[2].append(it)
        if lrow > maxrow:
            maxrow = lrow
        if item_def or (lrow > srow and not item_trivia):
            cur[3] = True
        if not item_trivia:
            trivia = False
        plain = False
    if cur is not None:
        groups.append(cur)
    elif hi > lo:
        groups.append([lo, hi, [], False])
    return groups


def _expand(items: list[Item]) -> list[Item] | None:
    """Replace multi-line nodes by their children; None when nothing can be expanded.

    Items kept as they are collapse per line (one single-line item per line is enough
    to place cuts), so expanding deep nesting stays linear.
    """
    out: list[Item] = []
    progressed = False
    for it in items:
        srow, lrow, _ls, node, _flags = it
        if lrow > srow and node.named_child_count:
            out.extend(_items(node.named_children))
            progressed = True
            continue
        if srow == lrow and out:
            prev = out[-1]
            if prev[0] == srow and prev[1] == srow:
                continue
        out.append(it)
    return out if progressed else None


def _group_def(items: list[Item], data: bytes, data_lang: bool, scope: Def | None,
               start: int) -> Def | None:
    """The definition a group holds (a new one, not the scope itself), or None."""
    nodes = [it[3] for it in items if not it[4] & COMMENT]  # items are named nodes
    found = None
    for node in nodes:
        found = find_definition(node, data, data_lang)
        if found is not None:
            break
    if found is None:
        if len(nodes) < 2 or data_lang:
            return None
        if scope is not None and _parts_of(nodes[0], scope):
            return None  # the split scope's own signature and body (`f(): Promise<T> {`), not a new definition
        sib = sibling_definition(nodes, data)
        if sib is None:
            return None
        def_node, name, kind = nodes[0], sib[0], sib[1]
    else:
        def_node, name, kind = found
    if scope is not None and (def_node.id == scope.node.id or _seen_again(def_node, name, scope)):
        return None
    # the signature starts after leading comments, at decorators
    sig_start = max(start, nodes[0].start_byte) if nodes else start
    return make_def(name, kind, scope, start, sig_start, def_node, data)


def _seen_again(node: Any, name: str, scope: Def) -> bool:
    """Is ``node`` the routine being split, met again through a part of it (Zig's and Dart's
    signature nodes inside the declaration: ``resolveConfiguration`` was named
    ``resolveConfiguration.resolveConfiguration`` in every piece)?"""
    return (scope.kind in ("function", "method") and name == scope.name
            and scope.node.start_byte <= node.start_byte and node.end_byte <= scope.node.end_byte)


def _parts_of(node: Any, scope: Def) -> bool:
    """Is ``node`` a direct child of the definition being split?"""
    parent = node.parent
    return parent is not None and parent.id == scope.node.id


def ast_units(root: Any, data: bytes, sizer: Sizer, data_lang: bool) -> list[Unit]:
    """Units tiling ``data`` for a parsed tree."""
    units: list[Unit] = []
    append = units.append
    cap = 0 if data_lang else sizer.max_bytes // COALESCE_SHARE
    max_bytes = sizer.max_bytes
    fits = sizer.fits if sizer.limit_tokens is not None else None  # None: bytes only
    # a stack of (groups still to visit, scope): only groups too big push a frame
    stack: list[tuple[Any, Def | None]] = [
        (iter(_groups(_items(root.named_children), 0, len(data), data, cap)), None)]
    while stack:
        groups, scope = stack[-1]
        for lo, hi, items, check in groups:
            # a one-line group is looked at as a definition only when a node type says so
            # (``def f(): ...``, Haskell ``f x = ...``) or in data files: statements are skipped
            d = _group_def(items, data, data_lang, scope, lo) if items and (
                check or data_lang) else None
            if (hi - lo <= max_bytes) if fits is None else fits(lo, hi):
                append(Unit(lo, hi, scope, d))
                continue
            inner = d if d is not None else scope
            expanded = _expand(items)
            if expanded is None:
                units.extend(line_units(data, lo, hi, sizer, inner))
                continue
            stack.append((iter(_groups(expanded, lo, hi, data, cap)), inner))
            break
        else:
            stack.pop()
    return units
