"""The records of a references query, and their JSON (the CLI's ``--json``, MCP, HTTP)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

LINE_MAX_CHARS = 300  # a reference shows its line, cut to this many characters


@dataclass(frozen=True, slots=True)
class Reference:
    """One place a name is defined or used, at the file's current lines. ``symbol`` is the
    definition it sits in (for a ``def``, the defined symbol), ``symbol_start..symbol_end`` that
    definition's lines (0 at the top level); ``text`` the line (scrubbed, like indexed text)."""

    repo: str
    path: str
    language: str
    role: str
    line: int
    column: int
    kind: str  # def | call | import | use
    symbol: str
    symbol_kind: str
    symbol_start: int
    symbol_end: int
    text: str


@dataclass(frozen=True, slots=True)
class Caller:
    """A definition whose body references the name (calls it, or uses it as a value)."""

    repo: str
    path: str
    symbol: str
    kind: str
    start_line: int
    end_line: int
    lines: tuple[int, ...]  # where in it the name is referenced


@dataclass(frozen=True)
class RefsResult:
    """Every reference found, definitions first. ``source`` says where the candidate files came
    from (``index``: the chunks BM25 finds the name in, plus the files changed since they were
    indexed; ``scan``: every indexed file of the repo); ``files_read`` how many files were read
    and parsed; ``left_out`` the references dropped by a limit or a token budget."""

    name: str
    refs: tuple[Reference, ...]
    callers: tuple[Caller, ...] = ()
    source: str = "index"
    candidates: int = 0
    files_read: int = 0
    left_out: int = 0
    tokens: int | None = None  # the output's tokens when a budget was given
    notes: tuple[str, ...] = field(default_factory=tuple)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.refs:
            out[r.kind] = out.get(r.kind, 0) + 1
        return out


def reference_line(r: Reference) -> str:
    """One line per reference, as agents and people read it: ``path:line:col kind in symbol: text``."""
    where = f"in {r.symbol}" if r.kind != "def" and r.symbol else ("top level" if r.kind != "def" else r.symbol)
    return f"{r.path}:{r.line}:{r.column} {r.kind} {where}: {r.text.strip()}"


def refs_json(result: RefsResult) -> dict[str, Any]:
    return {
        "name": result.name,
        "counts": result.counts(),
        "refs": [{"repo": r.repo, "path": r.path, "language": r.language, "role": r.role, "line": r.line,
                  "column": r.column, "kind": r.kind, "symbol": r.symbol, "symbol_kind": r.symbol_kind,
                  "symbol_lines": [r.symbol_start, r.symbol_end] if r.symbol_start else None, "text": r.text}
                 for r in result.refs],
        "callers": [{"repo": c.repo, "path": c.path, "symbol": c.symbol, "kind": c.kind,
                     "start_line": c.start_line, "end_line": c.end_line, "lines": list(c.lines)}
                    for c in result.callers],
        "source": result.source,
        "candidates": result.candidates,
        "files_read": result.files_read,
        "left_out": result.left_out,
        "tokens": result.tokens,
        "notes": list(result.notes),
    }


def refs_result(data: dict[str, Any]) -> RefsResult:
    """``refs_json`` back to the record (a client of a server that holds the index)."""
    refs = tuple(Reference(r["repo"], r["path"], r["language"], r["role"], r["line"], r["column"], r["kind"],
                           r["symbol"], r["symbol_kind"], *(r.get("symbol_lines") or (0, 0)), r["text"])
                 for r in data["refs"])
    callers = tuple(Caller(c["repo"], c["path"], c["symbol"], c["kind"], c["start_line"], c["end_line"],
                           tuple(c["lines"])) for c in data.get("callers", ()))
    return RefsResult(data["name"], refs, callers, data.get("source", "index"), data.get("candidates", 0),
                      data.get("files_read", 0), data.get("left_out", 0), data.get("tokens"),
                      tuple(data.get("notes", ())))


def fit_refs(result: RefsResult, max_tokens: int, count=None) -> RefsResult:
    """The references that fit ``max_tokens`` (in order: definitions first), counted as their
    lines (``reference_line``); ``left_out`` says how many did not."""
    import dataclasses

    from ..fit import fit_lines
    from .find import callers_of

    n, used = fit_lines([reference_line(r) for r in result.refs], max_tokens, count)
    kept = result.refs[:n]
    return dataclasses.replace(result, refs=kept, callers=callers_of(kept), tokens=used,
                               left_out=result.left_out + len(result.refs) - n)
