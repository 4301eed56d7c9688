"""An OpenAI-compatible ``/v1/embeddings`` backend (OpenAI, Ollama, vLLM, TEI ...).

``base_url`` is the API root including ``/v1`` (Ollama: ``http://localhost:11434/v1``).
Texts go in batches of ``batch_size``; each request has a timeout; transport errors,
timeouts, 408/409/429 and 5xx are retried with exponential backoff (tenacity), and when
the retries run out, or on any other HTTP error, an ``EmbeddingError`` says what failed.
The vector size is ``dim`` when given, else learnt from the first response; a response
of another size is an error. The API key is sent as a bearer token and never logged.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from ..errors import ConfigError, EmbeddingError
from .base import BaseEmbedder

log = logging.getLogger(__name__)

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
DEFAULT_BASE_URL = "http://localhost:11434/v1"  # Ollama


class _Retryable(Exception):
    """A failure worth another try (kept internal; surfaces as EmbeddingError)."""


class OpenAIEmbedder(BaseEmbedder):
    max_tokens = None  # the server's tokenizer is unknown here

    def __init__(self, base_url: str, model: str, *, api_key: str = "", batch_size: int = 32,
                 timeout: float = 60.0, dim: int = 0, attempts: int = 4,
                 backoff: float = 0.5) -> None:
        super().__init__()
        if not model:
            raise ConfigError("the openai embedding backend needs a model name",
                                 hint="set RAG_EMBEDDING_MODEL (e.g. nomic-embed-text for "
                                      "Ollama, text-embedding-3-small for OpenAI)")
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.model = model
        self.id = f"openai:{self.base_url}#{model}"
        self.batch_size = batch_size
        self.timeout = timeout
        self.attempts = max(1, attempts)
        self.backoff = backoff
        self._dim = dim
        self._api_key = api_key
        self._client: Any = None

    @property
    def dim(self) -> int:  # type: ignore[override]
        """Known from settings or a previous response; else one probe request finds it."""
        if not self._dim:
            self._embed_batch(["dimension probe"])
        return self._dim

    def _http(self) -> Any:
        if self._client is None:
            import httpx

            headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
            self._client = httpx.Client(base_url=self.base_url, headers=headers,
                                        timeout=self.timeout)
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        from tenacity import (RetryError, retry_if_exception_type, stop_after_attempt,
                              wait_exponential)
        from tenacity import Retrying

        retrying = Retrying(retry=retry_if_exception_type(_Retryable),
                            stop=stop_after_attempt(self.attempts),
                            wait=wait_exponential(multiplier=self.backoff, max=30),
                            reraise=False)
        try:
            body = retrying(self._post, texts)
        except RetryError as exc:
            cause = exc.last_attempt.exception()
            raise EmbeddingError(
                f"embedding request to {self.base_url} failed after {self.attempts} attempt(s): "
                f"{cause}", hint="check that the server is up and RAG_EMBEDDING_BASE_URL is right",
            ) from None
        return self._vectors(body, len(texts))

    def _post(self, texts: list[str]) -> Any:
        import httpx

        try:
            resp = self._http().post("/embeddings", json={"model": self.model, "input": texts})
        except httpx.TransportError as exc:  # connect errors, timeouts, resets
            log.debug("embedding request failed: %r", exc)
            raise _Retryable(f"{type(exc).__name__}: {exc}") from None
        if resp.status_code in RETRY_STATUS:
            raise _Retryable(f"HTTP {resp.status_code}: {_error_text(resp)}")
        if resp.status_code != 200:
            raise EmbeddingError(
                f"embedding server {self.base_url} answered HTTP {resp.status_code}: "
                f"{_error_text(resp)}",
                hint="check RAG_EMBEDDING_MODEL and RAG_EMBEDDING_API_KEY",
            )
        try:
            return resp.json()
        except ValueError:
            raise EmbeddingError(f"embedding server {self.base_url} sent a body that is not JSON") from None

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
            raise EmbeddingError(f"{self.id} returned {arr.shape[1]}-d vectors, expected {self._dim}",
                                 hint="fix RAG_EMBEDDING_DIM or rebuild the index for this model")
        return arr


def _error_text(resp: Any) -> str:
    try:
        err = resp.json().get("error")
        return str(err.get("message") if isinstance(err, dict) else err)[:300]
    except (ValueError, AttributeError):
        return resp.text[:300]
