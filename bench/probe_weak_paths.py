"""Probe: would the query's words in the first results' file names separate negatives from positives?

    python bench/probe_weak_paths.py     # reads bench/results only: seconds, no index

Six of the ten semble-dev questions the weak flag still flags name their answer's file ("how are
request lifecycle signals emitted": ``signals.py``; "utility functions used across the package":
``utils.py``; "URL path mapping across mounted apps": ``urlmap.rb``). A fifth term of the
evidence score could count that: the share of the query's words (the BM25 words the other terms
read, ``evidence.query_words``) whose Snowball stem is the stem of a word of the first ``top``
results' file names (``file``: the file's name without its extension; ``path``: every folder too,
split on ``_ - .`` and identifier parts).

This reads what the last full ablation recorded (each query's top hits under ``hybrid-ast`` in
``eval.json``, ``eval-repos.json``, ``eval-semble.json``) and the weak-evidence calibration
(``weak.json``: every query's score; English queries only), adds ``weight x share`` to the score,
re-calibrates the English threshold as ``bench_weak.py`` does (``calibrate_abstain``: the lowest
that flags at least 80% of the English negatives), and reports the positives flagged, the
semble-dev queries among them, and held out: the mean over ``bench_weak.SPLITS`` random splits of the
negatives (calibrated on 25, measured on the other 12, with every positive).
"""

from __future__ import annotations

import json
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

import bench_weak as bw  # noqa: E402
from codeseam.chunk import split_identifier  # noqa: E402
from codeseam.eval.calibrate import calibrate_abstain  # noqa: E402
from codeseam.query.analysis import NOISE_WORDS, _stemmer  # noqa: E402
from codeseam.query.evidence import query_words  # noqa: E402
from codeseam.query.rank import CHANGE_WORDS  # noqa: E402

RESULTS = ROOT / "bench" / "results"
SETS = (("eval.json", "stdlib-dev"), ("eval-repos.json", "repos-dev"), ("eval-semble.json", "semble-dev"))
WEIGHTS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3)
MEASURES = ((1, "file"), (3, "file"), (5, "file"), (5, "path"))
ABSTAIN = 0.8


def path_stems(path: str, scope: str, stem) -> set[str]:
    """Stems of the words of a hit's file name (``file``) or of its whole path (``path``)."""
    parts = path.split("/")
    names = [parts[-1].split(".")[0]] if scope == "file" else [p.split(".")[0] for p in parts]
    out: set[str] = set()
    for name in names:
        for word in filter(None, re.split(r"[-_. ]", name)):
            out.add(stem(word.lower()))
            out.update(stem(p) for p in split_identifier(word))
    return out


def main() -> None:
    stem = _stemmer().stemWord
    hits: dict[tuple[str, str], list[str]] = {}
    for name, set_name in SETS:
        data = json.loads((RESULTS / name).read_text())
        for q in data["variants"]["hybrid-ast"]["queries"]:
            hits[(set_name, q["id"])] = [h.rsplit(":", 1)[0] for h in q["hits"]]
    weak = json.loads((RESULTS / "weak.json").read_text())
    rows = [r for r in weak["queries"] if r["language"] == "en" and (r["set"], r["id"]) in hits
            and r["evidence"] is not None]
    pos = [r for r in rows if not r["negative"]]
    neg = [r for r in rows if r["negative"]]
    print(f"{len(rows)} English queries ({len(neg)} negatives, {len(pos)} positives), weak.json at {weak['commit']}\n")
    print("| measure | weight | mean share: negatives / positives | English threshold | positives flagged "
          "| of them semble-dev | held out: negatives flagged | held out: positives flagged |")
    print("|---|---|---|---|---|---|---|---|")
    for top, scope in MEASURES:
        def share(r: dict, top: int = top, scope: str = scope) -> float:
            words = query_words(r["query"], NOISE_WORDS | CHANGE_WORDS)
            if not words:
                return 0.0
            held: set[str] = set()
            for path in hits[(r["set"], r["id"])][:top]:
                held |= path_stems(path, scope, stem)
            return sum(stem(w) in held for w in words) / len(words)
        shares = {id(r): share(r) for r in rows}
        means = f"{statistics.mean(shares[id(r)] for r in neg):.3f} / {statistics.mean(shares[id(r)] for r in pos):.3f}"
        for w in WEIGHTS:
            def score(r: dict, w: float = w, shares: dict = shares) -> float:
                return r["evidence"] + w * shares[id(r)]
            c = calibrate_abstain([score(r) for r in pos], [score(r) for r in neg], ABSTAIN)
            flagged = [r for r in pos if score(r) < c.threshold]
            semble = sum(1 for r in flagged if r["set"] == "semble-dev")
            held = bw.held_out([score(r) for r in pos], [score(r) for r in neg], rule=calibrate_abstain)
            print(f"| top {top} {scope} | {w} | {means} | {c.threshold:.4f} | {len(flagged)} ({len(flagged) / len(pos):.3f}) "
                  f"| {semble} | {held[0]:.3f} | {held[1]:.3f} |")


if __name__ == "__main__":
    main()
