"""Probe: would a second, upper anchor per repository make the weak flag fairer across corpora?

    python bench/probe_weak_anchor.py     # the eval indexes of bench_rank (cache): about a minute

The closeness term of the evidence score is the best dense similarity minus the repository's
null (the median best similarity of ``evidence.PROBES``, questions about nothing code holds). How
far answers rise above that floor differs by repository (rack's positives 0.25 above it on
average, xmonad's 0.59), so a repository whose answers sit low has its questions flagged like
negatives. An upper anchor could normalise that: the median best similarity of ``ANCHORS``,
generic questions about what any code holds (errors, configuration, input, output ...), written
once and not tuned.

This runs every query of the three dev sets as ``bench_weak.py`` does, measures each repository's
anchor beside its null, and re-scores the English queries with the closeness term replaced:
``floor=anchor`` (best minus the anchor), ``scaled`` (the closeness times the mean anchor span
over the repository's, span = anchor - null) and ``half-scaled`` (the mean of the two), each
calibrated as the default is (``calibrate_unseen`` at 80%), and held out (300 splits: calibrated
on 25 English negatives, measured on the other 12).
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

import bench_weak as bw  # noqa: E402
from codeseam.eval.calibrate import calibrate_unseen  # noqa: E402
from codeseam.query import evidence  # noqa: E402

ANCHORS = (
    "how errors are handled and reported", "where the main entry point is", "how configuration options are read",
    "how input is parsed", "how output is written", "helper utility functions", "how values are validated",
    "convert a value to a string", "read data from a file", "the public API of the library",
    "how a request is processed", "how objects are created and initialised", "how the state is stored",
    "the tests for the core behaviour", "how options are merged with defaults", "how a result is returned to the caller",
    "logging and debug output", "how callbacks or hooks are registered", "how the data is serialised",
    "the main class and its methods",
)


def collect_with_anchors() -> tuple[list[dict], dict[str, dict]]:
    """Every query's row (``bench_weak.collect``) and each repository's null and anchor."""
    from codeseam.store import Filters

    levels: dict[str, dict] = {}
    null_for = evidence.null_for

    def spy(store, embedder, repo_ids):
        null = null_for(store, embedder, repo_ids)
        key = ",".join(repo_ids)
        if key not in levels:
            best = [h[0].score for h in (store.dense_search(embedder.embed_query(a), 1, Filters(repos=tuple(repo_ids)))
                                         for a in ANCHORS) if h]
            levels[key] = {"null": null, "anchor": statistics.median(best)}
        return null

    evidence.null_for = spy
    try:
        rows = bw.collect(bw.br.CACHE)
    finally:
        evidence.null_for = null_for
    return rows, levels


def main() -> None:
    rows, levels = collect_with_anchors()
    rows = [r for r in rows if r["language"] == "en" and r["evidence"] is not None]
    for r in rows:
        lv = levels["stdlib-dev" if r["set"] == "stdlib-dev" else r["repo"]]
        r["close"], r["anchor"], r["span"] = r["best"] - lv["null"], lv["anchor"], lv["anchor"] - lv["null"]
        r["rest"] = r["evidence"] - r["close"]
    mean_span = statistics.mean(v["anchor"] - v["null"] for v in levels.values())
    variants = {
        "now": lambda r: r["evidence"],
        "floor=anchor": lambda r: r["best"] - r["anchor"] + r["rest"],
        "scaled": lambda r: r["close"] * mean_span / r["span"] + r["rest"],
        "half-scaled": lambda r: 0.5 * r["close"] * (1 + mean_span / r["span"]) + r["rest"],
    }
    pos = [r for r in rows if not r["negative"]]
    neg = [r for r in rows if r["negative"]]
    commit = [r for r in pos if r["kind"] == "commit"]
    print("| repository | null | anchor | span |\n|---|---|---|---|")
    for repo, lv in sorted(levels.items(), key=lambda kv: kv[1]["anchor"] - kv[1]["null"]):
        print(f"| {repo} | {lv['null']:.3f} | {lv['anchor']:.3f} | {lv['anchor'] - lv['null']:.3f} |")
    print("\n| closeness | threshold | negatives flagged | English false-weak | repos-dev commit | semble-dev weak "
          "| held out: negatives | held out: false-weak |\n|---|---|---|---|---|---|---|---|")
    for name, score in variants.items():
        c = calibrate_unseen([score(r) for r in pos], [score(r) for r in neg], bw.ABSTAIN_GOAL)
        semble = sum(1 for r in pos if r["set"] == "semble-dev" and score(r) < c.threshold)
        held = bw.held_out([score(r) for r in pos], [score(r) for r in neg])
        fw_commit = sum(score(r) < c.threshold for r in commit) / len(commit)
        print(f"| {name} | {c.threshold:.4f} | {c.abstain:.3f} | {c.false_weak:.3f} | {fw_commit:.3f} | {semble} "
              f"| {held[0]:.3f} | {held[1]:.3f} |")


if __name__ == "__main__":
    main()
