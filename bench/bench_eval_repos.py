"""Retrieval on both dev sets, per repository, one ranking lever at a time (issue 12).

    python bench/bench_eval.py --sets repos          # or: python bench/bench_eval_repos.py

What it does (everything through ``codeseam.eval``, the library behind ``codeseam eval``):

1. runs the real-repository suite ``golden/repos-dev`` (five whole repositories, each in its
   own eval index under ``--cache``/<repo>) and stdlib-dev, for the main variants: the plain
   baselines (``bm25-window``; ``hybrid-lines``, RRF of BM25 and the embedder over 2000-byte
   line windows), the build before this work (every lever off: ``PREVIOUS``) and the default;
2. runs every lever *alone*, switched against the default, on both sets (``LEVERS``);
3. writes ``eval-repos.json`` / ``eval-repos.md`` (the suite report: per repository, per kind,
   every per-query rank and hit), ``ablation.json`` / ``ablation.md`` (each lever's effect on
   MRR@10, Recall@5 and whole@5 per repository and on stdlib-dev, beside the default), and the
   weak-evidence calibration over both sets' positives and negatives.

A lever counts only if it moves both dev sets: the ablation marks each one kept (on by
default: switching it off loses on both) or not.
"""

from __future__ import annotations

import argparse
import json
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "bench")]

from _common import commit as git_commit  # noqa: E402

from codeseam.eval.calibrate import calibrate, calibrate_budget  # noqa: E402
from codeseam.eval.report import FALSE_WEAK_BUDGET, TRANSLATED_KINDS, _table, fmt  # noqa: E402
from codeseam.eval.runner import run_eval  # noqa: E402
from codeseam.eval.suite import group, per_repo_rows, run_suite, write_suite_report  # noqa: E402
from codeseam.settings import load_settings  # noqa: E402

SUITE = ROOT.parent / "shared" / "golden" / "repos-dev"
CORPORA = ROOT.parent / "shared" / "corpora"
STDLIB_GOLDEN = ROOT.parent / "shared" / "golden" / "stdlib-dev.jsonl"
DEFAULT = "hybrid-ast"
PREVIOUS = "hybrid-ast+norole+def0+nokind+symhard+nonoise+noexpand+s1weak"
MAIN = ["bm25-window", "hybrid-lines", PREVIOUS, DEFAULT]
# one lever switched at a time against the default: (variant, what it changes, on by default?)
LEVERS = [
    ("hybrid-ast+norole", "no file-role prior (tests, docs, changelogs weigh like source)", True),
    ("hybrid-ast+roles0.5", "role prior 0.5 instead of 0.3", True),
    ("hybrid-ast+def0", "no definition evidence (pieces of one definition not ranked together)", True),
    ("hybrid-ast+nokind", "no chunk-kind prior (module-level and class-header chunks weigh 1)", True),
    ("hybrid-ast+symhard", "names the query mentions go first in every query, not only in lookups", True),
    ("hybrid-ast+nonoise", "question words kept in the BM25 query", True),
    ("hybrid-ast+noexpand", "a piece of a split definition is returned as the piece", True),
    ("hybrid-ast+nosym", "named definitions never moved first", True),
    ("hybrid-ast+frag", "adjacent retrieved pieces not merged", True),
    ("hybrid-ast+rawq", "no identifier splits added to the BM25 query", True),
    ("hybrid-ast+file1", "file evidence (a third RRF list, of files), weight 1", False),
    ("hybrid-ast+name1", "name match (query words in the definition's name), weight 1", False),
    ("hybrid-ast+noisec", "change words (fix, add, support ...) also out of the BM25 query", False),
    ("hybrid-ast+rw0.4", "RRF dense weight 0.4 (BM25 0.6)", False),
    ("hybrid-ast+rw0.6", "RRF dense weight 0.6 (BM25 0.4)", False),
    ("hybrid-ast+s1weak", "weak decided on the best dense similarity alone (the earlier signal)", False),
]
COLS = ("mrr@10", "recall@5", "whole@5")


REPOS_CACHE = ROOT / "bench" / ".cache" / "rd"
STDLIB_CACHE = ROOT / "bench" / ".cache" / "eval"


