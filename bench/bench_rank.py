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
CACHE_DIRS = {"stdlib": "stdlib", "repos": "rd", "semble": "semble"}  # each set's eval indexes under the cache


def run_sets(variants: list[str], sets=SETS, cache: Path = CACHE, repos=(), overrides: dict | None = None) -> dict:
    """Run ``variants`` on ``sets`` over the eval indexes under ``cache``; ``overrides``: settings
    beside the data folder (another embedder or precision builds its own indexes there)."""
    settings = load_settings({"data_dir": str(cache), **(overrides or {})}, env={})

    def progress(event: str, **f) -> None:
        if event in ("repo", "skipped"):
            print(event, f, flush=True, file=sys.stderr)

    dirs = {name: cache / sub for name, sub in CACHE_DIRS.items() if name in sets}
    for name, d in dirs.items():
        if not d.is_dir():  # a fresh worktree has no bench/.cache
            print(f"no eval cache at {d}: every index of {name} is built and embedded from scratch "
                  "(an hour or more; --cache names an existing one)", flush=True, file=sys.stderr)
    out: dict = {}
    if "stdlib" in sets:
        out["stdlib"] = run_eval(STDLIB_GOLDEN, sysconfig.get_paths()["stdlib"], variants=variants,
                                 settings=settings, cache_dir=dirs["stdlib"], progress=progress)
    if "repos" in sets:
        out["repos"] = run_suite(REPOS_SUITE, REPOS_ROOT, variants=variants, settings=settings,
                                 cache_dir=dirs["repos"], progress=progress,
                                 repos=[r for r in repos if (REPOS_SUITE / f"{r}.jsonl").exists()])
    if "semble" in sets:
        out["semble"] = run_suite(SEMBLE_SUITE, SEMBLE_ROOT, variants=variants, settings=settings,
                                  cache_dir=dirs["semble"], progress=progress,
                                  repos=[r for r in repos if (SEMBLE_SUITE / f"{r}.json").exists()])
    return out


def scores(results: dict, name: str, ranks: bool = False) -> dict:
    """One variant's headline on each set: stdlib MRR; repos-dev commit MRR@10 per repo and
    pooled (and R@5, whole@5 per repo); semble NDCG@10 per repo, per category and the mean of
    repo means. ``ranks``: also each commit query's rank and whole rank (for ``--dump``; the
    full report has them in ``eval-repos.json``)."""
    out: dict = {}
    if "stdlib" in results:
        vr = next(r for r in results["stdlib"].results if r.name == name)
        g = group(vr.outcomes, None, (1, 5, 10))
        out["stdlib"] = {"mrr": g["mrr"], "recall@5": g["recall@5"]}
    if "repos" in results:
        suite = results["repos"]
        per, per_all = {}, {}
        for repo in suite.repos:
            vr = next(r for r in suite.per_repo[repo].results if r.name == name)
            g = group(vr.outcomes, "commit", (1, 5, 10))
            per[repo] = g["mrr@10"]
            per_all[repo] = {m: g[m] for m in ("mrr@10", "recall@5", "whole@5")}
        pooled = next(r for r in suite.pooled.results if r.name == name)
        g = group(pooled.outcomes, "commit", (1, 5, 10))
        out["repos"] = {"per_repo": per, "mrr@10": g["mrr@10"], "recall@5": g["recall@5"], "whole@5": g["whole@5"],
                        "per_repo_all": per_all}
        if ranks:
            out["repos"]["ranks"] = {o.id: [o.rank, o.whole_rank] for o in pooled.outcomes if o.kind == "commit"}
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
        d["semble_by_category"] = {c: (None if other["semble"][c] is None or base["semble"][c] is None
                                       else other["semble"][c] - base["semble"][c])  # a category none of --repos has
                                   for c in ("architecture", "semantic", "symbol")}
    heads = [d[s] for s in SETS if s in d]
    d["helps_all"] = all(x > 0 for x in heads)
    d["hurts"] = [s for s in SETS if s in d and d[s] < 0]
    return d


