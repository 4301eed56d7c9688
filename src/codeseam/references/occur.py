"""The pure core of ``refs``: source text + grammar -> every occurrence of a name in code.

One generic rule for every grammar, read from the tree as the chunker reads it (node type
words, field names; no per-language table):

- an *occurrence* is a named leaf whose text is exactly the name, outside comments and
  strings (a node whose type words say comment, string, char, heredoc, regex or rune), except
  inside an interpolation (``f"{name}"``, `` `${name}` ``), which is code;
- its *kind*: ``def`` when it names a definition the chunker's rule finds
  (``chunk.definitions.find_definition``: the first such leaf in the definition's header) or
  when it is the ``name``/``declarator`` field of a declaration (``var x``, ``const X``, a
  struct field, a prototype); ``import`` inside an import node (type words import, use,
  include, require, open, extern, using); ``call`` when it is the callee of a call node (type
  words call, invocation, new, creation: nothing but punctuation and type arguments between
  it and the arguments); else ``use``;
- its *enclosing symbol*: the innermost definition around it, with the chunker's dotted paths
  (``Class.method``, Go ``Server.Get``), found top-down along the path from the root as the
  chunker finds them (a function passed as an argument is part of its caller, not a
  definition of its own).

A qualified name (``Type.method``, ``pkg::name``) keeps the occurrences whose qualifier stands
right before them in the source, those reached through ``self``/``this`` inside that type,
imports that name the qualifier, and the definitions whose symbol path (or file path) holds it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from ..chunk.definitions import clean_name, find_definition, make_def
from ..chunk.vocab import (BODY_WORDS, CLASS_WORDS, DATA_LANGUAGES, FUNC_WORDS, is_body_type, is_import_type,
                           type_words)
from .names import Name, parse_name, qualifier_pattern, self_pattern

if TYPE_CHECKING:  # pragma: no cover
    from ..chunk.definitions import Def

KINDS = ("def", "call", "import", "use")
# Not code: prose, markup and data files (their words are text, tags, keys and values)
NOT_CODE_LANGUAGES = DATA_LANGUAGES | {"markdown", "rst", "html", "xml"}
# A node of these words holds no code (an interpolation inside it does)
NON_CODE_WORDS = frozenset({"comment", "haddock", "string", "char", "character", "heredoc", "regex", "rune"})
# ... and a leaf of these words is text, not a name
TEXT_WORDS = NON_CODE_WORDS | {"text", "fragment", "content", "escape"}
INTERP_WORDS = frozenset({"interpolation", "interpolated", "substitution"})
ARG_WORDS = frozenset({"argument", "arguments"})
CALL_WORDS = frozenset({"call", "invocation", "new", "creation", "instantiation"})
DECL_WORDS = frozenset({"declaration", "definition", "declarator", "spec", "item", "signature"}) | FUNC_WORDS | CLASS_WORDS
PARAM_WORDS = frozenset({"parameter", "parameters", "argument", "arguments", "pattern"})
# ... a node of these words uses a name, it does not declare it (Java `method_invocation` has a name field)
NOT_DECL_WORDS = PARAM_WORDS | CALL_WORDS | {"expression", "reference", "access", "call"}
# Ancestors looked at for a call or an import: a few levels, never past a body or a statement
CALL_DEPTH = 5
IMPORT_DEPTH = 8
BEFORE_BYTES = 200  # how far back a qualifier is looked for
_GENERIC_ARGS = re.compile(rb"<[^<>()]*>|\[[^\[\]()]*\]")
_PUNCT = re.compile(rb"[\s!?.:]*")
_WORD_BYTES = rb"[\w$\x80-\xff]"


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One occurrence of a name in one file. Lines and columns are 1-based (lines on ``\\n``,
    columns in characters); ``symbol`` is the enclosing definition's path (``""`` at the top
    level), for a ``def`` the defined symbol itself, with that definition's lines."""

    kind: str
    line: int
    column: int
    symbol: str
    symbol_kind: str
    symbol_start: int
    symbol_end: int
    byte: int


