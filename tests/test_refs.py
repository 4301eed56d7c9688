"""The pure core of refs (``references.occur.find_occurrences``) over real grammars: kinds,
enclosing symbols, qualified names, and the invariants (only code, only whole names, every
line holds the name) checked on generated programs with hypothesis."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings, strategies as st

from codeseam.codec import refs_json, refs_result
from codeseam.errors import ConfigError
from codeseam.records import Reference, RefsResult
from codeseam.references import find_occurrences, parse_name
from codeseam.references.find import callers_of, check_kinds

PY = '''import os
from foo import parse as p, parse

def parse(x):
    """parse the thing"""
    # parse here
    return parse(x) + "parse"

class Server:
    def get(self):
        self.parse(1)
        f"{parse}"
        return [parse for _ in x]

def other():
    cb(parse)
    obj.parse(3)
    Server.get(None)
'''

CASES = {
    "go": ("main.go", '''package main

import "fmt"

// parse parses
func parse(s string) int { return len(s) }

type Server struct{ parse int }

func (s *Server) Run() {
	n := parse("parse")
	f := parse
	fmt.Println(n, f, s.parse)
}
''', [(6, "def", "parse"), (8, "def", "parse"), (11, "call", "Server.Run"), (12, "use", "Server.Run"),
      (13, "use", "Server.Run")]),
    "rust": ("lib.rs", '''use crate::util::parse;

/// parse docs
fn parse(s: &str) -> usize { s.len() }

impl Server {
    fn run(&self) -> usize {
        let n = parse("parse");
        let m = util::parse::<u8>(x);
        n + self.parse
    }
}
''', [(1, "import", ""), (4, "def", "parse"), (8, "call", "Server.run"), (9, "call", "Server.run"),
      (10, "use", "Server.run")]),
    "javascript": ("a.js", '''import { parse } from "./parse";

// parse it
function parse(s) { return s.length; }

class Server {
  run() {
    const n = parse(`parse ${parse}`);
    this.parse = 1;
    return new parse();
  }
}
''', [(1, "import", ""), (4, "def", "parse"), (8, "call", "Server.run"), (8, "use", "Server.run"),
      (9, "use", "Server.run"), (10, "call", "Server.run")]),
    "typescript": ("a.ts", '''import { parse } from "./parse";

export function parse(s: string): number { return s.length; }

export class Server {
  parse: number = 0;
  run(): number {
    return parse<string>("x") + this.parse;
  }
}
''', [(1, "import", ""), (3, "def", "parse"), (6, "def", "Server.parse"), (8, "call", "Server.run"),
      (8, "use", "Server.run")]),
    "java": ("X.java", '''import com.x.Util.parse;

class Server {
    int parse(String s) { return s.length(); }
    void run() {
        int n = parse("parse");
        this.parse("x");
    }
}
''', [(1, "import", ""), (4, "def", "Server.parse"), (6, "call", "Server.run"), (7, "call", "Server.run")]),
    "c": ("x.c", '''#include "parse.h"

int parse(const char *s);

/* parse */
int parse(const char *s) { return 1; }

int run(void) {
    int (*f)(const char *) = parse;
    return parse("parse") + f("x");
}
''', [(3, "def", "parse"), (6, "def", "parse"), (9, "use", "run"), (10, "call", "run")]),
    "ruby": ("x.rb", '''require "parse"

class Server
  def parse(s)
    s.size # parse
  end

  def run
    parse("parse") + self.parse(1)
  end
end
''', [(4, "def", "Server.parse"), (9, "call", "Server.run"), (9, "call", "Server.run")]),
}


def triples(text: str, language: str, name: str, path: str = "") -> list[tuple[int, str, str]]:
    return [(o.line, o.kind, o.symbol) for o in find_occurrences(text, language, name, path=path)]


def test_python_kinds_and_enclosing_symbols() -> None:
    assert triples(PY, "python", "parse") == [
        (2, "import", ""), (2, "import", ""), (4, "def", "parse"), (7, "call", "parse"),
        (11, "call", "Server.get"), (12, "use", "Server.get"), (13, "use", "Server.get"),
        (16, "use", "other"), (17, "call", "other")]
    first = find_occurrences(PY, "python", "parse")[2]
    assert (first.column, first.symbol_kind, first.symbol_start, first.symbol_end) == (5, "function", 4, 7)


@pytest.mark.parametrize("language", sorted(CASES))
def test_one_rule_for_every_grammar(language: str) -> None:
    path, text, expected = CASES[language]
    assert triples(text, language, "parse", path) == expected


def test_a_module_or_class_constant_is_defined_where_it_is_assigned() -> None:
    """``DEFAULT_TIMEOUT_CONFIG = Timeout(5)`` was labelled a use: its definition was nowhere."""
    src = ("DEFAULT_TIMEOUT_CONFIG = Timeout(5)\nLIMIT: int = 3\n\n\nclass Client:\n    RETRIES = 2\n\n"
           "    def send(self, timeout=DEFAULT_TIMEOUT_CONFIG):\n        RETRIES = 5\n        return RETRIES\n\n\n"
           "DEFAULT_TIMEOUT_CONFIG.x = 1\n")
    kinds = {n: [(o.line, o.kind, o.symbol) for o in find_occurrences(src, "python", n, path="c.py")]
             for n in ("DEFAULT_TIMEOUT_CONFIG", "LIMIT", "RETRIES")}
    assert kinds["DEFAULT_TIMEOUT_CONFIG"] == [(1, "def", "DEFAULT_TIMEOUT_CONFIG"), (8, "use", "Client.send"),
                                             (13, "use", "")]  # an attribute set on it is a use
    assert kinds["LIMIT"] == [(2, "def", "LIMIT")]
    assert kinds["RETRIES"] == [(6, "def", "Client.RETRIES"), (9, "use", "Client.send"), (10, "use", "Client.send")]
    ruby = find_occurrences("MAX_SIZE = 10\n\ndef grow(n)\n  n * MAX_SIZE\nend\n", "ruby", "MAX_SIZE", path="g.rb")
    assert [(o.line, o.kind) for o in ruby] == [(1, "def"), (4, "use")]


def test_qualified_names() -> None:
    # the definition by its symbol path; a use only where the qualifier stands before it
    assert triples(PY, "python", "Server.get") == [(10, "def", "Server.get"), (18, "call", "other")]
    assert triples(PY, "python", "obj.parse") == [(17, "call", "other")]
    # self inside the type's own definition counts for Type.member
    assert (11, "call", "Server.get") in triples(PY, "python", "Server.parse")
    rust = CASES["rust"][1]
    assert triples(rust, "rust", "util::parse") == [(1, "import", ""), (9, "call", "Server.run")]
    assert triples(rust, "rust", "Server.run") == [(7, "def", "Server.run")]
    # a package qualifier matches the file's folders (Go: assert.Equal in assert/assertions.go)
    go = "package assert\n\nfunc Equal(a, b int) bool { return a == b }\n"
    assert triples(go, "go", "assert.Equal", "assert/assertions.go") == [(3, "def", "Equal")]
    assert triples(go, "go", "require.Equal", "assert/assertions.go") == []


def test_prose_data_and_absent_names_have_no_occurrences() -> None:
    assert find_occurrences("# parse\nparse it\n", "markdown", "parse") == []
    assert find_occurrences('{"parse": 1}', "json", "parse") == []
    assert find_occurrences("x = 1\n", "python", "parse") == []
    assert find_occurrences("parser = parse_x\n", "python", "parse") == []


def test_names_are_parsed_or_refused() -> None:
    assert parse_name("Type.method").segments == ("Type", "method")
    assert parse_name("pkg::sub::name").segments == ("pkg", "sub", "name")
    assert parse_name("Foo#bar").segments == ("Foo", "bar")
    assert parse_name(" $el ").segments == ("$el",)
    for bad in ("", "  ", "a b", "a.", "f()", "a+b", "x" * 300):
        with pytest.raises(ConfigError):
            parse_name(bad)
    assert check_kinds("call, use") == ("call", "use")
    assert check_kinds(None) == ()
    with pytest.raises(ConfigError):
        check_kinds("caller")


def test_callers_are_the_definitions_that_reference_it() -> None:
    def ref(line: int, kind: str, symbol: str, start: int = 0, end: int = 0) -> Reference:
        return Reference("r", "a.py", "python", "source", line, 1, kind, symbol, "function", start, end, "")

    refs = [ref(1, "import", ""), ref(4, "def", "parse", 4, 7), ref(7, "call", "parse", 4, 7),
            ref(11, "call", "Server.get", 10, 13), ref(12, "use", "Server.get", 10, 13), ref(20, "use", "")]
    callers = callers_of(refs)
    assert [(c.symbol, c.lines) for c in callers] == [("parse", (7,)), ("Server.get", (11, 12))]
    result = RefsResult("parse", tuple(refs), callers, notes=("n",))
    assert refs_result(refs_json(result)) == result


# -- invariants over generated programs ---------------------------------------------------------

NAME = "target"
FRAGMENTS = [
    "x = target(1)\n", "y = obj.target\n", "target = 3\n", "def target(a):\n    return a\n",
    "class target:\n    pass\n", "from m import target\n", "z = [target for _ in ()]\n",
    "# target in a comment\n", "s = 'target in a string'\n", 'd = """target\ntarget"""\n',
    "t = f'{target} and target'\n", "u = targets + my_target + target_x\n", "def f():\n    target()\n",
]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=12))
def test_only_whole_names_in_code_on_lines_that_hold_them(parts: list[str]) -> None:
    text = "".join(parts)
    lines = text.split("\n")
    found = find_occurrences(text, "python", NAME)
    expected = 0
    for line in lines:
        code = re.sub(r"#.*", "", line)
        code = re.sub(r"f'\{target\} and target'", "{target}", code)
        code = re.sub(r"'[^']*'|\"\"\"target|target\"\"\"", "", code)
        expected += len(re.findall(r"\btarget\b", code))
    assert len(found) == expected, (text, found)
    for o in found:
        line = lines[o.line - 1]
        assert line[o.column - 1:o.column - 1 + len(NAME)] == NAME
        assert o.kind in ("def", "call", "import", "use")
        if o.kind == "def":
            assert o.symbol.endswith(NAME)
