"""The ranking stack on all three dev sets, per repository, one lever at a time (issue 20).

    python bench/bench_rank.py                         # the default, the baselines, every lever
    python bench/bench_rank.py --variants hybrid-ast,hybrid-ast+sat0.5 --quick   # a sweep, no files

What it does (everything through ``codeseam.eval``, the library behind ``codeseam eval``):

1. runs stdlib-dev (18 stdlib files, 80 queries: MRR), repos-dev (five whole repositories,
   commit-subject queries: MRR@10, per repository) and semble-dev (25 repositories of the
   semble benchmark, 16 languages: NDCG@10, mean of repository means, per repository and per
   category) for every variant, each repository in its own eval index (``--cache``);
2. compares each lever, switched alone against the default, on every set and repository;
   a lever is kept only if it helps all three sets (and costs no set);
3. writes ``rank-ablation.{md,json}`` (the ablation, per repository and per category),
   ``eval-semble.{md,json}`` (the benchmark report beside the published systems; every
   per-query rank and hit of every variant), ``eval-repos.{md,json}`` and
   ``eval-stdlib-levers.{md,json}`` (per-query ranks of every variant).
"""

from __future__ import annotations

import argparse
import json
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from codeseam.eval import semble  # noqa: E402
from codeseam.eval.report import _table, fmt  # noqa: E402
from codeseam.eval.runner import run_eval  # noqa: E402
from codeseam.eval.suite import group, run_suite  # noqa: E402
from codeseam.settings import load_settings  # noqa: E402

SHARED = ROOT.parent / "shared"
STDLIB_GOLDEN = SHARED / "golden" / "stdlib-dev.jsonl"
REPOS_SUITE, REPOS_ROOT = SHARED / "golden" / "repos-dev", SHARED / "corpora"
SEMBLE_SUITE, SEMBLE_ROOT = SHARED / "golden" / "semble-dev", SHARED / "corpora" / "semble"
CACHE = ROOT / "bench" / ".cache"
SETS = ("stdlib", "repos", "semble")


def run_sets(variants: list[str], sets=SETS, cache: Path = CACHE, repos=()) -> dict:
    settings = load_settings({"data_dir": str(cache)}, env={})

    def progress(event: str, **f) -> None:
        if event in ("repo", "skipped"):
            print(event, f, flush=True, file=sys.stderr)

    out: dict = {}
    if "stdlib" in sets:
        out["stdlib"] = run_eval(STDLIB_GOLDEN, sysconfig.get_paths()["stdlib"], variants=variants,
                                 settings=settings, cache_dir=cache / "stdlib", progress=progress)
    if "repos" in sets:
        out["repos"] = run_suite(REPOS_SUITE, REPOS_ROOT, variants=variants, settings=settings,
                                 cache_dir=cache / "rd", progress=progress,
                                 repos=[r for r in repos if (REPOS_SUITE / f"{r}.jsonl").exists()])
    if "semble" in sets:
        out["semble"] = run_suite(SEMBLE_SUITE, SEMBLE_ROOT, variants=variants, settings=settings,
                                  cache_dir=cache / "semble", progress=progress,
                                  repos=[r for r in repos if (SEMBLE_SUITE / f"{r}.json").exists()])
    return out


def scores(results: dict, name: str) -> dict:
    """One variant's headline on each set: stdlib MRR; repos-dev commit MRR@10 per repo and
    pooled; semble NDCG@10 per repo, per category and the mean of repo means."""
    out: dict = {}
    if "stdlib" in results:
        vr = next(r for r in results["stdlib"].results if r.name == name)
        g = group(vr.outcomes, None, (1, 5, 10))
        out["stdlib"] = {"mrr": g["mrr"], "recall@5": g["recall@5"]}
    if "repos" in results:
        suite = results["repos"]
        per = {}
        for repo in suite.repos:
            vr = next(r for r in suite.per_repo[repo].results if r.name == name)
            per[repo] = group(vr.outcomes, "commit", (1, 5, 10))["mrr@10"]
        pooled = next(r for r in suite.pooled.results if r.name == name)
        g = group(pooled.outcomes, "commit", (1, 5, 10))
        out["repos"] = {"per_repo": per, "mrr@10": g["mrr@10"], "recall@5": g["recall@5"], "whole@5": g["whole@5"]}
    if "semble" in results:
        suite = results["semble"]
        table = semble.variant_table(suite, [name])[name]
        out["semble"] = {"per_repo": {r: v["overall"] for r, v in table.items()},
                         "ndcg@10": semble.mean_of_means(table),
                         **{c: semble.mean_of_means(table, c) for c in ("architecture", "semantic", "symbol")}}
    return out


