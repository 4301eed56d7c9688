"""A golden *suite*: one golden set per repository, each over its own whole corpus.

``golden/repos-dev/`` is such a suite: ``<name>.jsonl`` per repository, and the corpus of
each is ``<corpora>/<repo>/`` (the records' ``repo`` field names the folder). ``run_suite``
runs every set through :func:`~.runner.run_eval` (corpus mode ``all``: every file the
repository holds, tests, docs and changelogs included), each repository in its own eval
index (``<cache>/<repo>/``: BM25's statistics are the repository's own, as for a user who
indexed only it), and pools the outcomes: ``SuiteResult.pooled`` is one
:class:`~.runner.EvalResult` whose per-variant outcomes are every repository's, in order, so
every report of a single set works on it; ``per_repo`` keeps each repository's result for
the per-repository tables.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..settings import Settings
from . import metrics
from .golden import load_golden, repo_of
from .runner import DEFAULT_KS, EvalResult, VariantResult, run_eval

Progress = Callable[..., None]


@dataclass
class SuiteResult:
    golden: str  # the suite's folder
    root: str  # the folder holding one corpus per repository
    cache_dir: str = ""  # <cache_dir>/<repo>/ holds each repository's eval index
    per_repo: dict[str, EvalResult] = field(default_factory=dict)

    @property
    def repos(self) -> list[str]:
        return list(self.per_repo)

    @property
    def pooled(self) -> EvalResult:
        """Every repository's outcomes in one result (per variant, repository order)."""
        results = list(self.per_repo.values())
        first = results[0]
        pooled = copy.copy(first)
        pooled.golden, pooled.root, pooled.repo_id = self.golden, self.root, "+".join(self.repos)
        pooled.queries = [q for r in results for q in r.queries]
        pooled.indexes = {f"{repo}/{k}": v for repo, r in self.per_repo.items() for k, v in r.indexes.items()}
        pooled.run = {repo: r.run for repo, r in self.per_repo.items()}
        merged: list[VariantResult] = []
        for i, vr in enumerate(first.results):
            parts = [r.results[i] for r in results]
            skipped = next((p.skipped for p in parts if p.skipped), None)
            merged.append(VariantResult(vr.variant, [o for p in parts for o in p.outcomes], skipped,
                                        sum(p.seconds for p in parts)))
        pooled.results = merged
        return pooled


def suite_sets(golden_dir: str | Path) -> list[Path]:
    """The golden sets of a suite folder, by name: its ``*.jsonl`` files, and its semble
    annotation files (``*.json`` holding ``tasks``; ``published.json`` and ``repos.json`` are
    not sets)."""
    from .golden import is_semble_file

    d = Path(golden_dir)
    sets = sorted(p for p in d.glob("*.jsonl") if p.is_file())
    sets += sorted(p for p in d.glob("*.json") if p.is_file() and is_semble_file(p))
    if not sets:
        raise ConfigError(f"golden suite {d} holds no *.jsonl sets or semble annotation files",
                          hint="pass a golden set file, or a folder with one <repo>.jsonl (or semble "
                               "<repo>.json) per repository")
    return sorted(sets, key=lambda p: p.name)


def run_suite(golden_dir: str | Path, corpora_root: str | Path, *, variants: str | Sequence[str] | None = None,
              ks: Sequence[int] = DEFAULT_KS, settings: Settings | None = None,
              cache_dir: str | Path | None = None, corpus: str = "all", repos: Sequence[str] = (),
              progress: Progress | None = None) -> SuiteResult:
    """Run each set of the suite over ``<corpora_root>/<repo>``; ``repos``: only these."""
    from .corpus import default_cache_dir

    golden_p, root_p = Path(golden_dir), Path(corpora_root)
    if not root_p.is_dir():
        raise ConfigError(f"corpora root {root_p} is not a folder")
    cache = Path(cache_dir) if cache_dir else default_cache_dir(golden_p, root_p, corpus)
    out = SuiteResult(golden=str(golden_p), root=str(root_p.resolve()), cache_dir=str(cache))
    wanted = set(repos)
    for path in suite_sets(golden_p):
        repo = repo_of(load_golden(path))
        if wanted and repo not in wanted:
            continue
        corpus_root = root_p / repo
        if not corpus_root.is_dir():
            raise ConfigError(f"{path.name}: no corpus folder {corpus_root} for repo {repo!r}",
                              hint="--root is the folder that holds one corpus folder per repository")
        if progress:
            progress("repo", repo=repo)
        out.per_repo[repo] = run_eval(path, corpus_root, variants=variants, ks=ks, settings=settings,
                                      cache_dir=cache / repo, corpus=corpus, progress=progress)
    missing = wanted - set(out.per_repo)
    if missing:
        raise ConfigError(f"no golden set in {golden_p} for repo {sorted(missing)[0]!r}")
    if not out.per_repo:
        raise ConfigError(f"golden suite {golden_p} ran no set")
    return out


# -- reports -------------------------------------------------------------------------------------

HEADLINE = ("mrr@10", "recall@5", "whole@5")
HEADLINE_LABELS = {"mrr@10": "MRR@10", "recall@5": "R@5", "whole@5": "whole@5", "mrr": "MRR",
                   "recall@10": "R@10", "file_recall@5": "fileR@5"}


