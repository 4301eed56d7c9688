"""Issue localization, SWE-bench style: an issue's text in, the files and functions its fix
edits as the answer (LocAgent's metrics, beside the published retrievers).

An instance (``instances.jsonl``, one JSON object a line) holds ``instance_id``, ``repo``
(``owner/name``), ``base_commit``, ``created_at``, ``problem_statement`` and the gold:
``gold_files`` and ``gold_functions`` (``path``, ``qualname``, ``start_line``, ``end_line``).
The trees come from bare git mirrors, ``<mirrors>/<owner>+<name>/repo`` (the layout of
``golden/swe-dev/export.sh``): each repository gets one working folder and one index, and its
instances run in ``created_at`` order, the folder updated commit by commit (only changed files
are rewritten), so the incremental index pays for what changed only.

Metrics (LocAgent, ACL 2025): file Acc@k, every gold file among the first k distinct files of
the ranking; function Acc@k, every gold function overlapped by one of the first k hits (chunks).
The file ranking is the search's own file list (``SearchRequest(files=True)``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
import statistics
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError

log = logging.getLogger(__name__)

INSTANCES = "instances.jsonl"
FILE_KS = (1, 3, 5, 10)
FUNCTION_KS = (5, 10)
HITS = 10  # chunk hits read for function Acc@k
# Published over 274 SWE-bench Lite instances of all 12 repositories (LocAgent's table):
# name -> {metric: percent}
PUBLISHED: dict[str, dict[str, float]] = {
    "BM25": {"file@1": 38.7, "file@5": 61.7, "function@10": 36.9},
    "E5-base-v2": {"file@1": 49.6, "file@5": 80.3, "function@10": 51.1},
    "CodeRankEmbed 137M": {"file@1": 52.6, "file@5": 84.7, "function@10": 58.8},
    "SweRankEmbed-Small 137M": {"file@1": 66.4, "function@10": 74.5},
    "LocAgent (Claude 3.5)": {"file@1": 77.7, "file@5": 94.2, "function@10": 77.4},
}

Progress = Callable[..., None]


@dataclass(frozen=True)
class GoldFunction:
    path: str
    qualname: str
    start_line: int
    end_line: int


@dataclass(frozen=True)
class Instance:
    instance_id: str
    repo: str
    base_commit: str
    created_at: str
    problem_statement: str
    gold_files: tuple[str, ...]
    gold_functions: tuple[GoldFunction, ...]

    @property
    def repo_id(self) -> str:
        return self.repo.rsplit("/", 1)[-1]


def instances_file(golden: str | Path) -> Path | None:
    """The instances file a golden argument names (the file, or a folder holding one)."""
    p = Path(golden)
    if p.is_dir():
        p = p / INSTANCES
    return p if p.is_file() and p.name == INSTANCES else None


def load_instances(path: str | Path) -> list[Instance]:
    out = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            out.append(Instance(
                d["instance_id"], d["repo"], d["base_commit"], d.get("created_at", ""), d["problem_statement"],
                tuple(d["gold_files"]),
                tuple(GoldFunction(g["path"], g.get("qualname", ""), int(g["start_line"]), int(g["end_line"]))
                      for g in d.get("gold_functions", ()))))
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"{path}:{n}: not a SWE-bench instance ({exc})") from None
    return out


# -- trees ---------------------------------------------------------------------------------------

def mirror_dir(mirrors: str | Path, repo: str) -> Path:
    return Path(mirrors) / repo.replace("/", "+") / "repo"


def export_tree(git_dir: str | Path, commit: str, dest: str | Path) -> dict[str, int]:
    """Make ``dest`` hold exactly the tree of ``commit`` (a bare mirror's ``git archive``),
    rewriting only files whose bytes changed and deleting the ones the commit lacks, so an
    incremental index re-reads only what changed. Blobs the mirror lacks are left out."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    raw: bytes = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-l", "-z", commit],
                                capture_output=True, check=True).stdout
    listing = raw.decode("utf-8", "surrogateescape")
    absent = [e.split("\t", 1)[1] for e in listing.split("\0") if e and e.split("\t", 1)[0].split()[3] == "BAD"]
    excl = [f":(exclude){p}" for p in absent]
    with tempfile.TemporaryDirectory(prefix="codeseam-swe-") as tmp:
        archive = subprocess.run(["git", "--git-dir", str(git_dir), "archive", "--format=tar", commit, "--", ".",
                                  *excl], capture_output=True, check=True).stdout
        tar_path = Path(tmp) / "tree.tar"
        tar_path.write_bytes(archive)
        new = Path(tmp) / "tree"
        with tarfile.open(tar_path) as tar:
            tar.extractall(new, filter="data")
        stats = {"written": 0, "deleted": 0, "kept": 0, "absent": len(absent)}
        fresh = {p.relative_to(new) for p in new.rglob("*") if p.is_file() or p.is_symlink()}
        for rel in fresh:
            src, dst = new / rel, dest / rel
            if src.is_symlink():
                continue  # a link in an archived tree is not indexed anyway
            if dst.is_file() and not dst.is_symlink() and dst.read_bytes() == src.read_bytes():
                stats["kept"] += 1
                continue
            dst.parent.mkdir(parents=True, exist_ok=True)
            if dst.is_symlink() or dst.is_dir():
                shutil.rmtree(dst) if dst.is_dir() and not dst.is_symlink() else dst.unlink()
            shutil.copyfile(src, dst)
            stats["written"] += 1
        for p in sorted(dest.rglob("*"), reverse=True):
            rel = p.relative_to(dest)
            if (p.is_file() or p.is_symlink()) and rel not in fresh:
                p.unlink()
                stats["deleted"] += 1
            elif p.is_dir() and not p.is_symlink() and not any(p.iterdir()):
                p.rmdir()
    return stats


