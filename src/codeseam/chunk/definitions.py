"""The generic definition rule: which nodes are definitions, their names and kinds.

No per-language table of node types: a grammar works the day the pack ships it. The rule
reads field names and the words in node type names (split on ``_`` and camelCase):

- a *name*: the ``name`` field; else the innermost ``declarator`` (C, C++); for nodes
  whose type says function/class, the ``type`` field (Rust ``impl Type``), a field
  holding an identifier (Zig ``fn``), or the first identifier child (Kotlin); the
  ``pattern`` of a binding with a body (OCaml ``let``); the first argument of a
  call with a do-block (Elixir ``def``/``defmodule``); the heading of a section
  (Markdown); the key of an entry in a data file (JSON, YAML, TOML).
- a *kind*: type words such as ``class``/``struct``/``impl``/``module`` give ``class``,
  ``function``/``method``/``fn`` give ``function`` (``method`` inside a class), a body
  alone gives ``function``; a ``value`` that is a function or class (JS
  ``const f = () => ...``, Go ``type T struct``) gives its kind.
- wrappers are looked through via their last named child (``export``, decorators,
  ``template <...>``, ``const``); a named signature followed by a body sibling is a
  definition too (Dart, Zig).

Symbol paths are dotted: ``Class.method``, ``outer.inner``; Go methods take their
receiver type (``Server.Get``), ``obj.prop = function`` gives ``obj.prop``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .vocab import (BODY_WORDS, CLASS_WORDS, DECLARATION_WORDS, FUNC_WORDS, HEADING_WORDS, SECTION_WORDS, STOP_WORDS,
                    VALUE_CLASS_VETO_WORDS, VALUE_CLASS_WORDS, VALUE_VETO_WORDS, VETO_WORDS, is_body_type, is_ident_type,
                    is_trivia_type, type_words)

SIG_MAX_BYTES = 300
SIG_MAX_LINES = 4
NAME_MAX = 80
# type words that say function or class (one set, not a union per call)
_FUNC_OR_CLASS = FUNC_WORDS | CLASS_WORDS


@dataclass(slots=True, eq=False)
class Def:
    """A definition found in the tree."""

    name: str
    path: str  # dotted symbol path
    kind: str  # function | method | class | section
    parent: Def | None
    start: int  # byte where its first unit starts (leading comments included)
    node: Any  # the definition's node (kept for the signature, computed on demand)
    sig_start: int  # where the signature starts (decorators included)
    data: bytes
    parent_path: str = ""  # the parent's path ("" at the top)
    sig_text: str | None = None  # the signature, once computed

    @property
    def sig(self) -> str:
        """Signature (decorators included), for continuation headers; computed once."""
        if self.sig_text is None:
            self.sig_text = signature(self.data, self.sig_start, self.node)
        return self.sig_text


def _text(data: bytes, node: Any) -> str:
    return data[node.start_byte:node.end_byte].decode("utf-8", "replace")


_GENERIC = re.compile(r"<[^<>]*>|\[[^\[\]]*\]")
_SEPS = re.compile(r"\s*(?:::|->|:|\\|/)\s*")


def clean_name(raw: str) -> str:
    """``Foo<T>`` -> ``Foo``; ``a::b`` / ``M:f`` / ``A\\B`` -> dotted; one line, bounded."""
    if raw.isidentifier():
        return raw[:NAME_MAX]
    name = raw.strip().split("\n", 1)[0]
    for _ in range(3):
        stripped = _GENERIC.sub("", name)
        if stripped == name:
            break
        name = stripped
    name = _SEPS.sub(".", name).strip("*&(). \t\"'`")
    name = " ".join(name.split())
    return name[:NAME_MAX]


def _receiver_type(data: bytes, receiver: Any) -> str:
    """Go receiver ``(s *Server)`` / ``(s Server[T])`` -> ``Server``."""
    text = _GENERIC.sub("", _text(data, receiver))
    idents = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)
    return idents[-1] if idents else ""


def _heading_text(data: bytes, node: Any) -> str | None:
    for child in node.named_children:
        if not type_words(child.type).isdisjoint(HEADING_WORDS):
            content = child.child_by_field_name("heading_content")
            raw = _text(data, content if content is not None else child)
            raw = raw.strip().strip("#=-~^*` \t").strip()
            return raw.split("\n", 1)[0].strip() or None
        return None
    return None


def _name_node(node: Any, words: frozenset[str], data_lang: bool,
               has_body: bool = False) -> Any | None:
    """The node holding a definition's name, by field names and type words."""
    n = node.child_by_field_name("name")
    if n is not None:
        return n
    d = node.child_by_field_name("declarator")
    if d is not None:
        while True:
            inner = d.child_by_field_name("declarator")
            if inner is None:  # C++'s reference_declarator (``Emitter& Emitter::Write(...)``) names no field
                inner = _only_declarator(d)
            if inner is None:
                return d
            d = inner
    if data_lang:
        k = node.child_by_field_name("key")
        if k is not None:
            return k
        child = node.named_child(0) if node.named_child_count else None
        if child is not None and (is_ident_type(child.type) or child.type.endswith("key")):
            return child
        return None
    if not words.isdisjoint(_FUNC_OR_CLASS) and (
            has_body or node.start_point.row != node.end_point.row or _has_body(node)
            or _bodiless_class(words)):
        t = node.child_by_field_name("type")
        if t is not None and t.start_point.row == node.start_point.row:
            return _referent(t)
        return _first_ident(node)
    p = node.child_by_field_name("pattern")
    if p is not None and p.child_count == 0 and node.child_by_field_name("body") is not None:
        return p
    return None