def headline_kind(res: EvalResult) -> str | None:
    """The kind the suite's goals are stated on: ``commit`` when the set has it, else None
    (all queries with gold)."""
    return "commit" if any(q.kind == "commit" for q in res.queries) else None


def group(outcomes: Sequence[metrics.Outcome], kind: str | None, ks: Sequence[int]) -> dict:
    pos = [o for o in outcomes if not o.negative and (kind is None or o.kind == kind)]
    return metrics.group_metrics(pos, ks)


def per_repo_rows(suite: SuiteResult, names: Sequence[str] | None = None,
                  cols: Sequence[str] = HEADLINE) -> tuple[list[str], list[list[str]], dict[str, Any]]:
    """One row per variant: ``cols`` per repository, then pooled, on the headline kind."""
    from .report import fmt

    pooled = suite.pooled
    kind = headline_kind(pooled)
    ks = (1, 5, 10)
    head = ["variant"] + [f"{repo} {HEADLINE_LABELS.get(c, c)}" for repo in [*suite.repos, "all"] for c in cols]
    rows, data = [], {}
    for i, vr in enumerate(pooled.results):
        if vr.skipped or (names is not None and vr.name not in names):
            continue
        cells, entry = [vr.name], {}
        for repo in suite.repos:
            g = group(suite.per_repo[repo].results[i].outcomes, kind, ks)
            entry[repo] = {c: g[c] for c in cols} | {"n": g["n"]}
            cells += [fmt(g[c]) for c in cols]
        g = group(vr.outcomes, kind, ks)
        entry["all"] = {c: g[c] for c in cols} | {"n": g["n"]}
        cells += [fmt(g[c]) for c in cols]
        rows.append(cells)
        data[vr.name] = entry
    return head, rows, data


def per_repo_table(suite: SuiteResult, names: Sequence[str] | None = None,
                   cols: Sequence[str] = HEADLINE) -> str:
    from .report import _table

    head, rows, _ = per_repo_rows(suite, names, cols)
    return _table(head, rows)


def per_repo_long_table(suite: SuiteResult, names: Sequence[str] | None = None) -> str:
    """Repository x variant, one row each: the headline metrics, the negatives' abstain rate
    and the false-weak rate (a narrow table that reads well for many variants)."""
    from .report import _table, fmt

    pooled = suite.pooled
    kind = headline_kind(pooled)
    head = ["repo", "variant", "n", "MRR@10", "R@5", "R@10", "whole@5", "fileR@5", "abstain (neg)", "false-weak"]
    rows = []
    for repo in [*suite.repos, "all"]:
        res = pooled if repo == "all" else suite.per_repo[repo]
        for vr in res.results:
            if vr.skipped or (names is not None and vr.name not in names):
                continue
            g = group(vr.outcomes, kind, (5, 10))
            s = metrics.summarize(vr.outcomes, (5,))
            rows.append([repo, vr.name, str(g["n"]), fmt(g["mrr@10"]), fmt(g["recall@5"]), fmt(g["recall@10"]),
                         fmt(g["whole@5"]), fmt(g["file_recall@5"]), fmt(s["negative"]["abstain"]),
                         fmt(g["false_weak"])])
    return _table(head, rows)


def suite_markdown(suite: SuiteResult, *, title: str, settings: Any = None, sections: Sequence[str] = ()) -> str:
    """The pooled report (every table of a single set) with per-repository tables first."""
    from .report import markdown

    pooled = suite.pooled
    kind = headline_kind(pooled)
    what = f"`{kind}` queries" if kind else "queries with gold"
    per_repo = ["## Per repository", "",
                f"On {what} (MRR@10, Recall@5, whole@5, as in the golden README); `all` pools every "
                "repository's queries (macro-average over queries).", "", per_repo_long_table(suite)]
    return markdown(pooled, title=title, settings=settings, sections=["\n".join(per_repo), *sections])


def suite_json(suite: SuiteResult, *, settings: Any = None, extra: dict | None = None,
               hits: int = metrics.CURVE_K) -> dict:
    from .report import result_json

    _, _, table = per_repo_rows(suite)
    data = result_json(suite.pooled, settings=settings, extra=extra, hits=hits)
    data["repos"] = suite.repos
    data["per_repo"] = table
    data["headline_kind"] = headline_kind(suite.pooled)
    return data


def write_suite_report(suite: SuiteResult, out: str | Path, *, prefix: str = "eval", settings: Any = None,
                       title: str | None = None, sections: Sequence[str] = (), extra_json: dict | None = None,
                       plots: bool = True, hits: int = metrics.CURVE_K) -> list[Path]:
    import json

    from .report import plot_curves, plot_kinds

    out_p = Path(out)
    out_p.mkdir(parents=True, exist_ok=True)
    paths = [out_p / f"{prefix}.json", out_p / f"{prefix}.md"]
    data = suite_json(suite, settings=settings, extra=extra_json, hits=hits)
    paths[0].write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    paths[1].write_text(suite_markdown(suite, title=title or f"Retrieval eval: {Path(suite.golden).name}",
                                       settings=settings, sections=sections), encoding="utf-8")
    if plots:
        paths.append(out_p / f"{prefix}-recall.png")
        plot_curves(suite.pooled, paths[-1])
        paths.append(out_p / f"{prefix}-kinds.png")
        plot_kinds(suite.pooled, paths[-1])
    return paths
