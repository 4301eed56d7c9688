"""The bundled model's fast path: an int8 graph derived from the fp32 ONNX export.

Measured on this machine (bench/bench_embed_speed.py, bench/results/embed-speed.md): the
fp32 graph spends its time in the transformer's matrix products; ONNX Runtime's own graph
optimisation already fuses most of what its transformers optimizer adds (fused fp32: about
1.06x); padding waste with length-sorted batches is a few percent and tokenizing 1-3 % of the
time. What pays is int8 weights, chosen so that retrieval does not move:

- (deriving needs sympy, the ``int8`` extra: the optimizer's shape inference uses it; without
  it the SkipLayerNormalization fusion does not happen and the vectors would differ)
- the graph is first fused by ONNX Runtime's transformers optimizer (``Attention``,
  ``EmbedLayerNormalization``, ``SkipLayerNormalization``, ``BiasGelu``), which needs the
  classic eager-attention pattern (``bert_onnx`` writes the graph that way);
- then the weights of the ``MatMul`` nodes are quantised dynamically (int8, **per output
  channel**, in 7 bits so that AVX2-only CPUs do not saturate: ``RECIPES``; activations
  quantised per batch at run time): the attention output projection and the feed-forward
  up-projection of every layer;
- the feed-forward down-projections (``layer.N/output/dense``) stay fp32: their inputs (after
  GELU) carry the outliers that per-tensor activation quantisation handles worst; so do the
  fused attention's Q/K/V weights, the word embeddings (a lookup) and the layer norms.

Recipes (``RECIPES``) were compared on the stdlib-dev golden set against fp32 (hybrid MRR
0.7264, on a CPU with VNNI): mm-keepffn2 0.7276, with Q/K/V quantised too 0.7095, with only the up-projection 0.717
(rank flips between near-equal candidates: the MRR difference is not monotone in how much is
quantised), so the recipe is judged by retrieval, not by cosine alone. Naive dynamic
quantisation of the whole graph (per-tensor weights) ran 1.7x faster but moved vectors to a
cosine of 0.89-0.92 from fp32; this recipe keeps the lowest cosine over corpus texts near
0.997 (checked at export against ``MIN_COSINE`` on probe texts, and in
tests/test_embed_quality.py over real code with a stated tolerance). Its 7-bit twin is the one
used since an AVX2-only CPU broke that tolerance (``RECIPES``; bench/bench_int8.py).
"""

from __future__ import annotations

import contextlib
import logging
import re
from pathlib import Path
from collections.abc import Iterator

log = logging.getLogger(__name__)

# name -> (op types quantised, node-name patterns kept fp32, weights in 7 bits). Weights per
# output channel, int8. "7 bits" is ONNX Runtime's reduce_range: on x86 CPUs without VNNI
# (AVX2 only) its u8s8 kernels multiply-add pairs into int16 (VPMADDUBSW), which saturates
# with full-range weights; with weights in [-64, 63] no pair can. Measured on an AVX2-only
# AMD EPYC (bench/results/int8.md): mm-keepffn2 cosine to fp32 0.9946 min / 0.9969
# mean and the same best chunk for 8 of tests/test_embed_quality.py's 10 queries, where a
# VNNI machine had given 0.997 / 0.998; mm-keepffn2-r7 0.9965 / 0.9981 and 10 of 10.
RECIPES: dict[str, tuple[tuple[str, ...], tuple[str, ...], bool]] = {
    "mm-attn-keepffn2": (("MatMul", "Attention"), (r"/layer\.\d+/output/dense/MatMul$",), False),
    "mm-keepffn2": (("MatMul",), (r"/layer\.\d+/output/dense/MatMul$",), False),
    "mm-keepffn2-r7": (("MatMul",), (r"/layer\.\d+/output/dense/MatMul$",), True),
    "mm-attn": (("MatMul", "Attention"), (), False),
    "ffn1": (("MatMul",), (r"/layer\.\d+/output/dense/MatMul$", r"/attention/output/dense/MatMul$"), False),
}
RECIPE = "mm-keepffn2-r7"  # the one codeseam uses; a change of recipe needs a new embedder id
MIN_COSINE = 0.99  # lowest cosine to the fp32 vectors over the probe texts, checked at export
NUM_HEADS, HIDDEN = 12, 384  # all-MiniLM-L6-v2


def derive_int8(fp32_path: Path, dest: Path, *, recipe: str = RECIPE, num_heads: int = NUM_HEADS,
                hidden: int = HIDDEN) -> Path:
    """Write the int8 graph of ``fp32_path`` to ``dest`` (one self-contained file)."""

    op_types, kept, seven_bits = RECIPES[recipe]
    fused = dest.with_name(dest.stem + ".fused.onnx")
    with _quiet_root_logger():
        return _derive(fp32_path, dest, fused, op_types, kept, seven_bits, recipe, num_heads, hidden)


def _derive(fp32_path: Path, dest: Path, fused: Path, op_types, kept, seven_bits: bool, recipe: str,
            num_heads: int, hidden: int) -> Path:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers.optimizer import optimize_model

    try:
        # opt_level 0: the fusions only, without ONNX Runtime's pre-pass, which (in onnxruntime
        # 1.32) imports torch; the graph of bert_onnx needs no constant folding to fuse
        model = optimize_model(str(fp32_path), model_type="bert", num_heads=num_heads, hidden_size=hidden,
                               opt_level=0)
        stats = model.get_fused_operator_statistics()
        if not stats.get("Attention"):
            raise RuntimeError(f"the attention was not fused ({stats}); the fast path needs it")
        model.save_model_to_file(str(fused))
        graph = onnx.load(str(fused), load_external_data=False).graph
        keep = [n.name for n in graph.node if any(re.search(k, n.name) for k in kept)]
        quantize_dynamic(str(fused), str(dest), weight_type=QuantType.QInt8, per_channel=True,
                         reduce_range=seven_bits, op_types_to_quantize=list(op_types), nodes_to_exclude=keep,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    finally:
        for p in fused.parent.glob(fused.name + "*"):
            p.unlink()
    log.info("derived the int8 graph %s (recipe %s; %d nodes kept fp32)", dest, recipe, len(keep))
    return dest


@contextlib.contextmanager
def _quiet_root_logger() -> Iterator[None]:
    """ONNX Runtime's quantizer warns through the root logger (``logging.warning``), which
    would also install a stderr handler on it for good: give root a NullHandler meanwhile
    and drop the quantizer's advice, so library code prints nothing."""
    root = logging.getLogger()
    guard = logging.NullHandler()
    advice = _DropRootWarnings()
    root.addHandler(guard)
    root.addFilter(advice)
    try:
        yield
    finally:
        root.removeFilter(advice)
        root.removeHandler(guard)


class _DropRootWarnings(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.name != "root"


def int8_name(recipe: str = RECIPE) -> str:
    return f"model-int8-{recipe}.onnx"
