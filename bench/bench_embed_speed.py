"""Where the bundled model's embedding time goes, and the fast path (issue 16).

    python bench/bench_embed_speed.py [--chunks 256] [--rounds 3]

On the chunks codeseam really embeds (``indexed_text`` of the stdlib-dev corpus, cut by the
AST chunker to the model's 254 tokens), side by side in one run, each arm over the same
texts in the same order, arms interleaved round by round:

- tokenizing (``tokenizers``, once for the length sort and once for the model) against the
  model run, and the padding left by length-sorted batches (pool and batch size);
- ONNX Runtime graph optimisation levels (basic, all) on the fp32 export;
- the fp32 graph fused by ONNX Runtime's transformers optimizer;
- the int8 recipes of ``embed/quantize.py`` (which nodes are quantised), and batch sizes 8
  and 64 (against 32) on codeseam's recipe;
- the two precisions codeseam offers (``RAG_EMBEDDING_PRECISION``): fp32 and the int8 graph
  of ``embed/quantize.py``, through ``BundledEmbedder.embed_documents`` (what indexing calls),
  with the cosine of every int8 vector to its fp32 vector;
- for reference, naive dynamic int8 of the whole graph (per-tensor weights).

Both wall-clock and CPU seconds (this process, all ONNX Runtime threads) are recorded: on a
shared 2-core machine wall time swings with the neighbours' load, CPU time much less. The
speed-up figure is the ratio of medians, per measure. Results: bench/results/embed-speed.md
and embed-speed.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import sysconfig
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from _common import commit  # noqa: E402
RESULTS = ROOT / "bench" / "results"
CACHE = ROOT / "bench" / ".cache" / "models"
STDLIB = Path(sysconfig.get_paths()["stdlib"])

from bench_embed import CORPUS  # noqa: E402


def corpus_chunks(embedder) -> list[str]:
    from codeseam.chunk import chunk_file
    from codeseam.indexing.pipeline import make_budget
    from codeseam.settings import load_settings

    budget = make_budget(load_settings({}, env={"RAG_CONFIG": os.devnull}), embedder)
    texts = []
    for name in CORPUS:
        texts += [c.indexed_text for c in chunk_file(name, (STDLIB / name).read_text(encoding="utf-8"), budget=budget)]
    return texts


def timed(fn) -> tuple[float, float, object]:
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w, time.process_time() - c, out


def session(path: Path, level: str = "all", threads: int = 2):
    import onnxruntime as ort

    o = ort.SessionOptions()
    o.intra_op_num_threads, o.inter_op_num_threads = threads, 1
    o.add_session_config_entry("session.intra_op.allow_spinning", "0")
    o.log_severity_level = 3
    o.graph_optimization_level = {"basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
                                  "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
                                  "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL}[level]
    return ort.InferenceSession(str(path), o, providers=["CPUExecutionProvider"])


def feeds(tok, texts: list[str], batch: int) -> list[dict]:
    """Length-sorted batches, each padded to its longest text (what BaseEmbedder does)."""
    lengths = [sum(e.attention_mask) for e in tok.encode_batch(texts)]
    order = sorted(range(len(texts)), key=lambda i: -lengths[i])
    out = []
    for i in range(0, len(order), batch):
        enc = tok.encode_batch([texts[j] for j in order[i:i + batch]])
        out.append({"input_ids": np.array([e.ids for e in enc], dtype=np.int64),
                    "attention_mask": np.array([e.attention_mask for e in enc], dtype=np.int64),
                    "token_type_ids": np.array([e.type_ids for e in enc], dtype=np.int64)})
    return out


def run_graph(sess, batches) -> np.ndarray:
    names = [i.name for i in sess.get_inputs()]
    return np.concatenate([sess.run(None, {n: b[n] for n in names})[0] for b in batches])


def padding(lengths: list[int], pool: int, batch: int) -> float:
    real = padded = 0
    for i in range(0, len(lengths), pool):
        ls = sorted(lengths[i:i + pool], reverse=True)
        for j in range(0, len(ls), batch):
            padded += ls[j] * len(ls[j:j + batch])
            real += sum(ls[j:j + batch])
    return 1 - real / padded


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chunks", type=int, default=96)
    ap.add_argument("--batches", type=lambda v: [int(x) for x in v.split(",") if x], default=[8, 64],
                    help="batch sizes tried on the int8 graph besides 32")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--end-to-end", action="store_true",
                    help="only the codeseam embed_documents arms (fp32/int8, batch 32/8); writes embed-speed-e2e.*")
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers.optimizer import optimize_model

    from codeseam.embed.bundled import BundledEmbedder

    load0 = os.getloadavg()
    # batches of 32, as every earlier record of this page (codeseam's default is 8 now: embed-batch.md)
    fp32 = BundledEmbedder(CACHE, threads=2, precision="fp32", batch_size=32)
    int8 = BundledEmbedder(CACHE, threads=2, precision="int8", batch_size=32)
    fp32_path, int8_path = fp32.prepare(), int8.prepare()
    all_texts = corpus_chunks(fp32)
    rng = np.random.default_rng(16)
    texts = [all_texts[i] for i in sorted(rng.choice(len(all_texts), min(args.chunks, len(all_texts)), replace=False))]
    tok = fp32._tokenizer()

    # one-off graphs for the comparison arms
    work = CACHE.parent / "embed-speed"
    work.mkdir(parents=True, exist_ok=True)
    fused = work / "fp32-fused.onnx"
    if not fused.exists():
        optimize_model(str(fp32_path), model_type="bert", num_heads=12, hidden_size=384,
                       opt_level=1).save_model_to_file(str(fused))
    naive = work / "int8-naive.onnx"
    if not naive.exists():
        quantize_dynamic(str(fp32_path), str(naive), weight_type=QuantType.QInt8)

    lengths = [sum(e.attention_mask) for e in tok.encode_batch(all_texts)]
    b32 = feeds(tok, texts, 32)
    sessions = {"fp32 opt=basic": session(fp32_path, "basic"), "fp32 opt=all": session(fp32_path, "all"),
                "fp32 fused (transformers optimizer)": session(fused),
                "int8 naive (per-tensor, whole graph)": session(naive)}
    from codeseam.embed import quantize
    from codeseam.embed.onnx_cache import ensure_int8

    for recipe in quantize.RECIPES:
        path = ensure_int8(fp32_path, fp32.model_dir, threads=2, recipe=recipe)
        sessions[f"int8 recipe {recipe}" + (" (codeseam's)" if recipe == quantize.RECIPE else "")] = session(path)
    int8_sess = session(int8_path)
    batch_arms = {f"codeseam's int8, batch {b}": feeds(tok, texts, b) for b in args.batches}
    arms = {**{k: (lambda s=s: run_graph(s, b32)) for k, s in sessions.items()},
            **{k: (lambda f=f: run_graph(int8_sess, f)) for k, f in batch_arms.items()},
            "codeseam fp32 (embed_documents)": lambda: fp32.embed_documents(texts),
            "codeseam int8 (embed_documents)": lambda: int8.embed_documents(texts)}
    fp32_b8 = BundledEmbedder(CACHE, threads=2, precision="fp32", batch_size=8)
    int8_b8 = BundledEmbedder(CACHE, threads=2, precision="int8", batch_size=8)
    arms["codeseam fp32, batch 8 (embed_documents)"] = lambda: fp32_b8.embed_documents(texts)
    arms["codeseam int8, batch 8 (embed_documents)"] = lambda: int8_b8.embed_documents(texts)
    if args.end_to_end:
        arms = {k: v for k, v in arms.items() if k.startswith("codeseam ")}
    times: dict[str, list[tuple[float, float]]] = {k: [] for k in arms}
    outs: dict[str, np.ndarray] = {}
    tok_t = []
    for r in range(args.rounds):
        w, c, _ = timed(lambda: (tok.encode_batch(texts), tok.encode_batch(texts)))
        tok_t.append((w, c))
        for name, fn in arms.items():
            w, c, out = timed(fn)
            times[name].append((w, c))
            outs.setdefault(name, np.asarray(out))
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True)

    ref = unit(outs["codeseam fp32 (embed_documents)"])
    ref_sorted = unit(outs["fp32 opt=all"]) if "fp32 opt=all" in outs else ref

    def cos(name: str) -> dict:
        v = unit(outs[name])
        c = (v * (ref if name.startswith("codeseam ") else ref_sorted)).sum(1)
        return {"min": round(float(c.min()), 5), "mean": round(float(c.mean()), 5)}

    base = "codeseam fp32 (embed_documents)"
    med = {k: (statistics.median(w for w, _ in t), statistics.median(c for _, c in t)) for k, t in times.items()}
    rows = {k: {"chunks_per_s_wall": round(len(texts) / m[0], 2), "chunks_per_s_cpu": round(len(texts) / m[1], 2),
                "runs_wall_s": [round(w, 2) for w, _ in times[k]], "cosine_to_fp32": cos(k)} for k, m in med.items()}
    for k in rows:
        ref_arm = base if k.startswith("codeseam ") else "fp32 opt=all"
        rows[k]["speedup_wall"] = round(med[ref_arm][0] / med[k][0], 2)
        rows[k]["speedup_cpu"] = round(med[ref_arm][1] / med[k][1], 2)
    tok_share = statistics.median(c for _, c in tok_t) / med[base][1]
    result = {
        "meta": {"date": time.strftime("%Y-%m-%d %H:%M"), "commit": commit(),
                 "load_start": [round(x, 2) for x in load0], "load_end": [round(x, 2) for x in os.getloadavg()],
                 "onnxruntime": ort.__version__, "chunks": len(texts), "rounds": args.rounds, "threads": 2},
        "tokens": {"mean": round(float(np.mean(lengths)), 1), "max": int(max(lengths)), "corpus_chunks": len(all_texts)},
        "padding_waste": {f"pool {p}, batch {b}": round(padding(lengths, p, b), 4)
                          for p in (256, 512, len(all_texts)) for b in (8, 32)},
        "tokenize_share_of_fp32": round(tok_share, 4),
        "arms": rows,
    }
    RESULTS.mkdir(exist_ok=True)
    name = "embed-speed-e2e" if args.end_to_end else "embed-speed"
    (RESULTS / f"{name}.json").write_text(json.dumps(result, indent=1))
    (RESULTS / f"{name}.md").write_text(render(result))
    print(render(result))


def render(r: dict) -> str:
    m = r["meta"]
    out = ["# Embedding speed: where the bundled model's time goes, and the int8 fast path", "",
           f"Written by `python bench/bench_embed_speed.py` ({m['date']}, commit {m['commit']}; onnxruntime "
           f"{m['onnxruntime']}, 2 threads; load average at start {m['load_start']}, at end {m['load_end']}: "
           "a shared 2-core machine, so read the ratios, measured side by side).", "",
           f"Texts: {m['chunks']} of the {r['tokens']['corpus_chunks']} chunks (`indexed_text`) of the stdlib-dev "
           f"corpus, {r['tokens']['mean']} word pieces on average, {r['tokens']['max']} at most; every arm embeds "
           f"the same texts, arms interleaved, {m['rounds']} rounds, median. CPU = this process's CPU seconds "
           "(all ONNX Runtime threads); wall swings with the neighbours' load.", "",
           "| arm | chunks/s (CPU) | chunks/s (wall) | speed-up CPU | speed-up wall | cosine to fp32 min / mean |",
           "|---|---:|---:|---:|---:|---|"]
    for k, a in r["arms"].items():
        out.append(f"| {k} | {a['chunks_per_s_cpu']} | {a['chunks_per_s_wall']} | {a['speedup_cpu']}x | "
                   f"{a['speedup_wall']}x | {a['cosine_to_fp32']['min']} / {a['cosine_to_fp32']['mean']} |")
    out += ["", "Speed-ups of the `codeseam ...` rows are against `codeseam fp32 (embed_documents)` (the "
            "indexing path end to end: token count, length sort, batches of 32, the model); the others "
            "against `fp32 opt=all` (the model alone, same batches).", "",
            f"Tokenizing (twice, as the embedder does: once to sort and count, once for the model) costs "
            f"{100 * r['tokenize_share_of_fp32']:.1f}% of the fp32 embedding time.", "",
            "Padding left by length-sorted batches (share of padded positions), over the whole corpus:", "",
            "| pool, batch | waste |", "|---|---:|"]
    out += [f"| {k} | {100 * v:.1f}% |" for k, v in r["padding_waste"].items()]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
