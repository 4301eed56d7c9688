"""docs/ARCHITECTURE.md quotes the code; the quotes must be the code's.

- Every ```python block whose lines start with ``# codeseam/<path>`` headers quotes signatures
  from that file: each ``def``/``class`` (a method indented under its ``class``) must exist
  there with the same parameters in the same order (names, kinds, defaults) and, where the
  doc writes an annotation or a return type, the same one (a quote may leave annotations out;
  a trailing ``# comment`` is the doc's own).
- Every constant quoted with its value, `` `NAME = value` `` or `` `NAME` (value`` (``NAME`` may
  carry its module: `` `store.SCHEMA_VERSION` (4``), must have that value in the module that
  defines it.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "ARCHITECTURE.md"
SRC = ROOT / "src"
HEADER = re.compile(r"^# (codeseam/\S+\.py)\b")
QUOTED_DEF = re.compile(r"^(\s*)(?:async\s+)?(def|class)\s+(\w+)")


def blocks() -> list[list[str]]:
    return [b.splitlines() for b in re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)]


def quoted_signatures() -> list[tuple[str, str, str]]:
    """(file, qualified name, quoted text) for every def/class under a file header (a def that
    goes on over more lines is joined)."""
    out = []
    for block in blocks():
        path, cls, pending = None, None, None
        for line in block:
            if pending is not None:  # a signature going on over lines
                pending[2] += " " + line.strip()
                if pending[2].count("(") <= pending[2].count(")"):
                    out.append(tuple(pending))
                    pending = None
                continue
            header = HEADER.match(line)
            if header:
                path, cls = header.group(1), None
                continue
            m = QUOTED_DEF.match(line)
            if path is None or m is None:
                continue
            indent, kind, name = m.groups()
            if kind == "class" and not indent:
                cls = name
            item = [path, f"{cls}.{name}" if indent and cls else name, line.strip()]
            if item[2].count("(") > item[2].count(")"):
                pending = item
            else:
                out.append(tuple(item))
    return out


def parse(text: str) -> ast.Module:
    """``ast.parse``, once more on CPython 3.11's spurious "AST constructor recursion depth
    mismatch" SystemError (gh-106905: another thread's ast work, here a daemon thread an earlier
    test left, can throw off the shared depth counter)."""
    try:
        return ast.parse(text)
    except SystemError:
        return ast.parse(text)


@functools.cache
def definitions(path: str) -> dict[str, ast.AST]:
    tree = parse((SRC / path).read_text(encoding="utf-8"))
    found: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found[node.name] = node
        if isinstance(node, ast.ClassDef):
            for member in node.body:
                if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found[f"{node.name}.{member.name}"] = member
    return found


def parsed(quoted: str) -> ast.FunctionDef:
    """The quoted signature as a function (its comment dropped, given a body)."""
    code = re.sub(r"\)(\s*->[^#]*)?\s*(#.*)?$", lambda m: ")" + (m.group(1) or "").rstrip(), quoted)
    node = parse(code.rstrip(":") + ": ...").body[0]
    assert isinstance(node, ast.FunctionDef)
    return node


def params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[str, str, str | None, str | None]]:
    """(kind, name, annotation, default) of every parameter, in order."""
    a = fn.args
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    out = [("pos", p.arg, p.annotation, d) for p, d in zip(positional, defaults, strict=True)]
    if a.vararg:
        out.append(("*", a.vararg.arg, a.vararg.annotation, None))
    out += [("kw", p.arg, p.annotation, d) for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True)]
    if a.kwarg:
        out.append(("**", a.kwarg.arg, a.kwarg.annotation, None))
    return [(k, n, text(ann), text(d)) for k, n, ann, d in out]


def text(node: ast.AST | None) -> str | None:
    return None if node is None else re.sub(r"\s+", "", ast.unparse(node)).replace('"', "'")


SIGNATURES = quoted_signatures()


def test_the_doc_quotes_signatures():
    assert len(SIGNATURES) > 40 and {p for p, _, _ in SIGNATURES} >= {"codeseam/api.py", "codeseam/interface.py"}


@pytest.mark.parametrize("path,name,quoted", SIGNATURES, ids=[f"{p}:{n}" for p, n, _ in SIGNATURES])
def test_a_quoted_signature_is_the_code(path, name, quoted):
    defs = definitions(path)
    assert name in defs, f"{path} has no {name} (the doc quotes: {quoted})"
    code = defs[name]
    if quoted.startswith("class"):
        assert isinstance(code, ast.ClassDef)
        return
    assert isinstance(code, (ast.FunctionDef, ast.AsyncFunctionDef))
    doc = parsed(quoted)
    mine, theirs = params(doc), params(code)
    where = f"{path}: the doc quotes\n  {quoted}\nthe code has\n  def {name}({ast.unparse(code.args)})"
    assert [(k, n, d) for k, n, _, d in mine] == [(k, n, d) for k, n, _, d in theirs], where
    for (_, n, ann, _), (_, _, real, _) in zip(mine, theirs, strict=True):
        assert ann is None or ann == real, f"{where}\n(the annotation of {n})"
    assert doc.returns is None or text(doc.returns) == text(code.returns), f"{where}\n(the return type)"


CONSTANT = re.compile(r"`(?:[\w.]+\.)?([A-Z][A-Z0-9_]{2,}) ?= ?([^`]+)`"
                      r"|`(?:[\w.]+\.)?([A-Z][A-Z0-9_]{2,})` \((\"[^\"]*\"|[0-9][0-9_.]*)")


def module_constants() -> dict[str, list[tuple[str, object]]]:
    """NAME -> [(file, value)] for every module-level constant with a literal value."""
    found: dict[str, list[tuple[str, object]]] = {}
    for path in (SRC / "codeseam").rglob("*.py"):
        for node in parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                try:
                    value = ast.literal_eval(node.value)
                except ValueError:
                    continue
                found.setdefault(node.targets[0].id, []).append((str(path.relative_to(SRC)), value))
    return found


def test_quoted_constants_have_their_values():
    constants = module_constants()
    checked = []
    for m in CONSTANT.finditer(DOC.read_text(encoding="utf-8")):
        name = m.group(1) or m.group(3)
        text = (m.group(2) or m.group(4)).strip()
        if name not in constants:
            continue  # an environment variable or a setting, not a constant of the code
        try:
            quoted = ast.literal_eval(text.replace("_", "") if text[0].isdigit() else text)
        except (ValueError, SyntaxError):
            pytest.fail(f"the doc quotes {name} as {text!r}, which is not a literal")
        values = {repr(v) for _, v in constants[name]}
        assert repr(quoted) in values, f"the doc says {name} = {text}; the code: {constants[name]}"
        checked.append(name)
    assert {"CHUNKER_VERSION", "SCHEMA_VERSION", "BATCH_CHUNKS"} <= set(checked), checked
