"""A small client for OpenAI-compatible chat APIs (Ollama, OpenAI, vLLM, llama.cpp, LM Studio).

Used by ``ask`` (answer.py) and by enrichment. Settings: ``RAG_LLM_BASE_URL`` (default:
Ollama at ``http://localhost:11434/v1``), ``RAG_LLM_MODEL`` (required), ``RAG_LLM_API_KEY``
(sent as a bearer token when set) and ``RAG_LLM_TIMEOUT`` (seconds per read).

Failure policy, decided here once:

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
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, TypeVar
from urllib.parse import urlsplit, urlunsplit

import httpx
import tenacity

from ._version import __version__
from .errors import LLMError, LLMResponseError, LLMUnavailableError

log = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_BASE_URL = "http://localhost:11434/v1"
_MODEL_HINT = "set RAG_LLM_MODEL (or llm_model in the config file), e.g. RAG_LLM_MODEL=qwen2.5-coder:7b"
_URL_HINT = "start the server (Ollama: `ollama serve`) or set RAG_LLM_BASE_URL to an OpenAI-compatible API root"


@dataclass(frozen=True)
class LLMConfig:
    """Where and how to reach the chat model. ``backoff``/``backoff_max`` (seconds) shape the
    retry waits; tests shrink them."""

    base_url: str
    model: str
    api_key: str = field(default="", repr=False)
    timeout: float = 60.0
    max_retries: int = 2
    backoff: float = 0.5
    backoff_max: float = 8.0

    @classmethod
    def from_settings(cls, settings: Any) -> "LLMConfig":
        return cls(
            base_url=settings.llm_base_url or DEFAULT_BASE_URL,
            model=settings.llm_model,
            api_key=settings.llm_api_key,
            timeout=settings.llm_timeout,
        )


class _Transient(Exception):
    """A failure worth retrying; ``error`` is raised once the retries are spent."""

    def __init__(self, error: LLMError, retry_after: float | None = None) -> None:
        super().__init__(error.message)
        self.error = error
        self.retry_after = retry_after


def safe_url(url: str) -> str:
    """``url`` without user info, query or fragment: safe to show and log."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<invalid URL>"
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


