"""References over an index: candidate files from the index, exact occurrences from the files.

Where the candidates come from (measured in ``bench/results/refs.md``): the chunks whose
``indexed_text`` BM25 finds the name's word in (one search that reads paths only), plus the
repo's paths changed on disk and not synced yet (the refresher's dirty set). Every candidate
file is then read as it is *now* and parsed (``occur.find_occurrences``), so lines are current
and only code counts. When BM25 may have cut the list short (``MAX_WINDOW`` chunks hold the
word) or a whole repo is pending, every indexed file of the repo is read instead (``scan``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence

from ..errors import ConfigError
from ..records import Caller, Reference, RefsResult
from .names import Name, parse_name
from .occur import KINDS, Occurrence, find_occurrences, is_code_language

log = logging.getLogger(__name__)

Scrubber = Callable[[str], Callable[[str, str], str] | None]  # root -> scrub(text, path)
LINE_MAX_CHARS = 300  # a reference shows its line, cut to this many characters


def check_kinds(kind: str | Sequence[str] | None) -> tuple[str, ...]:
    """``"call,use"`` or a list -> the kinds; empty means all."""
    if not kind:
        return ()
    parts = kind.split(",") if isinstance(kind, str) else list(kind)
    kinds = tuple(dict.fromkeys(p.strip().lower() for p in parts if p.strip()))
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        raise ConfigError(f"unknown reference kind {bad[0]!r}", hint="kinds: " + ", ".join(KINDS))
    return kinds


def find_references(store, name: str | Name, *, roots: Mapping[str, str], pending: Mapping[str, Iterable[str]] | None = None,
                    full: Iterable[str] = (), kinds: Sequence[str] = (), max_file_bytes: int | None = None,
                    scrub_for: Scrubber | None = None, lock=None, candidates: str = "index") -> RefsResult:
    """Every reference to ``name`` in the repos ``roots`` (repo id -> root folder).

    ``pending``: paths per repo changed on disk and not in the index yet (read too); ``full``:
    repos whose every file may have changed (scanned whole); ``candidates="scan"`` reads every
    indexed file of every repo (the measured alternative). ``lock`` is held for the store calls."""
    from contextlib import nullcontext

    from ..store import Filters
    from ..store.client import MAX_WINDOW

    name = parse_name(name) if isinstance(name, str) else name
    full = set(full)
    paths: dict[str, set[str]] = {r: set((pending or {}).get(r, ())) for r in roots}
    source = "index"
    with lock if lock is not None else nullcontext():
        scan = set(roots) if candidates == "scan" else set(full)
        index_repos = tuple(r for r in roots if r not in scan)
        if index_repos:
            found, complete = store.bm25_paths(name.last, Filters(repos=index_repos), MAX_WINDOW)
            if complete:
                for repo, path in found:
                    paths[repo].add(path)
            else:
                scan |= set(index_repos)
        for repo in scan:
            paths[repo] |= set(store.file_entries(repo))
            source = "scan"
    todo = [(repo, path) for repo in sorted(paths) for path in sorted(paths[repo])]
    refs, read, notes = _read_all(todo, name, roots, max_file_bytes, scrub_for)
    if kinds:
        refs = [r for r in refs if r.kind in kinds]
    refs.sort(key=_order)
    return RefsResult(name.text, tuple(refs), callers_of(refs), source, len(todo), read, notes=tuple(notes))


def _read_all(todo, name: Name, roots, max_file_bytes, scrub_for):
    from ..chunk.languages import language_for, language_label
    from ..chunk.parse import ParseFailed
    from ..discover.roles import file_role
    from ..discover.contain import Containment
    from ..fresh.hits import current_text

    refs: list[Reference] = []
    notes: list[str] = []
    scrubs: dict[str, Callable[[str, str], str] | None] = {}
    contains: dict[str, Containment] = {}
    read = 0
    for repo, path in todo:
        language = language_for(path)
        if not is_code_language(language):
            continue
        root = roots.get(repo, "")
        if root and root not in contains:
            contains[root] = Containment(root)  # folder checks shared by the repo's files
        text, _why = current_text(root, path, max_file_bytes, contains.get(root))
        read += text is not None
        if text is None or name.last not in text:
            continue  # gone, unreadable, or the name is no longer in it
        try:
            found = find_occurrences(text, language or "", name, path=path)
        except ParseFailed as exc:
            notes.append(f"{repo}:{path}: not searched ({exc})")
            continue
        if not found:
            continue
        if scrub_for is not None and root not in scrubs:
            scrubs[root] = scrub_for(root)
        scrub = scrubs.get(root)
        lines = (scrub(text, path) if scrub is not None else text).split("\n")
        role = file_role(path, text[:4096])
        label = language_label(path)
        refs += [_reference(repo, path, label, role, o, lines) for o in found]
    return refs, read, notes


def _reference(repo: str, path: str, language: str, role: str, o: Occurrence, lines: list[str]) -> Reference:
    text = lines[o.line - 1].rstrip("\r") if o.line <= len(lines) else ""
    if len(text) > LINE_MAX_CHARS:
        lo = max(0, min(o.column - 1 - LINE_MAX_CHARS // 3, len(text) - LINE_MAX_CHARS))
        text = text[lo:lo + LINE_MAX_CHARS]
    return Reference(repo, path, language, role, o.line, o.column, o.kind, o.symbol, o.symbol_kind,
                     o.symbol_start, o.symbol_end, text)


def scrubber(settings) -> Scrubber | None:
    """The scrub function of a repo root, as the indexer applies it (None when scrubbing is off):
    a reference's line is shown as the index would store it."""
    if not settings.scrub:
        return None

    def for_root(root: str) -> Callable[[str, str], str]:
        from ..scrub import load_allow, scrub_text

        allow = load_allow(root, settings.scrub_allow)
        return lambda text, path: scrub_text(text, allow=allow, path=path).text
    return for_root


_KIND_ORDER = {k: i for i, k in enumerate(KINDS)}


def _order(r: Reference) -> tuple:
    """Definitions first, then source files before tests and the rest, then by place."""
    return (r.kind != "def", r.role != "source", r.repo, r.path, r.line, r.column, _KIND_ORDER[r.kind])


def callers_of(refs: Iterable[Reference]) -> tuple[Caller, ...]:
    """The definitions whose bodies reference the name (calls and uses; not the definition
    itself, not imports, not top-level code), with the lines where they do, in the order of
    their first reference."""
    groups: dict[tuple, list[int]] = {}
    for r in refs:
        if r.kind in ("def", "import") or not r.symbol:
            continue
        key = (r.repo, r.path, r.symbol, r.symbol_kind, r.symbol_start, r.symbol_end)
        groups.setdefault(key, []).append(r.line)
    return tuple(Caller(repo, path, symbol, kind, start, end, tuple(dict.fromkeys(lines)))
                 for (repo, path, symbol, kind, start, end), lines in groups.items())


def reference_line(r: Reference) -> str:
    """One line per reference, as agents and people read it (and as a token budget counts it):
    ``path:line:col kind in symbol: text``."""
    where = f"in {r.symbol}" if r.kind != "def" and r.symbol else ("top level" if r.kind != "def" else r.symbol)
    return f"{r.path}:{r.line}:{r.column} {r.kind} {where}: {r.text.strip()}"
