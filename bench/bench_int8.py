"""The int8 recipes against the fp32 export on this machine's CPU: vectors, rankings, retrieval.

    python bench/bench_int8.py          # bench/results/int8.{md,json}, or int8-vnni.{md,json}
                                        # on a CPU with VNNI (the AVX2 record stays as it is)

ONNX Runtime's int8 matrix products depend on the CPU: with VNNI (AVX-512 VNNI or AVX-VNNI)
they are exact integer sums; on AVX2 alone they add pairs of u8 x s8 products into int16
(VPMADDUBSW), which saturates when the weights use their full range. So the same int8 graph
gives other vectors on other machines, and the recipe is checked on the CPU at hand, for each
recipe of ``embed/quantize.py`` that differs only in the weights' range (mm-keepffn2 and its
7-bit twin, codeseam's):

- cosine of every int8 vector to its fp32 vector, and for tests/test_embed_quality.py's ten
  queries over its five stdlib files the top-5 overlap, the share with the same best chunk and
  how far below fp32's best (fp32 scores) int8's best scores (the test's tolerance: 4 of 5 on
  average, every best the same or within 0.02);
- hybrid-ast MRR and R@5 on stdlib-dev (``codeseam eval``'s runner; each precision is its own
  eval index, under bench/.cache/int8).
"""

from __future__ import annotations

import json
import sys
import sysconfig
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

from _common import commit, cpu_info, load_avg, stamp  # noqa: E402
from codeseam.chunk import chunk_file  # noqa: E402
from codeseam.embed import clear_cache, quantize  # noqa: E402
from codeseam.embed.bundled import BundledEmbedder  # noqa: E402
from codeseam.eval.runner import run_eval  # noqa: E402
from codeseam.settings import load_settings  # noqa: E402
from test_embed_quality import FILES, NEAR_TIE, QUERIES, agreement  # noqa: E402

STDLIB = Path(sysconfig.get_paths()["stdlib"])
GOLDEN = ROOT.parent / "shared" / "golden" / "stdlib-dev.jsonl"
CACHE = ROOT / "bench" / ".cache" / "int8"
RESULTS = ROOT / "bench" / "results"
RECIPES = ["mm-keepffn2", "mm-keepffn2-r7"]


def cpu_flags() -> list[str]:
    return [f for f in cpu_info()["flags"] if f.startswith("avx") and ("vnni" in f or f in ("avx2", "avx512f"))]


def probe(models: Path) -> dict:
    texts = []
    for name in FILES:
        texts += [c.indexed_text for c in chunk_file(name, (STDLIB / name).read_text(encoding="utf-8"))]
    fp32 = BundledEmbedder(models, threads=2, precision="fp32")
    a = fp32.embed_documents(texts)
    out = {}
    for recipe in RECIPES:
        int8 = BundledEmbedder(models, threads=2, precision="int8", recipe=recipe)
        b = int8.embed_documents(texts)
        cos = (a * b).sum(axis=1)
        overlaps, same, gaps = agreement(a, b, fp32, int8)
        gap = max(gaps)
        out[recipe] = {"cos_min": float(cos.min()), "cos_mean": float(cos.mean()), "top5_overlap": float(np.mean(overlaps)),
                       "same_best": same / len(QUERIES), "worst_best_gap": gap, "texts": len(texts)}
    return out


def retrieval() -> dict:
    out = {}
    for arm, precision, recipe in [("fp32", "fp32", None), *((f"int8 {r}", "int8", r) for r in RECIPES)]:
        saved = quantize.RECIPE
        quantize.RECIPE = recipe or saved  # the embedder takes the module's recipe
        clear_cache()  # one embedder is cached per settings, and the recipe is not a setting
        try:
            settings = load_settings({"embedding_precision": precision, "data_dir": str(CACHE / "data")}, env={})
            res = run_eval(GOLDEN, STDLIB, variants=["hybrid-ast"], settings=settings, cache_dir=CACHE / "eval")
        finally:
            quantize.RECIPE = saved
            clear_cache()
        s = res.summary("hybrid-ast")["overall"]
        embedder = next(iter(res.indexes.values()))["embedder"]
        if recipe and not embedder.endswith(recipe):
            raise RuntimeError(f"the {arm} arm ran with {embedder}")
        out[arm] = {"mrr": s["mrr"], "recall@5": s["recall@5"], "embedder": embedder}
    return out


def has_vnni(flags: list[str]) -> bool:
    return any("vnni" in f for f in flags)


def main() -> None:
    start = load_avg()
    name = "int8-vnni" if has_vnni(cpu_flags()) else "int8"
    with tempfile.TemporaryDirectory() as tmp:
        vectors = probe(Path(tmp))
    ranks = retrieval()
    data = {"date": stamp(), "commit": commit(), "cpu_flags": cpu_flags(), "recipe": quantize.RECIPE,
            "load": [start, load_avg()], "vectors": vectors, "retrieval": ranks}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    base = ranks["fp32"]["mrr"]
    rows = [f"| fp32 | 1.0 / 1.0 | 5.0 | 100% | 0 | {base:.4f} | {ranks['fp32']['recall@5']:.4f} |"]
    for r in RECIPES:
        v, q = vectors[r], ranks[f"int8 {r}"]
        mark = " (codeseam's)" if r == quantize.RECIPE else ""
        rows.append(f"| int8 {r}{mark} | {v['cos_min']:.4f} / {v['cos_mean']:.4f} | {v['top5_overlap']:.1f} | "
                    f"{v['same_best']:.0%} | {v['worst_best_gap']:.4f} | {q['mrr']:.4f} ({q['mrr'] - base:+.4f}) | {q['recall@5']:.4f} |")
    md = [
        "# The int8 recipes on this machine's CPU", "",
        f"Written by `python bench/bench_int8.py` ({data['date']}, commit {data['commit']}); CPU flags "
        f"{', '.join(data['cpu_flags']) or 'none read'} "
        + ("(a `vnni` flag: ONNX Runtime's u8s8 kernels sum exactly, so the recipes differ here only by "
           "the weights' rounding; `int8.md` is the record of a CPU without one)."
           if has_vnni(data["cpu_flags"]) else
           "(no `vnni` flag: ONNX Runtime's u8s8 kernels sum pairs into int16 and can saturate; with one they "
           "cannot)."), "",
        f"Vectors: the {vectors[RECIPES[0]]['texts']} chunks of tests/test_embed_quality.py's five stdlib files and "
        f"its ten queries (its tolerance: cosine >= 0.99 min, 0.997 mean, top-5 overlap >= 4.0, int8's best chunk "
        f"fp32's best or within {NEAR_TIE} of it in fp32 scores; until 2026-12-03 the same best "
        "chunk for >= 90%). Retrieval: stdlib-dev, hybrid-ast. fp32 is the default, so the ranking figures of "
        "all three dev sets (rank-ablation.md) do not depend on the int8 recipe; repos-dev and semble-dev "
        "with int8: `int8.md`, run apart. Vectors at codeseam's batch size (8 since 2026-12-03, 32 before): "
        "int8 quantises activations per batch, so the batch moves them by a few thousandths.", "",
        "| arm | cosine to fp32 min / mean | top-5 overlap | same best | worst best gap | stdlib-dev MRR | R@5 |",
        "|---|---|---:|---:|---:|---:|---:|", *rows, ""]
    (RESULTS / f"{name}.md").write_text("\n".join(md), encoding="utf-8")
    print("\n".join(md))


if __name__ == "__main__":
    main()
