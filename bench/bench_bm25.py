"""BM25's k1 and b on all three dev sets, per repository, hybrid and BM25 alone (issue 20).

    python bench/bench_bm25.py                                  # the grid below, ~2 min a setting
    python bench/bench_bm25.py --grid 1.2:0.75,1.6:0.75 --sets semble

k1 (term-frequency saturation) and b (length normalisation) are build parameters of the
sparse index (``store.schema.BM25_PARAMS``), not search parameters. For each setting this
patches ``BM25_PARAMS`` in this process and runs ``bench_rank.run_sets`` over the cached eval
indexes: the eval opens each index for writing, so ``store.setup.ensure_bm25`` rebuilds its
sparse index with the setting from the stored text (nothing is re-embedded). At the end the
caches are rebuilt with the shipped parameters again. Deltas are against Milvus' own defaults
(k1 1.2, b 0.75: what codeseam built before), per set and per repository (won/lost).
Writes ``bm25-params.{md,json}``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from bench_rank import CACHE, SETS, git_commit, run_sets, scores  # noqa: E402

from codeseam.eval.report import _table  # noqa: E402
from codeseam.store import schema, setup  # noqa: E402

VARIANTS = ("hybrid-ast", "bm25-ast")
BASE = (1.2, 0.75)  # Milvus' defaults: what every index was built with before BM25_PARAMS
GRID = (BASE, (0.9, 0.75), (1.6, 0.75), (2.0, 0.75), (2.5, 0.75), (1.2, 0.5), (1.2, 0.9))
HEADLINE = {"stdlib": "mrr", "repos": "mrr@10", "semble": "ndcg@10"}


def measure(grid, sets, cache: Path) -> dict:
    shipped = dict(schema.BM25_PARAMS)
    out = {}
    try:
        for k1, b in grid:
            schema.BM25_PARAMS.update({"bm25_k1": k1, "bm25_b": b})
            t = time.perf_counter()
            res = run_sets(list(VARIANTS), sets, cache)
            out[f"{k1}:{b}"] = {"k1": k1, "b": b, **{v: scores(res, v) for v in VARIANTS}}
            print(f"k1 {k1} b {b}: {time.perf_counter() - t:.0f} s", file=sys.stderr, flush=True)
    finally:
        schema.BM25_PARAMS.clear()
        schema.BM25_PARAMS.update(shipped)
        restore(cache)
    return out


def restore(cache: Path) -> None:
    """Every cached eval index's sparse index with the shipped parameters again."""
    from pymilvus import MilvusClient

    from codeseam.store.client import MilvusCalls

    for db in sorted(cache.rglob("eval.db")):
        client = MilvusClient(str(db))
        try:
            m = MilvusCalls(client, retry_times=0, where=str(db))
            for name in client.list_collections():
                if not name.endswith(("_files", "_meta")):
                    setup.ensure_bm25(m, schema.Names.of(name))
        finally:
            client.close()


def head(s: dict, st: str) -> float | None:
    return s[st][HEADLINE[st]] if st in s else None


def won_lost(base: dict, other: dict, st: str) -> str:
    if st == "stdlib" or st not in base:
        return ""
    pb, po = base[st]["per_repo"], other[st]["per_repo"]
    return f"{sum(po[r] > pb[r] + 5e-4 for r in pb)}/{sum(po[r] < pb[r] - 5e-4 for r in pb)}"


def report(data: dict, sets, commit: str) -> str:
    base = data[f"{BASE[0]}:{BASE[1]}"]
    lines = [
        "# BM25 parameters on all three dev sets (issue 20)", "",
        f"Run {time.strftime('%Y-%m-%d')}, commit {commit}, `bench/bench_bm25.py`: every cached eval index's "
        "sparse index rebuilt with each k1 and b (build parameters of Milvus' BM25 index), the default "
        "(`hybrid-ast`) and BM25 alone (`bm25-ast`) with the whole ranking stack. Headlines: stdlib-dev MRR, "
        "repos-dev commit MRR@10, semble-dev NDCG@10 (mean of repository means). Δ against Milvus' defaults "
        f"(k1 {BASE[0]}, b {BASE[1]}); won/lost: repositories whose score rose/fell by more than 0.0005.", "",
    ]
    for v in VARIANTS:
        rows = []
        for d in data.values():
            row = [str(d["k1"]), str(d["b"])]
            for st in sets:
                x, b0 = head(d[v], st), head(base[v], st)
                row += [f"{x:.3f}", f"{x - b0:+.3f}"] + ([won_lost(base[v], d[v], st)] if st != "stdlib" else [])
            rows.append(row)
        cols = ["k1", "b"]
        for st in sets:
            cols += [st, "Δ"] + (["won/lost"] if st != "stdlib" else [])
        lines += [f"## {v}", "", _table(cols, rows), ""]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--grid", help="k1:b pairs, comma separated (the first Milvus' defaults are added)")
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--cache", default=str(CACHE))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    args = ap.parse_args()
    grid = list(GRID)
    if args.grid:
        grid = [BASE] + [(float(k), float(b)) for k, b in (p.split(":") for p in args.grid.split(","))
                         if (float(k), float(b)) != BASE]
    sets = tuple(s.strip() for s in args.sets.split(","))
    commit = git_commit()
    data = measure(grid, sets, Path(args.cache))
    out = Path(args.out)
    (out / "bm25-params.json").write_text(json.dumps({"commit": commit, "date": time.strftime("%Y-%m-%d"),
                                                      "shipped": schema.BM25_PARAMS, "settings": data}, indent=1) + "\n")
    text = report(data, sets, commit)
    (out / "bm25-params.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
