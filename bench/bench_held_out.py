"""The ranking stack on commit queries of repositories it was never tuned on (a held-out check).

    python bench/mine_commits.py ...        # candidates per repository (its doc), then curated by hand
    python bench/bench_held_out.py          # bench/results/held-out.{md,json}

repos-dev's five repositories are where every commit-query lever was measured; the issue's goal
(MRR >= 0.60 on a hidden set of other repositories) is judged elsewhere. This runs the same
variants over ``bench/data/held-out/<repo>.jsonl`` (mined from sixteen other projects' histories
in thirteen languages with ``mine_commits.py``, curated by repos-dev's rules;
``bench/data/held-out/README.md``) and reports MRR@10, R@5, whole@5 and false-weak per
repository, per batch and pooled, beside repos-dev's figures. Nothing is tuned here: a lever that helps repos-dev and loses
here fits the dev repositories, not commit subjects.

The corpora are the projects' whole trees at the snapshot commit of each record (not in this
repository): ``--corpora`` holds ``<repo>/``; ``--export GITDIR:REPO`` writes one from a clone.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

import bench_rank as br  # noqa: E402
from codeseam.eval.report import _table, fmt  # noqa: E402
from codeseam.eval.suite import group, run_suite  # noqa: E402
from codeseam.settings import load_settings  # noqa: E402

GOLDEN = ROOT / "bench" / "data" / "held-out"
CORPORA = ROOT / "bench" / ".cache" / "held-out" / "corpora"
# the main variants, and the levers that touch change descriptions, each switched off
VARIANTS = [
    ("hybrid-ast", "the default"),
    ("bm25-ast", "BM25 alone with the ranking stack"),
    ("dense-ast", "dense alone with the ranking stack"),
    ("hybrid-ast" + br.PREVIOUS, "last round's default (this round's levers off)"),
    ("hybrid-ast+kbeh1", "no kind weight for behaviours (module, header and class chunks as for any query)"),
    ("hybrid-ast+declall", "the declaration boost for behaviours too"),
    ("hybrid-ast+scope0", "no path match on the place a behaviour names last"),
    ("hybrid-ast+nopkg", "qualified names through their file only"),
    ("hybrid-ast+nochg", "change words kept in a change description's BM25 query"),
    ("hybrid-ast+noforms", "no word forms in the BM25 query"),
    ("hybrid-ast+norole", "no file-role prior"),
    ("hybrid-ast+def0", "no definition evidence"),
    ("hybrid-ast+nokind", "no chunk-kind prior"),
]


# the batches the repositories came in, each curated before any run on it (the data README)
BATCHES = [
    ("first five (Python, Java, PHP, Go)", ["requests", "httpx", "gson", "guzzle", "cobra"]),
    ("Rust, TypeScript, Ruby, JavaScript", ["serde_json", "ky", "faraday", "axios"]),
    ("Swift, C#, Kotlin", ["kingfisher", "automapper", "okhttp"]),
    ("C, C++", ["cjson", "libuv", "tinyxml2", "yaml-cpp"]),
]
BATCH_VARIANTS = ["hybrid-ast", "bm25-ast", "dense-ast", "hybrid-ast" + br.PREVIOUS]


def export(gitdir: str, repo: str, corpora: Path) -> None:
    """The whole tree of the records' snapshot commit into ``corpora/<repo>/`` (every blob,
    export-ignore attributes not applied; symlinks left out, and blobs the clone lacks: a
    partial mirror leaves its largest files out, such as AutoMapper's ``nuget.exe``)."""
    snap = json.loads((GOLDEN / f"{repo}.jsonl").read_text(encoding="utf-8").splitlines()[0])["snapshot"]
    out = corpora / repo
    listing = subprocess.run(["git", "-C", gitdir, "ls-tree", "-r", "-z", snap], check=True,
                             capture_output=True).stdout.split(b"\0")
    for entry in filter(None, listing):
        meta, path = entry.split(b"\t", 1)
        mode, kind, sha = meta.split()
        if kind != b"blob" or mode == b"120000":
            continue
        blob = subprocess.run(["git", "-C", gitdir, "cat-file", "blob", sha.decode()], capture_output=True)
        if blob.returncode != 0:
            print(f"{repo}: {path.decode()} not in the clone, left out", file=sys.stderr)
            continue
        dest = out / path.decode()
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(blob.stdout)


