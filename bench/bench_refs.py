"""References (issue 23): latency on a 10k-chunk index, where candidates come from, and the oracle.

Index: the five repos-dev repositories (../shared/corpora/{clap,flask,got,mocha,testify}), plus
stdlib files (a fixed pseudo-random part, repo ``stdlib``) until the index holds ``--chunks``
chunk rows. Built with the fake embedder: refs never embeds (BM25 and the files decide), and
the chunk rows are what the chunker cuts. Kept in ``--cache`` and reused while current.

Per repository (the stdlib part too), the 30 definitions the oracle test samples
(``tests/support/refs_oracle.py``),
each looked up warm, in-process (``Index.refs(name, repo=...)``, the refresher's stat scan
included, as a one-shot command does), side by side in one run:

- ``index``: candidate files from the index (the chunks BM25 finds the name's word in), then
  the current files parsed; the default;
- ``scan``: every indexed file of the repo read (and parsed where it holds the name).

For each: p50/p95 latency, files read, and the same references (an ``index`` miss would be a
file BM25 did not list); and precision by line / recall against the oracle (ripgrep -w less the
grammar's comment and string nodes).

    python bench/bench_refs.py [--cache DIR] [--chunks 10000] [--rounds 3]
Results: bench/results/refs.md and refs.json.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codeseam import api  # noqa: E402
from codeseam.settings import load_settings  # noqa: E402
from tests.support.refs_oracle import Oracle, code_files, sample_definitions, score  # noqa: E402

RESULTS = ROOT / "bench" / "results"
CORPORA = ROOT.parent / "shared" / "corpora"
REPOS = ("clap", "flask", "got", "mocha", "testify")
STDLIB = Path(sysconfig.get_paths()["stdlib"])


def settings_for(data: Path):
    data.mkdir(parents=True, exist_ok=True)
    cfg = data.parent / f"{data.name}.toml"
    cfg.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAG_")}
    env.update(RAG_DATA_DIR=str(data), RAG_CONFIG=str(cfg))
    return load_settings({"keepalive": 0, "embedding_backend": "fake", "embedding_model": "fake:384"}, env=env)


def chunk_total(settings) -> dict[str, int]:
    try:
        return {r.repo_id: r.chunks for r in api.status(settings=settings).repos}
    except Exception:  # noqa: BLE001 - no index yet, or another meta: rebuild
        return {}


def build(cache: Path, want: int) -> dict:
    data = cache / "data"
    settings = settings_for(data)
    have = chunk_total(settings)
    if set(REPOS) <= set(have) and sum(have.values()) >= want:
        return {"settings": settings, "chunks": have, "reused": True}
    shutil.rmtree(cache, ignore_errors=True)
    settings = settings_for(data)
    t = time.perf_counter()
    for repo in REPOS:
        api.index(CORPORA / repo, repo_id=repo, settings=settings)
    have = chunk_total(settings)
    missing = want - sum(have.values())
    if missing > 0:  # stdlib files until the index holds `want` chunks
        rels = sorted((p.relative_to(STDLIB) for p in STDLIB.rglob("*.py")
                       if "site-packages" not in p.parts and "__pycache__" not in p.parts),
                      key=lambda r: hashlib.sha1(str(r).encode()).hexdigest())
        dest = cache / "stdlib"
        for rel in rels[:max(20, missing // 12)]:
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(STDLIB / rel, dest / rel)
        api.index(dest, repo_id="stdlib", settings=settings)
        extra = iter(rels[max(20, missing // 12):])
        while sum(chunk_total(settings).values()) < want:
            for rel in [next(extra) for _ in range(20)]:
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(STDLIB / rel, dest / rel)
            api.index(dest, repo_id="stdlib", settings=settings)
    return {"settings": settings, "chunks": chunk_total(settings), "reused": False,
            "build_seconds": round(time.perf_counter() - t, 1)}


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cache", type=Path, default=Path("/tmp/codeseam-bench-refs"))
    ap.add_argument("--chunks", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    load = [round(x, 2) for x in os.getloadavg()]
    built = build(args.cache, args.chunks)
    settings = built["settings"]
    samples = {}
    roots = {**{r: CORPORA / r for r in REPOS}, "stdlib": args.cache / "stdlib"}
    for repo, root in roots.items():
        if root.is_dir():
            files = code_files(root)
            samples[repo] = (files, sample_definitions(files, 30))
    times = {"index": [], "scan": []}
    per_repo = {}
    with api.Index(settings) as ix:
        import codeseam.references.find as find_mod

        original = find_mod.find_references

        def with_source(source):
            def run(*a, **kw):
                return original(*a, **kw, candidates=source)
            return run

        for repo, (files, names) in samples.items():
            oracle = Oracle(roots[repo], files)
            stats = {"names": len(names), "false_lines": 0, "matched": 0, "oracle": 0, "same": 0,
                     "files_read": {"index": [], "scan": []}, "refs": 0}
            for name in names:
                got = {}
                for rnd in range(args.rounds):
                    for source in (("index", "scan") if rnd % 2 == 0 else ("scan", "index")):
                        find_mod.find_references = with_source(source)
                        try:
                            t = time.perf_counter()
                            result = ix.refs(name, repo=repo)
                            times[source].append((time.perf_counter() - t) * 1000)
                        finally:
                            find_mod.find_references = original
                        got[source] = result
                a, b = got["index"], got["scan"]
                stats["same"] += a.refs == b.refs
                stats["files_read"]["index"].append(a.files_read)
                stats["files_read"]["scan"].append(b.files_read)
                stats["refs"] += len(a.refs)
                found = collections.Counter((r.path, r.line) for r in a.refs)
                false, hit, n = score(found, oracle.counts(name))
                stats["false_lines"] += len(false)
                stats["matched"] += hit
                stats["oracle"] += n
            stats["recall"] = round(stats["matched"] / max(1, stats["oracle"]), 4)
            stats["files_read"] = {k: round(statistics.mean(v), 1) for k, v in stats["files_read"].items()}
            per_repo[repo] = stats
            print(repo, stats, flush=True)
        indexed_files = {r: len(ix.store.file_entries(r)) for r in samples}
    summary = {k: {"p50": round(statistics.median(v), 2), "p95": round(pct(v, 0.95), 2), "n": len(v)}
               for k, v in times.items()}
    out = {"chunks": built["chunks"], "chunks_total": sum(built["chunks"].values()), "reused": built["reused"],
           "build_seconds": built.get("build_seconds"), "latency_ms": summary, "per_repo": per_repo,
           "indexed_files": indexed_files,
           "run": {"commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                            text=True).stdout.strip(),
                   "date": time.strftime("%Y-%m-%d %H:%M"), "load_start": load,
                   "load_end": [round(x, 2) for x in os.getloadavg()], "rounds": args.rounds}}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "refs.json").write_text(json.dumps(out, indent=2) + "\n")
    (RESULTS / "refs.md").write_text(render(out))
    print(render(out))


def render(out: dict) -> str:
    run = out["run"]
    lines = [
        "# References: latency, candidate source, oracle", "",
        f"Written by `python bench/bench_refs.py` ({run['date']}, commit {run['commit']}; load average at start "
        f"{run['load_start']}, at end {run['load_end']}; 2 shared cores: compare within a table).", "",
        f"Index: {out['chunks_total']:,} chunk rows (" + ", ".join(f"{r} {n:,}" for r, n in sorted(out['chunks'].items()))
        + "), Milvus Lite, fake embedder (refs never embeds). Queries: 30 definitions sampled per repository "
        f"(the oracle test's sample), each `Index.refs(name, repo=...)` warm in-process, {run['rounds']} "
        "rounds, the two candidate sources interleaved; the refresher's stat scan is included (a one-shot "
        "command's freshness).", "",
        "| candidates | p50 ms | p95 ms | n |", "|---|---:|---:|---:|",
    ]
    for k, v in out["latency_ms"].items():
        label = "index: BM25 over the name's word, then the files (default)" if k == "index" else \
            "scan: every indexed file of the repo"
        lines.append(f"| {label} | **{v['p50']}** | {v['p95']} | {v['n']} |" if k == "index"
                     else f"| {label} | {v['p50']} | {v['p95']} | {v['n']} |")
    lines += ["", "| repo | indexed files | files read (index) | files read (scan) | same refs | references | "
              "false lines | recall vs oracle |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for repo, s in out["per_repo"].items():
        lines.append(f"| {repo} | {out['indexed_files'][repo]} | {s['files_read']['index']} | {s['files_read']['scan']} | "
                     f"{s['same']}/{s['names']} | {s['refs']} | {s['false_lines']} | {s['recall']} |")
    lines += ["", "Files read: candidate files read from disk per query (those that hold the name are parsed). Same refs: queries whose references were identical "
              "with both sources. False lines: returned lines where the oracle has no code occurrence "
              "(precision by line = 1 - false/returned).", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