def quick_table(scored: dict[str, dict], base: str) -> str:
    """``scored``: each variant's ``scores``, in the order to show."""
    b = scored[base]
    head = ["variant"]
    if "stdlib" in b:
        head += ["stdlib MRR", "Δ"]
    if "repos" in b:
        head += ["repos MRR@10", "Δ", "repos won/lost"]
    if "semble" in b:
        head += ["semble NDCG@10", "Δ", "arch", "sem", "sym", "semble won/lost"]
    rows = []
    for n, s in scored.items():
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


def movers(scored: dict[str, dict], base: str, tie: float = 0.0005) -> str:
    """Per variant (``scored``: each one's ``scores``), the repositories whose score moved
    against ``base`` (beyond ``tie``), largest first, and repos-dev's R@5 and whole@5 change:
    what the per-repository rule reads, so that nobody has to recompute it from ``--dump``."""
    b = scored[base]
    lines = []
    for n, s in scored.items():
        if n == base:
            continue
        d = compare(b, s)
        parts = []
        for key, label in (("repos_per_repo", "repos-dev"), ("semble_per_repo", "semble-dev")):
            moved = sorted(((r, x) for r, x in d.get(key, {}).items() if abs(x) > tie), key=lambda rx: -abs(rx[1]))
            if key in d:
                parts.append(f"{label}: " + (", ".join(f"{r} {x:+.3f}" for r, x in moved) or "none moved"))
        if "repos" in s:
            parts.append(f"repos-dev R@5 {s['repos']['recall@5'] - b['repos']['recall@5']:+.3f}, "
                         f"whole@5 {s['repos']['whole@5'] - b['repos']['whole@5']:+.3f}")
        lines.append(f"- {n}: " + "; ".join(parts))
    return "\n".join(lines)


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


