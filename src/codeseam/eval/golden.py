"""Golden sets: JSONL, one query per line (``golden/README.md``, DESIGN §8), or a semble
benchmark annotation file (JSON, ``golden/semble-dev/README.md``).

JSONL record: ``{id, repo, query, kind, gold: [{path, symbol, start, end}]}``. Extra keys
(a ``commit`` field, for example) are ignored. Gold paths are relative to the corpus root,
forward slashes; ``start``/``end`` are 1-based inclusive lines of the whole definition.
A negative query (kind ``negative``) has ``gold == []``. Any problem stops the run with a
``ConfigError`` naming the file and line.

Semble file: ``{repo, tasks: [{id, query, category, relevant: [target], secondary: [target]}]}``,
a target ``{path, start_line, end_line}`` (both lines null for a whole file). Each task becomes
a query of kind ``category``; relevant and secondary targets are its gold alike, matched the
benchmark's way (``GoldSpan.suffix``: a result's path ends with the target's path at a ``/``,
or the other way round; a whole-file target is lines 1..``WHOLE_FILE_END``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..errors import ConfigError

NEGATIVE = "negative"
SEMBLE_KINDS = ("architecture", "semantic", "symbol")
WHOLE_FILE_END = 10**9  # a whole-file target's end line: any hit in the file overlaps it


@dataclass(frozen=True)
class GoldSpan:
    path: str
    symbol: str
    start: int
    end: int
    suffix: bool = False  # the benchmark's path rule (semble): either path ends with the other

    @property
    def whole_file(self) -> bool:
        return self.start == 1 and self.end == WHOLE_FILE_END


@dataclass(frozen=True)
class GoldQuery:
    id: str
    repo: str
    query: str
    kind: str
    gold: tuple[GoldSpan, ...]

    @property
    def negative(self) -> bool:
        return self.kind == NEGATIVE


def load_golden(path: str | Path) -> list[GoldQuery]:
    """Read and check a golden set (JSONL, or a semble ``.json`` file); the queries in file
    order."""
    p = Path(path)
    if p.suffix == ".json":
        return load_semble(p)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read golden set {p}: {exc}") from None
    queries: list[GoldQuery] = []
    seen: set[str] = set()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{p}:{n}"
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{where}: not JSON ({exc.msg})") from None
        q = parse_record(rec, where)
        if q.id in seen:
            raise ConfigError(f"{where}: duplicate id {q.id!r}")
        seen.add(q.id)
        queries.append(q)
    if not queries:
        raise ConfigError(f"golden set {p} holds no queries")
    return queries


def parse_record(rec: object, where: str) -> GoldQuery:
    if not isinstance(rec, dict):
        raise ConfigError(f"{where}: expected a JSON object")
    for key in ("id", "query", "kind"):
        if not isinstance(rec.get(key), str) or not rec[key].strip():
            raise ConfigError(f"{where}: {key!r} must be a non-empty string")
    gold_raw = rec.get("gold")
    if not isinstance(gold_raw, list):
        raise ConfigError(f"{where}: 'gold' must be a list")
    gold = tuple(_span(g, f"{where} gold[{i}]") for i, g in enumerate(gold_raw))
    kind = rec["kind"]
    if kind == NEGATIVE and gold:
        raise ConfigError(f"{where}: a negative query must have gold == []")
    if kind != NEGATIVE and not gold:
        raise ConfigError(f"{where}: a {kind} query needs at least one gold entry")
    repo = rec.get("repo")
    repo = repo if isinstance(repo, str) and repo else "golden"
    return GoldQuery(rec["id"], repo, rec["query"], kind, gold)


def _span(g: object, where: str) -> GoldSpan:
    if not isinstance(g, dict):
        raise ConfigError(f"{where}: expected an object")
    path, start, end = g.get("path"), g.get("start"), g.get("end")
    if not isinstance(path, str) or not path:
        raise ConfigError(f"{where}: 'path' must be a non-empty string")
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts or "\\" in path or path.startswith("./"):
        raise ConfigError(f"{where}: path {path!r} must be relative to the corpus root, "
                          "forward slashes, no '..' or leading './'")
    if not (isinstance(start, int) and isinstance(end, int)) or isinstance(start, bool) \
            or isinstance(end, bool) or not 1 <= start <= end:
        raise ConfigError(f"{where}: start/end must be integers with 1 <= start <= end")
    symbol = g.get("symbol")
    symbol = symbol if isinstance(symbol, str) else ""
    return GoldSpan(path, symbol, start, end)


def gold_paths(queries: list[GoldQuery]) -> list[str]:
    """The distinct gold paths, sorted: the corpus of a golden set when none is given."""
    return sorted({g.path for q in queries for g in q.gold})


def repo_of(queries: list[GoldQuery]) -> str:
    """The repo id the set names (its first query's ``repo``)."""
    return queries[0].repo


def is_semble_file(path: str | Path) -> bool:
    """A semble annotation file: a ``.json`` object with ``tasks`` (not ``published.json`` or
    ``repos.json`` beside them)."""
    p = Path(path)
    if p.suffix != ".json":
        return False
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(data, dict) and isinstance(data.get("tasks"), list)


def load_semble(path: str | Path) -> list[GoldQuery]:
    """Read a semble benchmark annotation file (module doc) as golden queries."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read golden set {p}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{p}: not JSON ({exc.msg})") from None
    if not isinstance(data, dict) or not isinstance(data.get("tasks"), list):
        raise ConfigError(f"{p}: expected a semble annotation file: an object with 'tasks'")
    repo = data.get("repo")
    repo = repo if isinstance(repo, str) and repo else p.stem
    queries: list[GoldQuery] = []
    seen: set[str] = set()
    for i, task in enumerate(data["tasks"]):
        where = f"{p} tasks[{i}]"
        if not isinstance(task, dict) or not isinstance(task.get("query"), str) or not task["query"].strip():
            raise ConfigError(f"{where}: 'query' must be a non-empty string")
        qid = task.get("id")
        qid = qid if isinstance(qid, str) and qid else f"{repo}:{i}"
        if qid in seen:
            raise ConfigError(f"{where}: duplicate id {qid!r}")
        seen.add(qid)
        category = task.get("category")
        category = category if isinstance(category, str) else _infer_category(task["query"])
        targets = [*(task.get("relevant") or []), *(task.get("secondary") or [])]
        gold = tuple(_target(t, f"{where} target[{j}]") for j, t in enumerate(targets))
        if not gold:
            raise ConfigError(f"{where}: a task needs at least one relevant target")
        queries.append(GoldQuery(qid, repo, task["query"], category, gold))
    if not queries:
        raise ConfigError(f"golden set {p} holds no queries")
    return queries


def _infer_category(query: str) -> str:
    """The benchmark's rule for a task without a category."""
    if " " not in query.strip():
        return "symbol"
    low = query.lower()
    return "architecture" if low.startswith("how ") else "semantic"


def _target(t: object, where: str) -> GoldSpan:
    if isinstance(t, str):
        t = {"path": t}
    if not isinstance(t, dict) or not isinstance(t.get("path"), str) or not t["path"]:
        raise ConfigError(f"{where}: expected a path or {{path, start_line, end_line}}")
    path = t["path"].replace("\\", "/").strip("/")
    start, end = t.get("start_line"), t.get("end_line")
    if start is None or end is None:
        return GoldSpan(path, "", 1, WHOLE_FILE_END, suffix=True)
    try:
        a, b = int(start), int(end)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: start_line/end_line must be integers or null") from None
    if not 1 <= a <= b:
        raise ConfigError(f"{where}: start_line/end_line must satisfy 1 <= start <= end")
    return GoldSpan(path, "", a, b, suffix=True)