# -- metrics -------------------------------------------------------------------------------------

@dataclass
class Outcome:
    instance_id: str
    repo: str
    mode: str
    files: list[str]  # the ranked distinct files (first 10)
    hits: list[tuple[str, int, int]]  # the first HITS chunk hits: path, start, end
    gold_files: tuple[str, ...]
    gold_functions: tuple[GoldFunction, ...]
    query_chars: int
    seconds: float

    def file_rank(self) -> int | None:
        """The rank (1-based) at which every gold file has appeared, or None."""
        pos = [self.files.index(g) + 1 if g in self.files else None for g in self.gold_files]
        return None if not pos or None in pos else max(p for p in pos if p is not None)

    def file_acc(self, k: int) -> bool:
        r = self.file_rank()
        return r is not None and r <= k

    def function_acc(self, k: int) -> bool | None:
        """Every gold function overlapped by one of the first k hits; None without gold functions."""
        if not self.gold_functions:
            return None
        top = self.hits[:k]
        return all(any(p == g.path and s <= g.end_line and e >= g.start_line for p, s, e in top)
                   for g in self.gold_functions)


def summarize(outcomes: Sequence[Outcome]) -> dict[str, float | int | None]:
    """Percentages over ``outcomes``: file@k and function@k (instances with gold functions)."""
    out: dict[str, float | int | None] = {"n": len(outcomes)}
    for k in FILE_KS:
        out[f"file@{k}"] = 100.0 * sum(o.file_acc(k) for o in outcomes) / len(outcomes) if outcomes else None
    for k in FUNCTION_KS:
        vals = [v for o in outcomes if (v := o.function_acc(k)) is not None]
        out[f"function@{k}"] = 100.0 * sum(vals) / len(vals) if vals else None
    out["seconds_p50"] = statistics.median(o.seconds for o in outcomes) if outcomes else None
    return out


@dataclass
class SweResult:
    instances: str
    mirrors: str
    cache_dir: str
    modes: tuple[str, ...]
    outcomes: list[Outcome] = field(default_factory=list)
    indexing: list[dict[str, Any]] = field(default_factory=list)

    def by_mode(self, mode: str) -> list[Outcome]:
        return [o for o in self.outcomes if o.mode == mode]

    def repos(self) -> list[str]:
        return list(dict.fromkeys(o.repo for o in self.outcomes))


def _quiet(event: str, **fields: Any) -> None:
    pass


