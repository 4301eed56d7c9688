"""The chunker on fixtures in 22 languages plus markdown/yaml/json/toml.

``check_invariants`` is the oracle every chunk test uses (also imported by the stdlib
sweep and the fuzz test): exact cover, no empty chunk, ``\\n``-only line numbers checked
against an independent count, size limits, and the min-merge rule.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from codeseam.chunk import Budget, CHUNKER_VERSION, chunk_file, language_label
from codeseam.records import KINDS

FIXTURES = Path(__file__).parent / "fixtures" / "chunk"
GOLDEN = Path(__file__).parent / "golden" / "chunk"
ALL_FIXTURES = sorted(p.name for p in FIXTURES.iterdir() if p.is_file())
SMALL = Budget(max_bytes=400, min_bytes=80)


def check_invariants(path: str, text: str, chunks: list, budget: Budget, *, exact: bool = True) -> None:
    """Everything that must hold for any file and budget."""
    if not text:
        assert chunks == []
        return
    assert chunks, "a non-empty file gives at least one chunk"
    if exact:
        assert "".join(c.text for c in chunks) == text
    pos = 0  # character offset of each chunk in text (exact cover)
    for i, c in enumerate(chunks):
        assert c.text, f"empty chunk {i}"
        assert c.path == path
        assert c.language == language_label(path)
        assert c.kind in KINDS
        assert c.indexed_text.endswith(c.text)
        assert c.nbytes <= budget.max_bytes or budget.max_bytes < 16
        # line numbers: 1-based, counted on "\n" only (an independent count on the prefix)
        start = text.count("\n", 0, pos) + 1
        assert c.start_line == start, (i, c.start_line, start)
        body = c.text[:-1] if c.text.endswith("\n") else c.text
        assert c.end_line == start + body.count("\n")
        pos += len(c.text)
        if budget.max_tokens is not None:
            assert budget.count_tokens(c.indexed_text) <= budget.max_tokens
    if exact and budget.max_tokens is None:
        sizes = [c.nbytes for c in chunks]
        for i, n in enumerate(sizes):
            if n >= budget.min_bytes:
                continue
            # a small chunk has no neighbour it could have joined within the budget, but for
            # one with pieces of other routines (a piece of a split function joins pieces of it only)
            pieces = _piece_sets(path, text, chunks)
            for j in (i - 1, i + 1):
                if 0 <= j < len(sizes) and pieces[i] == pieces[j]:
                    assert n + sizes[j] > budget.max_bytes, (path, i, n, j, sizes[j])


ROUTINE_KINDS = ("function", "method")
MAY_HOLD_PIECES = (*ROUTINE_KINDS, "class", "header")


def _piece_sets(path: str, text: str, chunks: list) -> list:
    """Per chunk, the routines it holds a part of (not all): for Python that ``ast`` parses,
    from the source (outermost functions and methods); elsewhere a conservative guess from the
    chunk's name and kind (a function, method, class or header chunk may hold a routine's piece,
    so it counts as its own set: such pairs are not asserted)."""
    parsed = _python_routines(text) if path.endswith(".py") else None
    if parsed is None:
        return [frozenset({(c.symbol, i)}) if c.kind in MAY_HOLD_PIECES else frozenset()
                for i, c in enumerate(chunks)]
    owner, size = parsed
    out = []
    for c in chunks:
        lines = [owner[ln] for ln in range(c.start_line, c.end_line + 1) if ln in owner]
        out.append(frozenset(r for r in set(lines) if lines.count(r) < size[r]))
    return out


def _python_routines(text: str) -> tuple[dict[int, str], dict[str, int]] | None:
    """Each line's outermost function or method (one not inside another; decorators included),
    and each one's size in lines; None when ``ast`` cannot parse the text (broken syntax, a
    surrogate, a NUL byte)."""
    owner: dict[int, str] = {}
    size: dict[str, int] = {}
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):  # ValueError: UnicodeEncodeError, null bytes
        return None

    def visit(node: ast.AST, prefix: str) -> None:
        for d in ast.iter_child_nodes(node):
            if isinstance(d, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([d.lineno, *(x.lineno for x in d.decorator_list)])
                key = f"{prefix}{d.name}@{first}"
                for ln in range(first, (d.end_lineno or first) + 1):
                    owner[ln] = key
                size[key] = (d.end_lineno or first) + 1 - first
            else:
                visit(d, f"{prefix}{d.name}." if isinstance(d, ast.ClassDef) else prefix)

    visit(tree, "")
    return owner, size


def chunks_of(name: str, budget: Budget = Budget()) -> tuple[str, list]:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    return text, chunk_file(name, text, budget=budget)


@pytest.mark.parametrize("budget", [Budget(), SMALL, Budget(max_bytes=120, min_bytes=40)],
                         ids=["default", "small", "tiny"])
@pytest.mark.parametrize("name", ALL_FIXTURES)
def test_fixture_invariants(name, budget):
    text, chunks = chunks_of(name, budget)
    check_invariants(name, text, chunks, budget)
    # every fixture parses: the ast chunker was used, never the window fallback
    assert all(c.kind != "window" for c in chunks)


# What each fixture shows at the small budget: symbols the generic rule must find.
EXPECTED_SYMBOLS = {
    "sample.py": {"get_user_by_id", "UserStore", "UserStore.__init__", "UserStore.save_to_disk",
                  "UserStore.iter_names", "parse_json2"},
    "sample.js": {"debounce", "formatUserName", "WidgetController", "api.fetchUserProfile"},
    "sample.ts": {"parseUserRecord", "UserRepository", "UserRepository.loadUser",
                  "UserRepository.roleOf"},
    "sample.tsx": {"CounterButton", "UserBadge", "TodoList"},
    "sample.go": {"NewServer", "Server.GetUserByID", "Server"},
    "sample.rs": {"InventoryError", "Inventory.new", "Inventory.add_stock", "Inventory.take_stock",
                  "tests"},
    "Sample.java": {"OrderBook", "OrderBook.Order", "OrderBook.placeOrder", "OrderBook.findOrderById"},
    "sample.c": {"ring_is_full", "ring_push", "ring_alloc_copy", "main"},
    "sample.cpp": {"geometry", "geometry.Shape", "geometry.Polygon", "geometry.Polygon_perimeter"},
    "Sample.cs": {"Example.Billing.InvoiceLine", "Example.Billing.Invoice", "Example.Billing.Invoice.AddLine",
                  "Example.Billing.Invoice.ComputeTotal"},
    "sample.kt": {"ShoppingCart", "ShoppingCart.addItem", "ShoppingCart.totalPrice", "Checkout"},
    "sample.rb": {"Banking.Account", "Banking.Account.withdraw_funds"},
    "sample.php": {"NewsletterMailer", "NewsletterMailer.sendToUser"},
    "sample.swift": {"Circle", "ShapeCollection", "describeShape"},
    "sample.scala": {"Queue", "BoundedQueue", "QueueMain"},
    "sample.lua": {"clamp_value", "M.new_buffer", "M.push_item"},
    "sample.sh": {"make_backup"},
    "sample.ex": {"Shop.Cart", "Shop.Cart.add_item", "Shop.Cart.total_price"},
    "sample.hs": {"totalArea", "Describable", "countByKind"},
    "sample.zig": {"Stack", "Stack.push", "Stack.pop", "sumSlice", "main"},
    "sample.dart": {"UserProfile", "fetchWithRetry"},
    "sample.ml": {"increment_by", "Registry", "print_all"},
    "sample.toml": {"package", "dependencies"},
}


@pytest.mark.parametrize("name", sorted(EXPECTED_SYMBOLS))
def test_definitions_found_by_the_generic_rule(name):
    _, chunks = chunks_of(name, Budget(max_bytes=300, min_bytes=40))
    symbols = {c.symbol for c in chunks}
    missing = EXPECTED_SYMBOLS[name] - symbols
    assert not missing, f"{name}: missing {sorted(missing)}; got {sorted(symbols)}"
    for c in chunks:  # a chunk's kind agrees with where its symbol lives
        if c.kind == "method":
            assert c.parent or "." in c.symbol, c
        if c.parent:
            assert c.symbol.startswith(c.parent + "."), c


# Names read through a reference: a C++ method that returns a reference, defined out of line
# (its declarator is a reference_declarator, which names no ``declarator`` field), and a Rust
# impl for a reference type. Until ast-8 they were named "Emitter.Write(const std.string& str"
# and "a mut Serializer" (yaml-cpp's emitter.cpp, serde_json's ser.rs).
REFERENCE_NAMES = {
    "emitter.cpp": ("""namespace YAML {
Emitter& Emitter::Write(const std::string& str) {
  if (!good())
    return *this;
  m_pState->StartedScalar();
  return *this;
}

Node* Tree::Find(int key) {
  return m_root ? m_root->Find(key) : nullptr;
}

const Node& Tree::Root() const {
  return *m_root;
}
}
""", {"YAML.Emitter.Write", "YAML.Tree.Find", "YAML.Tree.Root"}),
    "ser.rs": ("""impl<'a, W> ser::Serializer for &'a mut Serializer<W>
