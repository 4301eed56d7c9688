"""The semble code-search benchmark's report: NDCG@10 per repository, per category, and as
the mean of repository means, beside the published systems on the same repositories.

A suite folder in the benchmark's format (``golden/semble-dev/``) holds one annotation file
per repository and ``published.json``: per system, per repository, the published NDCG@10
(overall and per category). The benchmark averages per repository, then takes the mean of
the repository means (``golden/semble-dev/README.md``); so does everything here. A published
system that did not run on every repository of the suite is compared on the repositories it
has (the table says how many).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import metrics
from .golden import SEMBLE_KINDS

PUBLISHED = "published.json"
OVERALL = "overall"


def is_semble_suite(suite: Any) -> bool:
    """Every gold of every query uses the benchmark's path rule."""
    queries = [q for r in suite.per_repo.values() for q in r.queries]
    return bool(queries) and all(g.suffix for q in queries for g in q.gold)


def load_published(golden_dir: str | Path) -> dict[str, Any]:
    """``published.json`` of a suite folder (``{}`` when there is none)."""
    p = Path(golden_dir) / PUBLISHED
    if not p.is_file():
        return {}
    data = json.loads(p.read_text(encoding="utf-8"))
    return data.get("systems", {}) if isinstance(data, dict) else {}


def repo_scores(outcomes: Sequence[metrics.Outcome]) -> dict[str, float | None]:
    """One repository's mean NDCG@10, overall and per category."""
    out: dict[str, float | None] = {OVERALL: _mean(o.ndcg for o in outcomes if not o.negative)}
    for cat in SEMBLE_KINDS:
        out[cat] = _mean(o.ndcg for o in outcomes if o.kind == cat and not o.negative)
    return out


def mean_of_means(per_repo: dict[str, dict[str, float | None]], key: str = OVERALL,
                  repos: Sequence[str] | None = None) -> float | None:
    """The benchmark's headline: the mean over repositories of their means (``key``)."""
    vals = [x for r, v in per_repo.items() if (repos is None or r in repos) and (x := v.get(key)) is not None]
    return statistics.fmean(vals) if vals else None


def variant_table(suite: Any, names: Sequence[str] | None = None) -> dict[str, dict[str, dict[str, float | None]]]:
    """variant -> repo -> {overall, architecture, semantic, symbol}."""
    out: dict[str, dict[str, dict[str, float | None]]] = {}
    for repo, res in suite.per_repo.items():
        for vr in res.results:
            if vr.skipped or (names is not None and vr.name not in names):
                continue
            out.setdefault(vr.name, {})[repo] = repo_scores(vr.outcomes)
    return out


def published_table(systems: dict[str, Any], repos: Sequence[str]) -> dict[str, dict[str, dict[str, float | None]]]:
    """system -> repo -> {overall, per category} for the suite's repositories."""
    out: dict[str, dict[str, dict[str, float | None]]] = {}
    for name, sysd in systems.items():
        rows = sysd.get("rows", {}) if isinstance(sysd, dict) else {}
        for repo in repos:
            row = rows.get(repo)
            if not isinstance(row, dict) or row.get("ndcg10") is None:
                continue
            cats = row.get("by_category") or {}
            out.setdefault(name, {})[repo] = {OVERALL: float(row["ndcg10"]),
                                              **{c: _num(cats.get(c)) for c in SEMBLE_KINDS}}
    return out


def summary_rows(ours: dict, published: dict, repos: Sequence[str]) -> list[dict[str, Any]]:
    """One row per system (ours first, then published, by headline): n repos, mean of repo
    means overall and per category, and for a published system our default's score on the
    same repositories (``ours_same``) when it ran on fewer."""
    rows = []
    for source, table in (("codeseam", ours), ("published", published)):
        for name, per_repo in table.items():
            have = [r for r in repos if r in per_repo]
            row = {"system": name, "source": source, "repos": len(have),
                   OVERALL: mean_of_means(per_repo, OVERALL, have)}
            row.update({c: mean_of_means(per_repo, c, have) for c in SEMBLE_KINDS})
            rows.append(row)
    ours_rows = [r for r in rows if r["source"] == "codeseam"]
    pub_rows = sorted((r for r in rows if r["source"] == "published"), key=lambda r: -(r[OVERALL] or 0))
    return ours_rows + pub_rows


def markdown(suite: Any, *, title: str, default: str | None = None, names: Sequence[str] | None = None,
             golden_dir: str | Path | None = None) -> str:
    """The benchmark tables: systems side by side (mean of repo means, per category), then
    NDCG@10 per repository for our variants and the published systems."""
    from .report import _table, fmt

    repos = suite.repos
    ours = variant_table(suite, names)
    published = published_table(load_published(golden_dir or suite.golden), repos)
    rows = summary_rows(ours, published, repos)
    mine = ours.get(default or "", {})
    head = ["system", "repos", "NDCG@10", *SEMBLE_KINDS] + ([f"{default} on the same repos"] if mine else [])
    body = []
    for r in rows:
        cells = [("**" + r["system"] + "**" if r["system"] == default else r["system"])
                 + ("" if r["source"] == "codeseam" else " (published)"),
                 str(r["repos"]), fmt(r[OVERALL]), *(fmt(r[c]) for c in SEMBLE_KINDS)]
        if mine:  # our default on exactly the repositories that system ran
            have = [x for x in repos if x in (published.get(r["system"]) or ours.get(r["system"]) or {})]
            cells.append(fmt(mean_of_means(mine, OVERALL, have)))
        body.append(cells)
    n_q = sum(len(r.queries) for r in suite.per_repo.values())
    lines = [f"# {title}", "",
             f"{len(repos)} repositories, {n_q} queries. NDCG@10 as the benchmark computes it: per "
             "repository the mean over its queries, then the mean of the repository means; per "
             "category the same within the category. Published rows come from `published.json` "
             "(the benchmark's result files), on the repositories each system ran (column `repos`).",
             "", _table(head, body), "", "## NDCG@10 per repository", ""]
    systems = list(ours) + [s for s in published if s in ("semble", "cre_hybrid", "semble_bm25_ranked",
                                                               "bm25_raw", "potion_raw")]
    phead = ["repo", *systems]
    prows = []
    for repo in repos:
        cells = [repo]
        for s in systems:
            table = ours.get(s) or published.get(s) or {}
            cells.append(fmt((table.get(repo) or {}).get(OVERALL)))
        prows.append(cells)
    lines += [_table(phead, prows), ""]
    return "\n".join(lines)


def summary_json(suite: Any, *, names: Sequence[str] | None = None,
                 golden_dir: str | Path | None = None) -> dict[str, Any]:
    repos = suite.repos
    ours = variant_table(suite, names)
    published = published_table(load_published(golden_dir or suite.golden), repos)
    return {"repos": repos, "summary": summary_rows(ours, published, repos), "per_repo": ours,
            "published_per_repo": published}


def _mean(xs) -> float | None:
    vals = [x for x in xs if x is not None]
    return sum(vals) / len(vals) if vals else None


def _num(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) else None
