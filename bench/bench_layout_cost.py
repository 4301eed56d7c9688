"""What writing each file's chunk layout (``store/layouts.py``) costs an index run.

    git worktree add /tmp/head <commit before layouts>
    python bench/bench_layout_cost.py --baseline-src /tmp/head/src [--corpus DIR]

The same corpus is indexed from scratch by this checkout and by the build in ``--baseline-src``,
alternately, ``--rounds`` times each, in fresh processes and fresh Lite indexes, with the
deterministic fake embedder: embedding is the same work for both builds and would hide the
store writes, so leaving it out shows the layouts' cost at its largest. Then each build re-syncs
its unchanged index (a no-op, which now also counts the layout rows). Reports the medians and
the ratios this checkout / baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from _common import commit, load_avg  # noqa: E402

CHILD = r'''
import json, sys, time
from codeseam import api
from codeseam.settings import load_settings
settings = load_settings({"embedding_backend": "fake"})
t = time.perf_counter()
first = api.index(sys.argv[1], settings=settings)
full = time.perf_counter() - t
t = time.perf_counter()
api.index(sys.argv[1], settings=settings)
noop = time.perf_counter() - t
print(json.dumps({"full": full, "noop": noop, "chunks": first.chunks_written, "files": first.files_indexed}))
'''


def run(src: Path, corpus: Path) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAG_")}
        env.update(PYTHONPATH=str(src), RAG_DATA_DIR=str(Path(tmp) / "data"), RAG_CONFIG=str(Path(tmp) / "c.toml"),
                   RAG_KEEPALIVE="0", OMP_NUM_THREADS="1")
        (Path(tmp) / "c.toml").write_text("")
        out = subprocess.run([sys.executable, "-c", CHILD, str(corpus)], env=env, capture_output=True, text=True,
                             check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline-src", required=True)
    ap.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpora" / "flask"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    args = ap.parse_args()
    corpus, base = Path(args.corpus).resolve(), Path(args.baseline_src).resolve()
    times: dict[str, list[dict]] = {"today": [], "before": []}
    for r in range(args.rounds):
        order = [("today", ROOT / "src"), ("before", base)]
        for name, src in (order if r % 2 == 0 else order[::-1]):
            times[name].append(run(src, corpus))
            print(name, times[name][-1], file=sys.stderr)
    med = {name: {k: round(statistics.median(x[k] for x in xs), 3) for k in ("full", "noop")}
           for name, xs in times.items()}
    data = {"date": time.strftime("%Y-%m-%d"), "commit": commit(), "baseline": str(base),
            "corpus": corpus.name, "files": times["today"][0]["files"], "chunks": times["today"][0]["chunks"],
            "rounds": args.rounds, "median_seconds": med, "load": load_avg(),
            "ratio_full": round(med["today"]["full"] / med["before"]["full"], 3),
            "ratio_noop": round(med["today"]["noop"] / med["before"]["noop"], 3)}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "layout-cost.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(data, indent=1))


if __name__ == "__main__":
    main()
