"""Retrieval quality on the stdlib-dev golden set, with the bundled model, in one run.

    python bench/bench_eval.py [--golden ../shared/golden/stdlib-dev.jsonl] [--cache bench/.cache/eval]
                               [--out bench/results] [--skip-rerun]
    (all three dev sets, per repository, lever by lever: bench/bench_rank.py; the weak-evidence
    calibration across them: bench/bench_weak.py)

What it does (everything through ``codeseam.eval``, the library behind ``codeseam eval``):

1. indexes the 18 corpus files (copied from this interpreter's stdlib) once per index:
   plain 2000-byte windows for the BM25 baseline, the window chunker and the AST chunker
   with the bundled embedder (cached in ``--cache``: a re-run embeds nothing), and an
   enriched AST index when an LLM is reachable (else that row says why it was skipped);
2. runs the 80 queries for the main variants and for one variant per retrieval lever
   (each lever switched off, or set otherwise, on top of the defaults), side by side;
3. calibrates the weak-evidence threshold from ``hybrid-ast``'s best dense similarities
   (positives vs negatives; balanced accuracy; sensitivity table), also English-only;
4. checks the issue's goals, compares each translated query with its English source;
5. runs everything a second time and checks that every number is the same;
6. writes ``eval.json`` (every per-query rank), ``eval.md`` (tables, goals, the ready-to-
   paste README section), ``eval-recall.png`` and ``eval-kinds.png`` into ``--out``, and
   ``eval-levers.json`` / ``eval-levers.md`` for the lever variants.
"""

from __future__ import annotations

import argparse
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "bench")]

from _common import commit as git_commit  # noqa: E402

from codeseam.eval import metrics  # noqa: E402
from codeseam.eval.calibrate import calibrate  # noqa: E402
from codeseam.eval.report import (calibration, fmt, kind_table, overall_table, result_json,  # noqa: E402
                                  write_report)
from codeseam.eval.runner import run_eval  # noqa: E402
from codeseam.settings import load_settings  # noqa: E402

GOLDEN = ROOT.parent / "shared" / "golden" / "stdlib-dev.jsonl"
MAIN = ["bm25-window", "dense-window", "hybrid-window", "bm25-ast", "dense-ast", "hybrid-ast",
        "hybrid-ast-enriched"]
# one lever changed at a time, on top of hybrid-ast's defaults
LEVERS = {
    "hybrid-ast+nosym": "named definitions not moved first",
    "hybrid-ast+frag": "pieces of a split definition not merged",
    "hybrid-ast+rawq": "no identifier splits added to the BM25 query",
    "hybrid-ast+noise": "question words dropped from the BM25 query",
    "hybrid-ast+rrf20": "RRF k = 20",
    "hybrid-ast+rrf120": "RRF k = 120",
    "hybrid-ast+rw0.4": "RRF, dense list weight 0.4 (BM25 0.6)",
    "hybrid-ast+rw0.6": "RRF, dense list weight 0.6 (BM25 0.4)",
    "hybrid-ast+w0.5": "weighted score fusion, dense weight 0.5",
    "hybrid-ast+w0.7": "weighted score fusion, dense weight 0.7",
    "hybrid-ast+depth40": "40 candidates per signal (default 80 for k = 20)",
    "hybrid-ast+depth160": "160 candidates per signal",
    "hybrid-ast+wk0.5": "weak results fused like the others (equal weights; default: dense 0.25)",
    "bm25-ast+nosym": "BM25 alone, AST chunks, named definitions not first",
}
ENGLISH = ("symbol", "prose")


def goals(res) -> tuple[list[dict], str]:
    s = {r.name: metrics.summarize(r.outcomes, res.ks) for r in res.results if r.skipped is None}
    ha, bw, hw = s["hybrid-ast"], s["bm25-window"], s["hybrid-window"]
    rows = [
        {"goal": "hybrid-ast MRR >= bm25-window MRR + 0.10",
         "measured": f"{ha['overall']['mrr']:.3f} vs {bw['overall']['mrr']:.3f} "
                     f"(+{ha['overall']['mrr'] - bw['overall']['mrr']:.3f})",
         "met": ha["overall"]["mrr"] - bw["overall"]["mrr"] >= 0.10},
        {"goal": "symbol-kind MRR >= 0.95 (hybrid-ast)",
         "measured": f"{ha['by_kind']['symbol']['mrr']:.3f}", "met": ha["by_kind"]["symbol"]["mrr"] >= 0.95},
        {"goal": "ast whole@5 >= window whole@5 + 0.25 (hybrid-ast vs hybrid-window)",
         "measured": f"{ha['overall']['whole@5']:.3f} vs {hw['overall']['whole@5']:.3f} "
                     f"(+{ha['overall']['whole@5'] - hw['overall']['whole@5']:.3f}); vs bm25-window "
                     f"{bw['overall']['whole@5']:.3f}",
         "met": ha["overall"]["whole@5"] - hw["overall"]["whole@5"] >= 0.25},
        {"goal": "abstain on negatives >= 0.8 with false-weak on positives <= 0.1 (hybrid-ast)",
         "measured": f"abstain {fmt(ha['negative']['abstain'])}, false-weak {fmt(ha['overall']['false_weak'])} "
                     f"(English positives only: {fmt(_english_false_weak(res))})",
         "met": (ha["negative"]["abstain"] or 0) >= 0.8 and (ha["overall"]["false_weak"] or 1) <= 0.1},
    ]
    md = ["## Goals (issue 5)", "", "| goal | measured | met |", "|---|---|---|"]
    md += [f"| {g['goal']} | {g['measured']} | {'yes' if g['met'] else 'no'} |" for g in rows]
    return rows, "\n".join(md)


