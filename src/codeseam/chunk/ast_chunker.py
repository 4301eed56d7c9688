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

from typing import Any

from .budget import Sizer
from .definitions import (Def, find_definition, is_comment_type, is_def_type, is_trivia_type,
                          make_def, sibling_definition)
from .pack import Unit
from .window import line_units

# (first row, last row, byte offset of the first row's start, node)
Item = tuple[int, int, int, Any]
# [start byte, end byte, items, spans several lines (after leading trivia)]
Group = list


def _items(children: list[Any]) -> list[Item]:
    out: list[Item] = []
    for c in children:
        if not c.is_named:
            continue  # keywords and punctuation: a line of only `}` or `end` joins the group above
        sb = c.start_byte
        if c.end_byte <= sb:
            continue  # zero-width (MISSING) nodes
        sp = c.start_point
        ep = c.end_point
        srow = sp[0]
        lrow = ep[0] if ep[1] > 0 else ep[0] - 1
        out.append((srow, lrow if lrow > srow else srow, sb - sp[1], c))
    return out


def _groups(items: list[Item], lo: int, hi: int) -> list[Group]:
    """Group items so that boundaries fall only at line starts no item spans across.

    A group is ``[start, end, items, multiline]``; comments and attributes directly above
    the next group (no blank line) join it.
    """
    groups: list[Group] = []
    cur: Group | None = None
    first = maxrow = -1
    trivia = False
    for it in items:
        srow, lrow, ls, node = it
        if cur is None:
            cur = [lo, hi, [it], False]
            first, maxrow = srow, lrow
            trivia = is_trivia_type(node.type)
            continue
        if srow > maxrow and not (trivia and srow == maxrow + 1):
            cur[1] = ls
            cur[3] = maxrow > first
            groups.append(cur)
            cur = [ls, hi, [it], False]
            first, maxrow = srow, lrow
            trivia = is_trivia_type(node.type)
            continue
        cur[2].append(it)
        if lrow > maxrow:
            maxrow = lrow
        if trivia and not is_trivia_type(node.type):
            trivia = False
            first = srow
    if cur is not None:
        cur[3] = maxrow > first
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
        srow, lrow, _ls, node = it
        if lrow > srow and node.named_child_count:
            out.extend(_items(node.children))
            progressed = True
            continue
        if srow == lrow and out:
            prev = out[-1]
            if prev[0] == srow and prev[1] == srow:
                continue
        out.append(it)
    return out if progressed else None


def _def_typed(items: list[Item]) -> bool:
    """A one-line group worth a look: a node type says function/class/section, or the
    group opens with an attribute/signature line (Haskell ``f :: Int -> Int``)."""
    first = items[0][3].type
    if len(items) > 1 and is_trivia_type(first) and not is_comment_type(first):
        return True
    return any(is_def_type(it[3].type) for it in items)


def _group_def(items: list[Item], data: bytes, data_lang: bool, scope: Def | None,
               start: int) -> Def | None:
    """The definition a group holds (a new one, not the scope itself), or None."""
    nodes = [it[3] for it in items if it[3].is_named and not is_comment_type(it[3].type)]
    found = None
    for node in nodes:
        found = find_definition(node, data, data_lang)
        if found is not None:
            break
    if found is None:
        if len(nodes) < 2 or data_lang:
            return None
        sib = sibling_definition(nodes, data)
        if sib is None:
            return None
        def_node, name, kind = nodes[0], sib[0], sib[1]
    else:
        def_node, name, kind = found
    if scope is not None and def_node.id == scope.node_id:
        return None
    sig_start = start
    for it in items:  # the signature starts after leading comments, at decorators
        if not is_comment_type(it[3].type):
            sig_start = max(start, it[3].start_byte)
            break
    return make_def(name, kind, scope, start, sig_start, def_node, data)


def ast_units(root: Any, data: bytes, sizer: Sizer, data_lang: bool) -> list[Unit]:
    """Units tiling ``data`` for a parsed tree."""
    units: list[Unit] = []
    stack: list[list] = [[_groups(_items(root.children), 0, len(data)), 0, None]]
    while stack:
        frame = stack[-1]
        groups, idx, scope = frame
        if idx >= len(groups):
            stack.pop()
            continue
        frame[1] = idx + 1
        lo, hi, items, multiline = groups[idx]
        # a one-line group is looked at as a definition only when a node type says so
        # (``def f(): ...``, Haskell ``f x = ...``) or in data files: statements are skipped
        d = _group_def(items, data, data_lang, scope, lo) if items and (
            multiline or data_lang or _def_typed(items)) else None
        if sizer.fits(lo, hi):
            units.append(Unit(lo, hi, scope, d))
            continue
        inner = d if d is not None else scope
        expanded = _expand(items)
        if expanded is None:
            units.extend(line_units(data, lo, hi, sizer, inner))
            continue
        stack.append([_groups(expanded, lo, hi), 0, inner])
    return units
