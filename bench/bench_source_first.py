"""Vectors where they matter first (issue 21): the time until every *source* chunk of a first
index has its dense vector, with the backfill in role order (source, tests, docs, examples,
the rest: indexing/backfill.py) and in the earlier id order, side by side.

    python bench/bench_source_first.py --size 3000 [--threads 1] [--cache bench/.cache/scale]

The corpus is bench_scale's (copies of the stdlib's .py files, tests included, in a fixed
pseudo-random order until ``--size`` chunks), indexed for the first time with the real
bundled model by two processes at once, one per order (so both see the same machine load;
each has its own corpus copy and data folder, ``--threads`` ONNX threads each). The "id"
arm sets ``backfill.ROLE_ORDER = ()``: one tier of every pending row in id order, the exact
query the backfill made before roles were used. Each run records, from its start: the last
batch written (every file keyword-searchable), the moment no source row is pending (checked
after every backfill page), and the moment every row has its vector.

The 100k-chunk first index of bench_scale (2 shared cores: hours of embedding) is not run
here; see bench/results/scale.md for what was and was not measured. Results are merged into
scale.json (``source_first``) and scale.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "src"))


def run_arm(cache: Path, size: int, order: str, threads: int) -> dict:
    import bench_scale
    from bench_scale import fresh_corpus

    from codeseam import api, embed
    from codeseam.indexing import backfill

    if order == "id":
        backfill.ROLE_ORDER = ()
    data, corpus, settings = fresh_corpus(cache, size, f"sf-{order}-")
    settings = settings.replace(embedding_threads=threads)
    embed.clear_cache()
    out: dict = {"order": order, "threads": threads}
    with api.open_index(settings, create=True) as ix:
        out["embedder"] = ix.embedder.id
        ix.embedder.prepare()
        t0 = time.perf_counter()

        def progress(event: str, **f) -> None:
            now = round(time.perf_counter() - t0, 1)
            if event == "written":
                out["all_keyword_searchable_s"] = now
            elif event == "backfill":
                out["backfill_start_s"] = now
                out["rows"] = {name: ix.store.pending_count("corpus", **where) for name, where in backfill.tiers(
                    ("source", "test", "docs", "example"))}
            elif (event == "embedded" and "source_done_s" not in out
                  and ix.store.pending_count("corpus", roles=["source"]) == 0):
                out["source_done_s"] = round(time.perf_counter() - t0, 1)
                out["embedded_at_source_done"] = ix.store.dense_progress("corpus")["embedded"]

        report = ix.index(corpus, repo_id="corpus", progress=progress)
        out["all_dense_s"] = round(time.perf_counter() - t0, 1)
        out["chunks"] = report.chunks_written
    out["meta"] = bench_scale.meta()
    return out


def render(sf: dict) -> list[str]:
    arms = sf["arms"]
    a, b = arms["id"], arms["roles"]
    rows = [("every file keyword-searchable (last batch written)", "all_keyword_searchable_s"),
            ("backfill starts", "backfill_start_s"),
            ("**every source chunk has its vector**", "source_done_s"),
            ("every chunk has its vector", "all_dense_s")]
    out = ["", f"## Vectors where they matter first: time until every source chunk has its vector ({sf['size']} chunks)",
           "", f"Written by `python bench/bench_source_first.py --size {sf['size']}` ({sf['date']}, commit "
           f"{sf['commit']}, load at start {sf['load']}, at end {sf['load_end']}): a first index with the real model "
           f"(`{b['embedder']}`, {b['threads']} ONNX thread(s) each), both orders at once in two processes, same corpus. "
           f"Rows by role: {b['rows']}.", "",
           "| seconds from the start of the run | id order (before) | role order (after) | after / before |",
           "|---|---:|---:|---:|"]
    for label, key in rows:
        x, y = a.get(key), b.get(key)
        ratio = f"{y / x:.2f}" if x and y else ""
        out.append(f"| {label} | {x} | {y} | {ratio} |")
    out += ["", f"Chunks embedded when the last source chunk got its vector: id order {a.get('embedded_at_source_done')}, "
                f"role order {b.get('embedded_at_source_done')} of {b.get('chunks')}."]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=3000)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--cache", default=str(ROOT / "bench" / ".cache" / "scale"))
    ap.add_argument("--arm", choices=["id", "roles"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    if args.arm:
        print(json.dumps(run_arm(cache, args.size, args.arm, args.threads)), flush=True)
        return
    import bench_scale

    start = bench_scale.meta()
    procs = {arm: subprocess.Popen([sys.executable, __file__, "--arm", arm, "--size", str(args.size),
                                    "--threads", str(args.threads), "--cache", str(cache)],
                                   stdout=subprocess.PIPE, text=True) for arm in ("id", "roles")}
    arms = {}
    for arm, p in procs.items():
        stdout, _ = p.communicate()
        if p.returncode:
            raise SystemExit(f"the {arm} arm failed ({p.returncode})")
        arms[arm] = json.loads(stdout.strip().splitlines()[-1])
    sf = {"size": args.size, "date": start["date"], "commit": start["commit"], "load": start["load"],
          "load_end": [round(x, 2) for x in os.getloadavg()], "arms": arms}
    path = bench_scale.RESULTS / "scale.json"
    result = json.loads(path.read_text()) if path.exists() else {"sizes": {}}
    result["source_first"] = sf
    path.write_text(json.dumps(result, indent=1))
    (bench_scale.RESULTS / "scale.md").write_text(bench_scale.render(result))
    print("\n".join(render(sf)))


if __name__ == "__main__":
    main()
