"""Index throughput and no-op re-sync (issue 3 benchmarks).

1. Throughput, per corpus: the whole pipeline (`api.index` into a fresh Lite index with the
   bundled model) side by side with the raw embedder on the very same chunk texts, in the
   same run (raw, pipeline, raw again; the raw rate is the mean of the two). Reports files/s,
   chunks/s, the embedder's share of the pipeline's time and pipeline/raw.
   Corpora: `dev` = the 18 stdlib-dev files (../shared/golden/README.md); `stdlib` = the
   stdlib .py files without test folders (~734 files, 12 MB).
2. No-op re-sync on the whole stdlib (every .py file, tests included: ~1,790 files):
   index once, then re-run on the unchanged tree: in-process (a warm `Index` session, as a
   server runs it) and as a cold CLI process, both ways the CLI runs: opening the index
   itself (RAG_KEEPALIVE=0) and through the keep-alive server (its first call, which starts
   the server, timed apart). A no-op embeds nothing, so the index is built with the fake
   embedder here; the re-sync path (discover + stat + manifest) is the same.

    python bench/bench_index.py --corpora dev,stdlib --noop
Results: bench/results/index.md and index.json (merged with earlier corpora runs).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import commit, load_avg, settings_for, stamp

from codeseam import api

RESULTS = Path(__file__).parent / "results"
STDLIB = Path(sysconfig.get_paths()["stdlib"])
GOLDEN_README = Path(__file__).resolve().parents[2] / "shared" / "golden" / "README.md"
DEV_FILES = ["argparse.py", "base64.py", "bisect.py", "calendar.py", "configparser.py", "csv.py",
             "difflib.py", "email/utils.py", "fnmatch.py", "functools.py", "gzip.py", "heapq.py",
             "http/cookies.py", "pathlib.py", "shutil.py", "statistics.py", "tempfile.py",
             "urllib/parse.py"]


def _is_test(rel: Path) -> bool:
    return any(p in ("test", "tests", "idle_test") for p in rel.parts)


def stdlib_files(with_tests: bool) -> list[Path]:
    out = []
    for p in sorted(STDLIB.rglob("*.py")):
        rel = p.relative_to(STDLIB)
        if rel.parts[0] in ("site-packages", "__pycache__") or "__pycache__" in rel.parts:
            continue
        if not with_tests and _is_test(rel):
            continue
        out.append(rel)
    return out


def make_corpus(dest: Path, rels: list[Path]) -> Path:
    for rel in rels:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(STDLIB / rel, target)
    subprocess.run(["git", "init", "-q"], cwd=dest, check=True)
    return dest


def raw_embed_rate(embedder, texts: list[str]) -> float:
    t = time.perf_counter()
    embedder.embed_documents(texts)
    return len(texts) / (time.perf_counter() - t)


def throughput(name: str, rels: list[Path], work: Path, raw_sample: int = 0) -> dict:
    from codeseam.embed import prepare

    corpus = make_corpus(work / f"corpus-{name}", rels)
    mb = sum((corpus / r).stat().st_size for r in rels) / 1e6
    settings = settings_for(work / f"data-{name}")
    embedder = prepare(settings)  # ONNX export/load outside the timed parts
    # the chunk texts the pipeline will embed: run the pipeline's own stages without storing
    texts = chunk_texts(corpus, settings, embedder)
    if raw_sample and len(texts) > raw_sample:  # an evenly spread sample keeps the length mix
        step = len(texts) / raw_sample
        texts = [texts[int(i * step)] for i in range(raw_sample)]
    raw1 = raw_embed_rate(embedder, texts)
    t = time.perf_counter()
    report = api.index(corpus, settings=settings)
    wall = time.perf_counter() - t
    raw2 = raw_embed_rate(embedder, texts)
    raw = (raw1 + raw2) / 2
    pipe = report.chunks_embedded / wall
    return {
        "corpus": name, "files": report.files_indexed, "mb": round(mb, 2),
        "chunks": report.chunks_written, "embedded": report.chunks_embedded,
        "seconds": round(wall, 1), "files_per_s": round(report.files_indexed / wall, 2),
        "pipeline_chunks_per_s": round(pipe, 2), "raw_chunks_per_s": round(raw, 2),
        "raw_runs": [round(raw1, 2), round(raw2, 2)], "raw_texts": len(texts), "embed_seconds": round(report.embed_seconds, 1),
        "embed_share": round(report.embed_seconds / wall, 3), "pipeline_over_raw": round(pipe / raw, 3),
    }


def chunk_texts(root: Path, settings, embedder) -> list[str]:
    from codeseam.chunk import chunk_file
    from codeseam.discover import discover, read_text
    from codeseam.indexing.pipeline import make_budget
    from codeseam.scrub import scrub_text

    budget = make_budget(settings, embedder)
    out = []
    for f in discover(root).files:
        text, _ = read_text(f.abs_path)
        out.extend(c.indexed_text for c in chunk_file(f.path, scrub_text(text, path=f.path).text, budget=budget))
    return list(dict.fromkeys(out))


def noop(work: Path, reps: int) -> dict:
    rels = stdlib_files(with_tests=True)
    corpus = make_corpus(work / "corpus-whole", rels)
    settings = settings_for(work / "data-whole", embedding_backend="fake", embedding_dim=384)
    t = time.perf_counter()
    first = api.index(corpus, settings=settings)
    build = time.perf_counter() - t
    warm = []
    with api.open_index(settings) as ix:
        for _ in range(reps):
            t = time.perf_counter()
            r = ix.index(corpus)
            warm.append(time.perf_counter() - t)
            assert r.chunks_embedded == 0 and r.files_indexed == 0, r.summary()
    env = {**os.environ, "RAG_DATA_DIR": str(settings.data_path), "RAG_EMBEDDING_BACKEND": "fake",
           "RAG_EMBEDDING_DIM": "384", "RAG_CONFIG": str(settings.data_path / "none.toml")}
    cli = [sys.executable, "-m", "codeseam.surfaces.cli"]

    def timed(keepalive: str, *args: str) -> float:
        t = time.perf_counter()
        subprocess.run([*cli, *args], env={**env, "RAG_KEEPALIVE": keepalive}, check=True, capture_output=True)
        return time.perf_counter() - t

    cold = [timed("0", "index", str(corpus)) for _ in range(reps)]  # opens the index itself
    first_call = timed("600", "index", str(corpus))  # starts the keep-alive server, then goes through it
    served = [timed("600", "index", str(corpus)) for _ in range(reps)]
    timed("600", "stop")
    return {
        "files": first.files_indexed, "chunks": first.chunks_written, "build_seconds": round(build, 1),
        "warm_noop_seconds": [round(x, 3) for x in warm], "warm_noop_median": round(statistics.median(warm), 3),
        "cli_noop_seconds": [round(x, 3) for x in cold], "cli_noop_median": round(statistics.median(cold), 3),
        "cli_first_call_seconds": round(first_call, 3),
        "cli_server_noop_seconds": [round(x, 3) for x in served],
        "cli_server_noop_median": round(statistics.median(served), 3),
    }


def write(results: dict) -> None:
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / "index.json"
    old = json.loads(path.read_text()) if path.exists() else {}
    old.setdefault("throughput", {}).update({r["corpus"]: r for r in results.get("throughput", [])})
    if "noop" in results:
        old["noop"] = results["noop"]
    old["meta"] = results["meta"]
    path.write_text(json.dumps(old, indent=2) + "\n")
    (RESULTS / "index.md").write_text(render(old))


def render(data: dict) -> str:
    m = data["meta"]
    lines = ["# Index throughput and no-op re-sync", "",
             f"Written by `bench/bench_index.py` ({m['date']}, commit {m['commit']}; load average at start "
             f"{m['load']}; 2 shared cores, so compare within a row).", "",
             "## Throughput: the pipeline beside the raw embedder (same chunk texts, same run)", "",
             "| corpus | files | MB | chunks | seconds | files/s | pipeline chunks/s | raw embedder chunks/s "
             "| embedder share of time | pipeline / raw |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in data.get("throughput", {}).values():
        lines.append(f"| {r['corpus']} | {r['files']} | {r['mb']} | {r['chunks']} | {r['seconds']} | "
                     f"{r['files_per_s']} | {r['pipeline_chunks_per_s']} | {r['raw_chunks_per_s']} "
                     f"(runs {r['raw_runs']}) | {r['embed_share']:.1%} | **{r['pipeline_over_raw']:.2f}** |")
    lines += ["", "Goal: pipeline / raw >= 0.90. The raw rate is the mean of a run before and a run after "
              "the pipeline on the identical texts, or on an evenly spread sample of them (`raw_texts` in "
              "index.json); bundled all-MiniLM-L6-v2 on ONNX Runtime, 2 threads.", ""]
    if "noop" in data:
        n = data["noop"]
        lines += ["## No-op re-sync on the whole stdlib", "",
                  f"{n['files']} files, {n['chunks']} chunks (built in {n['build_seconds']} s with the fake "
                  "embedder: a no-op embeds nothing, so the model does not matter).", "",
                  "| | runs (s) | median (s) |", "|---|---|---|",
                  f"| in-process, warm session (`Index.index`) | {n['warm_noop_seconds']} | **{n['warm_noop_median']}** |",
                  f"| cold CLI process opening the index itself (`RAG_KEEPALIVE=0 codeseam index PATH`) | "
                  f"{n['cli_noop_seconds']} | {n['cli_noop_median']} |"]
        if "cli_server_noop_seconds" in n:
            lines += [f"| cold CLI process, first call: starts the keep-alive server, then re-syncs through it | "
                      f"[{n['cli_first_call_seconds']}] | {n['cli_first_call_seconds']} |",
                      f"| cold CLI process through the running keep-alive server (`codeseam index PATH`) | "
                      f"{n['cli_server_noop_seconds']} | **{n['cli_server_noop_median']}** |"]
        lines += ["", "Goal: <= 1 s."]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpora", default="dev", help="comma list of: dev, stdlib ('' for none)")
    ap.add_argument("--noop", action="store_true", help="also measure the no-op re-sync")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--raw-sample", type=int, default=0,
                    help="measure the raw embedder on an evenly spread sample of N chunk texts (0: all)")
    args = ap.parse_args()
    results: dict = {"meta": {"date": stamp(), "commit": commit(), "load": load_avg()}, "throughput": []}
    with tempfile.TemporaryDirectory(prefix="codeseam-bench-") as tmp:
        work = Path(tmp)
        for name in [c for c in args.corpora.split(",") if c]:
            rels = [Path(p) for p in DEV_FILES] if name == "dev" else stdlib_files(with_tests=False)
            r = throughput(name, rels, work, args.raw_sample)
            print(json.dumps(r), file=sys.stderr)
            results["throughput"].append(r)
        if args.noop:
            results["noop"] = noop(work, args.reps)
            print(json.dumps(results["noop"]), file=sys.stderr)
    write(results)
    print((RESULTS / "index.md").read_text())


if __name__ == "__main__":
    main()