@dataclass(slots=True, eq=False)
class _Scope:
    path: str
    kind: str
    short: str  # the name's last segment (what its name leaf says)
    node: Any  # the outer node (decorators, export included): the definition's lines
    def_node: Any
    body_id: int | None
    parent: _Scope | None
    name_byte: int = -1  # where its name leaf is (found on demand; -2: none)


def is_code_language(language: str | None) -> bool:
    return bool(language) and language not in NOT_CODE_LANGUAGES


def find_occurrences(text: str, language: str, name: Name | str, *, path: str = "") -> list[Occurrence]:
    """Every occurrence of ``name`` in ``text`` parsed with the grammar ``language``, in
    source order. ``path`` (repo-relative) lets a qualifier match the file's folders
    (``assert.Equal`` in ``assert/assertions.go``). Raises ``chunk.parse.ParseFailed`` when
    the grammar fails; prose and data languages have no occurrences."""
    from ..chunk.parse import parse

    if isinstance(name, str):
        name = parse_name(name)
    if not is_code_language(language) or name.last not in text:
        return []
    data = text.encode("utf-8", "surrogatepass")
    needle = name.last.encode("utf-8")
    pattern = re.compile(rb"(?<!" + _WORD_BYTES + rb")" + re.escape(needle) + rb"(?!" + _WORD_BYTES + rb")")
    starts = [m.start() for m in pattern.finditer(data)]
    if not starts:
        return []
    root = parse(language, data).root_node
    leaves = [leaf for leaf in (_code_leaf(root, s, s + len(needle)) for s in starts) if leaf is not None]
    if not leaves:
        return []
    walker = _Walker(data)
    line_starts = _line_starts(data)
    qual, selfp = qualifier_pattern(name), self_pattern()
    out = []
    for leaf in leaves:
        scope = walker.scope_of(leaf)
        kind, symbol, skind, node = _classify(leaf, scope, walker, name.last)
        if name.qualifier and not _qualified(name, kind, symbol, scope, leaf, data, qual, selfp, path):
            continue
        line, column = _position(data, line_starts, leaf.start_byte)
        if node is None:
            out.append(Occurrence(kind, line, column, symbol, skind, 0, 0, leaf.start_byte))
        else:
            out.append(Occurrence(kind, line, column, symbol, skind, node.start_point.row + 1,
                                  _last_row(node) + 1, leaf.start_byte))
    return out


# -- the leaf ------------------------------------------------------------------------------------

def _code_leaf(root: Any, start: int, end: int) -> Any | None:
    """The named leaf that is exactly ``start..end``, when it is code (not comment or string)."""
    node = root.named_descendant_for_byte_range(start, end)
    if node is None or node.start_byte != start or node.end_byte != end or node.is_error:
        return None
    if not type_words(node.type).isdisjoint(TEXT_WORDS):
        return None
    cur = node.parent
    while cur is not None:
        words = type_words(cur.type)
        if not words.isdisjoint(INTERP_WORDS):
            return node  # code inside a string's interpolation
        if not words.isdisjoint(NON_CODE_WORDS):
            return None
        cur = cur.parent
    return node


# -- enclosing definitions, top-down as the chunker finds them -----------------------------------