def _english_false_weak(res) -> float | None:
    r = next(r for r in res.results if r.name == "hybrid-ast")
    flags = [o.weak for o in r.outcomes if o.kind in ENGLISH]
    return sum(1 for f in flags if f) / len(flags) if flags and None not in flags else None


def english_calibration(res) -> dict:
    r = next(r for r in res.results if r.name == "hybrid-ast")
    pos = [o.best_similarity for o in r.outcomes if o.kind in ENGLISH]
    neg = [o.best_similarity for o in r.outcomes if o.negative]
    c = calibrate(pos, neg)
    return {"threshold": round(c.threshold, 4), "abstain": c.abstain, "false_weak": c.false_weak,
            "balanced_accuracy": c.balanced_accuracy, "n_pos": c.n_pos, "n_neg": c.n_neg}


def multilingual(res) -> tuple[dict, str]:
    """Each translated query next to its English source: first-overlap rank and best similarity."""
    names = [n for n in ("bm25-window", "dense-ast", "hybrid-ast") if any(r.name == n for r in res.results)]
    by = {r.name: {o.id: o for o in r.outcomes} for r in res.results if r.name in names}
    rows, data = [], []
    for q in res.queries:
        if q.kind not in ("prose-tr", "prose-de"):
            continue
        src = q.id.rsplit("-", 1)[0]
        cells = []
        for n in names:
            a, b = by[n][src], by[n][q.id]
            cells.append(f"{a.rank or '-'} / {b.rank or '-'}")
        h = by["hybrid-ast"]
        sims = f"{h[src].best_similarity:.3f} / {h[q.id].best_similarity:.3f}"
        rows.append(f"| {q.id} | " + " | ".join(cells) + f" | {sims} |")
        data.append({"id": q.id, "source": src, **{n: [by[n][src].rank, by[n][q.id].rank] for n in names},
                     "best_similarity": [h[src].best_similarity, h[q.id].best_similarity]})
    head = "| query | " + " | ".join(f"{n}: rank en / translated" for n in names) + \
        " | hybrid-ast best similarity en / translated |"
    md = "\n".join(["## Multilingual queries next to their English source", "",
                    "The bundled model (all-MiniLM-L6-v2) was trained on English. Each row: the rank of the "
                    "first overlapping result for the English query and for its translation (`-`: not in "
                    "the top 20), and the best dense similarity of each.", "",
                    head, "|" + "---|" * (len(names) + 2), *rows])
    return {"pairs": data}, md