def _only_declarator(node: Any) -> Any | None:
    """The one named child of ``node`` that is a declarator, if that is all it holds."""
    if node.named_child_count != 1:
        return None
    child = node.named_child(0)
    return child if child is not None and "declarator" in type_words(child.type) else None


def _referent(node: Any) -> Any:
    """What a reference or pointer type refers to: Rust's ``impl Serialize for &'a mut
    Serializer<W>`` names ``Serializer``, not ``'a mut Serializer``."""
    for _ in range(4):
        if type_words(node.type).isdisjoint({"reference", "pointer"}):
            return node
        inner = node.child_by_field_name("type")
        if inner is None:
            return node
        node = inner
    return node


def _bodiless_class(words: frozenset[str]) -> bool:
    """A class declared on one line without a body (Kotlin ``data class P(val x: Int)``,
    ``object O``): the type says class and declaration or definition."""
    return not words.isdisjoint(CLASS_WORDS) and not words.isdisjoint(DECLARATION_WORDS)


def _has_body(node: Any) -> bool:
    """A ``body`` field, or a body/block child among the first few children."""
    if node.child_by_field_name("body") is not None:
        return True
    for i in range(min(node.child_count, 8)):
        child = node.child(i)
        if child is not None and child.is_named and is_body_type(child.type):
            return True
    return False


def _value_kind(node: Any, last_child: bool = False) -> str | None:
    """Kind of a named value: ``const f = () => {}`` -> function; ``T struct {}`` -> class.

    Looks at the ``value``/``right``/``type``/``body`` fields (and, with ``last_child``, the
    last named child when it spans several rows), through single-child wrappers.
    """
    candidates = [node.child_by_field_name(f) for f in ("value", "right", "type", "body")]
    count = node.named_child_count
    if last_child and count:
        last = node.named_child(count - 1)
        if last is not None and last.start_point.row != last.end_point.row:
            candidates.append(last)
    for v in candidates:
        if v is None:
            continue
        for _ in range(4):  # look through wrappers (parentheses, suffix expressions)
            w = type_words(v.type)
            if not w.isdisjoint(FUNC_WORDS) and w.isdisjoint(VALUE_VETO_WORDS):
                return "function"
            if (not w.isdisjoint(VALUE_CLASS_WORDS) and w.isdisjoint(VALUE_CLASS_VETO_WORDS)
                    and v.start_point.row != v.end_point.row):
                return "class"
            if v.named_child_count != 1 or not w.isdisjoint(BODY_WORDS):
                break
            v = v.named_child(0)
    return None


def _first_ident(node: Any) -> Any | None:
    """The first identifier leaf on the node's first row."""
    row = node.start_point.row
    for i in range(min(node.named_child_count, 8)):
        child = node.named_child(i)
        if child is None or child.start_point.row != row:
            return None
        if child.child_count == 0 and is_ident_type(child.type):
            return child
    return None


def _call_def(node: Any, data: bytes) -> tuple[str, str] | None:
    """A call with a do-block (Elixir ``def f(x) do``): name from its first argument."""
    target = node.child_by_field_name("target")
    if target is None or not any(is_body_type(c.type) for c in node.named_children):
        return None
    args = None
    for child in node.named_children:
        if child.type == "arguments" or child.type == "argument_list":
            args = child
            break
    if args is None or args.named_child_count == 0:
        return None
    first = args.named_children[0]
    head = first.child_by_field_name("target") or first
    if head.type == "binary_operator":  # `def f(x) when guard`
        head = head.child_by_field_name("left") or head
        head = head.child_by_field_name("target") or head
    keyword = _text(data, target)
    if not keyword.startswith("def"):  # def, defp, defmodule, defmacro, defimpl ...
        return None
    kind = "class" if type_words(keyword) & CLASS_WORDS or "module" in keyword else "function"
    return clean_name(_text(data, head)), kind


