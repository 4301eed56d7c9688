"""ONNX export of a sentence-transformers model, a cache for it, and an ONNX Runtime encoder.

Why: importing sentence-transformers (torch) takes seconds, far over the cold-search
budget. The same model exported to ONNX loads with onnxruntime + ``tokenizers`` only.

- The export runs once (torch, legacy TorchScript exporter): the transformer plus the
  pooling that the model's ``1_Pooling/config.json`` names (mean, CLS or max), so the graph
  outputs the raw sentence vector. It is checked against the torch model on probe texts
  (cosine >= ``MIN_COSINE``) before it is published; a failed check is an export failure.
- The cache lives under ``<data_path>/models/onnx/<name>-<hash>-f<format>/`` where ``hash`` is the
  SHA-256 of the model files (memoised by size and mtime in ``models/hashes.json`` so a
  cold query does not re-read 90 MB). ``meta.json`` is written last: a folder without it
  is incomplete and ignored. Concurrent exporters are serialised with a lock file.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

log = logging.getLogger(__name__)

EXPORT_FORMAT = 2  # bump when the exported graph changes; old caches are then ignored
# 2: eager attention in the export (the int8 fast path fuses it; fp32 vectors unchanged)
# the int8 graph is model-int8-<recipe>.onnx, published with <that name>.json written last
# (like meta.json: no marker, no usable graph)
OPSET = 17
WEIGHTS = "model.onnx.data"
MIN_COSINE = 0.9999
POOLING_MODES = {"mean": "pooling_mode_mean_tokens", "cls": "pooling_mode_cls_token",
                 "max": "pooling_mode_max_tokens"}
PROBES = (
    "def add(a, b):\n    return a + b",
    "where is the retry delay computed?",
    "class JSONDecoder(object):\n    def raw_decode(self, s, idx=0):\n        return s[idx:]\n" * 30,
)


class OnnxExportError(Exception):
    """The model could not be exported (or the export does not match torch)."""


# -- model identity ------------------------------------------------------------------------
def model_files_hash(model_dir: Path, memo_path: Path | None = None) -> str:
    """SHA-256 over the model folder's files (relative path + content)."""
    files = sorted(p for p in model_dir.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    stamp = [[str(p.relative_to(model_dir)), p.stat().st_size, p.stat().st_mtime_ns] for p in files]
    memo = _read_json(memo_path) if memo_path else {}
    entry = memo.get(str(model_dir))
    if entry and entry.get("stamp") == stamp:
        return entry["sha256"]
    h = hashlib.sha256()
    for p in files:
        h.update(str(p.relative_to(model_dir)).encode() + b"\0")
        with p.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    digest = h.hexdigest()
    if memo_path:
        memo[str(model_dir)] = {"stamp": stamp, "sha256": digest}
        _write_json(memo_path, memo)
    return digest


def cache_dir(cache_root: Path, name: str, model_dir: Path) -> Path:
    digest = model_files_hash(model_dir, cache_root / "hashes.json")
    return cache_root / "onnx" / f"{name}-{digest[:16]}-f{EXPORT_FORMAT}"


def cached_onnx(cache_root: Path, name: str, model_dir: Path) -> Path | None:
    """The cached ONNX file for this model, or None when there is no complete export."""
    folder = cache_dir(cache_root, name, model_dir)
    return folder / "model.onnx" if (folder / "meta.json").is_file() else None


def ensure_onnx(cache_root: Path, name: str, model_dir: Path, *, threads: int = 0,
                precision: str = "fp32", recipe: str | None = None) -> Path:
    """The cached ONNX file (``precision`` fp32, or its derived int8 graph), exported or
    derived first if missing. Raises ``OnnxExportError``."""
    fp32 = _ensure_fp32(cache_root, name, model_dir, threads=threads)
    return fp32 if precision == "fp32" else ensure_int8(fp32, model_dir, threads=threads, recipe=recipe)


def ensure_int8(fp32: Path, model_dir: Path, *, threads: int = 0, recipe: str | None = None) -> Path:
    """The int8 graph derived from ``fp32`` (``quantize.derive_int8``), checked against it
    on the probe texts (cosine >= ``quantize.MIN_COSINE``) before it is published."""
    from . import quantize

    recipe = recipe or quantize.RECIPE
    folder = fp32.parent
    name = quantize.int8_name(recipe)
    marker = folder / (name + ".json")
    if marker.is_file():
        return folder / name
    with _locked(folder / ".lock"):
        if marker.is_file():
            return folder / name
        tmp = Path(tempfile.mkdtemp(dir=folder, prefix=".int8-"))
        try:
            try:
                quantize.derive_int8(fp32, tmp / name, recipe=recipe)
                cosine = _agreement(fp32, tmp / name, model_dir, threads)
            except Exception as exc:
                raise OnnxExportError(f"cannot derive the int8 graph: {type(exc).__name__}: {exc}") from exc
            if cosine < quantize.MIN_COSINE:
                raise OnnxExportError(f"the int8 graph disagrees with fp32 (cosine {cosine:.4f})")
            os.replace(tmp / name, folder / name)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        _write_json(marker, {"recipe": recipe, "min_cosine": cosine}, strict=True)
    return folder / name


def _agreement(a: Path, b: Path, model_dir: Path, threads: int) -> float:
    """Lowest cosine between the vectors of two ONNX graphs over the probe texts."""
    from .tokens import model_tokenizer

    tok = model_tokenizer(model_dir / "tokenizer.json", 256)
    va, vb = (OnnxEncoder(p, tok, threads=threads).encode(list(PROBES)) for p in (a, b))
    cos = np.sum(va * vb, axis=1) / (np.linalg.norm(va, axis=1) * np.linalg.norm(vb, axis=1))
    return float(cos.min())


def _ensure_fp32(cache_root: Path, name: str, model_dir: Path, *, threads: int = 0) -> Path:
    found = cached_onnx(cache_root, name, model_dir)
    if found:
        return found
    folder = cache_dir(cache_root, name, model_dir)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OnnxExportError(f"cannot create the model cache {folder}: {exc}") from exc
    with _locked(folder / ".lock"):
        if (folder / "meta.json").is_file():  # another process finished meanwhile
            return folder / "model.onnx"
        log.info("exporting %s to ONNX in %s (once per model version)", name, folder)
        meta = export_onnx(model_dir, folder, threads=threads)
        _write_json(folder / "meta.json", meta, strict=True)
    return folder / "model.onnx"


def discard(onnx_path: Path) -> None:
    """Forget a cached export (e.g. one that onnxruntime cannot load)."""
    for path in [*onnx_path.parent.glob("model-int8-*"), *(onnx_path.parent / n for n in
                 ("meta.json", "model.onnx", WEIGHTS))]:
        with contextlib.suppress(OSError):
            path.unlink()


# -- export --------------------------------------------------------------------------------
def pooling_mode(model_dir: Path) -> str:
    """The one pooling mode that the model's Pooling module config switches on."""
    modules = _read_json(model_dir / "modules.json") or []
    kinds = [m.get("type", "").rsplit(".", 1)[-1] for m in modules]
    extra = [k for k in kinds if k not in ("Transformer", "Pooling", "Normalize")]
    if extra:
        raise OnnxExportError(f"modules {extra} are not supported by the ONNX export")
    pool = next((m for m in modules if m.get("type", "").endswith("Pooling")), None)
    config = _read_json(model_dir / pool["path"] / "config.json") if pool else {}
    switched_on = [k for k, v in config.items() if k.startswith("pooling_mode") and v]
    modes = [m for m, key in POOLING_MODES.items() if key in switched_on]
    if len(switched_on) != 1 or len(modes) != 1:
        raise OnnxExportError(f"unsupported pooling config: {config}")
    return modes[0]


def export_onnx(model_dir: Path, folder: Path, *, threads: int = 0) -> dict[str, Any]:
    """Export the model at ``model_dir`` into ``folder`` (``model.onnx`` + its weights file),
    verified against torch before the files are moved into place. Returns the metadata."""
    mode = pooling_mode(model_dir)
    tmp = Path(tempfile.mkdtemp(dir=folder, prefix=".export-"))
    try:
        model = _export(model_dir, tmp / "model.onnx", mode, threads)
        try:
            cosine = _verify(model, tmp / "model.onnx", model_dir, threads)
        except OnnxExportError:
            raise
        except Exception as exc:
            raise OnnxExportError(f"exported model fails to run: {type(exc).__name__}: {exc}") from exc
        for name in (WEIGHTS, "model.onnx"):  # new inodes: a process using the old ones is safe
            os.replace(tmp / name, folder / name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    import torch

    return {"format": EXPORT_FORMAT, "opset": OPSET, "pooling": mode, "min_cosine": cosine,
            "torch": torch.__version__, "source": str(model_dir)}


def _export(model_dir: Path, dest: Path, mode: str, threads: int) -> Any:
    """torch.onnx.export of transformer + pooling; weights saved as external data (loads
    about twice as fast as one big protobuf). Returns the torch model for verification."""
    from .st import load_sentence_transformer

    try:
        import onnx
        import torch

        model = load_sentence_transformer(str(model_dir), threads=threads, local_files_only=True)
        transformer = model[0].auto_model
        # eager attention exports as plain MatMul/Softmax nodes, which ONNX Runtime's
        # transformers optimizer fuses into one Attention op (the int8 path needs that)
        if hasattr(transformer, "set_attn_implementation"):
            transformer.set_attn_implementation("eager")
        wrapper = _pooled_model_class()(transformer, mode).eval()
        single = dest.with_name("single.onnx")
        sample = tuple(torch.ones((2, 8), dtype=torch.long) for _ in _INPUTS)
        axes = {k: {0: "batch", 1: "seq"} for k in _INPUTS} | {"embedding": {0: "batch"}}
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(wrapper, sample, str(single), dynamo=False,
                              input_names=list(_INPUTS), output_names=["embedding"],
                              dynamic_axes=axes, opset_version=OPSET)
        onnx.save_model(onnx.load(str(single)), str(dest), save_as_external_data=True,
                        all_tensors_to_one_file=True, location=WEIGHTS, size_threshold=1024)
        single.unlink()
    except Exception as exc:
        raise OnnxExportError(f"torch.onnx.export failed: {type(exc).__name__}: {exc}") from exc
    return model


_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def _pooled_model_class() -> type:
    import torch

    class PooledModel(torch.nn.Module):
        def __init__(self, transformer: Any, mode: str) -> None:
            super().__init__()
            self.transformer, self.mode = transformer, mode

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            tokens = self.transformer(input_ids=input_ids, attention_mask=attention_mask,
                                      token_type_ids=token_type_ids)[0]
            if self.mode == "cls":
                return tokens[:, 0]
            mask = attention_mask.unsqueeze(-1).to(tokens.dtype)
            if self.mode == "max":
                return (tokens - (1.0 - mask) * 1e9).max(dim=1).values
            return (tokens * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)

    return PooledModel


def _verify(model: Any, onnx_path: Path, model_dir: Path, threads: int) -> float:
    """Lowest cosine between torch and ONNX vectors of the probe texts."""
    from .tokens import model_tokenizer

    tok = model_tokenizer(model_dir / "tokenizer.json", int(model.max_seq_length))
    ours = OnnxEncoder(onnx_path, tok, threads=threads).encode(list(PROBES))
    ref = model.encode(list(PROBES), convert_to_numpy=True, show_progress_bar=False,
                       normalize_embeddings=False)
    cos = np.sum(ours * ref, axis=1) / (np.linalg.norm(ours, axis=1) * np.linalg.norm(ref, axis=1))
    worst = float(cos.min())
    if worst < MIN_COSINE:
        raise OnnxExportError(f"ONNX export disagrees with torch (cosine {worst:.6f})")
    return worst


# -- inference -----------------------------------------------------------------------------
class OnnxEncoder:
    """Raw sentence vectors from an exported model with onnxruntime (no torch)."""

    def __init__(self, onnx_path: Path, tokenizer: Any, *, threads: int = 0,
                 spinning: bool = False) -> None:
        """``spinning``: let idle worker threads busy-wait. Off by default: on a small shared
        machine (and next to Milvus Lite while indexing) spinning measured slower."""
        import onnxruntime as ort

        from .base import resolve_threads

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = resolve_threads(threads)
        opts.inter_op_num_threads = 1
        opts.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
        opts.log_severity_level = 3
        self.path = Path(onnx_path)
        self.session = ort.InferenceSession(str(onnx_path), opts, providers=["CPUExecutionProvider"])
        self.inputs = [i.name for i in self.session.get_inputs()]
        self.tokenizer = tokenizer

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(list(texts))
        columns = {"input_ids": "ids", "attention_mask": "attention_mask", "token_type_ids": "type_ids"}
        feed = {name: np.array([getattr(e, columns[name]) for e in encodings], dtype=np.int64)
                for name in self.inputs}
        return self.session.run(None, feed)[0]


# -- small file helpers --------------------------------------------------------------------
def _read_json(path: Path | None) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8")) if path else {}
    except (OSError, ValueError):
        return {}


def _write_json(path: Path, obj: Any, strict: bool = False) -> None:
    """Write atomically (temp file + rename); failing to write a memo is not fatal."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(obj, f, indent=1)
        os.replace(tmp, path)
    except OSError as exc:
        if strict:
            raise OnnxExportError(f"cannot write {path}: {exc}") from exc
        log.debug("could not write %s: %s", path, exc)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