PREVIOUS = "+path0+nosing+pdec0+named0+fname0+decl0+sat1+coh0+legacy1+noforms+nochg+noproj+kbeh1+scope0+nopkg"  # last round's default, every new lever off
MAIN = [
    ("hybrid-ast", "the default: dense + BM25, fused, the ranking stack"),
    ("bm25-ast", "BM25 alone with the ranking stack (what a first index has before vectors)"),
    ("dense-ast", "dense alone with the ranking stack"),
    ("hybrid-ast" + PREVIOUS, "last round's default (the new levers off; the rare-word exemption this round's narrower one)"),
    ("bm25-ast" + PREVIOUS, "BM25 alone, last round's levers"),
    ("dense-ast" + PREVIOUS, "dense alone, last round's levers"),
    ("bm25-window", "plain BM25 over 2000-byte line windows, the query as typed"),
]
# each kept lever switched off (or changed) against the default
KEPT = [
    ("+path0", "no path match (query words naming the file or folder)"),
    ("+nosing", "plural file and folder names only as written in the path match (utils does not meet utility)"),
    ("+pdec0", "every query word weighs alike in the path match (not the earlier more)"),
    ("+named0", "no named-file boost (a code name in a question that is a file's name)"),
    ("+fname0", "no boost for a file the query names with its extension (framework.dart)"),
    ("+noproj", "the searched repository's name kept in the BM25 query and the path match"),
    ("+decl0", "no declaration boost"),
    ("+nofetch", "declarations only among the candidates (not fetched by symbol)"),
    ("+sat1", "no saturation (a file's later chunks count fully)"),
    ("+coh0", "no file coherence"),
    ("+legacy1", "older copies weigh like the rest"),
    ("+noforms", "the BM25 query without word forms"),
    ("+nochg", "change words kept in a change description's BM25 query"),
    ("+norare", "no rare-word exemption (a doc page or test holding every word the index has of the query, each rare, keeps its score)"),
    ("+fileall", "coherence and saturation for every query (not only questions and lookups)"),
    ("+pathall", "the path match for every query"),
    ("+declall", "the declaration boost for every query (not only questions and lookups)"),
    ("+scope0", "no path match on the place a behaviour names last (\"fix path completion in bash\")"),
    ("+norole", "no file-role prior"),
    ("+def0", "no definition evidence"),
    ("+nokind", "no chunk-kind prior"),
    ("+kbeh1", "a behaviour query's module, header and class chunks weigh like any other query's (not 0.4 of that)"),
    ("+nosym", "named definitions never moved first"),
    ("+nopkg", "a qualified name names a definition through its file only (assert.Contains misses assert/assertions.go)"),
    ("+nonoise", "question words kept in the BM25 query"),
    ("+noexpand", "a piece of a split definition returned as the piece"),
    ("+frag", "adjacent retrieved pieces not merged"),
    ("+rawq", "no identifier splits in the BM25 query"),
]
# Why a kept lever stays when switching it off does not lose on a set and win on none (the rows
# marked "kept (see note)"; the report prints the note of each such row under the table).
NOTES = {
    "+norare": "ties on all three dev sets: none of their queries has every word the index holds of it rare. "
               "Kept for what they do not exercise: a word only a doc page, test or config file holds (a marker "
               "only a JSON file holds; test_hostile_e2e fails with it off; 7ebb249).",
    "+fileall": "not a lever switched off but coherence and saturation applied to change descriptions too; the "
                "default keeps them for questions and lookups, which are all of semble-dev's and stdlib-dev's "
                "queries, so those sets tie and repos-dev's commit queries lose.",
    "+pathall": "the path match applied to change descriptions too; as +fileall, only repos-dev's commit "
                "queries meet it (rank-dropped.md, eighth session).",
    "+frag": "a presentation guarantee, not a ranking lever: adjacent retrieved pieces of one definition come "
             "back as one hit (a citation of the whole definition); unmerged, repos-dev loses and semble-dev's "
             "file-level score can gain a slot.",
}
# tried and not kept (each against the default)
TRIED = [  # the levers measured and removed from the code are in rank-dropped.md (their run: 5e752dc)
    ("+sat0.3", "saturation 0.3"), ("+sat0.7", "saturation 0.7"), ("+free2", "two chunks per file before saturation"),
    ("+coh0.2", "coherence 0.2"), ("+path0.3", "path match 0.3"), ("+path1", "path match 1.0"),
    ("+decl2", "declaration boost 2"),
    ("+depth40", "40 candidates per signal"), ("+depth120", "120 candidates per signal"),
    ("+rrf30", "RRF k 30"), ("+rrf100", "RRF k 100"), ("+rw0.4", "RRF dense weight 0.4"),
    ("+rw0.6", "RRF dense weight 0.6"),
    ("+pdec0.2", "path match word decay 0.2"), ("+pdec1", "path match word decay 1.0"),
    ("+pdec2", "path match word decay 2.0"),
    ("+named0.15", "named-file boost 0.15"), ("+named0.5", "named-file boost 0.5"), ("+named1", "named-file boost 1.0"),
    ("+fname0.15", "file-name boost 0.15"), ("+fname0.3", "file-name boost 0.3"),
    ("+kbeh0.2", "a behaviour query's module, header and class chunks 0.2"),
    ("+kbeh0.6", "a behaviour query's module, header and class chunks 0.6"),
    ("+scope0.3", "the place a behaviour names last, 0.3"), ("+scope1", "the place a behaviour names last, 1.0"),
]