def readme_section(res, commit: str, date: str, cal: dict | None, settings) -> str:
    ks = res.ks
    names = [n for n in ("bm25-window", "dense-window", "hybrid-window", "bm25-ast", "dense-ast", "hybrid-ast")
             if any(r.name == n and r.skipped is None for r in res.results)]
    lines = ["## Retrieval quality", "",
             f"Measured with `python bench/bench_eval.py` on {date}, commit {commit}: the stdlib-dev golden set "
             "(80 queries over 18 files of CPython 3.11.7: 16 symbol, 36 prose, 8 Turkish, 8 German, 12 "
             "negative), bundled embedder all-MiniLM-L6-v2, top 20 per query. "
             f"Settings: chunk_max_bytes={settings.chunk_max_bytes}, fusion={settings.fusion}, "
             f"rrf_k={settings.rrf_k}, dense_weight={settings.dense_weight}"
             + (f", weak threshold {cal['threshold']:.2f} (calibrated)" if cal else "") + ".", "",
             "| variant | " + " | ".join(f"Recall@{k}" for k in ks) + " | " +
             " | ".join(f"whole@{k}" for k in ks) + " | MRR | symbol MRR | abstain (neg) | false-weak (pos) |",
             "|---|" + "---|" * (2 * len(ks) + 4)]
    for r in res.results:
        if r.name not in names:
            continue
        s = metrics.summarize(r.outcomes, ks)
        o = s["overall"]
        lines.append(f"| {r.name} | " + " | ".join(fmt(o[f'recall@{k}']) for k in ks) + " | " +
                     " | ".join(fmt(o[f'whole@{k}']) for k in ks) +
                     f" | {fmt(o['mrr'])} | {fmt(s['by_kind']['symbol']['mrr'])} | "
                     f"{fmt(s['negative']['abstain'])} | {fmt(o['false_weak'])} |")
    lines += ["", "`bm25-window` is plain BM25 over 2000-byte line windows (no header, query as typed). "
              "`whole@k`: a result contains the whole gold definition. MRR over the top 20. Details, per-kind "
              "tables, the lever ablations and every per-query rank: `bench/results/eval.md`, `eval.json`."]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--golden", default=str(GOLDEN))
    ap.add_argument("--cache", default=str(ROOT / "bench" / ".cache" / "eval"))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    ap.add_argument("--skip-rerun", action="store_true", help="do not repeat the run to check determinism")
    args = ap.parse_args()

    settings = load_settings({"data_dir": str(ROOT / "bench" / ".cache")}, env={})
    stdlib = sysconfig.get_paths()["stdlib"]
    variants = MAIN + list(LEVERS)
    t0 = time.perf_counter()

    def progress(event: str, **f) -> None:
        if event in ("index", "skipped", "baseline"):
            print(event, f, flush=True)
        elif event == "embedded":
            print(f"  embedded {f['count']} ({time.perf_counter() - t0:.0f}s)", flush=True)

    res = run_eval(args.golden, stdlib, variants=variants, settings=settings, cache_dir=args.cache,
                   progress=progress)
    wall = time.perf_counter() - t0
    same = None
    if not args.skip_rerun:
        again = run_eval(args.golden, stdlib, variants=variants, settings=settings, cache_dir=args.cache)
        same = result_json(again, settings=settings) == result_json(res, settings=settings)
        print("re-run identical:", same, flush=True)

    commit, date = git_commit(), time.strftime("%Y-%m-%d")
    cal = calibration(res, "hybrid-ast")
    goal_rows, goal_md = goals(res)
    ml_data, ml_md = multilingual(res)
    eng = english_calibration(res)
    main_names = [n for n in MAIN]
    lever_names = ["hybrid-ast", *LEVERS]
    readme = readme_section(res, commit, date, cal[0] if cal else None, settings)
    eng_md = (f"English-only calibration (symbol + prose positives vs negatives): threshold {eng['threshold']:.4f}, "
              f"abstain {eng['abstain']:.3f}, false-weak {eng['false_weak']:.3f}, balanced accuracy "
              f"{eng['balanced_accuracy']:.3f}.")
    sections = [goal_md, (cal[1] if cal else "") + "\n\n" + eng_md, ml_md,
                "## Levers (one changed at a time on top of hybrid-ast)\n\n" +
                "\n".join(f"- `{n}`: {d}" for n, d in LEVERS.items()) + "\n\n" + overall_table(res, lever_names)
                + "\n\nSymbol queries:\n\n" + kind_table(res, "symbol", lever_names)
                + "\n\nProse queries:\n\n" + kind_table(res, "prose", lever_names),
                "## Ready to paste into the README\n\n```markdown\n" + readme + "\n```",
                f"Run: {date}, commit {commit}, {wall:.0f} s for the first pass (indexing included); "
                f"second pass identical: {same}."]
    main_res = _subset(res, main_names)
    extra = {"goals": goal_rows, "calibration": cal[0] if cal else None, "calibration_english": eng,
             "multilingual": ml_data, "commit": commit, "date": date, "rerun_identical": same,
             "levers": {n: LEVERS[n] for n in LEVERS}}
    paths = write_report(main_res, args.out, settings=settings, title="Retrieval quality: stdlib-dev, bundled model",
                         sections=sections, extra_json=extra, include_run=True)
    lev = _subset(res, lever_names)
    paths += write_report(lev, args.out, prefix="eval-levers", settings=settings,
                          title="Retrieval levers: stdlib-dev, bundled model", plots=False, hits=0,
                          extra_json={"levers": LEVERS, "commit": commit, "date": date})
    print(overall_table(res))
    print(goal_md)
    if cal:
        print(cal[1])
    print(eng_md)
    print("wrote", ", ".join(str(p) for p in paths))


def _subset(res, names):
    import copy

    sub = copy.copy(res)
    sub.results = [r for r in res.results if r.name in names]
    return sub


if __name__ == "__main__":
    main()