def measure(variants: list[str], golden: Path, corpora: Path, cache: Path) -> dict:
    settings = load_settings({"data_dir": str(cache)}, env={})
    suite = run_suite(golden, corpora, variants=variants, settings=settings, cache_dir=cache / "held-out",
                      progress=lambda event, **f: print(event, f, file=sys.stderr, flush=True)
                      if event in ("repo", "skipped") else None)
    n = {repo: sum(q.kind == "commit" for q in suite.per_repo[repo].queries) for repo in suite.repos}
    out: dict = {}
    for name in variants:
        got = br.scores({"repos": suite}, name, ranks=True)["repos"]  # the figures repos-dev reports
        pooled = next(r for r in suite.pooled.results if r.name == name)
        weak = group(pooled.outcomes, "commit", (1, 5, 10))["false_weak"]  # None: no dense signal
        batches = {}
        for label, repos in BATCHES:
            outcomes = [o for r in repos if r in suite.per_repo
                        for o in next(v for v in suite.per_repo[r].results if v.name == name).outcomes]
            if outcomes:
                g = group(outcomes, "commit", (1, 5, 10))
                batches[label] = {m: g[m] for m in ("n", "mrr@10", "recall@5", "whole@5", "false_weak")}
        out[name] = {"pooled": {"n": sum(n.values()), **{m: got[m] for m in ("mrr@10", "recall@5", "whole@5")},
                                "false_weak": weak},
                     "per_repo": {r: {"n": n[r], **v} for r, v in got["per_repo_all"].items()},
                     "batches": batches, "ranks": got["ranks"]}
    return out


def batch_table(res: dict) -> list[str]:
    """Per batch, the main variants' MRR@10 / R@5 / whole@5 and false-weak (lines of markdown)."""
    names = [v for v in BATCH_VARIANTS if v in res and res[v].get("batches")]
    if not names:
        return []
    labels = [label for label, _ in BATCHES if label in res[names[0]]["batches"]]
    head = ["batch", "queries", *("last round's default" if v == "hybrid-ast" + br.PREVIOUS else v for v in names)]
    rows = []
    for label in labels:
        cells = [label, str(res[names[0]]["batches"][label]["n"])]
        for v in names:
            b = res[v]["batches"][label]
            weak = f", weak {fmt(b['false_weak'])}" if b.get("false_weak") is not None else ""
            cells.append(f"{fmt(b['mrr@10'])} / {fmt(b['recall@5'])} / {fmt(b['whole@5'])}{weak}")
        rows.append(cells)
    return ["By batch (the repositories came in four batches, each curated before any run on it): "
            "MRR@10 / R@5 / whole@5 and false-weak of the main variants.", "", _table(head, rows), ""]


