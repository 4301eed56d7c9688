"""present.py: hit lines as highlighted tokens and editor links (pure functions).

Invariants: the tokens of every line join to exactly that line of the text, whatever the text
and the language (Hypothesis); an editor link decodes back to the file's absolute path and
never carries a scheme that runs code."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codeseam import present
from codeseam.chunk.languages import EXTENSION_ALIASES, FILENAME_ALIASES
from codeseam.errors import ConfigError
from codeseam.settings import Settings, load_settings

SRC = Path(__file__).resolve().parents[1] / "src" / "codeseam"
LANGUAGES = sorted(set(EXTENSION_ALIASES.values()) | set(FILENAME_ALIASES.values()) | {"python", "go", "text", ""})
NASTY = st.text(alphabet=st.sampled_from(list("ab \t\n\r\f<>\"'&;{}()[]#/*`$\\\ufeff\u00e9\u4e2d\U0001f600")) | st.characters(),
                max_size=300)


def joined(lines):
    return ["".join(text for _, text in line) for line in lines]


@settings(max_examples=300, deadline=None)
@given(text=NASTY, language=st.sampled_from(LANGUAGES))
def test_tokens_join_to_exactly_the_lines_of_the_text(text, language):
    lines = present.highlight_lines(text, language, f"x.{language or 'txt'}")
    assert joined(lines) == present.text_lines(present.display_text(text))
    for line in lines:
        assert all(isinstance(css, str) and piece for css, piece in line)  # no empty tokens
        assert all(a[0] != b[0] for a, b in zip(line, line[1:], strict=False))  # neighbours of one class merged


def test_text_lines_follow_the_hits_line_numbers():
    assert present.text_lines("a\nb\n") == ["a", "b"]  # a hit's text ends with its last line's newline
    assert present.text_lines("a\nb") == ["a", "b"]
    assert present.text_lines("a\n\n") == ["a", ""]
    assert present.text_lines("") == [""]
    assert present.display_text("a\r\nb\rc") == "a\nbc"


def test_codeseams_own_sources_are_highlighted():
    from pygments.token import STANDARD_TYPES

    known = set(STANDARD_TYPES.values())
    for path in sorted(SRC.rglob("*.py"))[:40]:
        text = path.read_text()
        if text.count("\n") < 10 or len(text) > present.MAX_HIGHLIGHT_CHARS:  # too short (_version.py), or
            continue  # shown plain by design (api.py)
        lines = present.highlight_lines(text, "python", path.name)
        assert joined(lines) == present.text_lines(text)
        classes = {css for line in lines for css, _ in line}
        assert classes <= known and {"k", "n"} <= classes, path  # not the plain fallback


@pytest.mark.parametrize("language,path,snippet,css", [
    ("go", "a.go", "func F() error {\n\treturn nil\n}\n", "kd"),
    ("typescript", "a.ts", "const x: number = 1;\n", "kd"),
    ("rust", "a.rs", "fn main() { let x = 1; }\n", "k"),
    ("c_sharp", "a.cs", "class A { int x; }\n", "k"),
    ("text", "Dockerfile", "FROM debian\nRUN true\n", "k"),  # no grammar: the file name decides
    ("markdown", "a.md", "# Title\n", "gh"),
])
def test_languages_get_their_lexer(language, path, snippet, css):
    lines = present.highlight_lines(snippet, language, path)
    assert css in {c for line in lines for c, _ in line}


def test_every_language_label_resolves_without_error():
    for language in LANGUAGES:
        present._lexer(language, "")  # a lexer or None (plain text), never an exception


def test_long_or_unlexable_texts_come_back_plain():
    long = "x = 1\n" * (present.MAX_HIGHLIGHT_CHARS // 6 + 1)
    assert all(line == [("", "x = 1")] for line in present.highlight_lines(long, "python", "a.py"))
    # a lexer that would change the text (Pygments drops a leading BOM) gives way to plain text
    assert joined(present.highlight_lines("\ufeffdef f(): pass\n", "python", "a.py")) == ["\ufeffdef f(): pass"]


@settings(max_examples=200, deadline=None)
@given(name=st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="/\0"), min_size=1,
                    max_size=40),
       line=st.integers(1, 10**6))
def test_editor_links_decode_to_the_file_and_keep_their_scheme(name, line):
    root = "/home/user/my repo"
    url = present.editor_url(present.DEFAULT_EDITOR_URL, root, f"src/{name}", line)
    assert url.startswith("vscode://file/") and url.endswith(f":{line}")
    assert unquote(url[len("vscode://file"):-len(f":{line}")]) == f"{root}/src/{name}"
    assert not any(c in url for c in ' "<>\'`\n')


def test_editor_link_patterns():
    assert Settings().editor_url == present.DEFAULT_EDITOR_URL
    idea = "idea://open?file={path}&line={line}"
    assert present.editor_url(idea, "/r", "a b.py", 3) == "idea://open?file=/r/a%20b.py&line=3"
    assert present.editor_url("file://{path}#L{line}-L{end_line}", "/r", "x.py", 3, 9) == "file:///r/x.py#L3-L9"
    assert present.editor_url(present.DEFAULT_EDITOR_URL, "", "x.py", 1) is None  # no root: no link
    assert present.editor_url("", "/r", "x.py", 1) is None  # empty pattern: links off
    for bad in ("javascript:alert({line})", "JavaScript:x", "data:text/html,{path}", "vbscript:x"):
        assert "must not use" in present.check_editor_pattern(bad)
        assert present.editor_url(bad, "/r", "x.py", 1) is None
    assert "scheme" in present.check_editor_pattern("{path}:{line}")
    assert "unknown placeholders {file}" in present.check_editor_pattern("vscode://file{file}")
    assert "not a valid pattern" in present.check_editor_pattern("vscode://file{path")


def test_settings_refuse_an_unsafe_editor_pattern(tmp_path):
    (tmp_path / "c.toml").write_text("")
    env = {"RAG_CONFIG": str(tmp_path / "c.toml")}
    assert load_settings(env={**env, "RAG_EDITOR_URL": "idea://open?file={path}&line={line}"}).editor_url.startswith("idea:")
    with pytest.raises(ConfigError, match="javascript"):
        load_settings(env={**env, "RAG_EDITOR_URL": "javascript:alert(1)"})


def test_page_hits_add_lines_and_links_and_keep_every_field():
    hit = {"repo": "r", "path": "a.py", "symbol": "f", "kind": "function", "language": "python", "start_line": 4,
           "end_line": 5, "score": 0.5, "text": "def f():\n    pass\n", "role": "source", "stale": True}
    [out] = present.page_hits([hit], {"r": "/src/r"}, present.DEFAULT_EDITOR_URL)
    assert {k: out[k] for k in hit} == hit  # role, stale and anything else pass through
    assert joined(out["lines"]) == ["def f():", "    pass"]
    assert out["editor_url"] == "vscode://file/src/r/a.py:4"
    assert present.page_hits([hit], {}, present.DEFAULT_EDITOR_URL)[0]["editor_url"] is None


def test_the_stylesheet_is_self_contained():
    css = present.highlight_css()
    assert ".hl .k " in css and "@media (prefers-color-scheme: dark)" in css
    assert "url(" not in css and "@import" not in css  # nothing fetched from elsewhere
