"""The chunker's fast paths give what the plain code gives.

- golden headers: the ``indexed_text`` header of every fixture chunk (the spans golden in
  ``test_chunk.py`` pins spans and symbols, this pins the rest of ``indexed_text``);
  written from the chunker before its speed-up, so the fast paths are checked against
  the plain code's output;
- reference implementations side by side with their fast versions (quote stripping,
  first documentation line, the byte-mode header join), on generated inputs;
- the documentation-line shortcut (a definition whole in its chunk is not looked up)
  against the full lookup, on fixtures and stdlib files.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codeseam.chunk import Budget, CHUNKER_VERSION, assemble, chunk_file
from codeseam.chunk.header import HeaderParts, header_lines
from tests.test_chunk import ALL_FIXTURES, FIXTURES, GOLDEN, SMALL
from tests.test_chunk_stdlib import STDLIB, read, stdlib_files

HEADERS = GOLDEN / "headers"


def header_of(chunk) -> str:
    """``indexed_text`` without the chunk's text (and the newline joining them)."""
    assert chunk.indexed_text.endswith("\n" + chunk.text)
    return chunk.indexed_text[:len(chunk.indexed_text) - len(chunk.text) - 1]


def headers_text(chunks) -> str:
    parts = [f"chunker {CHUNKER_VERSION}, max_bytes {SMALL.max_bytes}, min_bytes {SMALL.min_bytes}"]
    for c in chunks:
        parts.append(f"== lines {c.start_line}-{c.end_line}\n{header_of(c)}")
    return "\n".join(parts) + "\n"


def test_golden_headers(update_golden):
    """The header of every fixture chunk at the small budget (a person reviews the diff;
    regenerate with ``pytest --update-golden``; bump CHUNKER_VERSION when it changes)."""
    HEADERS.mkdir(parents=True, exist_ok=True)
    for name in ALL_FIXTURES:
        text = (FIXTURES / name).read_text(encoding="utf-8")
        got = headers_text(chunk_file(name, text, budget=SMALL))
        path = HEADERS / f"{name}.txt"
        if update_golden:
            path.write_text(got, encoding="utf-8")
            continue
        assert path.exists(), f"missing golden {path}: run pytest --update-golden"
        assert got == path.read_text(encoding="utf-8"), f"{name}: indexed_text headers changed"


def test_golden_headers_cover_every_header_part():
    """The fixtures exercise each header line the chunker can write."""
    headers = []
    for name in ALL_FIXTURES:
        text = (FIXTURES / name).read_text(encoding="utf-8")
        headers += [(c, header_of(c)) for c in chunk_file(name, text, budget=SMALL)]
    for mark in ("\nimports: ", "\ndefines: ", "\nwords: ", "\n    ..."):
        assert any(mark in h for _, h in headers), mark
    assert any(c.parent and f" in {c.parent}\n" in h for c, h in headers)
    assert any(c.parent and f"\n{c.parent}: " in h for c, h in headers), "a parent's doc line"


# -- reference implementations (the plain code the fast paths replaced) ---------------

def ref_first_line(raw: str, comment: bool) -> str:
    if not comment:
        raw = assemble._STRING_QUOTES.sub("", raw.strip())
    for line in raw.split("\n"):
        line = assemble._COMMENT_MARK.sub("", line) if comment else line
        line = line.strip().rstrip("*/").strip()
        if any(c.isalpha() for c in line):
            return line[:assemble.DOC_MAX_CHARS]
    return ""


DOC_TEXT = st.text(alphabet=st.sampled_from(list("\"'rbuRBUfF \t\n#/*-;%{}()@docxyZ_1²½éЖ\u00a0")),
                   max_size=40)


@settings(max_examples=600, deadline=None)
@given(DOC_TEXT)
def test_strip_quotes_matches_the_regex(s):
    s = s.strip()  # as in ``_first_line`` (the regex's ``$`` also matches before a final newline)
    assert assemble._strip_quotes(s) == assemble._STRING_QUOTES.sub("", s)


@settings(max_examples=600, deadline=None)
@given(DOC_TEXT, st.booleans())
def test_first_line_matches_the_reference(raw, comment):
    assert assemble._first_line(raw, comment) == ref_first_line(raw, comment)


WORD = st.text(alphabet=st.sampled_from(list("abXY_.: 9é")), max_size=12)


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(["function", "method", "class", "module", "window", "section"]),
       symbol=WORD, parent=WORD, doc=WORD, parent_doc=WORD, sig=WORD,
       imports=st.lists(WORD, max_size=3), defines=st.lists(WORD, max_size=3),
       words=st.lists(WORD, max_size=3))
def test_byte_mode_header_is_the_rendered_header(kind, symbol, parent, doc, parent_doc, sig,
                                                 imports, defines, words):
    """``build_chunks`` joins ``header_lines`` itself in byte mode; it must be
    ``HeaderParts.render`` exactly."""
    parts = HeaderParts(path="a/b.py", language="python", kind=kind, symbol=symbol,
                        parent=parent, imports=imports, defines=defines, words=words, sig=sig,
                        doc=doc, parent_doc=parent_doc)
    what = f"{kind} {symbol}".rstrip() if symbol else kind
    if parent:
        what += f" in {parent}"
    imports_line = "imports: " + ", ".join(imports) if imports else ""
    lines = header_lines("a/b.py (python)", what, doc, parent_doc, parent, imports_line,
                         defines, words, sig)
    assert "\n".join(lines) == parts.render()


# -- the documentation-line shortcut ----------------------------------------------------

class _FullDocs(assemble._Docs):
    """``_Docs`` without the shortcut: every named definition's line is computed."""

    def __init__(self, ascii: bool = False) -> None:
        super().__init__(False)


def _doc_sample() -> list[tuple[str, str]]:
    files = [(name, (FIXTURES / name).read_text(encoding="utf-8")) for name in ALL_FIXTURES]
    stdlib = [p for p in stdlib_files(include_tests=False) if os.path.getsize(p) > 20_000]
    for path in stdlib[::6]:
        files.append((os.path.relpath(path, STDLIB).replace(os.sep, "/"), read(path)))
    return files


def test_doc_shortcut_changes_nothing(monkeypatch):
    files = _doc_sample()
    assert len(files) > 50
    budgets = (Budget(), SMALL)
    fast = [chunk_file(path, text, budget=b) for path, text in files for b in budgets]
    monkeypatch.setattr(assemble, "_Docs", _FullDocs)
    full = [chunk_file(path, text, budget=b) for path, text in files for b in budgets]
    assert fast == full
    assert [c.hash for cs in fast for c in cs] == [c.hash for cs in full for c in cs]
    assert sum("\ndoc: " in c.indexed_text for cs in full for c in cs) > 100


@pytest.mark.parametrize("text", [
    "def f():\n    \"\"\"Caf\u00e9 \ud800 r\u00e9sum\u00e9 doc line.\"\"\"\n    return 1\n",
    "# Lone \udcff surrogate in a comment block\ndef g():\n    return 2\n",
    "def h():\n    \"\"\"Plain ASCII doc line.\"\"\"\n    return 3\n",
])
def test_doc_shortcut_on_undecodable_bytes(text, monkeypatch):
    """Surrogates (undecodable bytes read with surrogateescape) decode to U+FFFD in a
    doc line but stay in the text: the shortcut is off there, and the output is that of
    the full lookup."""
    fast = chunk_file("m.py", text)
    monkeypatch.setattr(assemble, "_Docs", _FullDocs)
    full = chunk_file("m.py", text)
    assert fast == full and fast[0].text == text