def report(res: dict, what: dict[str, str], commit: str, date: str, dev: dict | None) -> str:
    repos = list(next(iter(res.values()))["per_repo"])
    n = {r: next(iter(res.values()))["per_repo"][r]["n"] for r in repos}
    head = ["variant", "what", "MRR@10", "R@5", "whole@5", "false-weak", *(f"{r} ({n[r]})" for r in repos),
            "repos-dev MRR@10"]
    base = res["hybrid-ast"]
    rows = []
    for name, v in res.items():
        p = v["pooled"]
        cells = [fmt(v["per_repo"][r]["mrr@10"]) if name == "hybrid-ast"
                 else f"{v['per_repo'][r]['mrr@10'] - base['per_repo'][r]['mrr@10']:+.3f}" for r in repos]
        devcell = ""
        if dev and name in dev:
            devcell = fmt(dev[name]) if name == "hybrid-ast" else f"{dev[name] - dev['hybrid-ast']:+.3f}"
        weak = fmt(p["false_weak"]) if p.get("false_weak") is not None else "n/a"
        rows.append([name, what.get(name, ""), fmt(p["mrr@10"]), fmt(p["recall@5"]), fmt(p["whole@5"]), weak, *cells,
                     devcell])
    total = sum(n.values())
    return "\n".join([
        "# The ranking stack on held-out commit queries", "",
        f"Run {date}, commit {commit}, bundled model (all-MiniLM-L6-v2). {total} commit queries of "
        f"{len(repos)} repositories no lever was tuned on ({', '.join(f'{r} {n[r]}' for r in repos)}; "
        "`bench/data/held-out/README.md`: mined with `bench/mine_commits.py`, curated by repos-dev's rules). "
        "false-weak: the share of these queries, all with an answer, that the search flags as weak evidence "
        "(the issue's goal for the hidden commit set: at most 0.15; n/a without a dense signal). "
        "Per repository: MRR@10 of the default, then each variant's difference from it; the last column the "
        "same on repos-dev (`rank-ablation.json`).", "",
        _table(head, rows), "", *batch_table(res)])


def dev_figures(names: list[str]) -> dict | None:
    """repos-dev's MRR@10 of these variants, from the last full ablation (None without one)."""
    ablation = ROOT / "bench" / "results" / "rank-ablation.json"
    if not ablation.exists():
        return None
    data = json.loads(ablation.read_text(encoding="utf-8"))["variants"]
    return {n: data[n]["repos"]["mrr@10"] for n in names if n in data and "repos" in data[n]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--golden", default=str(GOLDEN))
    ap.add_argument("--corpora", default=str(CORPORA))
    ap.add_argument("--cache", default=str(br.CACHE))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    ap.add_argument("--variants", default="", help="comma-separated; default: the table's")
    ap.add_argument("--export", action="append", default=[], metavar="GITDIR:REPO",
                    help="first write REPO's corpus from the git history at GITDIR")
    ap.add_argument("--report-only", action="store_true",
                    help="write held-out.md again from the held-out.json in --out (no search)")
    args = ap.parse_args()
    what = dict(VARIANTS)
    if args.report_only:
        path = Path(args.out) / "held-out.json"
        if not path.exists():
            ap.error(f"{path} does not exist: run without --report-only first")
        saved = json.loads(path.read_text(encoding="utf-8"))
        (Path(args.out) / "held-out.md").write_text(
            report(saved["variants"], what, saved["commit"], saved["date"], dev_figures(list(saved["variants"]))),
            encoding="utf-8")
        return
    for spec in args.export:
        gitdir, repo = spec.rsplit(":", 1)
        export(gitdir, repo, Path(args.corpora))
    names = args.variants.split(",") if args.variants else [n for n, _ in VARIANTS]
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    res = measure(names, Path(args.golden), Path(args.corpora), Path(args.cache))
    dev = dev_figures(names)
    commit, date = br.git_commit(), datetime.date.today().isoformat()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "held-out.json").write_text(json.dumps({"commit": commit, "date": date, "variants": res}, indent=1) + "\n",
                                       encoding="utf-8")
    (out / "held-out.md").write_text(report(res, what, commit, date, dev), encoding="utf-8")
    for name in names:
        p = res[name]["pooled"]
        print(f"{name:60s} MRR@10 {p['mrr@10']:.3f} R@5 {p['recall@5']:.3f} whole@5 {p['whole@5']:.3f} "
              f"false-weak {p['false_weak'] if p['false_weak'] is None else round(p['false_weak'], 3)}")


if __name__ == "__main__":
    main()
