"""Filter expressions and path globs (pure: no Milvus). The Milvus side of the same
escaping is exercised on real Milvus Lite in test_store.py."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pathspec import GitIgnoreSpec

from codeseam.errors import ConfigError
from codeseam.store.expr import Unquotable, all_of, compile_glob, eq, is_in, like_prefix, literal


def unquote(lit: str) -> str:
    """Read a literal the way Milvus Lite 2.5.1 does (only \\\\ and \\" are escapes we emit)."""
    assert lit[0] == lit[-1] == '"'
    out, i, body = [], 0, lit[1:-1]
    while i < len(body):
        if body[i] == "\\":
            assert body[i + 1] in '\\"', f"unknown escape in {lit!r}"
            out.append(body[i + 1])
            i += 2
        else:
            assert body[i] != '"', f"unescaped quote in {lit!r}"
            out.append(body[i])
            i += 1
    return "".join(out)


def like_matches(expr: str, path: str) -> bool:
    """Milvus LIKE semantics: % any run, _ one character, everything else literal."""
    m = re.fullmatch(r'path like (".*")', expr, flags=re.S)
    assert m, expr
    pattern = "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in unquote(m.group(1)))
    return re.fullmatch(pattern, path, flags=re.S) is not None


text = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"), max_size=20)


@given(text)
def test_literal_round_trips_and_never_emits_unknown_escapes(value):
    assert unquote(literal(value)) == value


@pytest.mark.parametrize("value", ["a\nb", "a\rb", "\n"])
def test_newlines_cannot_be_quoted(value):
    with pytest.raises(Unquotable):
        literal(value)


def test_expression_builders():
    assert eq("repo_id", 'a"b') == 'repo_id == "a\\"b"'
    assert is_in("repo_id", ["a"]) == 'repo_id == "a"'
    assert is_in("repo_id", ["a", "b\\"]) == 'repo_id in ["a", "b\\\\"]'
    assert all_of("a", None, "") == "a"
    assert all_of("a", "b") == "(a) and (b)"
    assert all_of() == ""


def test_like_prefix_cuts_at_like_wildcards():
    assert like_prefix("path", "src/a_b.py") == 'path like "src/a%"'
    assert like_prefix("path", "50%/x") == 'path like "50%"'
    assert like_prefix("path", "_x") is None


@pytest.mark.parametrize("glob,yes,no", [
    ("*.go", ["a.go", "lib/x.go"], ["a.py", "go"]),
    ("src/**/*.py", ["src/a.py", "src/b/c.py"], ["lib/src/a.py", "src/a.pyc"]),
    ("tests/*", ["tests/t.py", "tests/s/t.py"], ["src/tests.py", "a/tests/t.py"]),
    ("/setup.py", ["setup.py"], ["pkg/setup.py"]),
    ("docs/", ["docs/a.md", "x/docs/b.md"], ["docs.md"]),
])
def test_globs_follow_gitignore_rules(glob, yes, no):
    g = compile_glob(glob)
    assert all(g.match(p) for p in yes)
    assert not any(g.match(p) for p in no)
    assert all(like_matches(g.like, p) for p in yes)


def test_pushdown_shapes():
    assert compile_glob("src/**/*.py").like == 'path like "src/%"'
    assert compile_glob("*.go").like == 'path like "%.go%"'
    assert compile_glob("**/*").like is None


@pytest.mark.parametrize("glob", ["", "  ", "!src", "# comment", "a\nb"])
def test_bad_globs_are_config_errors(glob):
    with pytest.raises(ConfigError):
        compile_glob(glob)


glob_chars = st.sampled_from(list("ab/._%\"\\*?[]!-") + ["**/", "/**", "[ab]", "[!a]"])
segment = st.lists(st.sampled_from(list("ab._%\"\\-[]")), min_size=1, max_size=4).map("".join).filter(
    lambda seg: seg not in (".", ".."))
rel_path = st.lists(segment, min_size=1, max_size=3).map("/".join)  # repo-relative, as stored


@settings(max_examples=400, deadline=None)
@given(st.lists(glob_chars, min_size=1, max_size=8).map("".join),
       st.lists(rel_path, min_size=1, max_size=8))
@example("[]a[ab]", ["a", "b"])  # found by Hypothesis: "]" first in a class is a member, not its end
def test_pushdown_never_drops_a_match(glob, paths):
    """The LIKE pre-filter may widen, never narrow: every path the glob matches passes it."""
    try:
        g = compile_glob(glob)
    except ConfigError:
        return
    for path in paths:
        if GitIgnoreSpec.from_lines([glob.strip()]).match_file(path):
            assert g.match(path)
            assert g.like is None or like_matches(g.like, path), (glob, path, g.like)


@st.composite
def glob_and_instance(draw):
    """A glob and a path made from it by filling its wildcards, so most pairs match."""
    tokens = draw(st.lists(st.sampled_from(["a", "b", ".", "_", "%", '"', "\\\\", "/", "*", "?", "**/",
                                            "[ab]", "[!a]", "-"]), min_size=1, max_size=8))
    fill = {"*": draw(st.sampled_from(["", "a", "x_y", "%"])), "?": "q", "**/": draw(st.sampled_from(["", "d/", "d/e/"])),
            "[ab]": "b", "[!a]": "c", "\\\\": "\\"}
    path = "".join(fill.get(t, t) for t in tokens).lstrip("/")
    return "".join(tokens), path


@settings(max_examples=400, deadline=None)
@given(glob_and_instance())
def test_pushdown_keeps_instances_of_the_glob(pair):
    glob, path = pair
    try:
        g = compile_glob(glob)
    except ConfigError:
        return
    if "//" in path or not path or any(seg in (".", "..") for seg in path.split("/")):
        return
    if g.match(path):
        assert g.like is None or like_matches(g.like, path), (glob, path, g.like)
