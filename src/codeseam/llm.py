"""The chat client for OpenAI-compatible APIs (Ollama, OpenAI, vLLM, llama.cpp, LM Studio).

Used by ``ask`` (answer.py) and by enrichment. Settings: ``RAG_LLM_BASE_URL`` (default:
Ollama at ``http://localhost:11434/v1``), ``RAG_LLM_MODEL`` (required), ``RAG_LLM_API_KEY``
(sent as a bearer token when set), ``RAG_LLM_TIMEOUT`` (seconds per read),
``RAG_LLM_DEADLINE`` (seconds one call may take in all: request, retries and the whole
stream) and ``RAG_LLM_MAX_REPLY_BYTES`` (the largest reply read).

Requests, retries and errors are ``openai_http.OpenAIClient``'s, the one client that the
embedding backend uses too. Failure policy, decided there once:

- no model, or a base URL that is not ``http(s)://``  -> ``LLMUnavailableError`` naming the setting
- connection refused, DNS failure                      -> ``LLMUnavailableError`` naming
  ``RAG_LLM_BASE_URL`` and the URL tried (not retried: nothing is listening)
- timeouts, dropped connections, HTTP 429 and 5xx      -> retried ``max_retries`` times with
  exponential backoff (``Retry-After`` honoured, capped), then ``LLMResponseError``
- other HTTP 4xx, malformed JSON, malformed or truncated SSE streams -> ``LLMResponseError``
  at once

A stream is retried only while it is being opened; once a delta has been yielded a failure
is raised, never replayed (the caller has already shown the text). The API key never
appears in messages, logs or ``repr``: the client masks it in any server text it repeats.
Server-sent events are parsed by httpx-sse (``openai_http.sse_events``).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any
from collections.abc import Iterator

import httpx

from .errors import LLMResponseError, LLMUnavailableError
from .openai_http import DEFAULT_BASE_URL, LLM, Budget, ClientConfig, OpenAIClient, safe_url, sse_data, sse_events

__all__ = ["LLMConfig", "ChatClient", "safe_url", "sse_data", "DEFAULT_BASE_URL"]

log = logging.getLogger(__name__)

_URL_HINT = LLM.url_hint


@dataclass(frozen=True)
class LLMConfig(ClientConfig):
    """Where and how to reach the chat model (``ClientConfig``'s fields)."""

    @classmethod
    def from_settings(cls, settings: Any) -> LLMConfig:
        return cls(
            base_url=settings.llm_base_url or DEFAULT_BASE_URL,
            model=settings.llm_model,
            api_key=settings.llm_api_key,
            timeout=settings.llm_timeout,
            deadline=settings.llm_deadline,
            max_reply_bytes=settings.llm_max_reply_bytes,
        )


class ChatClient(OpenAIClient):
    """A synchronous chat-completions client. Thread-safe (one pooled ``httpx.Client``)."""

    def __init__(self, config: LLMConfig, *, transport: httpx.BaseTransport | None = None) -> None:
        super().__init__(config, transport=transport, service=LLM)

    # -- public --------------------------------------------------------------------------
    def complete(
        self, messages: list[dict], *, temperature: float = 0.0, response_format: dict | None = None
    ) -> str:
        """The assistant's reply to ``messages`` (one non-streamed completion)."""
        self._ready()
        body: dict[str, Any] = {"model": self.config.model, "messages": messages,
                                "temperature": temperature, "stream": False}
        if response_format is not None:
            body["response_format"] = response_format
        budget = Budget(self.config, LLM)
        response = self._retrying(lambda: self._post("chat/completions", body, budget), budget)
        return self._completion_text(response)

    def stream(self, messages: list[dict], *, temperature: float = 0.0) -> Iterator[str]:
        """Yield the reply's content deltas as they arrive (server-sent events)."""
        self._ready()
        body = {"model": self.config.model, "messages": messages,
                "temperature": temperature, "stream": True}
        budget = Budget(self.config, LLM)
        response = self._retrying(lambda: self._open_stream("chat/completions", body, budget), budget)
        try:
            if "text/event-stream" not in response.headers.get("content-type", ""):
                # some servers ignore "stream": accept a whole completion as one delta
                try:
                    whole = budget.read(response)
                except httpx.HTTPError as exc:
                    raise LLMResponseError(f"the LLM reply broke off: {self._mask(str(exc))}") from None
                text = self._completion_text(whole)
                if text:
                    yield text
                return
            yield from self._deltas(response, budget)
        finally:
            response.close()

    def check(self) -> None:
        """Probe ``GET /models``; raise ``LLMUnavailableError`` naming the setting to fix."""
        self._ready()
        url = self._url("models")
        try:
            response = self._http.get("models", timeout=min(self.config.timeout, 5.0))
        except httpx.HTTPError as exc:
            raise LLMUnavailableError(
                f"cannot reach the LLM at {url} (RAG_LLM_BASE_URL): {self._mask(str(exc)) or type(exc).__name__}",
                hint=_URL_HINT,
            ) from None
        if response.status_code in (401, 403):
            raise LLMUnavailableError(
                f"the LLM at {url} refused the API key (HTTP {response.status_code})",
                hint="check RAG_LLM_API_KEY",
            )
        if response.status_code == 404:
            log.warning("%s answered 404; the server does not list models, carrying on", url)
            return
        if not response.is_success:
            raise LLMUnavailableError(
                f"the LLM at {url} (RAG_LLM_BASE_URL) answered HTTP {response.status_code}: "
                f"{self._detail(response)}", hint=_URL_HINT,
            )
        self._warn_if_unlisted(response)

    # -- replies ----------------------------------------------------------------------------
    def _completion_text(self, response: httpx.Response) -> str:
        try:
            data = json.loads(response.content)
        except (ValueError, UnicodeDecodeError):
            snippet = self._mask(response.content[:120].decode("utf-8", "replace"))
            raise LLMResponseError(f"the LLM sent a reply that is not valid JSON: {snippet!r}") from None
        if isinstance(data, dict) and data.get("error"):
            raise LLMResponseError(f"the LLM reported an error: {self._detail(response)}")
        try:
            choice = data["choices"][0]
            message = choice["message"]
            content = message.get("content")
        except (KeyError, IndexError, TypeError, AttributeError):
            raise LLMResponseError("the LLM reply has no choices[0].message: not a chat completion") from None
        if choice.get("finish_reason") == "length":
            log.warning("the LLM reply was cut off at its token limit")
        if content is None and message.get("refusal"):
            raise LLMResponseError(f"the model refused: {self._mask(str(message['refusal']))[:300]}")
        return _content_str(content)

    def _deltas(self, response: httpx.Response, budget: Budget) -> Iterator[str]:
        finished = False
        try:
            for data in sse_events(budget.chunks(response)):
                if data.strip() == "[DONE]":
                    return
                piece, stop = self._delta(data)
                finished = finished or stop
                if piece:
                    yield piece
        except httpx.TimeoutException:
            budget.check()  # the read timeout was cut to the end of the deadline
            raise LLMResponseError(
                f"the LLM stopped sending for {self.config.timeout:g}s mid-answer (RAG_LLM_TIMEOUT)"
            ) from None
        except httpx.HTTPError as exc:
            raise LLMResponseError(f"the LLM stream broke mid-answer: {self._mask(str(exc))}") from None
        if not finished:
            raise LLMResponseError("the LLM stream ended before the answer was complete (no [DONE])")

    def _delta(self, data: str) -> tuple[str, bool]:
        """One SSE event -> (content piece, finished?)."""
        try:
            event = json.loads(data)
        except ValueError:
            raise LLMResponseError(f"the LLM sent a malformed stream event: {self._mask(data[:120])!r}") from None
        if not isinstance(event, dict):
            raise LLMResponseError(f"the LLM sent a malformed stream event: {self._mask(data[:120])!r}")
        if event.get("error"):
            err = event["error"]
            text = err.get("message", err) if isinstance(err, dict) else err
            raise LLMResponseError(f"the LLM reported an error mid-answer: {self._mask(str(text))[:300]}")
        choices = event.get("choices") or []
        if not choices:  # e.g. a trailing usage event
            return "", False
        choice = choices[0]
        if not isinstance(choice, dict):
            raise LLMResponseError("the LLM sent a malformed stream event (choices[0] is not an object)")
        reason = choice.get("finish_reason")
        if reason == "length":
            log.warning("the LLM reply was cut off at its token limit")
        delta = choice.get("delta") or {}
        piece = _content_str(delta.get("content")) if isinstance(delta, dict) else ""
        return piece, bool(reason)

    def _warn_if_unlisted(self, response: httpx.Response) -> None:
        try:
            ids = {str(m.get("id")) for m in response.json().get("data", []) if isinstance(m, dict)}
        except (ValueError, AttributeError, TypeError):
            return
        model = self.config.model
        if ids and model not in ids and f"{model}:latest" not in ids:
            log.warning("model %r is not among the %d models the server lists (RAG_LLM_MODEL)",
                        model, len(ids))


def _content_str(content: Any) -> str:
    """Message content as text: a string, or a list of ``{"type": "text", "text": ...}`` parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    raise LLMResponseError(f"the LLM sent content of an unexpected type: {type(content).__name__}")
