"""Probe: would the agreement of BM25 and dense search separate negatives from weak positives?

    python bench/probe_weak_agreement.py     # reads bench/results only: seconds, no index

A query-performance signal from the literature: when the keyword and the vector rankings put the
same files on top, the index holds what the query asks; a question about something absent gets
two unrelated lists. This reads what the last full ablation recorded (each query's top hits under
``bm25-ast`` and ``dense-ast`` in ``eval.json``, ``eval-repos.json``, ``eval-semble.json``) and the
weak-evidence calibration (``weak.json``: every query's score, English ones only), adds
``weight x agreement`` to the evidence score, re-calibrates the English threshold the same way
(``calibrate_abstain``: the lowest that flags at least 80% of the English negatives) and counts the positives flagged.

Agreement measures: ``agree@k``, the share of the smaller of the two top-k file sets that both
hold; ``top1``: (BM25's first file among dense's first 5 files) + (dense's first among BM25's),
halved. A proxy: the two variants' whole rankings, not the candidate lists ``retrieve`` fuses.
It adds to the scores ``weak.json`` holds: run on weak.json of 0cef1bf (before the agreement
term) it found 35 English positives flagged at weight 0 and 24 to 30 at 0.05-0.15, which led
to the real term (``bench_weak.py --sweep-agreement``); on a weak.json written since, weight 0
is the adopted score and the rows show what the proxy would add on top.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from codeseam.eval.calibrate import calibrate_abstain  # noqa: E402

RESULTS = ROOT / "bench" / "results"
SETS = (("eval.json", "stdlib-dev"), ("eval-repos.json", "repos-dev"), ("eval-semble.json", "semble-dev"))
WEIGHTS = (0.0, 0.02, 0.05, 0.08, 0.1, 0.15, 0.2)
ABSTAIN = 0.8


def files(hits: list[str], k: int) -> list[str]:
    out: list[str] = []
    for h in hits:
        path = h.rsplit(":", 1)[0]
        if path not in out:
            out.append(path)
    return out[:k]


def main() -> None:
    hits: dict[tuple[str, str, str], list[str]] = {}
    for name, set_name in SETS:
        data = json.loads((RESULTS / name).read_text())
        for variant in ("bm25-ast", "dense-ast"):
            for q in data["variants"][variant]["queries"]:
                hits[(set_name, q["id"], variant)] = q["hits"]

    def agree(r: dict, k: int) -> float:
        b, d = files(hits[(r["set"], r["id"], "bm25-ast")], k), files(hits[(r["set"], r["id"], "dense-ast")], k)
        return len(set(b) & set(d)) / max(1, min(len(b), len(d)))

    def top1(r: dict) -> float:
        b, d = files(hits[(r["set"], r["id"], "bm25-ast")], 5), files(hits[(r["set"], r["id"], "dense-ast")], 5)
        return ((b[:1] and b[0] in d) + (d[:1] and d[0] in b)) / 2 if b and d else 0.0

    weak = json.loads((RESULTS / "weak.json").read_text())
    rows = [r for r in weak["queries"] if r["language"] == "en" and (r["set"], r["id"], "bm25-ast") in hits]
    n_pos = sum(1 for r in rows if not r["negative"])
    n_neg = len(rows) - n_pos
    print(f"{len(rows)} English queries ({n_neg} negatives, {n_pos} positives), weak.json at {weak['commit']}\n")
    print("| measure | weight | English threshold | positives flagged | of them semble-dev |")
    print("|---|---|---|---|---|")
    for label, fn in (("agree@3", lambda r: agree(r, 3)), ("agree@5", lambda r: agree(r, 5)), ("top1", top1)):
        for w in WEIGHTS:
            scored = [(r["evidence"] + w * fn(r), r) for r in rows]
            threshold = calibrate_abstain([s for s, r in scored if not r["negative"]],
                                          [s for s, r in scored if r["negative"]], ABSTAIN).threshold
            flagged = [r for s, r in scored if not r["negative"] and s < threshold]
            semble = sum(1 for r in flagged if r["set"] == "semble-dev")
            print(f"| {label} | {w} | {threshold:.4f} | {len(flagged)} ({len(flagged) / n_pos:.3f}) | {semble} |")


if __name__ == "__main__":
    main()