def run(sets: list[str], out: Path, variants: list[str] | None = None, repos_cache: Path = REPOS_CACHE,
        stdlib_cache: Path = STDLIB_CACHE) -> dict:
    names = variants or (MAIN + [v for v, _, _ in LEVERS])
    settings = load_settings({"data_dir": str(ROOT / "bench" / ".cache")}, env={})
    t0 = time.perf_counter()

    def progress(event: str, **f) -> None:
        if event in ("repo", "index", "skipped"):
            print(event, f, flush=True)

    done: dict = {"variants": names}
    suite = std = None
    if "repos" in sets:
        suite = run_suite(SUITE, CORPORA, variants=names, settings=settings, cache_dir=repos_cache,
                          progress=progress)
    if "stdlib" in sets:
        std = run_eval(STDLIB_GOLDEN, sysconfig.get_paths()["stdlib"], variants=names, settings=settings,
                       cache_dir=stdlib_cache, progress=progress)
    commit, date = git_commit(), time.strftime("%Y-%m-%d")
    cal = calibration(suite, std) if suite and std else None
    if suite is not None:
        sections = [goals(suite, std), cal[1] if cal else ""]
        write_suite_report(suite, out, prefix="eval-repos", settings=settings, sections=sections,
                           title="Retrieval quality: repos-dev (five whole repositories), bundled model",
                           extra_json={"commit": commit, "date": date, "calibration": cal[0] if cal else None})
    if std is not None:  # every variant's per-query ranks on stdlib-dev (ranks and hits)
        from codeseam.eval.report import write_report

        write_report(std, out, prefix="eval-stdlib-levers", settings=settings, plots=False,
                     title="Ranking levers on stdlib-dev, bundled model",
                     extra_json={"commit": commit, "date": date})
    if suite is not None and std is not None and (variants is None or set(MAIN) <= set(variants)):
        data, md = ablation(suite, std, commit, date)
        (out / "ablation.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        (out / "ablation.md").write_text(md, encoding="utf-8")
        done["ablation"] = data
    done["seconds"] = round(time.perf_counter() - t0)
    return done


def _summary(res, name: str, kind: str | None) -> dict:
    vr = next(r for r in res.results if r.name == name)
    return group(vr.outcomes, kind, (1, 5, 10))


def ablation(suite, std, commit: str, date: str) -> tuple[dict, str]:
    """Each lever beside the default: per repository (commit queries), pooled, stdlib-dev."""
    _, _, table = per_repo_rows(suite, cols=COLS)
    repos = suite.repos
    rows, data = [], {"commit": commit, "date": date, "default": DEFAULT, "levers": {}}
    base_std = _summary(std, DEFAULT, None)
    base = table[DEFAULT]
    head = (["variant", "what"] + [f"{r} ΔMRR@10" for r in repos] + ["repos-dev MRR@10", "ΔR@5", "Δwhole@5",
                                                                     "stdlib-dev MRR", "ΔR@5 (stdlib)", "kept"])

    def line(name: str, what: str, default_on: bool | None) -> list[str]:
        e = table[name]
        s = _summary(std, name, None)
        d_repos = e["all"]["mrr@10"] - base["all"]["mrr@10"]
        d_std = s["mrr"] - base_std["mrr"]
        verdict = ""
        if default_on is True:  # switching it off should lose on both sets
            verdict = "yes" if d_repos < 0 and d_std <= 0 and (d_std < 0 or d_repos < 0) else "no (does not move both)"
        elif default_on is False:
            verdict = "no" if not (d_repos > 0 and d_std > 0) else "candidate (moves both)"
        cells = [name, what] + [f"{e[r]['mrr@10'] - base[r]['mrr@10']:+.3f}" for r in repos]
        cells += [f"{e['all']['mrr@10']:.3f} ({d_repos:+.3f})", f"{e['all']['recall@5'] - base['all']['recall@5']:+.3f}",
                  f"{e['all']['whole@5'] - base['all']['whole@5']:+.3f}", f"{s['mrr']:.3f} ({d_std:+.3f})",
                  f"{s['recall@5'] - base_std['recall@5']:+.3f}", verdict]
        data["levers"][name] = {"what": what, "default_on": default_on, "repos": e, "stdlib": s,
                                "delta_mrr10_repos": d_repos, "delta_mrr_stdlib": d_std, "kept": verdict}
        return cells

    rows.append([DEFAULT, "the default (every kept lever on)"] + [f"{base[r]['mrr@10']:.3f}" for r in repos]
                + [f"{base['all']['mrr@10']:.3f}", "", "", f"{base_std['mrr']:.3f}", "", ""])
    data["levers"][DEFAULT] = {"repos": base, "stdlib": base_std}
    for name in (PREVIOUS, "bm25-window", "hybrid-lines"):
        rows.append(line(name, {"bm25-window": "plain BM25 over 2000-byte line windows",
                                "hybrid-lines": "RRF of BM25 and the embedder over 2000-byte line windows",
                                PREVIOUS: "the build before this work: every new lever off"}[name], None))
    for name, what, on in LEVERS:
        rows.append(line(name, what, on))
    md = "\n".join([
        "# Ranking levers, one at a time, on both dev sets", "",
        f"Run {date}, commit {commit}. repos-dev: the 169 `commit` queries of five whole repositories (MRR@10, "
        "Recall@5, whole@5 as in its README), each repository in its own index; stdlib-dev: its 68 queries with "
        "gold (MRR over the top 20). Each row switches one lever against the default (`hybrid-ast`); Δ is the "
        "row minus the default. A lever is kept only if it moves both sets: for a lever on by default, "
        "switching it off must lose on both (or lose on one and tie on the other).", "",
        _table(head, rows), "",
        "Per-query ranks and hits of every variant: `eval-repos.json` (repos-dev) and `eval-stdlib-levers.json` "
        "(stdlib-dev); per-repository summaries in `ablation.json`.", ""])
    return data, md


def goals(suite, std) -> str:
    kind = "commit"
    r = _summary(suite.pooled, DEFAULT, kind)
    s = _summary(std, DEFAULT, None) if std is not None else None
    rows = [["repos-dev commit MRR@10 >= 0.42", fmt(r["mrr@10"]), "yes" if r["mrr@10"] >= 0.42 else "no"],
            ["repos-dev commit R@5 >= 0.55", fmt(r["recall@5"]), "yes" if r["recall@5"] >= 0.55 else "no"]]
    if s is not None:
        rows.append(["stdlib-dev MRR >= 0.72", fmt(s["mrr"]), "yes" if s["mrr"] >= 0.72 else "no"])
    return "## Goals (issue 12, dev sets)\n\n" + _table(["goal", "measured", "met"], rows)


def calibration(suite, std) -> tuple[dict, str]:
    """The weak-evidence threshold over both dev sets' positives and negatives (the default)."""
    outs = [o for res in (suite.pooled, std) for r in res.results if r.name == DEFAULT for o in r.outcomes]
    pos = [o.weak_score for o in outs if not o.negative and o.weak_score is not None]
    eng = [o.weak_score for o in outs if not o.negative and o.kind not in TRANSLATED_KINDS and o.weak_score is not None]
    neg = [o.weak_score for o in outs if o.negative and o.weak_score is not None]
    ba = calibrate(eng, neg)
    b = calibrate_budget(eng, neg, FALSE_WEAK_BUDGET)
    per = []
    for name, res in [(repo, suite.per_repo[repo]) for repo in suite.repos] + [("stdlib-dev", std)]:
        o = [x for r in res.results if r.name == DEFAULT for x in r.outcomes]
        n = [x.weak_score for x in o if x.negative]
        p = [x.weak_score for x in o if not x.negative and x.kind not in TRANSLATED_KINDS]
        per.append([name, fmt(sum(s < b.threshold for s in n) / len(n)), fmt(sum(s < b.threshold for s in p) / len(p))])
    data = {"threshold_budget": round(b.threshold, 4), "abstain": b.abstain, "false_weak_english": b.false_weak,
            "false_weak_all": sum(s < b.threshold for s in pos) / len(pos), "threshold_balanced": round(ba.threshold, 4),
            "balanced": {"abstain": ba.abstain, "false_weak": ba.false_weak}, "n_neg": len(neg), "n_english": len(eng),
            "per_set": {row[0]: {"abstain": row[1], "false_weak": row[2]} for row in per}}
    md = "\n".join([
        "## Weak evidence, calibrated on both dev sets", "",
        f"The evidence score (`src/codeseam/query/evidence.py`) of the default over both sets: {len(neg)} negatives, "
        f"{len(eng)} English positives. The threshold that flags the most negatives with at most "
        f"{FALSE_WEAK_BUDGET:.0%} of the English positives weak is **{b.threshold:.4f}**: abstain {b.abstain:.3f}, "
        f"false-weak {b.false_weak:.3f} on English positives ({data['false_weak_all']:.3f} on all positives, "
        f"translations included). The balanced-accuracy optimum is {ba.threshold:.4f} (abstain {ba.abstain:.3f}, "
        f"false-weak {ba.false_weak:.3f}).", "",
        _table(["set", "abstain (neg)", "false-weak (English pos)"], per)])
    return data, md


def main_with(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    run(["repos", "stdlib"], out)
    print((out / "ablation.md").read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", default="repos,stdlib", help="comma list: repos, stdlib")
    ap.add_argument("--repos-cache", default=str(REPOS_CACHE), help="eval indexes of repos-dev (<dir>/<repo>)")
    ap.add_argument("--stdlib-cache", default=str(STDLIB_CACHE), help="eval index of stdlib-dev")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    ap.add_argument("--variants", help="comma list (default: the main variants and every lever)")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    res = run([s.strip() for s in args.sets.split(",")], out, args.variants.split(",") if args.variants else None,
              Path(args.repos_cache), Path(args.stdlib_cache))
    print(json.dumps({k: v for k, v in res.items() if k != "ablation"}, indent=1))
    md = out / "ablation.md"
    if md.exists():
        print(md.read_text())


if __name__ == "__main__":
    main()
