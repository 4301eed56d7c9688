"""No import cycle in ``src/codeseam``: the import graph, read statically with ``ast`` (imports
inside functions included, since a lazy import is still a dependency), has no strongly
connected component of more than one module.

A node is a module (a package is its ``__init__``); ``from X import name`` is an edge to
``X.name`` when that is a module, else to ``X``. Importing a submodule also runs its parent
packages' ``__init__``, which is not an edge here: a package may import its own submodules.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "codeseam"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def parse(text: str) -> ast.Module:
    """``ast.parse``, once more on CPython 3.11's spurious recursion-depth SystemError (gh-106905)."""
    try:
        return ast.parse(text)
    except SystemError:
        return ast.parse(text)


def import_graph() -> dict[str, dict[str, int]]:
    """module -> {imported module: the line of the first import of it}."""
    files = {module_name(p): p for p in sorted((SRC / PACKAGE).rglob("*.py"))}
    graph: dict[str, dict[str, int]] = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: dict[str, int] = {}
        for node in ast.walk(parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base_parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join(base_parts + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names]
            for target in targets:
                if target in files and target != name:
                    edges.setdefault(target, node.lineno)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def describe(component: list[str], graph: dict[str, dict[str, int]]) -> str:
    inside = set(component)
    edges = [f"  {a} -> {b} (line {line})" for a in component for b, line in sorted(graph[a].items()) if b in inside]
    return "\n".join([" <-> ".join(component), *edges])


def test_the_package_has_no_import_cycle():
    graph = import_graph()
    assert len(graph) > 100 and "codeseam.api" in graph["codeseam"]  # the walk sees lazy imports
    found = cycles(graph)
    assert not found, "import cycles:\n" + "\n".join(describe(c, graph) for c in found)


def test_the_cycle_finder_finds_a_cycle_through_a_lazy_import():
    graph = {"a": {"b": 1}, "b": {"c": 3}, "c": {"a": 9}, "d": {"a": 2}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b": 1}, "b": {}}) == []
    assert "c -> a (line 9)" in describe(["a", "b", "c"], graph)