class _Walker:
    """Definitions along the path from the root to a leaf, memoised per node (the state after a
    node depends only on the path to it)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.memo: dict[int, tuple[_Scope | None, _Scope | None]] = {}

    def scope_of(self, leaf: Any) -> _Scope | None:
        chain = []
        cur = leaf.parent
        while cur is not None and cur.id not in self.memo:
            chain.append(cur)
            cur = cur.parent
        scope, header = self.memo[cur.id] if cur is not None else (None, None)
        for node in reversed(chain):
            scope, header = self._step(node, scope, header)
            self.memo[node.id] = (scope, header)
        return scope

    def _step(self, node: Any, scope: _Scope | None, header: _Scope | None):
        if header is not None and (node.id == header.body_id or is_body_type(node.type)):
            header = None  # past the definition's signature: inner definitions count again
        if header is not None or node.parent is None or not node.is_named or node.child_count == 0:
            return scope, header
        if not type_words(node.parent.type).isdisjoint(ARG_WORDS):
            return scope, header  # a function passed as an argument belongs to its caller
        found = find_definition(node, self.data, False)
        if found is None:
            return scope, header
        def_node, name, kind = found
        if scope is not None and def_node.id == scope.def_node.id or _named_by_parameter(def_node, name, self.data):
            return scope, header
        parent = None if scope is None else cast("Def", _AsDef(scope))  # duck-typed: make_def reads path, kind
        made = make_def(name, kind, parent, node.start_byte, node.start_byte, def_node, self.data)
        body = _body(def_node)
        new = _Scope(made.path, made.kind, name.rsplit(".", 1)[-1], node, def_node,
                     None if body is None else body.id, scope)
        return new, new

    def name_byte(self, scope: _Scope, last: str) -> int:
        """Where the scope's name leaf starts: the first code leaf spelling its name in its
        header (before the body); -2 when there is none."""
        if scope.name_byte == -1:
            scope.name_byte = -2
            node = scope.def_node
            body = _body(node)
            end = body.start_byte if body is not None and body.start_byte > node.start_byte else node.end_byte
            needle = last.encode("utf-8")
            i = self.data.find(needle, node.start_byte, end)
            root = node
            while root.parent is not None:
                root = root.parent
            while i != -1:
                if _code_leaf(root, i, i + len(needle)) is not None:
                    scope.name_byte = i
                    break
                i = self.data.find(needle, i + 1, end)
        return scope.name_byte


@dataclass(slots=True)
class _AsDef:
    """What ``make_def`` reads of a scope."""

    scope: _Scope

    @property
    def path(self) -> str:
        return self.scope.path

    @property
    def kind(self) -> str:
        return self.scope.kind


def _body(node: Any) -> Any | None:
    body = node.child_by_field_name("body")
    if body is not None:
        return body
    for i in range(min(node.named_child_count, 8)):
        child = node.named_child(i)
        if child is not None and is_body_type(child.type):
            return child
    return None


def _named_by_parameter(def_node: Any, name: str, data: bytes) -> bool:
    """``x => x + 1``: the rule would take the lone parameter for the name."""
    if def_node.child_by_field_name("name") is not None:
        return False
    for field in ("parameter", "parameters"):
        p = def_node.child_by_field_name(field)
        if p is not None and clean_name(data[p.start_byte:p.end_byte].decode("utf-8", "replace")) == name:
            return True
    return False


# -- the kind ------------------------------------------------------------------------------------

def _classify(leaf: Any, scope: _Scope | None, walker: _Walker, last: str) -> tuple[str, str, str, Any]:
    """``(kind, symbol, symbol kind, node whose lines are the symbol's)``."""
    if scope is not None and scope.short == last and walker.name_byte(scope, last) == leaf.start_byte:
        return "def", scope.path, scope.kind, scope.node
    decl = _declaration(leaf)
    if decl is None and (scope is None or scope.kind == "class"):
        decl = _assignment(leaf)  # a module's or a class's constant: DEFAULT_TIMEOUT = Timeout(5)
    if decl is not None:
        path = f"{scope.path}.{last}" if scope is not None else last
        return "def", path, "declaration", decl
    outer = ("", "", None) if scope is None else (scope.path, scope.kind, scope.node)
    if _in_import(leaf) is not None:
        return ("import", *outer)
    if _is_callee(leaf, walker.data):
        return ("call", *outer)
    return ("use", *outer)


def _same(a: Any, b: Any) -> bool:
    return a is not None and a.start_byte == b.start_byte and a.end_byte == b.end_byte and a.type == b.type


def _declaration(leaf: Any) -> Any | None:
    """The declaration whose ``name`` (or ``declarator``) field is ``leaf``: ``var x``,
    ``const X = 1``, a struct field, a prototype ``int f(void);``, an interface method. C's
    declarators nest around the name (``*f``, ``f(void)``): the outermost one gives the lines."""
    match = None
    cur, node = leaf, leaf.parent
    for _ in range(4):
        if node is None:
            break
        words = type_words(node.type)
        if words.isdisjoint(DECL_WORDS) or not words.isdisjoint(NOT_DECL_WORDS):
            break
        if not (_same(node.child_by_field_name("name"), cur) or _same(node.child_by_field_name("declarator"), cur)):
            break
        match = node
        if "declarator" not in words:
            break
        cur, node = node, node.parent
    return match


def _assignment(leaf: Any) -> Any | None:
    """The assignment whose target (its ``left`` field) is ``leaf`` itself (``X = ...``,
    ``X: int = ...``), as its statement: at module or class level (the caller checks the scope)
    such a name is defined there (Python, Ruby, ...; ``const``/``var`` are declarations)."""
    node = leaf.parent
    if node is None or "assignment" not in node.type or not _same(node.child_by_field_name("left"), leaf):
        return None
    return node.parent if node.parent is not None and node.parent.type == "expression_statement" else node


def _in_import(leaf: Any) -> Any | None:
    cur = leaf.parent
    for _ in range(IMPORT_DEPTH):
        if cur is None or cur.parent is None:
            return None
        words = type_words(cur.type)
        if is_import_type(cur.type) and not _body(cur):  # C# `using (x) { }` is not an import
            return cur
        if not words.isdisjoint(BODY_WORDS):
            return None
        cur = cur.parent
    return None


def _is_callee(leaf: Any, data: bytes) -> bool:
    """Is ``leaf`` what a call calls: the last name before the call's arguments?"""
    cur = leaf
    for _ in range(CALL_DEPTH):
        parent = cur.parent
        if parent is None:
            return False
        words = type_words(parent.type)
        if not words.isdisjoint(ARG_WORDS) or not words.isdisjoint(BODY_WORDS):
            return False  # inside the arguments (or the body) of something else
        if not words.isdisjoint(CALL_WORDS):
            end = parent.end_byte
            for child in parent.named_children:
                if child.start_byte >= leaf.end_byte:
                    end = child.start_byte
                    if type_words(child.type).isdisjoint({"type"}):
                        break
            gap = data[leaf.end_byte:end]
            for _ in range(3):
                gap = _GENERIC_ARGS.sub(b"", gap)
            return _PUNCT.fullmatch(gap) is not None
        cur = parent
    return False


# -- qualified names ----------------------------------------------------------------------------

def _qualified(name: Name, kind: str, symbol: str, scope: _Scope | None, leaf: Any, data: bytes,
               qual: re.Pattern[bytes] | None, selfp: re.Pattern[bytes], path: str) -> bool:
    if kind == "def":
        dotted = name.dotted
        if symbol == dotted or symbol.endswith("." + dotted):
            return True
        return _in_path(name.qualifier, path) and "." not in symbol
    before = data[max(0, leaf.start_byte - BEFORE_BYTES):leaf.start_byte]
    if qual is not None and qual.search(before):
        return True
    if selfp.search(before) and scope is not None and name.qualifier[-1] in scope.path.split("."):
        return True
    if kind == "import":
        node = _in_import(leaf)
        head = data[node.start_byte:leaf.start_byte] if node is not None else b""
        words = set(re.findall(rb"[\w$]+", head))
        return all(q.encode("utf-8") in words for q in name.qualifier)
    return False


def _in_path(qualifier: tuple[str, ...], path: str) -> bool:
    """Do the qualifier's segments name the file's folders or its stem (``assert.Equal`` in
    ``assert/assertions.go``, ``clap::builder::Arg`` in ``clap_builder/src/builder/arg.rs``)?"""
    if not path:
        return False
    parts = path.lower().replace("\\", "/").split("/")
    parts[-1] = parts[-1].rsplit(".", 1)[0]
    words = set(parts) | {w for p in parts for w in re.split(r"[_\-]", p)}
    return all(q.lower() in words or q in ("crate", "self", "super") for q in qualifier)


# -- positions ----------------------------------------------------------------------------------

def _line_starts(data: bytes) -> list[int]:
    starts = [0]
    i = data.find(b"\n")
    while i != -1:
        starts.append(i + 1)
        i = data.find(b"\n", i + 1)
    return starts


def _position(data: bytes, starts: list[int], offset: int) -> tuple[int, int]:
    import bisect

    line = bisect.bisect_right(starts, offset)
    column = len(data[starts[line - 1]:offset].decode("utf-8", "replace")) + 1
    return line, column


def _last_row(node: Any) -> int:
    end = node.end_point
    return end[0] - 1 if end[1] == 0 and end[0] > node.start_point[0] else end[0]
