"""What the ranking stack costs a warm search (issue 20: within 10% of before), at 10k and 100k chunks.

    git worktree add /tmp/before <commit before the stack>
    python bench/bench_rank_latency.py --baseline-src /tmp/before/src   # 10k and 100k

The indexes are bench_search.py's (real stdlib code, stand-in vectors with the bundled model's
id, dimension and token counts; built once into ``--cache`` and reused). Two warm worker
processes, each with its own copy of the index (Milvus Lite serves one process per file):
one runs this checkout's ``query.retrieve`` with today's defaults, the other the same function
of the build in ``--baseline-src`` with its defaults. Every stdlib-dev query goes to one, then
the other, alternately (the machine's noise hits both alike); each times its own call
(``retrieve`` at k = 8, ``RAG_K``'s default, the query embedded by the real bundled model).
Reports p50/p95 per size and the ratio today / before.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from _common import commit, latency, load_avg  # noqa: E402
from bench_search import build, golden_queries  # noqa: E402

K = 8
WORKER = r'''
import json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from bench_search import settings_for
from codeseam import api, embed
from codeseam.query.retrieve import retrieve
from codeseam.store import Filters
embed.clear_cache()
settings = settings_for(Path(sys.argv[1])).replace(freshness="off")
with api.open_index(settings) as ix:
    filters = Filters(repos=tuple(ix.store.repo_records()))
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        q = json.loads(line)
        t = time.perf_counter()
        res = retrieve(ix.store, ix.embedder, ix.settings, q, filters, int(sys.argv[3]), lock=ix.lock)
        ms = (time.perf_counter() - t) * 1000
        print(json.dumps({"ms": ms, "hits": len(res.hits)}), flush=True)
'''


class Worker:
    def __init__(self, src: Path, data: Path) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAG_")}
        env.update(PYTHONPATH=str(src), OMP_NUM_THREADS="1")
        self.p = subprocess.Popen([sys.executable, "-c", WORKER, str(data), str(ROOT / "bench"), str(K)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        assert json.loads(self.p.stdout.readline())["ready"]

    def ask(self, q: str) -> float:
        self.p.stdin.write(json.dumps(q) + "\n")
        self.p.stdin.flush()
        return json.loads(self.p.stdout.readline())["ms"]

    def close(self) -> None:
        self.p.stdin.close()
        self.p.wait(timeout=120)


def measure(data: Path, baseline_src: Path, queries: list[str], rounds: int) -> dict:
    copy = data.parent / f"{data.name}-baseline"
    if not copy.exists():
        shutil.copytree(data, copy)
        shutil.copy2(data.parent / f"{data.name}.toml", data.parent / f"{copy.name}.toml")
    today, before = Worker(ROOT / "src", data), Worker(baseline_src, copy)
    try:
        for q in queries[:10]:  # warm both
            today.ask(q)
            before.ask(q)
        times: dict[str, list[float]] = {"before": [], "today": []}
        for r in range(rounds):
            for i, q in enumerate(queries):
                first, second = (("today", today), ("before", before)) if (i + r) % 2 else \
                    (("before", before), ("today", today))
                for name, w in (first, second):
                    times[name].append(w.ask(q))
    finally:
        today.close()
        before.close()
    per_query = [b / a for a, b in zip(times["before"], times["today"], strict=True)]
    return {"ms": {name: latency(xs) for name, xs in times.items()},
            "ratio_p50": round(statistics.median(times["today"]) / statistics.median(times["before"]), 3),
            "ratio_median_per_query": round(statistics.median(per_query), 3)}


def render(data: dict) -> str:
    rows = ["| chunks | before p50 | today p50 | before p95 | today p95 | today / before (p50) | "
            "median per-query ratio |", "|---|---|---|---|---|---|---|"]
    for r in data["sizes"].values():
        m = r["ms"]
        rows.append(f"| {r['rows']:,} | {m['before']['p50']} ms | {m['today']['p50']} ms | {m['before']['p95']} ms"
                    f" | {m['today']['p95']} ms | {r['ratio_p50']:.3f} | {r['ratio_median_per_query']:.3f} |")
    return "\n".join([
        "# The ranking stack's cost on a warm search", "",
        f"Run {data['date']}, commit {data['commit']} against the build at `{data['baseline']}` "
        f"(commit {data['baseline_commit']}), load average {data['load']}. Every stdlib-dev query ({data['queries']}) "
        f"x {data['rounds']} rounds, k = {K}, two warm worker processes over copies of bench_search.py's indexes "
        "(real stdlib code, stand-in vectors; the query embedded by the bundled model), alternating query by query; "
        "each times its own `query.retrieve` call with its build's defaults (module doc).", "", *rows, ""])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline-src", required=True, help="the src/ folder of the build to compare with")
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cache", default=str(ROOT / "bench" / ".cache" / "search"))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    args = ap.parse_args()
    base = Path(args.baseline_src).resolve()
    base_commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=base, capture_output=True,
                                 text=True).stdout.strip() or "unknown"
    queries = golden_queries()
    data = {"date": time.strftime("%Y-%m-%d"), "commit": commit(), "baseline": str(base),
            "baseline_commit": base_commit, "queries": len(queries), "rounds": args.rounds, "sizes": {}}
    for size in [int(s) for s in args.sizes.split(",")]:
        info = build(Path(args.cache), size)
        print(f"{size}: {info}", file=sys.stderr)
        data["sizes"][str(size)] = {"rows": info["rows"],
                                    **measure(Path(args.cache) / f"data-{size}", base, queries, args.rounds)}
    data["load"] = load_avg()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "rank-latency.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    (out / "rank-latency.md").write_text(render(data), encoding="utf-8")
    print(render(data))


if __name__ == "__main__":
    main()
