"""The vocabulary of the generic rules: words in tree-sitter node type names.

A node type is split into words on ``_`` and camelCase (``function_definition`` ->
{function, definition}, ``FnProto`` -> {fn, proto}); the rules in ``definitions.py`` and
``ast_chunker.py`` read these words, never a per-language list of node types.
"""

from __future__ import annotations

import functools
import re

FUNC_WORDS = frozenset({"function", "method", "fn", "func", "constructor", "destructor",
                        "procedure", "subroutine", "lambda", "macro", "getter", "setter"})
CLASS_WORDS = frozenset({"class", "struct", "interface", "trait", "impl", "module", "mod",
                         "namespace", "enum", "object", "protocol", "extension", "record",
                         "union", "instance", "container", "data"})
# Values whose type says class make a class (``T struct {...}``); an ``object`` literal does not.
VALUE_CLASS_WORDS = CLASS_WORDS - {"object"}
SECTION_WORDS = frozenset({"section"})
# Words that say "not a definition": calls, expressions, names, lists, bodies.
VETO_WORDS = frozenset({"if", "for", "while", "try", "with", "switch", "match", "case",
                        "return", "else", "elif", "loop", "catch", "foreach", "unless",
                        "until", "raise", "throw", "yield", "await", "assert", "delete",
                        "call", "invocation", "expression", "path", "name", "identifier",
                        "reference", "argument", "arguments", "parameter", "parameters",
                        "literal", "pattern", "clause", "list", "body", "block", "heritage",
                        "id", "import", "open", "use", "include"})
# A value of these types is not a function definition (``x = f()``, ``f: () => void``).
VALUE_VETO_WORDS = frozenset({"call", "invocation", "type", "signature", "declaration"})
# A value of these types is not a class definition: a use, not a declaration (Rust's struct
# literal, ``struct_expression``; Zig's ``ErrorUnionExpr`` is not covered: rank-dropped.md).
VALUE_CLASS_VETO_WORDS = frozenset({"expression"})
# Wrapper descent stops at calls, bodies, lists, names (all vetoed words but "expression").
STOP_WORDS = VETO_WORDS - {"expression"}
# Type words of a node that declares something (with a class word: a class even without a
# body, such as Kotlin's ``data class User(val id: Long)``).
DECLARATION_WORDS = frozenset({"declaration", "definition"})
TRIVIA_WORDS = frozenset({"comment", "attribute", "annotation", "decorator", "pragma",
                          "haddock", "signature"})
BODY_WORDS = frozenset({"body", "block"})
IMPORT_WORDS = frozenset({"import", "imports", "include", "use", "using", "require", "open",
                          "extern"})
HEADING_WORDS = frozenset({"heading", "title"})
IDENT_SUFFIXES = ("identifier", "name", "constant", "word", "key", "variable", "alias",
                  "IDENTIFIER")

# Data languages: entries are named by their key and are sections.
DATA_LANGUAGES = frozenset({"json", "yaml", "toml"})

_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


@functools.lru_cache(maxsize=4096)
def type_words(node_type: str) -> frozenset[str]:
    """Words of a node type: ``function_definition`` -> {function, definition},
    ``FnProto`` -> {fn, proto}."""
    words = set()
    for part in node_type.split("_"):
        if part.islower() or part.isupper():
            words.add(part.lower())
        else:
            words.update(w.lower() for w in _CAMEL.findall(part))
    return frozenset(words)


@functools.lru_cache(maxsize=4096)
def is_trivia_type(node_type: str) -> bool:
    return bool(type_words(node_type) & TRIVIA_WORDS)


@functools.lru_cache(maxsize=4096)
def is_def_type(node_type: str) -> bool:
    """Does the type name say function, class or section?"""
    return bool(type_words(node_type) & (FUNC_WORDS | CLASS_WORDS | SECTION_WORDS))


@functools.lru_cache(maxsize=4096)
def is_comment_type(node_type: str) -> bool:
    return bool(type_words(node_type) & {"comment", "haddock"})


@functools.lru_cache(maxsize=4096)
def is_import_type(node_type: str) -> bool:
    return bool(type_words(node_type) & IMPORT_WORDS)


@functools.lru_cache(maxsize=4096)
def is_body_type(node_type: str) -> bool:
    return bool(type_words(node_type) & BODY_WORDS)


@functools.lru_cache(maxsize=4096)
def is_ident_type(node_type: str) -> bool:
    return node_type.endswith(IDENT_SUFFIXES)