def report(res: dict, commit: str, date: str) -> tuple[dict, str]:
    """The ablation over all three sets: MAIN side by side, then each lever against the default."""
    base = scores(res, "hybrid-ast")
    data: dict = {"commit": commit, "date": date, "default": "hybrid-ast", "variants": {}}
    head = ["variant", "what", "stdlib MRR", "repos-dev MRR@10", "R@5", "whole@5", "semble NDCG@10", "arch", "sem",
            "sym"]
    rows = []
    for name, what in MAIN:
        s = scores(res, name)
        data["variants"][name] = {"what": what, **s}
        rows.append([name, what, fmt(s["stdlib"]["mrr"]), fmt(s["repos"]["mrr@10"]), fmt(s["repos"]["recall@5"]),
                     fmt(s["repos"]["whole@5"]), fmt(s["semble"]["ndcg@10"]),
                     *(fmt(s["semble"][c]) for c in ("architecture", "semantic", "symbol"))])
    main_md = _table(head, rows)

    noted: list[str] = []

    def lever_rows(levers, kept: bool) -> str:
        lhead = ["variant", "what", "Δ stdlib MRR", "Δ repos-dev MRR@10", "repos won/lost", "Δ semble NDCG@10",
                 "Δ arch", "Δ sem", "Δ sym", "semble won/lost", "verdict"]
        out = []
        for opt, what in levers:
            name = "hybrid-ast" + opt
            s = scores(res, name)
            d = compare(base, s)
            heads = [d["stdlib"], d["repos"], d["semble"]]
            if kept:  # switching a kept lever off must lose somewhere and win nowhere
                verdict = "kept" if min(heads) < -0.0005 and max(heads) <= 0.0005 else "kept (see note)"
                if verdict != "kept":
                    noted.append(f"- `{name}`: {NOTES.get(opt, 'no note written for this lever: a defect of this report')}")
            else:
                verdict = "not kept" if not all(h > 0.0005 for h in heads) else "candidate"
            pr, sr = d["repos_per_repo"].values(), d["semble_per_repo"].values()
            out.append([name, what, f"{d['stdlib']:+.3f}", f"{d['repos']:+.3f}",
                        f"{sum(x > 0.0005 for x in pr)}/{sum(x < -0.0005 for x in pr)}", f"{d['semble']:+.3f}",
                        *(f"{d['semble_by_category'][c]:+.3f}" for c in ("architecture", "semantic", "symbol")),
                        f"{sum(x > 0.0005 for x in sr)}/{sum(x < -0.0005 for x in sr)}", verdict])
            data["variants"][name] = {"what": what, "kept": kept, "verdict": verdict, **s, "delta": d}
        return _table(lhead, out)

    per_repo_head = ["repo", "default", "previous", "Δ"]
    per_repo = []
    prev = scores(res, "hybrid-ast" + PREVIOUS)
    for repo, v in base["repos"]["per_repo"].items():
        per_repo.append([f"{repo} (repos-dev, MRR@10)", fmt(v), fmt(prev["repos"]["per_repo"][repo]),
                         f"{v - prev['repos']['per_repo'][repo]:+.3f}"])
    for repo, v in base["semble"]["per_repo"].items():
        per_repo.append([f"{repo} (semble-dev, NDCG@10)", fmt(v), fmt(prev["semble"]["per_repo"][repo]),
                         f"{v - prev['semble']['per_repo'][repo]:+.3f}"])
    md = "\n".join([
        "# The ranking stack on all three dev sets (issue 20)", "",
        f"Run {date}, commit {commit}, bundled model (all-MiniLM-L6-v2), every repository in its own eval index. "
        "stdlib-dev: 68 queries with gold over 18 stdlib files (MRR over the top 20). repos-dev: the 169 `commit` "
        "queries of five whole repositories (MRR@10, Recall@5, whole@5). semble-dev: 496 queries over 25 "
        "repositories of the semble benchmark in 16 languages (NDCG@10, the mean of repository means; per "
        "category the same). Every query of every variant, with its rank and hits, is in `eval-stdlib-levers.json`, "
        "`eval-repos.json` and `eval-semble.json`.", "",
        "## Main variants", "", main_md, "",
        "## Per repository: the default against last round's default", "", _table(per_repo_head, per_repo), "",
        "## Each kept lever switched off against the default", "",
        "A lever is kept when switching it off loses on a set and wins on none (Δ within ±0.0005 is a tie). "
        "won/lost: repositories whose score rose/fell.", "", lever_rows(KEPT, True), "",
        *(["Notes on the rows marked \"see note\":", "", *noted, ""] if noted else []),
        "## Tried and not kept", "",
        "Each one against the default; kept only if it would win on all three sets. The levers measured and "
        "removed from the code are in `rank-dropped.md`.", "", lever_rows(TRIED, False), ""])
    return data, md