def classify(node: Any, data: bytes, data_lang: bool,
             words: frozenset[str] | None = None) -> tuple[str, str] | None:
    """``(name, kind)`` when ``node`` itself is a definition."""
    if words is None:
        words = type_words(node.type)
    if not words.isdisjoint(SECTION_WORDS):
        heading = _heading_text(data, node)
        return (heading, "section") if heading else None
    if data_lang:
        name_node = _name_node(node, words, True)
        if name_node is None:
            return None
        name = clean_name(_text(data, name_node))
        return (name, "section") if name else None
    if "call" in words:  # Elixir `def f(x) do ... end`
        return _call_def(node, data)
    if not words.isdisjoint(VETO_WORDS):
        return None
    name_node = _name_node(node, words, False)
    kind: str | None = None
    if name_node is None:
        kind = _value_kind(node, last_child=True)
        if kind is None:
            return None
        name_node = _first_ident(node)
        if name_node is None:
            return None
    elif not words.isdisjoint(CLASS_WORDS):
        kind = "class"
    elif not words.isdisjoint(FUNC_WORDS):
        kind = "function"
    else:
        kind = _value_kind(node)
        if kind is None:
            if not _has_body(node):
                return None
            kind = "function"
    name = clean_name(_text(data, name_node))
    if not name:
        return None
    receiver = node.child_by_field_name("receiver")
    if receiver is not None:
        rtype = _receiver_type(data, receiver)
        if rtype:
            name = f"{rtype}.{name}"
            kind = "method" if kind == "function" else kind
    return name, kind


_DECORATION_WORDS = frozenset({"decorator", "attribute", "annotation", "comment", "modifiers", "modifier"})


def _decoration(node_type: str) -> bool:
    """Decorators, attributes, annotations and comments: what stacks up above a definition."""
    return not type_words(node_type).isdisjoint(_DECORATION_WORDS)


def find_definition(node: Any, data: bytes, data_lang: bool) -> tuple[Any, str, str] | None:
    """``(def_node, name, kind)``: ``node`` or a definition it wraps.

    Wrappers (``export``, decorators, ``template <...>``, ``const x = ...``, an expression
    statement) are looked through via their last named child, at most three levels,
    never into a call, a body or a list.
    """
    cur = node
    for _ in range(4):
        if cur.child_count == 0:
            return None
        words = type_words(cur.type)
        found = classify(cur, data, data_lang, words)
        if found is not None:
            return cur, found[0], found[1]
        if data_lang or not words.isdisjoint(STOP_WORDS):
            return None
        count = cur.named_child_count
        if count == 0:
            return None
        kids = cur.named_children
        if count > 4 and not all(_decoration(k.type) for k in kids[:-1]):
            return None  # a big node, not a definition under its decorators
        if count <= 3:
            sib = sibling_definition(kids, data)
            if sib is not None:
                return cur, sib[0], sib[1]
        # JS `obj.prop = function () {}`: an assignment whose right side is a function
        right = cur.child_by_field_name("right")
        if right is not None:
            rwords = type_words(right.type)
            if not rwords.isdisjoint(_FUNC_OR_CLASS) and rwords.isdisjoint(VALUE_VETO_WORDS):
                left = cur.child_by_field_name("left")
                if left is not None:
                    kind = "class" if rwords & CLASS_WORDS else "function"
                    return cur, clean_name(_text(data, left)), kind
        kids = [c for c in kids if not is_trivia_type(c.type)]
        if not kids or len(kids) > 2:
            return None
        cur = kids[-1]
    return None


def sibling_definition(nodes: list[Any], data: bytes) -> tuple[str, str] | None:
    """A named signature directly followed by a body (Dart ``f() {}``, Zig ``fn f() {}``)."""
    for i in range(len(nodes) - 1):
        a = nodes[i]
        if a.child_count == 0 or not is_body_type(nodes[i + 1].type):
            continue
        words = type_words(a.type)
        if not words.isdisjoint(VETO_WORDS):
            continue
        name_node = a.child_by_field_name("name")
        if name_node is None and not words.isdisjoint(_FUNC_OR_CLASS):
            name_node = _first_ident(a)  # Zig: fn <identifier>
        if name_node is None and a.named_child_count == 1:  # Dart: method_signature > function_signature
            inner = a.named_child(0)
            if inner is not None:
                name_node = inner.child_by_field_name("name")
                words = words | type_words(inner.type)
        if name_node is None:
            continue
        kind = "class" if words & CLASS_WORDS else "function"
        name = clean_name(_text(data, name_node))
        if name:
            return name, kind
    return None


def signature(data: bytes, start: int, def_node: Any) -> str:
    """Source from ``start`` (decorators) to the body, bounded to a few lines."""
    body = def_node.child_by_field_name("body")
    end = body.start_byte if body is not None and body.start_byte > start else -1
    if end < 0:
        nl = data.find(b"\n", def_node.start_byte)
        end = def_node.end_byte if nl < 0 else min(nl, def_node.end_byte)
    raw = data[start:min(end, start + SIG_MAX_BYTES)].decode("utf-8", "replace")
    lines = [ln.rstrip() for ln in raw.split("\n")[:SIG_MAX_LINES]]
    return "\n".join(ln for ln in lines if ln.strip())


def make_def(name: str, kind: str, scope: Def | None, start: int, sig_start: int, node: Any,
             data: bytes) -> Def:
    if kind == "function" and scope is not None and scope.kind == "class":
        kind = "method"
    if scope is None:
        return Def(name, name, kind, None, start, node, sig_start, data)
    return Def(name, f"{scope.path}.{name}", kind, scope, start, node, sig_start, data, scope.path)
