"""Which tree-sitter grammar reads a file: by rule, with a small alias table.

The rule: the file extension is the grammar name (``.lua`` → ``lua``, ``.zig`` → ``zig``).
The alias table maps the extensions and file names where that rule fails. Every alias is
validated against the grammar pack in a test. Grammars that hang or crash the parser are
excluded by name; their files are still indexed, as line windows.
"""

from __future__ import annotations

import functools
import posixpath

# Grammars that hang or crash the parser (cobol hangs on inputs as small as "abc").
EXCLUDED = frozenset({"cobol", "sql"})

# Pseudo-grammars in the pack that are not a file's language.
NOT_FILE_LANGUAGES = frozenset({"comment", "printf", "query", "test", "luap", "luadoc", "jsdoc",
                                "markdown_inline", "doxygen", "re2c", "readline"})

EXTENSION_ALIASES: dict[str, str] = {
    "py": "python", "pyi": "python", "pyw": "python",
    "js": "javascript", "jsx": "javascript", "mjs": "javascript", "cjs": "javascript",
    "ts": "typescript", "mts": "typescript", "cts": "typescript",
    "tsx": "tsx",
    "rs": "rust",
    "cs": "csharp",
    "kt": "kotlin", "kts": "kotlin",
    "rb": "ruby", "rake": "ruby", "gemspec": "ruby",
    "sh": "bash", "bash": "bash", "zsh": "bash",
    "md": "markdown", "markdown": "markdown",
    "yml": "yaml",
    "h": "c",
    "hpp": "cpp", "hh": "cpp", "hxx": "cpp", "cc": "cpp", "cxx": "cpp", "c++": "cpp", "ipp": "cpp",
    "cu": "cuda", "cuh": "cuda",
    "m": "objc", "mm": "objc",
    "ex": "elixir", "exs": "elixir",
    "hs": "haskell", "lhs": "haskell",
    "ml": "ocaml", "mli": "ocaml_interface",
    "erl": "erlang", "hrl": "erlang",
    "clj": "clojure", "cljs": "clojure", "cljc": "clojure", "edn": "clojure",
    "el": "elisp",
    "lisp": "commonlisp", "cl": "commonlisp",
    "scm": "scheme", "ss": "scheme",
    "rkt": "racket",
    "fs": "fsharp", "fsx": "fsharp", "fsi": "fsharp_signature",
    "jl": "julia",
    "pl": "perl", "pm": "perl",
    "ps1": "powershell", "psm1": "powershell",
    "tf": "terraform", "tfvars": "terraform",
    "hcl": "hcl",
    "htm": "html", "xhtml": "html",
    "xsd": "xml", "xsl": "xml", "svg": "xml", "plist": "xml",
    "tex": "latex", "sty": "latex",
    "gd": "gdscript",
    "v": "v", "sv": "verilog", "svh": "verilog", "vh": "verilog",
    "vhd": "vhdl",
    "mk": "make", "mak": "make",
    "cmake": "cmake",
    "proto": "proto",
    "gql": "graphql", "graphqls": "graphql",
    "sol": "solidity",
    "nim": "nim", "nims": "nim",
    "f90": "fortran", "f95": "fortran", "f03": "fortran", "f": "fortran", "for": "fortran",
    "pas": "pascal", "pp": "pascal",
    "vim": "vim", "vimrc": "vim",
    "bzl": "starlark", "star": "starlark",
    "jsonc": "json", "json5": "json",
    "ini": "ini", "cfg": "ini", "conf": "ini",
    "cob": "cobol", "cbl": "cobol", "cpy": "cobol",
    "rst": "rst",
    "r": "r",
    "groovy": "groovy", "gradle": "groovy",
    "mat": "matlab",
    "nix": "nix",
    "dockerfile": "dockerfile",
    "erb": "embeddedtemplate", "ejs": "embeddedtemplate",
    "tcl": "tcl",
    "wgsl": "wgsl",
    "glsl": "glsl", "vert": "glsl", "frag": "glsl",
    "hlsl": "hlsl",
    "sql": "sql",
    "sc": "scala",
    "d": "d",
    "luau": "luau",
}

FILENAME_ALIASES: dict[str, str] = {
    "dockerfile": "dockerfile",
    "containerfile": "dockerfile",
    "makefile": "make",
    "gnumakefile": "make",
    "cmakelists.txt": "cmake",
    "gemfile": "ruby",
    "rakefile": "ruby",
    "vagrantfile": "ruby",
    "build": "starlark",
    "build.bazel": "starlark",
    "workspace": "starlark",
    "go.mod": "gomod",
    "go.sum": "gosum",
    ".gitignore": "gitignore",
    ".gitattributes": "gitattributes",
    ".bashrc": "bash",
    ".zshrc": "bash",
    ".profile": "bash",
    "requirements.txt": "requirements",
    "meson.build": "meson",
    "kconfig": "kconfig",
}


# Names people use for a language that are neither its grammar nor a file extension.
NAME_ALIASES: dict[str, str] = {
    "golang": "go", "c#": "csharp", "f#": "fsharp", "shell": "bash", "sh": "bash",
    "objective-c": "objc", "objectivec": "objc", "emacs-lisp": "elisp", "common-lisp": "commonlisp",
    "docker": "dockerfile", "makefile": "make", "protobuf": "proto", "js": "javascript",
    "node": "javascript", "plain": "text", "txt": "text",
}
# The labels the aliases lead to: a name that is one of them is kept as it is.
_ALIAS_LABELS = frozenset(EXTENSION_ALIASES.values()) | frozenset(FILENAME_ALIASES.values())


def language_key(name: str) -> str:
    """The stored language label a person means: case-insensitive, and file extensions and
    common names accepted (``Python``, ``py`` -> ``python``; ``TS`` -> ``typescript``;
    ``C++`` -> ``cpp``; ``golang`` -> ``go``). Other names are lower-cased as they are."""
    key = name.strip().lower()
    if key in _ALIAS_LABELS:
        return key
    return NAME_ALIASES.get(key) or EXTENSION_ALIASES.get(key) or key


@functools.cache
def available_grammars() -> frozenset[str]:
    """Grammar names bundled in tree-sitter-language-pack (imported lazily)."""
    import typing

    import tree_sitter_language_pack as pack

    return frozenset(typing.get_args(pack.SupportedLanguage))


def grammar_for(path: str) -> str | None:
    """The grammar name a path maps to by rule and alias, before exclusions.

    Returns None when no grammar in the pack fits.
    """
    name = posixpath.basename(path).lower()
    if name in FILENAME_ALIASES:
        return FILENAME_ALIASES[name]
    if name.startswith("dockerfile.") or name.endswith(".dockerfile"):
        return "dockerfile"
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem:
        return None
    if ext in EXTENSION_ALIASES:
        return EXTENSION_ALIASES[ext]
    if ext in available_grammars() and ext not in NOT_FILE_LANGUAGES:
        return ext
    return None


def language_for(path: str) -> str | None:
    """The grammar to parse ``path`` with, or None (no grammar, or an excluded one).

    A None file is still indexed, as line windows.
    """
    grammar = grammar_for(path)
    if grammar is None or grammar in EXCLUDED:
        return None
    return grammar


def language_label(path: str) -> str:
    """The language name stored with a chunk: the grammar, even when excluded (``cobol``),
    else ``text``."""
    return grammar_for(path) or "text"