def run_swe(instances_path: str | Path, mirrors: str | Path, *, modes: Sequence[str] = ("hybrid", "bm25"),
            settings=None, cache_dir: str | Path | None = None, only: Sequence[str] = (),
            progress: Progress | None = None,
            arms: Mapping[str, Callable[[], AbstractContextManager[object]]] | None = None) -> SweResult:
    """Index each instance's base commit (incrementally, per repository) and localize it.
    ``arms`` (a benchmark's): name -> a context that changes how a search runs; every arm
    searches each instance on the same index state, its outcomes labelled ``mode (arm)``."""
    from .. import api
    from ..interface import SearchRequest
    from ..settings import load_settings

    progress = progress or _quiet
    instances = load_instances(instances_path)
    if only:
        instances = [i for i in instances if i.instance_id in set(only) or i.repo_id in set(only)]
    if not instances:
        raise ConfigError(f"no instances to run in {instances_path}")
    cache = Path(cache_dir) if cache_dir else Path(tempfile.gettempdir()) / "codeseam-swe"
    base = settings or load_settings()
    settings = base.replace(data_dir=str(cache / "index"))
    arms = arms or {"": contextlib.nullcontext}
    labels = {(arm, mode): f"{mode} ({arm})" if arm else mode for arm in arms for mode in modes}
    result = SweResult(str(instances_path), str(mirrors), str(cache), tuple(labels.values()))
    order = sorted(instances, key=lambda i: (i.repo, i.created_at, i.instance_id))
    with api.Index(settings, create=True) as idx:
        for inst in order:
            git_dir = mirror_dir(mirrors, inst.repo)
            if not git_dir.is_dir():
                raise ConfigError(f"{inst.instance_id}: no mirror at {git_dir}",
                                  hint="--root is the folder that holds <owner>+<name>/repo bare mirrors")
            tree = cache / "trees" / inst.repo_id
            progress("index", spec=f"{inst.instance_id} @ {inst.base_commit[:10]}")
            t0 = time.perf_counter()
            stats = export_tree(git_dir, inst.base_commit, tree)
            report = idx.index(tree, repo_id=inst.repo_id)
            result.indexing.append({"instance": inst.instance_id, **stats, "seconds": time.perf_counter() - t0,
                                    "summary": report.summary()})
            for (arm, mode), label in labels.items():
                t1 = time.perf_counter()
                with arms[arm]():
                    res = idx.search(SearchRequest(inst.problem_statement, repo=inst.repo_id, k=HITS, mode=mode,
                                                   files=True))
                files = [f.path for f in (res.files or ())][:10]
                result.outcomes.append(Outcome(
                    inst.instance_id, inst.repo_id, label, files,
                    [(h.path, h.start_line, h.end_line) for h in res.hits], inst.gold_files, inst.gold_functions,
                    len(inst.problem_statement), time.perf_counter() - t1))
            progress("query", variant=inst.instance_id, done=1, total=1)
    return result


# -- report --------------------------------------------------------------------------------------

_COLS = [f"file@{k}" for k in FILE_KS] + [f"function@{k}" for k in FUNCTION_KS]


def _fmt(v: float | int | None) -> str:
    return "–" if v is None else f"{v:.1f}"


def markdown(result: SweResult) -> str:
    lines = ["# Issue localization (SWE-bench style): file and function Acc@k, %", "",
             f"{len({o.instance_id for o in result.outcomes})} instances of {', '.join(result.repos())}; "
             "the published rows are over 274 SWE-bench Lite instances of 12 repositories (LocAgent).", "",
             "| retriever | n | " + " | ".join(_COLS) + " |", "|---|---:|" + "---:|" * len(_COLS)]
    for mode in result.modes:
        s = summarize(result.by_mode(mode))
        lines.append(f"| codeseam {mode} | {s['n']} | " + " | ".join(_fmt(s[c]) for c in _COLS) + " |")
    for name, row in PUBLISHED.items():
        lines.append(f"| {name} (published) | 274 | " + " | ".join(_fmt(row.get(c)) for c in _COLS) + " |")
    lines += ["", "## Per repository", "", "| repo | mode | n | " + " | ".join(_COLS) + " |",
              "|---|---|---:|" + "---:|" * len(_COLS)]
    for repo in result.repos():
        for mode in result.modes:
            s = summarize([o for o in result.by_mode(mode) if o.repo == repo])
            lines.append(f"| {repo} | {mode} | {s['n']} | " + " | ".join(_fmt(s[c]) for c in _COLS) + " |")
    lines += ["", "## Per instance (rank of the gold file; function hit in the first 10)", "",
              "| instance | chars | " + " | ".join(result.modes) + " | first file (" + result.modes[0] + ") |",
              "|---|---:|" + "---:|" * len(result.modes) + "---|"]
    for iid in dict.fromkeys(o.instance_id for o in result.outcomes):
        of = {o.mode: o for o in result.outcomes if o.instance_id == iid}
        first = of[result.modes[0]]
        cells = []
        for mode in result.modes:
            rank, fn = of[mode].file_rank(), of[mode].function_acc(10)
            cells.append(f"{rank if rank and rank <= 10 else '>10'}{' / fn' if fn else ''}")
        lines.append(f"| {iid} | {first.query_chars} | " + " | ".join(cells) + f" | {first.files[0] if first.files else ''} |")
    return "\n".join(lines) + "\n"


def to_json(result: SweResult) -> dict[str, Any]:
    return {
        "instances": result.instances, "modes": list(result.modes),
        "summary": {mode: summarize(result.by_mode(mode)) for mode in result.modes},
        "per_repo": {repo: {mode: summarize([o for o in result.by_mode(mode) if o.repo == repo])
                            for mode in result.modes} for repo in result.repos()},
        "published": PUBLISHED,
        "per_instance": [{"instance": o.instance_id, "mode": o.mode, "file_rank": o.file_rank(),
                          "function@10": o.function_acc(10), "files": o.files[:5], "chars": o.query_chars,
                          "seconds": round(o.seconds, 3)} for o in result.outcomes],
        "indexing": [{k: v for k, v in d.items() if k != "summary"} for d in result.indexing],
    }
