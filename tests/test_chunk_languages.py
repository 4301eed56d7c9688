"""The grammar rule and alias table, validated against the bundled grammar pack."""

from __future__ import annotations

import pytest

from codeseam.chunk.languages import (EXCLUDED, EXTENSION_ALIASES, FILENAME_ALIASES,
                                      NOT_FILE_LANGUAGES, available_grammars, grammar_for,
                                      language_for, language_label)


def test_pack_is_the_bundled_one():
    grammars = available_grammars()
    assert len(grammars) >= 150  # 0.13.x bundles 173; 1.x would download at run time
    assert {"python", "cobol", "sql", "markdown", "tsx"} <= grammars


@pytest.mark.parametrize("alias,grammar", sorted({**EXTENSION_ALIASES, **FILENAME_ALIASES}.items()))
def test_every_alias_names_a_grammar_in_the_pack(alias, grammar):
    assert grammar in available_grammars(), f"{alias} -> {grammar} is not in the pack"


def test_every_alias_grammar_loads_and_parses():
    """Each grammar an alias points to (exclusions aside) loads offline and parses."""
    from codeseam.chunk.parse import parse

    targets = sorted({*EXTENSION_ALIASES.values(), *FILENAME_ALIASES.values()} - EXCLUDED)
    for grammar in targets:
        tree = parse(grammar, b"x\n", timeout=5.0)
        assert tree.root_node is not None, grammar


def test_extension_rule_is_the_grammar_name():
    """The rule: the extension is the grammar name, for every file language in the pack
    that no alias redirects."""
    for name in sorted(available_grammars() - NOT_FILE_LANGUAGES):
        if name in EXTENSION_ALIASES:
            continue
        assert grammar_for(f"src/file.{name}") == name


@pytest.mark.parametrize("path,grammar", [
    ("a.py", "python"), ("a.PY", "python"), ("lib/x.tsx", "tsx"), ("x.mjs", "javascript"),
    ("x.h", "c"), ("x.hpp", "cpp"), ("x.cc", "cpp"), ("x.rs", "rust"), ("x.cs", "csharp"),
    ("x.kt", "kotlin"), ("x.rb", "ruby"), ("x.sh", "bash"), ("x.md", "markdown"),
    ("x.yml", "yaml"), ("x.lua", "lua"), ("x.zig", "zig"), ("x.ex", "elixir"),
    ("x.hs", "haskell"), ("x.ml", "ocaml"), ("x.dart", "dart"), ("x.swift", "swift"),
    ("x.scala", "scala"), ("x.php", "php"), ("x.go", "go"), ("x.java", "java"),
    ("Dockerfile", "dockerfile"), ("sub/Makefile", "make"), ("Dockerfile.dev", "dockerfile"),
    ("go.mod", "gomod"),
])
def test_known_paths(path, grammar):
    assert grammar_for(path) == grammar
    assert language_for(path) == grammar


def test_excluded_and_unknown():
    assert language_for("old.cob") is None and language_label("old.cob") == "cobol"
    assert language_for("q.sql") is None and language_label("q.sql") == "sql"
    for path in ("README", "notes.unknownext", ".hidden", "x.", "archive.tar.gz"):
        assert language_for(path) is None
        assert language_label(path) == "text"
    assert "cobol" in EXCLUDED


def test_language_key_maps_what_people_type_to_the_stored_label():
    from codeseam.chunk.languages import EXTENSION_ALIASES, FILENAME_ALIASES, NAME_ALIASES, language_key

    for ext, label in EXTENSION_ALIASES.items():  # an extension names the language its files are in
        assert language_key(ext) == label == language_label(f"x.{ext}"), ext
        assert language_key(ext.upper()) == label
    for label in set(EXTENSION_ALIASES.values()) | set(FILENAME_ALIASES.values()):
        assert language_key(label) == label and language_key(f" {label.title()} ") == label
    for name, label in NAME_ALIASES.items():
        assert label in available_grammars() or label == "text", name
        assert language_key(name) == label
    assert language_key("Lua") == "lua" == language_label("x.lua")  # by the extension rule