def write_all(res: dict, out: Path, commit: str, date: str) -> list[Path]:
    from codeseam.eval.report import write_report
    from codeseam.eval.suite import write_suite_report

    out.mkdir(parents=True, exist_ok=True)
    data, md = report(res, commit, date)
    (out / "rank-ablation.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    (out / "rank-ablation.md").write_text(md, encoding="utf-8")
    extra = {"commit": commit, "date": date}
    table = semble.markdown(res["semble"], title="The semble benchmark: NDCG@10", default="hybrid-ast",
                            names=[n for n, _ in MAIN])
    paths = [out / "rank-ablation.json", out / "rank-ablation.md"]
    paths += write_suite_report(res["semble"], out, prefix="eval-semble", title="semble-dev, bundled model",
                                sections=[table.replace("# The semble", "## The semble", 1)],
                                extra_json={**extra, "semble": semble.summary_json(res["semble"])}, plots=False)
    paths += write_suite_report(res["repos"], out, prefix="eval-repos", title="repos-dev, bundled model",
                                extra_json=extra, plots=False)
    paths += write_report(res["stdlib"], out, prefix="eval-stdlib-levers", title="stdlib-dev, bundled model",
                          plots=False, extra_json=extra)
    for p in paths:  # every variant's ranks, but the hits only of the main variants (the files stay small)
        if p.suffix == ".json" and p.name.startswith("eval-"):
            slim_hits(p, {n for n, _ in MAIN}, HITS_KEPT)
    return paths


HITS_KEPT = 10


def slim_hits(path: Path, keep: set[str], n: int) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    for name, v in data.get("variants", {}).items():
        for q in v.get("queries", []):
            if "hits" in q:
                q["hits"] = q["hits"][:n] if name in keep else q.pop("hits") and None
            if q.get("hits") is None:
                q.pop("hits", None)
    path.write_text(json.dumps(data, indent=None, separators=(",", ":"), ensure_ascii=False) + "\n",
                    encoding="utf-8")


def git_commit() -> str:
    import subprocess

    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "src"], cwd=ROOT, capture_output=True,
                               text=True, check=True).stdout.strip()
        return head + (" (with uncommitted changes under src/)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variants", help="comma list; the first is the base of the deltas (default: the full "
                                       "report: the main variants, every kept lever off, every lever tried)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"), help="where the full report goes")
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--repos", default="", help="only these repositories (repos-dev and semble-dev names)")
    ap.add_argument("--cache", default=str(CACHE))
    ap.add_argument("--dump", help="write every variant's scores as JSON here")
    ap.add_argument("--analyzer", help="experiment: BM25 analyzer params as JSON for new eval indexes (its own "
                                       "cache folder, <cache>-<name>, seeded with the vector caches of --cache)")
    args = ap.parse_args()
    full = not args.variants
    names = ([n for n, _ in MAIN] + ["hybrid-ast" + o for o, _ in KEPT + TRIED]) if full else \
        [v.strip() for v in args.variants.split(",") if v.strip()]
    if args.analyzer:
        args.cache = _analyzer_cache(Path(args.cache), json.loads(args.analyzer))
    t0 = time.perf_counter()
    commit = git_commit()  # before the run: what ran, even if src/ changes meanwhile
    res = run_sets(names, tuple(s.strip() for s in args.sets.split(",")), Path(args.cache),
                   tuple(r for r in args.repos.split(",") if r))
    if full:
        for p in write_all(res, Path(args.out), commit, time.strftime("%Y-%m-%d")):
            print("wrote", p, file=sys.stderr)
        print((Path(args.out) / "rank-ablation.md").read_text())
    else:
        scored = {n: scores(res, n) for n in names}
        print(quick_table(scored, names[0]))
        moved = movers(scored, names[0])
        if moved:
            print("\nPer repository, against " + names[0] + ":\n" + moved)
    print(f"({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    if args.dump:
        Path(args.dump).write_text(json.dumps({n: scores(res, n, ranks=True) for n in names}, indent=1))


if __name__ == "__main__":
    main()
