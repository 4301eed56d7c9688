"""Raw embedder benchmark: the bundled model's two engines side by side, in one run.

    python bench/bench_embed.py [--chunks 192] [--rounds 2] [--cold 3] [--threads 2]

Measures, on real code (the stdlib-dev corpus of ../shared/golden/README.md, cut into
line windows that fit the model's 254 content tokens):

- document throughput (chunks/s) of the ONNX and torch engines (and ONNX with spinning
  worker threads), alternating over the same chunks so that machine noise hits all;
- cold start to the first query vector for each engine, as fresh subprocesses
  (process start to vector, and the whole process wall time);
- cosine agreement between ONNX and torch vectors over every chunk.

Writes bench/results/embed.json and bench/results/embed.md. Timings on a shared machine
are noisy: read the ratios, measured side by side, rather than absolute numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
CACHE = ROOT / "bench" / ".cache" / "models"
STDLIB = Path(sysconfig.get_paths()["stdlib"])
CORPUS = ["argparse.py", "base64.py", "bisect.py", "calendar.py", "configparser.py", "csv.py",
          "difflib.py", "email/utils.py", "fnmatch.py", "functools.py", "gzip.py", "heapq.py",
          "http/cookies.py", "pathlib.py", "shutil.py", "statistics.py", "tempfile.py",
          "urllib/parse.py"]
QUERY = "where is the retry delay computed?"


def line_windows(counter, max_tokens: int, max_lines: int = 40) -> list[str]:
    """Consecutive line windows covering every corpus file, each within max_tokens."""
    chunks = []
    for name in CORPUS:
        lines = (STDLIB / name).read_text(encoding="utf-8").split("\n")
        start = 0
        while start < len(lines):
            end = min(len(lines), start + max_lines)
            while end > start + 1 and counter("\n".join(lines[start:end])) > max_tokens:
                end -= 1
            text = "\n".join(lines[start:end])
            if text.strip():
                chunks.append(text)
            start = end
    return chunks


def throughput(emb, chunks: list[str]) -> float:
    start = time.perf_counter()
    emb.embed_documents(chunks)
    return len(chunks) / (time.perf_counter() - start)


COLD = """
import time, sys
from pathlib import Path
from codeseam.embed.bundled import BundledEmbedder
v = BundledEmbedder(Path({cache!r}), threads={threads}, query_engine={engine!r}).embed_query({q!r})
print(time.time(), len(v), "torch" in sys.modules)
"""


def cold_start(engine: str, threads: int) -> dict:
    code = COLD.format(cache=str(CACHE), threads=threads, engine=engine, q=QUERY)
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    t0 = time.time()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env)
    wall = time.time() - t0
    stamp, dim, torch_loaded = out.stdout.split()
    return {"to_vector_s": float(stamp) - t0, "wall_s": wall, "dim": int(dim),
            "torch_imported": torch_loaded == "True"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chunks", type=int, default=192, help="chunks per throughput run")
    ap.add_argument("--rounds", type=int, default=2, help="throughput runs per engine")
    ap.add_argument("--cold", type=int, default=3, help="cold-start runs per engine")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--report-only", action="store_true",
                    help="rewrite embed.md from the recorded embed.json without measuring")
    args = ap.parse_args()
    if args.report_only:
        (RESULTS / "embed.md").write_text(report(json.loads((RESULTS / "embed.json").read_text())))
        return
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.path.insert(0, str(ROOT / "src"))
    from codeseam.embed.bundled import DOCUMENT_ENGINE, BundledEmbedder

    load_start = os.getloadavg()
    onnx = BundledEmbedder(CACHE, threads=args.threads, batch_size=args.batch,
                           document_engine="onnx")
    t = time.perf_counter()
    onnx.prepare()
    prepare_s = time.perf_counter() - t
    everything = line_windows(onnx.count_tokens, onnx.max_tokens)
    step = max(1, len(everything) // args.chunks)
    chunks = everything[::step][: args.chunks]
    tokens = onnx.count_tokens_many(chunks)
    torch_ = BundledEmbedder(CACHE, threads=args.threads, batch_size=args.batch,
                             document_engine="torch", query_engine="torch")
    t = time.perf_counter()
    torch_.embed_documents(chunks[:2])  # load torch + model outside the timed runs
    torch_load_s = time.perf_counter() - t
    onnx.embed_documents(chunks[:2])

    spin = BundledEmbedder(CACHE, threads=args.threads, batch_size=args.batch,
                           document_engine="onnx", onnx_spinning=True)
    spin.embed_documents(chunks[:2])
    engines = {"onnx": onnx, "torch": torch_, "onnx-spinning": spin}
    rates: dict[str, list[float]] = {name: [] for name in engines}
    for _ in range(args.rounds):
        for name, emb in engines.items():
            rates[name].append(throughput(emb, chunks))
    a, b = onnx.embed_documents(chunks), torch_.embed_documents(chunks)
    cos = np.sum(a * b, axis=1)

    cold: dict[str, list[dict]] = {"onnx": [], "torch": []}
    for _ in range(args.cold):
        for engine in ("onnx", "torch"):
            cold[engine].append(cold_start(engine, args.threads))

    result = {
        "machine": {"cpus": os.cpu_count(), "affinity": len(os.sched_getaffinity(0)),
                    "python": platform.python_version(), "loadavg_start": load_start,
                    "loadavg_end": os.getloadavg()},
        "versions": _versions(),
        "settings": {"threads": args.threads, "batch": args.batch, "rounds": args.rounds,
                     "cold_runs": args.cold},
        "corpus": {"files": len(CORPUS), "all_windows": len(everything), "chunks": len(chunks),
                   "tokens_mean": statistics.mean(tokens), "tokens_max": max(tokens),
                   "over_limit": sum(n > onnx.max_tokens for n in tokens)},
        "prepare_s": prepare_s, "torch_load_s": torch_load_s,
        "throughput_chunks_per_s": rates,
        "throughput_median": {k: statistics.median(v) for k, v in rates.items()},
        "cosine_onnx_vs_torch": {"min": float(cos.min()), "mean": float(cos.mean())},
        "cold_start": cold,
        "cold_start_median_to_vector_s": {k: statistics.median(r["to_vector_s"] for r in v)
                                          for k, v in cold.items()},
    }
    med = result["throughput_median"]
    result["document_engine"] = DOCUMENT_ENGINE
    result["onnx_over_torch_throughput"] = med["onnx"] / med["torch"]
    result["onnx_over_onnx_spinning_throughput"] = med["onnx"] / med["onnx-spinning"]
    cm = result["cold_start_median_to_vector_s"]
    result["torch_over_onnx_cold_start"] = cm["torch"] / cm["onnx"]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "embed.json").write_text(json.dumps(result, indent=2) + "\n")
    (RESULTS / "embed.md").write_text(report(result))
    print(report(result))


def _versions() -> dict:
    from importlib.metadata import version

    return {p: version(p) for p in ("torch", "onnxruntime", "sentence-transformers",
                                    "tokenizers")}


def report(r: dict) -> str:
    tp, med, cold = r["throughput_chunks_per_s"], r["throughput_median"], r["cold_start"]
    cm = r["cold_start_median_to_vector_s"]
    c = r["corpus"]
    lines = [
        "# Embedder benchmark: bundled all-MiniLM-L6-v2, ONNX Runtime vs torch",
        "",
        f"Generated by `python bench/bench_embed.py` (threads={r['settings']['threads']}, "
        f"batch={r['settings']['batch']}). Machine: {r['machine']['affinity']} usable cores, "
        f"load average {r['machine']['loadavg_start'][0]:.2f} at start, "
        f"{r['machine']['loadavg_end'][0]:.2f} at end (the machine is shared: compare ratios).",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in r["versions"].items()) + ".",
        "",
        f"Chunks: {c['chunks']} of the {c['all_windows']} line windows (<= 40 lines, cut to "
        f"fit 254 tokens) of the {c['files']} stdlib-dev corpus files; "
        f"{c['tokens_mean']:.0f} tokens on average, {c['tokens_max']} at most, "
        f"{c['over_limit']} over the limit.",
        "",
        "## Document throughput (same chunks, engines alternated, batch sorted by length)",
        "",
        "| engine | runs (chunks/s) | median chunks/s |",
        "|---|---|---|",
    ]
    for engine in tp:
        runs = ", ".join(f"{x:.1f}" for x in tp[engine])
        lines.append(f"| {engine} | {runs} | {med[engine]:.1f} |")
    lines += [
        "",
        f"ONNX / torch throughput: **{r['onnx_over_torch_throughput']:.2f}x**. "
        f"ONNX (idle threads sleep, the default) / ONNX with spinning threads: "
        f"**{r['onnx_over_onnx_spinning_throughput']:.2f}x**.",
        "",
        f"Faster document engine in this run: **{max(('onnx', 'torch'), key=med.get)}**; "
        f"codeseam uses `{r.get('document_engine', '?')}` for bulk indexing "
        "(`DOCUMENT_ENGINE` in src/codeseam/embed/bundled.py) and ONNX for queries.",
        "",
        "## Cold start to the first query vector (fresh process each run)",
        "",
        "| engine | process start to vector (s) | process wall (s) | median to vector (s) |",
        "|---|---|---|---|",
    ]
    for engine in ("onnx", "torch"):
        to_v = ", ".join(f"{x['to_vector_s']:.2f}" for x in cold[engine])
        wall = ", ".join(f"{x['wall_s']:.2f}" for x in cold[engine])
        lines.append(f"| {engine} | {to_v} | {wall} | {cm[engine]:.2f} |")
    torch_free = all(not x["torch_imported"] for x in cold["onnx"])
    lines += [
        "",
        f"torch / ONNX cold start: **{r['torch_over_onnx_cold_start']:.1f}x**. "
        f"The ONNX process imports torch: {'no' if torch_free else 'YES'}.",
        "",
        "## Agreement",
        "",
        f"Cosine between ONNX and torch vectors over the {c['chunks']} chunks: "
        f"min {r['cosine_onnx_vs_torch']['min']:.7f}, mean {r['cosine_onnx_vs_torch']['mean']:.7f} "
        f"(largest deviation from 1: {1 - r['cosine_onnx_vs_torch']['min']:.1e}).",
        "",
        f"One-time costs in this run: ONNX prepare (export if missing, else cache check + load) "
        f"{r['prepare_s']:.2f} s; torch engine load {r['torch_load_s']:.2f} s.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