class ChatClient:
    """A synchronous chat-completions client. Thread-safe (one pooled ``httpx.Client``)."""

    def __init__(self, config: LLMConfig, *, transport: httpx.BaseTransport | None = None) -> None:
        self.config = config
        self._root = config.base_url.strip().rstrip("/")
        self._bad_url = not self._root.lower().startswith(("http://", "https://"))
        headers = {"User-Agent": f"codeseam/{__version__}"}
        if config.api_key:
            headers["Authorization"] = f"Bearer {config.api_key}"
        timeout = httpx.Timeout(config.timeout, connect=min(config.timeout, 10.0))
        self._http = httpx.Client(
            base_url="http://invalid/" if self._bad_url else self._root + "/",
            headers=headers, timeout=timeout, transport=transport,
        )

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
        response = self._retrying(lambda: self._post(body))
        return self._completion_text(response)

    def stream(self, messages: list[dict], *, temperature: float = 0.0) -> Iterator[str]:
        """Yield the reply's content deltas as they arrive (server-sent events)."""
        self._ready()
        body = {"model": self.config.model, "messages": messages,
                "temperature": temperature, "stream": True}
        response = self._retrying(lambda: self._open_stream(body))
        try:
            if "text/event-stream" not in response.headers.get("content-type", ""):
                # some servers ignore "stream": accept a whole completion as one delta
                response.read()
                text = self._completion_text(response)
                if text:
                    yield text
                return
            yield from self._deltas(response)
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

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "ChatClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- configuration checks ---------------------------------------------------------------
    def _ready(self) -> None:
        if self._bad_url:
            raise LLMUnavailableError(
                f"RAG_LLM_BASE_URL is not an http(s) URL: {safe_url(self.config.base_url)!r}",
                hint=f"set RAG_LLM_BASE_URL to an API root such as {DEFAULT_BASE_URL}",
            )
        if not self.config.model.strip():
            raise LLMUnavailableError("no LLM model is configured (RAG_LLM_MODEL is empty)",
                                      hint=_MODEL_HINT)

    def _url(self, path: str) -> str:
        return safe_url(f"{self._root}/{path}")

    def _mask(self, text: str) -> str:
        key = self.config.api_key
        if key and len(key) >= 4:
            text = text.replace(key, "***")
        return text

    # -- requests and retries -----------------------------------------------------------------
    def _retrying(self, attempt: Callable[[], T]) -> T:
        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(max(0, self.config.max_retries) + 1),
            wait=self._wait,
            retry=tenacity.retry_if_exception_type(_Transient),
            before_sleep=self._log_retry,
            reraise=True,
        )
        try:
            return retrying(attempt)
        except _Transient as exc:
            tries = max(0, self.config.max_retries) + 1
            suffix = f" (after {tries} attempts)" if tries > 1 else ""
            raise type(exc.error)(exc.error.message + suffix, hint=exc.error.hint) from None

    def _wait(self, state: tenacity.RetryCallState) -> float:
        cfg = self.config
        delay = min(cfg.backoff_max, cfg.backoff * 2 ** (state.attempt_number - 1))
        exc = state.outcome.exception() if state.outcome else None
        retry_after = getattr(exc, "retry_after", None)
        if retry_after is not None:
            delay = max(delay, retry_after)
        return min(delay, cfg.backoff_max)

    def _log_retry(self, state: tenacity.RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        wait = state.next_action.sleep if state.next_action else 0.0
        log.warning("LLM request failed (%s); retry %d of %d in %.2fs",
                    exc, state.attempt_number, self.config.max_retries, wait)

    def _post(self, body: dict[str, Any]) -> httpx.Response:
        log.debug("chat completion: model=%s messages=%d", body["model"], len(body["messages"]))
        try:
            response = self._http.post("chat/completions", json=body)
        except httpx.HTTPError as exc:
            raise self._transport_error(exc) from None
        self._raise_for_status(response)
        return response

    def _open_stream(self, body: dict[str, Any]) -> httpx.Response:
        log.debug("chat stream: model=%s messages=%d", body["model"], len(body["messages"]))
        request = self._http.build_request("POST", "chat/completions", json=body)
        try:
            response = self._http.send(request, stream=True)
            if not response.is_success:
                try:
                    response.read()
                finally:
                    response.close()
        except httpx.HTTPError as exc:
            raise self._transport_error(exc) from None
        self._raise_for_status(response)
        return response

    def _transport_error(self, exc: httpx.HTTPError) -> Exception:
        url = self._url("chat/completions")
        reason = self._mask(str(exc)) or type(exc).__name__
        if isinstance(exc, httpx.ConnectTimeout):
            return _Transient(LLMUnavailableError(
                f"connecting to the LLM at {url} (RAG_LLM_BASE_URL) timed out", hint=_URL_HINT))
        if isinstance(exc, httpx.TimeoutException):
            return _Transient(LLMResponseError(
                f"the LLM did not answer within {self.config.timeout:g}s (RAG_LLM_TIMEOUT)",
                hint="raise RAG_LLM_TIMEOUT or use a smaller model"))
        if isinstance(exc, httpx.ConnectError):
            return LLMUnavailableError(
                f"cannot connect to the LLM at {url} (RAG_LLM_BASE_URL): {reason}", hint=_URL_HINT)
        if isinstance(exc, (httpx.NetworkError, httpx.RemoteProtocolError)):
            return _Transient(LLMResponseError(f"the connection to the LLM at {url} broke: {reason}"))
        if isinstance(exc, httpx.UnsupportedProtocol):
            return LLMUnavailableError(f"RAG_LLM_BASE_URL is not usable: {reason}", hint=_URL_HINT)
        return LLMResponseError(f"request to the LLM at {url} failed: {reason}")

    def _raise_for_status(self, response: httpx.Response) -> None:
        code = response.status_code
        if response.is_success:
            return
        message = f"the LLM server answered HTTP {code}: {self._detail(response)}"
        if code == 429 or code >= 500:
            raise _Transient(LLMResponseError(message), retry_after=_retry_after(response))
        hint = None
        if code in (401, 403):
            hint = "check RAG_LLM_API_KEY"
        elif code == 404:
            hint = (f"check RAG_LLM_MODEL ({self.config.model!r}: is it pulled/served?) and "
                    "RAG_LLM_BASE_URL (the API root, usually ending in /v1)")
        raise LLMResponseError(message, hint=hint)

    def _detail(self, response: httpx.Response) -> str:
        """The server's error message, short and masked."""
        try:
            data = response.json()
        except (ValueError, httpx.HTTPError):
            data = None
        text: Any = None
        if isinstance(data, dict):
            err = data.get("error", data.get("detail", data.get("message")))
            text = err.get("message", err) if isinstance(err, dict) else err
        if text is None:
            try:
                text = response.text
            except (httpx.HTTPError, UnicodeDecodeError):
                text = ""
        text = " ".join(str(text).split())
        return self._mask(text[:300]) or response.reason_phrase or "no details"

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

    def _deltas(self, response: httpx.Response) -> Iterator[str]:
        finished = False
        try:
            for data in sse_data(response.iter_lines()):
                if data.strip() == "[DONE]":
                    return
                piece, stop = self._delta(data)
                finished = finished or stop
                if piece:
                    yield piece
        except httpx.TimeoutException:
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


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after", "")
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def sse_data(lines: Iterable[str]) -> Iterator[str]:
    """The ``data`` payloads of server-sent events (multi-line data joined by ``\\n``)."""
    buf: list[str] = []
    for line in lines:
        if not line:
            if buf:
                yield "\n".join(buf)
                buf = []
            continue
        if line.startswith(":"):
            continue  # comment / keep-alive
        name, _, value = line.partition(":")
        if name == "data":
            buf.append(value[1:] if value.startswith(" ") else value)
    if buf:
        yield "\n".join(buf)