where
    W: io::Write,
{
    type Ok = ();

    fn serialize_bool(self, value: bool) -> Result<()> {
        self.formatter.write_bool(&mut self.writer, value)
    }
}

impl<'a> From<&'a Number> for &'a Number {
    fn from(n: &'a Number) -> Self {
        n
    }
}
""", {"Serializer", "Serializer.serialize_bool", "Number.from"}),
}


@pytest.mark.parametrize("name", sorted(REFERENCE_NAMES))
def test_names_read_through_references(name):
    text, expected = REFERENCE_NAMES[name]
    chunks = chunk_file(name, text, budget=Budget(max_bytes=80, min_bytes=20))
    symbols = {c.symbol for c in chunks}
    assert expected <= symbols, f"{name}: missing {sorted(expected - symbols)}; got {sorted(symbols)}"
    assert not any("(" in s or "&" in s or s.startswith("a ") for s in symbols), sorted(symbols)


# A Rust struct literal is a value, not a declaration: where a long routine is split, a
# statement `let fp = ExtendedFloat { .. };` stayed a "class" piece named `to_f64_test.fp` until
# ast-9 (serde_json's tests/lexical/*.rs), and the routine was cut there.
STRUCT_LITERAL_RS = """fn to_f64_test() {
    let mantissa = 1u64 << 63;
    let exponent = -63i32;
    assert_eq!(mantissa.leading_zeros(), 0);
    let fp = ExtendedFloat {
        mant: mantissa,
        exp: exponent,
    };
    assert_eq!(fp.into_f64(), 1.0);
    let halfway = ExtendedFloat {
        mant: mantissa | 1,
        exp: exponent,
    };
    assert_eq!(halfway.into_f64(), 1.0);
}
"""


def test_a_struct_literal_is_not_a_class():
    chunks = chunk_file("float.rs", STRUCT_LITERAL_RS, budget=Budget(max_bytes=120, min_bytes=20))
    assert len(chunks) > 1  # the routine is split, so its statements are looked at
    assert {(c.kind, c.symbol) for c in chunks} == {("function", "to_f64_test")}, \
        [(c.start_line, c.kind, c.symbol) for c in chunks]


def test_twenty_two_languages_covered():
    languages = {language_label(n) for n in EXPECTED_SYMBOLS} | {"markdown", "yaml", "json"}
    code = languages - {"markdown", "yaml", "json", "toml"}
    assert len(code) >= 22, sorted(code)


def _python_defs(text: str) -> list[tuple[str, int, int, int]]:
    """(dotted name, first line incl. decorators, def line, end line) from the ast module."""
    out = []

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                first = min([d.lineno for d in child.decorator_list] + [child.lineno])
                out.append((name, first, child.lineno, child.end_lineno))
                walk(child, name + ".")

    walk(ast.parse(text), "")
    return out


@pytest.mark.parametrize("budget", [Budget(), SMALL, Budget(max_bytes=250, min_bytes=60)],
                         ids=["default", "small", "smaller"])
def test_python_definitions_whole_or_continued_with_signature(budget):
    """Oracle: Python's own ast. A definition that fits is inside one chunk (decorators
    included); a definition cut into pieces gives pieces whose header carries its
    signature line and whose symbol is its dotted name."""
    text, chunks = chunks_of("sample.py", budget)
    lines = text.split("\n")
    for name, first, def_line, end in _python_defs(text):
        span = "\n".join(lines[first - 1:end]) + "\n"
        holders = [c for c in chunks if c.start_line <= first and c.end_line >= end]
        if len(span.encode()) <= budget.max_bytes // 2:
            assert holders, f"{name} ({first}-{end}) is cut although it fits"
        for c in chunks:
            if first < c.start_line <= end and not any(
                    f2 <= c.start_line <= e2 and f2 > first for _, f2, _, e2 in _python_defs(text)):
                assert lines[def_line - 1].strip() in c.indexed_text, (name, c.start_line)
                assert c.symbol == name or c.symbol.startswith(name + "."), (name, c.symbol)


def test_decorator_and_leading_comments_belong_to_the_definition():
    text, chunks = chunks_of("sample.py", SMALL)
    [c] = [c for c in chunks if c.symbol == "get_user_by_id"]
    assert c.text.startswith("# A leading comment block")
    assert "@functools.lru_cache(maxsize=32)\ndef get_user_by_id" in c.text
    _, go = chunks_of("sample.go", Budget(max_bytes=300, min_bytes=40))
    [g] = [c for c in go if c.symbol == "Server.GetUserByID"]
    assert g.text.lstrip().startswith("// GetUserByID looks a user up.")
    assert g.kind == "method"
    _, rs = chunks_of("sample.rs", SMALL)
    [e] = [c for c in rs if c.symbol == "InventoryError" and "enum" in c.text]
    assert "/// Errors the inventory can return.\n#[derive(Debug, Clone, PartialEq)]\npub enum" in e.text


_PAD = "\n".join(f"  const v{i} = {i} * 2;" for i in range(40))


@pytest.mark.parametrize("path, head, doc_joins", [
    # express: a JSDoc block, a blank line, the member it documents
    ("res.js", "/**\n * Set Link header field with the given `links`.\n * @public\n */\n\n", True),
    ("res.js", "/**\n * Two blank lines still document it.\n */\n\n\n", True),
    ("res.js", "/**\n * Three blank lines do not.\n */\n\n\n\n", False),
    ("res.js", "/*************/\n/** SECTION **/\n/*************/\n\n", False),  # a banner
    ("res.js", "/**\n * @license MIT\n */\n\n", False),  # a file header
    ("res.js", "// a line comment, a blank line: not documentation\n\n", False),
    ("lib.rs", "/// Returns the input unchanged.\n\n", True),
])
def test_a_doc_comment_documents_the_definition_across_blank_lines(path, head, doc_joins):
    """A doc comment (``/** ... */``, ``///``) separated from its definition by a blank line or
    two belongs to it; banners, file headers, plain comments and a wider gap do not."""
    if path.endswith(".rs"):
        body = "fn link(x: u32) -> u32 {\n" + "\n".join(f"    let v{i} = x * {i};" for i in range(40)) + "\n    x\n}\n"
    else:
        body = "res.links = function (links) {\n" + _PAD + "\n  return this;\n};\n"
    text = "const before = 1;\n\n" + head + body
    chunks = chunk_file(path, text, budget=Budget(max_bytes=2000, min_bytes=0))
    assert "".join(c.text for c in chunks) == text
    [fn] = [c for c in chunks if c.symbol in ("res.links", "link")]
    assert fn.text.startswith(head.lstrip("\n") if doc_joins else body), fn.text[:80]


def test_class_too_big_is_split_into_header_and_members():
    _, chunks = chunks_of("sample.py", Budget(max_bytes=250, min_bytes=60))
    by_symbol = {}
    for c in chunks:
        by_symbol.setdefault(c.symbol, []).append(c)
    [header] = [c for c in by_symbol["UserStore"] if c.kind == "header"]
    assert "class UserStore:" in header.text and "capacity = MAX_USERS" in header.text
    assert "def " not in header.text
    assert all(c.kind == "method" and c.parent == "UserStore" for c in by_symbol["UserStore.add"])
    # the big method is packed statement by statement; every piece keeps its symbol
    pieces = by_symbol["UserStore.save_to_disk"]
    assert len(pieces) >= 2
    for piece in pieces[1:]:
        assert "def save_to_disk(self, encoding: str = \"utf-8\") -> int:" in piece.indexed_text
        assert "def save_to_disk" not in piece.text


def test_markdown_splits_by_headings():
    text, chunks = chunks_of("sample.md", Budget(max_bytes=120, min_bytes=20))
    assert {c.kind for c in chunks} == {"section"}
    symbols = [c.symbol for c in chunks]
    assert "Sample project.Installation" in symbols
    assert "Sample project.Installation.From source" in symbols
    assert "Appendix" in symbols
    for c in chunks:
        if c.symbol.endswith("Appendix"):
            assert c.text.startswith("# Appendix")


@pytest.mark.parametrize("name,keys", [
    ("sample.yaml", {"server", "database"}),
    ("sample.json", {"scripts", "dependencies"}),
    ("sample.toml", {"package", "dependencies"}),
])
def test_data_files_split_by_top_level_entries(name, keys):
    _, chunks = chunks_of(name, Budget(max_bytes=100, min_bytes=20))
    assert {c.kind for c in chunks} == {"section"}
    assert keys <= {c.symbol for c in chunks}


def test_indexed_text_header():
    text, chunks = chunks_of("sample.py", SMALL)
    [c] = [c for c in chunks if c.symbol == "get_user_by_id"]
    head = c.indexed_text[: -len(c.text)]
    assert head.startswith("sample.py (python)\n")
    assert "function get_user_by_id" in head
    assert "imports: functools, os.path, collections, OrderedDict, typing, Iterator" in head
    assert "get user by id" in head  # identifier splits
    assert "get_user_by_id" not in c.text.replace("def get_user_by_id", "") or True
    assert c.text in text  # text is the clean source


def test_empty_and_whitespace_files():
    assert chunk_file("a.py", "") == []
    for text in ("\n", "   \n\n", "x", "\n\n\n"):
        chunks = chunk_file("a.py", text)
        check_invariants("a.py", text, chunks, Budget())
        assert len(chunks) == 1


def test_line_numbers_count_newlines_only():
    text = "a = 1\fb = 2\n\x0bc = 3\r\nd = '\u2028'\n"
    chunks = chunk_file("x.py", text)
    check_invariants("x.py", text, chunks, Budget())
    assert chunks[-1].end_line == 3


def test_unknown_and_excluded_languages_get_windows():
    text = "".join(f"line {i} of a plain text file\n" for i in range(200))
    for path, label in (("notes.unknownext", "text"), ("legacy.cob", "cobol"), ("q.sql", "sql")):
        chunks = chunk_file(path, text, budget=SMALL)
        check_invariants(path, text, chunks, SMALL)
        assert {c.kind for c in chunks} == {"window"}
        assert {c.language for c in chunks} == {label}


def test_broken_file_falls_back_to_windows_and_mostly_sound_keeps_ast():
    good = (FIXTURES / "sample.py").read_text()
    broken_a_little = good.replace("def add(self, user: dict) -> None:", "def add(self, user: dict) -> None")
    chunks = chunk_file("a.py", broken_a_little, budget=SMALL)
    check_invariants("a.py", broken_a_little, chunks, SMALL)
    assert any(c.symbol == "get_user_by_id" for c in chunks)
    garbage = "".join(")]} ({[ ::: ;; '\" \n" for _ in range(300))
    chunks = chunk_file("b.py", garbage, budget=SMALL)
    check_invariants("b.py", garbage, chunks, SMALL)
    assert {c.kind for c in chunks} == {"window"}


def test_odd_bytes_round_trip():
    raw = b"x = '\xff\xfe'  # caf\xc3\xa9 \xe2\x82\n\0y = 1\n" * 50
    text = raw.decode("utf-8", "surrogateescape")
    for path in ("odd.py", "odd.txt"):
        chunks = chunk_file(path, text, budget=Budget(max_bytes=200, min_bytes=50))
        check_invariants(path, text, chunks, Budget(max_bytes=200, min_bytes=50))


def test_deep_nesting_without_recursion_errors():
    budget = Budget(max_bytes=300, min_bytes=50)
    depth = 10_000
    cases = {
        "one_line.py": "x = " + "[" * depth + "1" + "]" * depth + "\n",
        "lines.py": "x = " + "(\n" * depth + "1\n" + ")\n" * depth,
        "deep.json": "[\n" * depth + "1\n" + "]\n" * depth,
        "blocks.c": "int f() {\n" + "{\n" * depth + "x;\n" + "}\n" * depth + "}\n",
    }
    for path, text in cases.items():
        chunks = chunk_file(path, text, budget=budget)
        check_invariants(path, text, chunks, budget)


def test_minified_line_cut_at_character_boundaries():
    line = "".join(f"var x{i}='é€𝄞{i}';" for i in range(3000))  # 2-, 3- and 4-byte characters
    text = line + "\nconsole.log(1);\n"
    budget = Budget(max_bytes=500, min_bytes=100)
    chunks = chunk_file("app.js", text, budget=budget)
    check_invariants("app.js", text, chunks, budget)
    assert len(chunks) > 10
    assert all(c.start_line == 1 for c in chunks[:-1])
    for c in chunks:
        c.text.encode("utf-8")  # whole characters only: encodes without surrogates


def _golden_text(chunks) -> str:
    """One chunk per line: [start, end, kind, symbol, parent, first line of text]."""
    rows = [json.dumps([c.start_line, c.end_line, c.kind, c.symbol, c.parent,
                        c.text.split("\n", 1)[0][:60]], ensure_ascii=False) for c in chunks]
    head = json.dumps({"chunker": CHUNKER_VERSION, "max_bytes": SMALL.max_bytes,
                       "min_bytes": SMALL.min_bytes})
    return head[:-1] + ', "chunks": [\n ' + ",\n ".join(rows) + "\n]}\n"


def test_golden_spans(update_golden):
    """Spans, kinds and symbols of every fixture at the small budget (a person reviews
    the diff; regenerate with ``pytest --update-golden``)."""
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for name in ALL_FIXTURES:
        _, chunks = chunks_of(name, SMALL)
        path = GOLDEN / f"{name}.json"
        if update_golden:
            path.write_text(_golden_text(chunks), encoding="utf-8")
            continue
        assert path.exists(), f"missing golden {path}: run pytest --update-golden"
        want = [row[:5] for row in json.loads(path.read_text(encoding="utf-8"))["chunks"]]
        got = [[c.start_line, c.end_line, c.kind, c.symbol, c.parent] for c in chunks]
        assert got == want, f"{name}: spans changed (bump CHUNKER_VERSION if intended)"


def test_chunker_argument():
    from codeseam.errors import ConfigError

    with pytest.raises(ConfigError):
        chunk_file("a.py", "x = 1\n", chunker="magic")
    windows = chunk_file("a.py", "x = 1\n" * 10, chunker="window")
    assert windows and all(c.kind == "window" for c in windows)


def test_hash_changes_with_content():
    a = chunk_file("a.py", "def f():\n    return 1\n")[0]
    b = chunk_file("a.py", "def f():\n    return 2\n")[0]
    c = chunk_file("b.py", "def f():\n    return 1\n")[0]
    assert a.hash != b.hash and a.hash != c.hash  # the path is in indexed_text
    assert a.hash == chunk_file("a.py", "def f():\n    return 1\n")[0].hash


def test_one_line_classes_without_a_body_are_definitions():
    """Kotlin ``data class`` / ``object`` one-liners have no body and no ``name`` field: the
    type (class + declaration) makes them definitions, so each is a chunk's symbol or listed
    on its ``defines:`` line."""
    src = ("package demo\n\nobject Registry\n\ndata class User(val id: Long, val name: String)\n\n"
           "fun greet(u: User): String = \"hi ${u.name}\"\n")
    tiny = chunk_file("demo.kt", src, budget=Budget(max_bytes=64, min_bytes=0))
    assert [(c.symbol, c.kind) for c in tiny if c.symbol != "<module>"] == [
        ("Registry", "class"), ("User", "class"), ("greet", "function")]
    (whole,) = chunk_file("demo.kt", src)  # one chunk: the definitions are listed in its header
    assert "defines: Registry, User, greet" in whole.indexed_text
    # a type that only says class, with no declaration word, is not enough
    (call,) = chunk_file("x.kt", "val k = User::class\n")
    assert "defines:" not in call.indexed_text


def test_a_split_routine_keeps_to_itself() -> None:
    """Pass 2 of packing: the small opening of a split method (its signature and docstring)
    that cannot join its own next piece stays alone rather than riding with the tail of the
    method before it, and a small tail stays with its routine rather than joining the next
    class (requests' ``Session.merge_environment_settings`` was cited as ``Session.send``).
    A class header still opens its first method's first piece."""
    from codeseam.chunk.budget import Sizer
    from codeseam.chunk.definitions import Def
    from codeseam.chunk.pack import Unit, merge_small

    data = b"x" * 1000
    cls = Def("Session", "Session", "class", None, 0, None, 0, data)
    send = Def("send", "Session.send", "method", cls, 10, None, 10, data)
    merge = Def("merge", "Session.merge", "method", cls, 300, None, 300, data)
    other = Def("Auth", "Auth", "class", None, 700, None, 700, data)
    header = Unit(0, 10, cls)
    send_head, send_tail = Unit(10, 200, send), Unit(200, 300, send)  # the tail is small
    merge_head, merge_body = Unit(300, 340, merge), Unit(340, 690, merge)  # the head cannot join the body
    merge_crumb = Unit(690, 700, merge)
    auth = Unit(700, 760, other, whole=other)
    sizer = Sizer(data, Budget(max_bytes=350, min_bytes=120))
    segs = [[header], [send_head], [send_tail], [merge_head], [merge_body], [merge_crumb], [auth]]
    spans = [(s[0].start, s[-1].end) for s in merge_small(segs, sizer)]
    # the header opens send, send's tail joins its head; merge's head would fit after send's
    # tail and its crumb before the class Auth, but neither crosses into another routine
    assert spans == [(0, 300), (300, 340), (340, 690), (690, 700), (700, 760)]


def test_no_piece_of_a_routine_rides_with_another_routine() -> None:
    """On real code under a token budget like the bundled model's: a chunk that holds part of
    a method or function (not all of it) holds no line of another one, and is named after it
    (small whole methods may still pool in one chunk)."""
    import re
    import sysconfig

    # a word-piece-like count (words and punctuation), the bundled model's limit
    budget = Budget(max_bytes=2000, min_bytes=200, max_tokens=254,
                    count_tokens=lambda s: len(re.findall(r"\w+|[^\w\s]", s)))
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for name in ("argparse.py", "ftplib.py", "smtplib.py", "tarfile.py"):
        text = (stdlib / name).read_text(encoding="utf-8")
        parsed = _python_routines(text)
        assert parsed is not None
        owner, size = parsed
        for c in chunk_file(name, text, budget=budget):
            lines = [owner[ln] for ln in range(c.start_line, c.end_line + 1) if ln in owner]
            held = set(lines)
            partial = {r for r in held if lines.count(r) < size[r]}
            if partial:  # one routine's piece, named after it (or a definition nested in it)
                (r,) = held
                r = r.split("@")[0]
                assert held == partial and (c.symbol == r or c.symbol.startswith(r + ".")), (
                    name, c.start_line, c.end_line, c.symbol, held)


_LONG = "\n".join(f"        const v{i} = x * {i} + compute(v{i}, x, {i});" for i in range(150))


@pytest.mark.parametrize("path, src, symbol", [
    ("m.zig", "const Manager = struct {\n    pub fn resolve(\n        self: *Manager,\n        x: u32,\n    ) error{ Canceled }!u32 {\n"
     + _LONG + "\n        return x;\n    }\n};\n", "Manager.resolve"),
    ("o.dart", "class Options {\n  /// Copies it.\n  Options copyWith({\n    int? x,\n    String? method,\n  }) {\n"
     + _LONG.replace("const", "final") + "\n    return this;\n  }\n}\n", "Options.copyWith"),
])
def test_a_split_routine_with_a_long_signature_keeps_its_name(path, src, symbol):
    """A routine too big for one chunk whose signature spans lines is split; its signature node
    (Zig's ``FnProto``, Dart's ``function_signature``) met again inside it is the same routine,
    not one nested in it: every piece is ``Manager.resolve`` (a method), never
    ``Manager.resolve.resolve``."""
    chunks = chunk_file(path, src)
    assert len(chunks) > 2 and "".join(c.text for c in chunks) == src
    assert {(c.symbol, c.kind) for c in chunks} == {(symbol, "method")}


def test_no_tree_sitter_node_text_is_read():
    """Trees are parsed from a read callback (``parse.parse``, for its time limit), and for
    such trees py-tree-sitter 0.26 reads ``Node.text`` from the buffers the callback returned,
    which can be gone by then (tree-sitter/py-tree-sitter#435). With a parse input that is a
    temporary copy (the unmerged chunker ast-8's masked bytes), chunking yaml-cpp's 94 headers in
    one process segfaulted in ``_doc_comment`` every time; the parse input of main stays alive and
    did not crash. Node text is sliced from the file's bytes instead; this keeps it so."""
    import re

    import codeseam

    pkg = Path(codeseam.__file__).parent
    reads = re.compile(r"(?:node|child|\])\.text\b")
    found = [f"{p.relative_to(pkg)}:{i}" for sub in ("chunk", "references")
             for p in sorted((pkg / sub).glob("*.py"))
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if reads.search(line) and "``Node.text``" not in line]
    assert not found, found