def compare(base: dict, other: dict) -> dict:
    """``other`` minus ``base`` per set (headline) and per repository; ``helps_all``: better
    on every set's headline; ``hurts``: the sets where it loses."""
    d: dict = {}
    if "stdlib" in base:
        d["stdlib"] = other["stdlib"]["mrr"] - base["stdlib"]["mrr"]
    if "repos" in base:
        d["repos"] = other["repos"]["mrr@10"] - base["repos"]["mrr@10"]
        d["repos_per_repo"] = {r: other["repos"]["per_repo"][r] - v for r, v in base["repos"]["per_repo"].items()}
    if "semble" in base:
        d["semble"] = other["semble"]["ndcg@10"] - base["semble"]["ndcg@10"]
        d["semble_per_repo"] = {r: other["semble"]["per_repo"][r] - v for r, v in base["semble"]["per_repo"].items()}
        d["semble_by_category"] = {c: other["semble"][c] - base["semble"][c]
                                   for c in ("architecture", "semantic", "symbol")}
    heads = [d[s] for s in SETS if s in d]
    d["helps_all"] = all(x > 0 for x in heads)
    d["hurts"] = [s for s in SETS if s in d and d[s] < 0]
    return d


def quick_table(results: dict, names: list[str], base: str) -> str:
    b = scores(results, base)
    head = ["variant"]
    if "stdlib" in results:
        head += ["stdlib MRR", "Δ"]
    if "repos" in results:
        head += ["repos MRR@10", "Δ", "repos won/lost"]
    if "semble" in results:
        head += ["semble NDCG@10", "Δ", "arch", "sem", "sym", "semble won/lost"]
    rows = []
    for n in names:
        s = scores(results, n)
        d = compare(b, s)
        row = [n]
        if "stdlib" in s:
            row += [fmt(s["stdlib"]["mrr"]), f"{d['stdlib']:+.3f}"]
        if "repos" in s:
            pr = d["repos_per_repo"].values()
            row += [fmt(s["repos"]["mrr@10"]), f"{d['repos']:+.3f}",
                    f"{sum(x > 0.0005 for x in pr)}/{sum(x < -0.0005 for x in pr)}"]
        if "semble" in s:
            pr = d["semble_per_repo"].values()
            row += [fmt(s["semble"]["ndcg@10"]), f"{d['semble']:+.3f}",
                    *(fmt(s["semble"][c]) for c in ("architecture", "semantic", "symbol")),
                    f"{sum(x > 0.0005 for x in pr)}/{sum(x < -0.0005 for x in pr)}"]
        rows.append(row)
    return _table(head, rows)


def _analyzer_cache(cache: Path, params: dict) -> str:
    """Patch the chunk schema's BM25 analyzer for this process and give it its own cache
    folder, with the embedding caches copied (the vectors do not depend on the analyzer)."""
    import hashlib
    import shutil

    from codeseam.store import schema

    schema.ANALYZER_PARAMS = params
    tag = hashlib.sha1(json.dumps(params, sort_keys=True).encode()).hexdigest()[:8]
    other = cache.parent / f"{cache.name}-{tag}"
    for vec in cache.rglob("vectors.sqlite"):
        dest = other / vec.relative_to(cache)
        if not dest.exists():
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(vec, dest)
    print(f"analyzer {params} -> {other}", file=sys.stderr)
    return str(other)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variants", required=True, help="comma list; the first is the base of the deltas")
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--repos", default="", help="only these repositories (repos-dev and semble-dev names)")
    ap.add_argument("--cache", default=str(CACHE))
    ap.add_argument("--dump", help="write every variant's scores as JSON here")
    ap.add_argument("--analyzer", help="experiment: BM25 analyzer params as JSON for new eval indexes (its own "
                                       "cache folder, <cache>-<name>, seeded with the vector caches of --cache)")
    args = ap.parse_args()
    names = [v.strip() for v in args.variants.split(",") if v.strip()]
    if args.analyzer:
        args.cache = _analyzer_cache(Path(args.cache), json.loads(args.analyzer))
    t0 = time.perf_counter()
    res = run_sets(names, tuple(s.strip() for s in args.sets.split(",")), Path(args.cache),
                   tuple(r for r in args.repos.split(",") if r))
    print(quick_table(res, names, names[0]))
    print(f"({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    if args.dump:
        Path(args.dump).write_text(json.dumps({n: scores(res, n) for n in names}, indent=1))


if __name__ == "__main__":
    main()
