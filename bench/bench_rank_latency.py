"""What the ranking stack costs a warm search (issue 20: within 10% of before), at 10k and 100k chunks.

    python bench/bench_rank_latency.py                 # 10k and 100k
    python bench/bench_rank_latency.py --sizes 10000 --rounds 3

The indexes are bench_search.py's (real stdlib code, stand-in vectors with the bundled model's
id, dimension and token counts; built once into ``--cache`` and reused). Every query of
stdlib-dev runs through ``query.retrieve`` in one warm process, interleaved, with:

- ``previous``: last round's default (candidates ``max(4k, 40)`` per signal, pieces expanded
  among the first k, none of the new levers: no word forms, no declarations fetched, no path
  match, coherence, saturation or legacy prior, the rare-word exemption on);
- ``default``: today's ``RetrieveOptions()`` (80 candidates per signal, the stack);

both at k = 8 (``RAG_K``'s default), with the real bundled model embedding the queries. It
reports p50/p95 per size and the ratio default / previous, and what a query's parts cost
(``query.analysis.language`` and ``with_forms`` alone).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from _common import commit, latency, load_avg  # noqa: E402
from bench_search import build, golden_queries, settings_for  # noqa: E402

from codeseam import api, embed  # noqa: E402

K = 8
PREVIOUS = dict(depth=max(4 * K, 40), expand_head=K, forms=False, strip_change=False, decl_weight=0.0,
                path_weight=0.0, coherence=0.0, saturation=1.0, legacy=1.0, rare_exempt=True)


def measure(settings, queries: list[str], rounds: int) -> dict:
    from codeseam.query.analysis import bm25_query, language, with_forms
    from codeseam.query.retrieve import RetrieveOptions, retrieve
    from codeseam.store import Filters

    embed.clear_cache()  # the real bundled model embeds the queries
    arms = {"previous": RetrieveOptions(**PREVIOUS), "default": RetrieveOptions()}
    with api.open_index(settings) as ix:
        filters = Filters(repos=ix._known_repos(None))

        def run(q: str, opts) -> object:
            return retrieve(ix.store, ix.embedder, ix.settings, q, filters, K, lock=ix.lock, options=opts)
        for q in queries[:10]:  # warm: caches, the model, the language model
            for opts in arms.values():
                run(q, opts)
        times: dict[str, list[float]] = {name: [] for name in arms}
        parts: dict[str, list[float]] = {"language": [], "with_forms": []}
        for _ in range(rounds):
            for q in queries:
                for name, opts in arms.items():  # interleaved: the machine's noise hits both alike
                    t = time.perf_counter()
                    run(q, opts)
                    times[name].append((time.perf_counter() - t) * 1000)
                t = time.perf_counter()
                language(q + " ")  # past the cache: a new string
                parts["language"].append((time.perf_counter() - t) * 1000)
                t = time.perf_counter()
                with_forms(bm25_query(q))
                parts["with_forms"].append((time.perf_counter() - t) * 1000)
    ratio_p50 = statistics.median(times["default"]) / statistics.median(times["previous"])
    per_query = [b / a for a, b in zip(times["previous"], times["default"])]
    return {"ms": {name: latency(xs) for name, xs in times.items()},
            "parts_ms": {name: latency(xs, 3) for name, xs in parts.items()},
            "ratio_p50": round(ratio_p50, 3), "ratio_median_per_query": round(statistics.median(per_query), 3)}


def render(data: dict) -> str:
    rows = ["| chunks | previous p50 | default p50 | previous p95 | default p95 | default / previous (p50) | "
            "median per-query ratio |", "|---|---|---|---|---|---|---|"]
    for size, r in data["sizes"].items():
        m = r["ms"]
        rows.append(f"| {r['rows']:,} | {m['previous']['p50']} ms | {m['default']['p50']} ms | {m['previous']['p95']} ms"
                    f" | {m['default']['p95']} ms | {r['ratio_p50']:.3f} | {r['ratio_median_per_query']:.3f} |")
    parts = next(iter(data["sizes"].values()))["parts_ms"]
    return "\n".join([
        "# The ranking stack's cost on a warm search", "",
        f"Run {data['date']}, commit {data['commit']}, load average {data['load']}. `python bench/bench_rank_latency.py "
        f"{data['args']}`. Every stdlib-dev query ({data['queries']}) x {data['rounds']} rounds, interleaved, k = {K}, "
        "in one warm process over bench_search.py's indexes (real stdlib code, stand-in vectors; the query embedded "
        "by the bundled model). `previous`: last round's default; `default`: today's (module doc).", "",
        *rows, "",
        f"Parts, per query: the language check {parts['language']['p50']} ms p50, the word forms "
        f"{parts['with_forms']['p50']} ms p50.", ""])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cache", default=str(ROOT / "bench" / ".cache" / "search"))
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    args = ap.parse_args()
    queries = golden_queries()
    data = {"date": time.strftime("%Y-%m-%d"), "commit": commit(), "args": " ".join(sys.argv[1:]),
            "queries": len(queries), "rounds": args.rounds, "sizes": {}}
    for size in [int(s) for s in args.sizes.split(",")]:
        info = build(Path(args.cache), size)
        settings = settings_for(Path(args.cache) / f"data-{size}")
        print(f"{size}: {info}", file=sys.stderr)
        data["sizes"][str(size)] = {"rows": info["rows"], **measure(settings, queries, args.rounds)}
    data["load"] = load_avg()
    out = Path(args.out)
    (out / "rank-latency.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    (out / "rank-latency.md").write_text(render(data), encoding="utf-8")
    print(render(data))


if __name__ == "__main__":
    main()
