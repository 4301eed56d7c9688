"""The bundled model's ONNX graph, a cache for it, and an ONNX Runtime encoder (no torch).

Why ONNX: importing sentence-transformers (torch) takes seconds, far over the cold-search
budget, and torch is a multi-GB install. The graph runs with onnxruntime + ``tokenizers``.

- The graph is written once from the model folder, without torch: ``bert_onnx`` reads the
  weights (``safetensors``' numpy API) and ``config.json`` and writes the BERT encoder plus
  the pooling that ``1_Pooling/config.json`` names (mean, CLS or max), so the graph outputs
  the raw sentence vector. Before it is published it is checked against the torch vectors of
  the probe texts kept in ``minilm_reference.json`` (cosine >= ``MIN_COSINE``) when the model
  files are the ones those vectors were made from; a failed check is a build failure. (Until
  format 2 the graph was exported from torch; the graph written here gives the same vectors,
  fp32 and int8: tests/test_embed_bundled.py compares it with torch wherever torch is.)
- The cache lives under ``<data_path>/models/onnx/<name>-<hash>-f<format>/`` where ``hash`` is the
  SHA-256 of the model files (memoised by size and mtime in ``models/hashes.json`` so a
  cold query does not re-read 90 MB). ``meta.json`` is written last: a folder without it
  is incomplete and ignored. Concurrent builders are serialised with a lock file.
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
from pathlib import Path
from typing import Any
from collections.abc import Iterator, Sequence

import numpy as np

log = logging.getLogger(__name__)

EXPORT_FORMAT = 3  # bump when the written graph changes; old caches are then ignored
# 2: eager attention in the export (the int8 fast path fuses it; fp32 vectors unchanged)
# 3: written by bert_onnx without torch (fp32 and int8 vectors identical to format 2's)
# the int8 graph is model-int8-<recipe>.onnx, published with <that name>.json written last
# (like meta.json: no marker, no usable graph)
WEIGHTS = "model.onnx.data"
MIN_COSINE = 0.9999
POOLING_MODES = {"mean": "pooling_mode_mean_tokens", "cls": "pooling_mode_cls_token",
                 "max": "pooling_mode_max_tokens"}
PROBES = (
    "def add(a, b):\n    return a + b",
    "where is the retry delay computed?",
    "class JSONDecoder(object):\n    def raw_decode(self, s, idx=0):\n        return s[idx:]\n" * 30,
)


REFERENCE = Path(__file__).with_name("minilm_reference.json")


class OnnxExportError(Exception):
    """The graph could not be written (or it does not give the reference vectors)."""


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
        import importlib.util

        if importlib.util.find_spec("sympy") is None:  # ONNX Runtime's fusions infer shapes with it
            raise OnnxExportError("deriving it once needs sympy, which is not installed: "
                                  "pip install 'codeseam[int8]'")
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
    """Write the graph of the model at ``model_dir`` into ``folder`` (``model.onnx`` + its
    weights file), checked against the reference vectors before the files are moved into
    place. Returns the metadata."""
    from . import bert_onnx

    mode = pooling_mode(model_dir)
    tmp = Path(tempfile.mkdtemp(dir=folder, prefix=".export-"))
    try:
        try:
            import onnx

            config, weights = bert_onnx.load_bert(model_dir)
            model = bert_onnx.bert_graph(config, weights, mode)
            onnx.save_model(model, str(tmp / "model.onnx"), save_as_external_data=True,
                            all_tensors_to_one_file=True, location=WEIGHTS, size_threshold=1024)
        except Exception as exc:
            raise OnnxExportError(f"cannot write the ONNX graph: {type(exc).__name__}: {exc}") from exc
        try:
            cosine = _verify(tmp / "model.onnx", model_dir, threads)
        except OnnxExportError:
            raise
        except Exception as exc:
            raise OnnxExportError(f"the ONNX graph fails to run: {type(exc).__name__}: {exc}") from exc
        for name in (WEIGHTS, "model.onnx"):  # new inodes: a process using the old ones is safe
            os.replace(tmp / name, folder / name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"format": EXPORT_FORMAT, "opset": bert_onnx.OPSET, "pooling": mode, "builder": "bert_onnx",
            "min_cosine": cosine, "source": str(model_dir)}


def reference_vectors(model_dir: Path) -> np.ndarray | None:
    """The torch vectors of ``PROBES`` for this model (``minilm_reference.json``), or None
    when the model files are not the ones they were made from."""
    ref = _read_json(REFERENCE)
    if not ref or ref.get("probes") != list(PROBES):
        return None
    if model_files_hash(model_dir) != ref.get("model_sha256"):
        return None
    return np.asarray(ref["vectors"], dtype=np.float32)


def _verify(onnx_path: Path, model_dir: Path, threads: int) -> float | None:
    """Lowest cosine between the graph's and the reference vectors of the probe texts; None
    (with a log line) for a model without reference vectors."""
    from .tokens import model_tokenizer

    ref = reference_vectors(model_dir)
    tok = model_tokenizer(model_dir / "tokenizer.json", _max_seq(model_dir))
    ours = OnnxEncoder(onnx_path, tok, threads=threads).encode(list(PROBES))
    if ref is None:
        log.info("no reference vectors for the model in %s: the ONNX graph is not checked", model_dir)
        return None
    cos = np.sum(ours * ref, axis=1) / (np.linalg.norm(ours, axis=1) * np.linalg.norm(ref, axis=1))
    worst = float(cos.min())
    if worst < MIN_COSINE:
        raise OnnxExportError(f"the ONNX graph disagrees with the reference vectors (cosine {worst:.6f})")
    return worst


def _max_seq(model_dir: Path) -> int:
    return int((_read_json(model_dir / "sentence_bert_config.json") or {}).get("max_seq_length", 256))


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
