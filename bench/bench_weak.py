"""Weak evidence across corpora and query languages (issues 20 and 21): calibrate and check.

    python bench/bench_weak.py                     # calibrate on all dev sets, write weak.{md,json}
    python bench/bench_weak.py --features out.json # only dump every query's features

The weak flag decides whether ``ask`` answers. It must flag the questions no repository can
answer (negatives), and nothing else: not the commit-style queries of repos-dev, not the short
questions of semble-dev, not a Turkish or German question whose answer is there. What this
does, through ``codeseam.eval`` over the default variant (``hybrid-ast``):

1. runs stdlib-dev, repos-dev and semble-dev, plus translated negatives
   (``bench/data/negatives-tr-de.jsonl``: the 25 repos-dev negatives in Turkish and German,
   translated by the team for this check, over the same repositories), and keeps each query's
   evidence parts: the best dense similarity above the repository's floor (``closeness``) and
   the rarest-word term, and its language (``query.intent.language``);
2. calibrates the threshold per language group: English as the lowest threshold expected to flag
   at least ``ABSTAIN_GOAL`` of *new* English negatives (``calibrate_unseen``: k of the n
   negatives, the least k with k / (n + 1) >= the goal; so the fewest positives are flagged for it);
   other languages as the threshold that flags the most TR/DE negatives with at most
   ``TRANSLATED_BUDGET`` of the TR/DE positives weak;
3. writes ``weak.json`` (every query's score and flag) and ``weak.md`` (the thresholds, the
   abstain and false-weak rates per set, kind and language, at the calibrated thresholds).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

import bench_rank as br  # noqa: E402
from codeseam.eval.calibrate import calibrate_budget, calibrate_unseen  # noqa: E402
from codeseam.eval.report import _table, fmt  # noqa: E402
from codeseam.eval.runner import run_eval  # noqa: E402
from codeseam.query.intent import language  # noqa: E402
from codeseam.settings import load_settings  # noqa: E402

TRANSLATED = ROOT / "bench" / "data" / "negatives-tr-de.jsonl"
ABSTAIN_GOAL = 0.8  # English negatives flagged weak, at least (the issue: >= 0.8 on the hidden set)
TRANSLATED_BUDGET = 0.18  # TR/DE positives flagged weak, at most (the issue: <= 0.2 on the hidden set)
DEFAULT = "hybrid-ast"


def collect(cache: Path) -> list[dict]:
    """Every query of every set, with its evidence score and parts, under the default."""
    res = br.run_sets([DEFAULT], br.SETS, cache)
    rows: list[dict] = []
    sets = [("stdlib-dev", "stdlib-dev", res["stdlib"])]
    sets += [("repos-dev", repo, r) for repo, r in res["repos"].per_repo.items()]
    sets += [("semble-dev", repo, r) for repo, r in res["semble"].per_repo.items()]
    sets += translated_negatives(cache)
    for set_name, repo, ev in sets:
        vr = next(x for x in ev.results if x.name == DEFAULT)
        for q, o in zip(ev.queries, vr.outcomes, strict=True):
            rows.append({"set": set_name, "repo": repo, "id": q.id, "query": q.query, "kind": q.kind,
                         "negative": q.negative, "language": language(q.query), "evidence": o.evidence,
                         "best": o.best_similarity})
    return rows


def translated_negatives(cache: Path) -> list[tuple[str, str, object]]:
    """The TR/DE negatives, each repository's over its repos-dev eval index."""
    settings = load_settings({"data_dir": str(cache)}, env={})
    by_repo: dict[str, list[dict]] = {}
    for line in TRANSLATED.read_text(encoding="utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            by_repo.setdefault(rec["repo"], []).append({**rec, "gold": []})
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for repo, recs in sorted(by_repo.items()):
            golden = Path(tmp) / f"{repo}.jsonl"
            golden.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
            ev = run_eval(golden, br.REPOS_ROOT / repo, variants=[DEFAULT], settings=settings,
                          cache_dir=cache / "rd" / repo, corpus="all")
            out.append(("negatives-tr-de", repo, ev))
    return out


def calibrate(rows: list[dict]) -> dict:
    """The per-language thresholds (module doc, step 2)."""
    def scores(pred):
        return [r["evidence"] for r in rows if pred(r) and r["evidence"] is not None]
    en_pos = scores(lambda r: not r["negative"] and r["language"] == "en")
    en_neg = scores(lambda r: r["negative"] and r["language"] == "en")
    xx_pos = scores(lambda r: not r["negative"] and r["language"] != "en")
    xx_neg = scores(lambda r: r["negative"] and r["language"] != "en")
    en = calibrate_unseen(en_pos, en_neg, ABSTAIN_GOAL)
    xx = calibrate_budget(xx_pos, xx_neg, TRANSLATED_BUDGET)
    return {"en": {"threshold": round(en.threshold, 4), "abstain": en.abstain, "false_weak": en.false_weak,
                   "n_pos": len(en_pos), "n_neg": len(en_neg)},
            "other": {"threshold": round(xx.threshold, 4), "abstain": xx.abstain, "false_weak": xx.false_weak,
                      "n_pos": len(xx_pos), "n_neg": len(xx_neg)}}


def rates(rows: list[dict], thresholds: dict[str, float]) -> list[list[str]]:
    """Abstain (negatives) and false-weak (positives) per set and kind at ``thresholds``."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        groups.setdefault((r["set"], r["kind"]), []).append(r)
    out = []
    for (set_name, kind), rs in sorted(groups.items()):
        weak = [r["evidence"] is None or r["evidence"] < thresholds[r["language"] if r["language"] == "en"
                                                                   else "other"] for r in rs]
        share = sum(weak) / len(rs)
        out.append([set_name, kind, str(len(rs)), fmt(share) if rs[0]["negative"] else "",
                    "" if rs[0]["negative"] else fmt(share)])
    return out


AGREEMENT_WEIGHTS = (0.0, 0.05, 0.1, 0.15, 0.2)
HELD_IN = 25  # of the 37 English negatives, those a held-out split calibrates on
SPLITS = 300  # held-out splits, seeded


def split_once(pos: list[float], neg: list[float], rng, rule=calibrate_unseen,
               held_in: int = HELD_IN) -> tuple[float, float]:
    """One held-out split of the English scores: ``rule`` (at ``ABSTAIN_GOAL``) calibrated on
    ``held_in`` of the negatives shuffled by ``rng``; (share of the other negatives flagged,
    share of ``pos`` flagged)."""
    negs = neg[:]
    rng.shuffle(negs)
    t = rule(pos, negs[:held_in], ABSTAIN_GOAL).threshold
    rest = negs[held_in:]
    return sum(s < t for s in rest) / len(rest), sum(s < t for s in pos) / len(pos)


def held_out(pos: list[float], neg: list[float], rule=calibrate_unseen, splits: int = SPLITS,
             seed: int = 0) -> tuple[float, float]:
    """The mean of ``split_once`` over ``splits`` seeded splits."""
    import random
    import statistics

    rng = random.Random(seed)
    runs = [split_once(pos, neg, rng, rule) for _ in range(splits)]
    return statistics.mean(a for a, _ in runs), statistics.mean(b for _, b in runs)


def set_weights(coverage: float | None = None, agreement: float | None = None) -> None:
    """Score with these term weights (None: the table's) under the bundled model's entries, the
    ones these sets calibrate (those with a coverage weight)."""
    from codeseam.query.evidence import WEAK_THRESHOLDS

    for entry in WEAK_THRESHOLDS.values():
        if "coverage" in entry:
            if coverage is not None:
                entry["coverage"] = coverage
            if agreement is not None:
                entry["agreement"] = agreement


def agreement_sweep(cache: Path) -> str:
    """Each query's agreement term (its score with weight 1 minus with weight 0), then at each of
    ``AGREEMENT_WEIGHTS``: the calibration on all queries, and held out: English calibrated on
    25 random English negatives and measured on the other 12 and every English positive; other
    languages calibrated on half the TR/DE positives, measured on the other half and every
    TR/DE negative (``SPLITS`` random splits each, seeded)."""
    import random
    import statistics

    runs = []
    for weight in (0.0, 1.0):
        set_weights(agreement=weight)
        runs.append(collect(cache))
    rows = [{**a, "agree": b["evidence"] - a["evidence"]} for a, b in zip(*runs, strict=True)
            if a["evidence"] is not None]
    en = [r for r in rows if r["language"] == "en"]
    xx = [r for r in rows if r["language"] != "en"]
    lines = ["| weight | English threshold | English negatives flagged | English false-weak | semble-dev weak "
             "| held out: negatives | held out: false-weak | other threshold | TR/DE negatives flagged "
             "| held out: TR/DE negatives | held out: TR/DE positives |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for w in AGREEMENT_WEIGHTS:
        def score(r: dict, w: float = w) -> float:
            return r["evidence"] + w * r["agree"]
        en_pos = [r for r in en if not r["negative"]]
        en_neg = [r for r in en if r["negative"]]
        xx_pos = [r for r in xx if not r["negative"]]
        xx_neg = [r for r in xx if r["negative"]]
        whole = calibrate_unseen([score(r) for r in en_pos], [score(r) for r in en_neg], ABSTAIN_GOAL)
        semble = sum(1 for r in rows if not r["negative"] and r["set"] == "semble-dev"
                     and score(r) < (whole.threshold if r["language"] == "en" else float("-inf")))
        other = calibrate_budget([score(r) for r in xx_pos], [score(r) for r in xx_neg], TRANSLATED_BUDGET)
        rng = random.Random(0)
        held, held_xx = [], []
        for _ in range(SPLITS):
            held.append(split_once([score(r) for r in en_pos], [score(r) for r in en_neg], rng,
                                   held_in=round(len(en_neg) * HELD_IN / 37)))
            pos = xx_pos[:]
            rng.shuffle(pos)
            half = len(pos) // 2
            c = calibrate_budget([score(r) for r in pos[:half]], [score(r) for r in xx_neg], TRANSLATED_BUDGET)
            held_xx.append((sum(score(r) < c.threshold for r in xx_neg) / len(xx_neg),
                            sum(score(r) < c.threshold for r in pos[half:]) / len(pos[half:])))
        lines.append(f"| {w} | {whole.threshold:.4f} | {whole.abstain:.3f} | {whole.false_weak:.3f} | {semble} "
                     f"| {statistics.mean(a for a, _ in held):.3f} | {statistics.mean(b for _, b in held):.3f} "
                     f"| {other.threshold:.4f} | {other.abstain:.3f} | {statistics.mean(a for a, _ in held_xx):.3f} "
                     f"| {statistics.mean(b for _, b in held_xx):.3f} |")
    mean = {neg: statistics.mean(r["agree"] for r in en if r["negative"] == neg) for neg in (True, False)}
    return "\n".join([
        "# The agreement term of the weak-evidence score", "",
        f"Run {time.strftime('%Y-%m-%d')}, commit {br.git_commit()}, `bench/bench_weak.py --sweep-agreement`. "
        "`evidence.agreement`: half for BM25's first file among dense's first five files, half for the other way "
        f"round. English negatives agree {mean[True]:.3f} on average, English positives {mean[False]:.3f}. Each "
        "weight calibrated as `weak.md` is (English: the lowest threshold expected to flag at least 80% of new English "
        "negatives; other languages: at most 18% of the TR/DE positives weak); held out: the mean of "
        f"{SPLITS} random splits (module doc of `agreement_sweep`).", "", *lines, ""])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", default=str(br.CACHE))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    ap.add_argument("--features", help="only write every query's features here")
    ap.add_argument("--coverage", type=float, help="the coverage weight to score with (default: the table's)")
    ap.add_argument("--agreement", type=float, help="the agreement weight to score with (default: the table's)")
    ap.add_argument("--sweep-agreement", metavar="MD", help="only sweep the agreement weight, write the table here")
    args = ap.parse_args()
    if args.sweep_agreement:
        md = agreement_sweep(Path(args.cache))
        Path(args.sweep_agreement).write_text(md, encoding="utf-8")
        print(md)
        return
    set_weights(args.coverage, args.agreement)
    t0 = time.perf_counter()
    rows = collect(Path(args.cache))
    if args.features:
        Path(args.features).write_text(json.dumps(rows, indent=1, ensure_ascii=False))
        return
    cal = calibrate(rows)
    thresholds = {"en": cal["en"]["threshold"], "other": cal["other"]["threshold"]}
    table = _table(["set", "kind", "n", "abstain (negatives)", "false-weak (positives)"], rates(rows, thresholds))
    commit, date = br.git_commit(), time.strftime("%Y-%m-%d")
    md = "\n".join([
        "# Weak evidence across corpora and query languages", "",
        f"Run {date}, commit {commit}, default variant, bundled model. {len(rows)} queries: stdlib-dev, repos-dev, "
        "semble-dev and the translated negatives (`bench/data/negatives-tr-de.jsonl`).", "",
        f"English threshold **{cal['en']['threshold']}** (the lowest expected to flag at least {ABSTAIN_GOAL:.0%} of "
        f"new English negatives, `calibrate_unseen`: {round(cal['en']['abstain'] * cal['en']['n_neg'])} of the "
        f"{cal['en']['n_neg']} English negatives, the least k with k / (n + 1) >= {ABSTAIN_GOAL}: abstain "
        f"{cal['en']['abstain']:.3f}, false-weak "
        f"{cal['en']['false_weak']:.3f} on {cal['en']['n_pos']} English positives of all three sets); other languages **{cal['other']['threshold']}** (at most "
        f"{TRANSLATED_BUDGET:.0%} of {cal['other']['n_pos']} TR/DE positives weak: abstain "
        f"{cal['other']['abstain']:.3f} on {cal['other']['n_neg']} TR/DE negatives, false-weak "
        f"{cal['other']['false_weak']:.3f}).", "", "## At these thresholds", "", table, ""])
    out = Path(args.out)
    (out / "weak.md").write_text(md, encoding="utf-8")
    (out / "weak.json").write_text(json.dumps({"commit": commit, "date": date, "calibration": cal, "queries": rows},
                                              indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(md)
    print(f"({time.perf_counter() - t0:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
