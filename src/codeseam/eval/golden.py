"""Golden sets: JSONL, one query per line (``golden/README.md``, DESIGN §8).

Each record: ``{id, repo, query, kind, gold: [{path, symbol, start, end}]}``. Extra keys
(a ``commit`` field, for example) are ignored. Gold paths are relative to the corpus root,
forward slashes; ``start``/``end`` are 1-based inclusive lines of the whole definition.
A negative query (kind ``negative``) has ``gold == []``. Any problem stops the run with a
``ConfigError`` naming the file and line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..errors import ConfigError

NEGATIVE = "negative"


@dataclass(frozen=True)
class GoldSpan:
    path: str
    symbol: str
    start: int
    end: int


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
    """Read and check a golden set; the queries in file order."""
    p = Path(path)
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
    repo = rec.get("repo") if isinstance(rec.get("repo"), str) and rec.get("repo") else "golden"
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
    symbol = g.get("symbol") if isinstance(g.get("symbol"), str) else ""
    return GoldSpan(path, symbol, start, end)


def gold_paths(queries: list[GoldQuery]) -> list[str]:
    """The distinct gold paths, sorted: the corpus of a golden set when none is given."""
    return sorted({g.path for q in queries for g in q.gold})


def repo_of(queries: list[GoldQuery]) -> str:
    """The repo id the set names (its first query's ``repo``)."""
    return queries[0].repo
