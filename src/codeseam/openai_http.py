"""The one client of OpenAI-compatible HTTP APIs: chat (``llm.py``) and embeddings
(``embed/openai.py``) go through it (Ollama, OpenAI, vLLM, TEI, llama.cpp, LM Studio ...).

httpx for HTTP (one pooled client, thread-safe), tenacity for the retries, httpx-sse (a
maintained parser) for server-sent events. Why not the ``openai`` SDK: its retry policy
retries a refused connection and it ends a stream without ``[DONE]`` silently, so keeping
the policy below would mean wrapping every call anyway.

Failure policy, decided here once for both (``Service`` names the settings in messages):

- no model, or a base URL that is not ``http(s)://``  -> ``LLMUnavailableError`` naming the setting
- connection refused, DNS failure                      -> ``LLMUnavailableError`` naming the
  base-URL setting and the URL tried (not retried: nothing is listening)
- timeouts, dropped connections, HTTP 429 and 5xx      -> retried ``max_retries`` times with
  exponential backoff (``Retry-After`` honoured, capped), then ``LLMResponseError``
- other HTTP 4xx, malformed JSON, malformed or truncated SSE streams -> ``LLMResponseError``
  at once
- a call that runs past its overall ``deadline`` (request, retries and a drip-fed stream
  together: the per-read ``timeout`` alone lets a server hold it for ever), or a reply over
  ``max_reply_bytes``                               -> ``LLMResponseError`` naming the setting

A stream is retried only while it is being opened (``llm.ChatClient.stream``: once a delta has
been yielded a failure is raised, never replayed). The API key never appears in messages,
logs or ``repr``: the client masks it in any server text it repeats. The embedding backend
turns these errors into ``EmbeddingError`` with the same message and hint.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Self, TypeVar
from collections.abc import Callable, Iterable, Iterator
from urllib.parse import urlsplit, urlunsplit

import httpx
import tenacity

from ._version import __version__
from .errors import LLMError, LLMResponseError, LLMUnavailableError

log = logging.getLogger(__name__)

T = TypeVar("T")
DEFAULT_BASE_URL = "http://localhost:11434/v1"  # Ollama


@dataclass(frozen=True)
class Service:
    """Who is called and which settings configure it, for messages."""

    noun: str  # "LLM": "no LLM model is configured"
    what: str  # "the LLM": "cannot connect to the LLM at ..."
    server: str  # "the LLM server answered HTTP 503"
    prefix: str  # the settings' env prefix
    model_hint: str
    url_hint: str

    def setting(self, name: str) -> str:
        return f"{self.prefix}_{name}"


LLM = Service("LLM", "the LLM", "the LLM server", "RAG_LLM",
              "set RAG_LLM_MODEL (or llm_model in the config file), e.g. RAG_LLM_MODEL=qwen2.5-coder:7b",
              "start the server (Ollama: `ollama serve`) or set RAG_LLM_BASE_URL to an OpenAI-compatible API root")
EMBEDDINGS = Service("embedding", "the embedding server", "the embedding server", "RAG_EMBEDDING",
                     "set RAG_EMBEDDING_MODEL (e.g. bge-m3 for Ollama, text-embedding-3-small for OpenAI)",
                     "start the server (Ollama: `ollama serve`, TEI, vLLM) or set RAG_EMBEDDING_BASE_URL to "
                     "an OpenAI-compatible API root")


@dataclass(frozen=True)
class ClientConfig:
    """Where and how to reach the API. ``backoff``/``backoff_max`` (seconds) shape the retry
    waits; tests shrink them."""

    base_url: str
    model: str
    api_key: str = field(default="", repr=False)
    timeout: float = 60.0
    max_retries: int = 2
    backoff: float = 0.5
    backoff_max: float = 8.0
    deadline: float = 0.0  # seconds one call may take in all (0: no bound but the timeouts)
    max_reply_bytes: int = 0  # the largest reply body read (0: no cap)


class Budget:
    """One call's overall deadline and reply-size cap (``ClientConfig.deadline`` and
    ``max_reply_bytes``), checked while the reply is read."""

    def __init__(self, config: Any, service: Service) -> None:
        self.deadline = float(getattr(config, "deadline", 0.0) or 0.0)
        self.cap = int(getattr(config, "max_reply_bytes", 0) or 0)
        self.timeout = float(config.timeout)
        self.service = service
        self.started = time.monotonic()

    @property
    def bounded(self) -> bool:
        return bool(self.deadline or self.cap)

    def remaining(self) -> float:
        return self.deadline - (time.monotonic() - self.started) if self.deadline else float("inf")

    def check(self) -> None:
        if self.deadline and self.remaining() <= 0:
            s = self.service
            raise LLMResponseError(f"{s.what} took longer than {self.deadline:g}s in all ({s.setting('DEADLINE')})",
                                   hint=f"raise {s.setting('DEADLINE')}, or use a faster model or server")

    def request_timeout(self) -> httpx.Timeout:
        """The per-read timeout, cut to what is left of the deadline."""
        self.check()
        read = min(self.timeout, self.remaining())
        return httpx.Timeout(read, connect=min(read, 10.0))

    def chunks(self, response: httpx.Response) -> Iterator[bytes]:
        """``response``'s body, stopped at the cap or the deadline."""
        seen = 0
        for chunk in response.iter_bytes():
            seen += len(chunk)
            if self.cap and seen > self.cap:
                s = self.service
                raise LLMResponseError(f"{s.what} sent a reply over {self.cap} bytes ({s.setting('MAX_REPLY_BYTES')})",
                                       hint=f"raise {s.setting('MAX_REPLY_BYTES')}, or check what the server sends")
            self.check()
            yield chunk

    def read(self, response: httpx.Response) -> httpx.Response:
        """A streamed ``response`` read whole, within the budget, as a plain response."""
        try:
            body = b"".join(self.chunks(response))
        finally:
            response.close()
        return httpx.Response(response.status_code, headers=response.headers, content=body,
                              request=response.request)


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


class OpenAIClient:
    """Requests, retries and errors shared by every OpenAI-compatible call."""

    def __init__(self, config: Any, *, transport: httpx.BaseTransport | None = None,
                 service: Service = LLM) -> None:
        self.config = config
        self.service = service
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

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- embeddings ---------------------------------------------------------------------------
    def embeddings(self, texts: list[str]) -> Any:
        """The decoded body of ``POST /embeddings`` for ``texts`` (retried as above)."""
        self._ready()
        body = {"model": self.config.model, "input": texts}
        response = self._retrying(lambda: self._post("embeddings", body))
        try:
            return response.json()
        except ValueError:
            snippet = self._mask(response.content[:120].decode("utf-8", "replace"))
            raise LLMResponseError(f"{self.service.what} sent a body that is not JSON: {snippet!r}") from None

    # -- configuration checks ---------------------------------------------------------------
    def _ready(self) -> None:
        s = self.service
        if self._bad_url:
            raise LLMUnavailableError(
                f"{s.setting('BASE_URL')} is not an http(s) URL: {safe_url(self.config.base_url)!r}",
                hint=f"set {s.setting('BASE_URL')} to an API root such as {DEFAULT_BASE_URL}",
            )
        if not self.config.model.strip():
            raise LLMUnavailableError(f"no {s.noun} model is configured ({s.setting('MODEL')} is empty)",
                                      hint=s.model_hint)

    def _url(self, path: str) -> str:
        return safe_url(f"{self._root}/{path}")

    def _mask(self, text: str) -> str:
        key = self.config.api_key
        if key and len(key) >= 4:
            text = text.replace(key, "***")
        return text

    # -- requests and retries -----------------------------------------------------------------
    def _retrying(self, attempt: Callable[[], T], budget: Budget | None = None) -> T:
        stop: Any = tenacity.stop_after_attempt(max(0, self.config.max_retries) + 1)
        if budget is not None and budget.deadline:
            stop = stop | tenacity.stop_after_delay(budget.deadline)
        retrying = tenacity.Retrying(
            stop=stop,
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
        log.warning("request to %s failed (%s); retry %d of %d in %.2fs",
                    self.service.what, exc, state.attempt_number, self.config.max_retries, wait)

    def _post(self, path: str, body: dict[str, Any], budget: Budget | None = None) -> httpx.Response:
        log.debug("POST %s: model=%s", path, body.get("model"))
        if budget is not None and budget.bounded:  # read as a stream: the cap and deadline apply
            response = self._open_stream(path, body, budget)
            try:
                return budget.read(response)
            except httpx.HTTPError as exc:
                raise self._transport_error(exc, path) from None
        try:
            response = self._http.post(path, json=body)
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, path) from None
        self._raise_for_status(response)
        return response

    def _open_stream(self, path: str, body: dict[str, Any], budget: Budget | None = None) -> httpx.Response:
        log.debug("POST %s (stream): model=%s", path, body.get("model"))
        timeout: Any = budget.request_timeout() if budget is not None and budget.deadline else httpx.USE_CLIENT_DEFAULT
        request = self._http.build_request("POST", path, json=body, timeout=timeout)
        try:
            response = self._http.send(request, stream=True)
            if not response.is_success:
                try:
                    response.read()
                finally:
                    response.close()
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, path) from None
        self._raise_for_status(response)
        return response

    def _transport_error(self, exc: httpx.HTTPError, path: str) -> Exception:
        s, url = self.service, self._url(path)
        reason = self._mask(str(exc)) or type(exc).__name__
        base = s.setting("BASE_URL")
        if isinstance(exc, httpx.ConnectTimeout):
            return _Transient(LLMUnavailableError(
                f"connecting to {s.what} at {url} ({base}) timed out", hint=s.url_hint))
        if isinstance(exc, httpx.TimeoutException):
            return _Transient(LLMResponseError(
                f"{s.what} did not answer within {self.config.timeout:g}s ({s.setting('TIMEOUT')})",
                hint=f"raise {s.setting('TIMEOUT')} or use a smaller model"))
        if isinstance(exc, httpx.ConnectError):
            return LLMUnavailableError(f"cannot connect to {s.what} at {url} ({base}): {reason}", hint=s.url_hint)
        if isinstance(exc, (httpx.NetworkError, httpx.RemoteProtocolError)):
            return _Transient(LLMResponseError(f"the connection to {s.what} at {url} broke: {reason}"))
        if isinstance(exc, httpx.UnsupportedProtocol):
            return LLMUnavailableError(f"{base} is not usable: {reason}", hint=s.url_hint)
        return LLMResponseError(f"request to {s.what} at {url} failed: {reason}")

    def _raise_for_status(self, response: httpx.Response) -> None:
        code, s = response.status_code, self.service
        if response.is_success:
            return
        message = f"{s.server} answered HTTP {code}: {self._detail(response)}"
        if code == 429 or code >= 500:
            raise _Transient(LLMResponseError(message), retry_after=_retry_after(response))
        hint = None
        if code in (401, 403):
            hint = f"check {s.setting('API_KEY')}"
        elif code == 404:
            hint = (f"check {s.setting('MODEL')} ({self.config.model!r}: is it pulled/served?) and "
                    f"{s.setting('BASE_URL')} (the API root, usually ending in /v1)")
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


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after", "")
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def sse_events(chunks: Iterable[bytes]) -> Iterator[str]:
    """The ``data`` payloads of the server-sent events in a byte stream, parsed by httpx-sse
    as they arrive (multi-line data joined by ``\\n``; comments, ids and event names skipped).
    An event cut off by the end of the stream (no blank line after it) is still delivered: a
    caller that checks completeness (``[DONE]``, a finish reason) sees what was cut."""
    from httpx_sse import EventSource

    def closed() -> Iterator[bytes]:
        yield from chunks
        yield b"\n\n"

    stream = httpx.Response(200, headers={"content-type": "text/event-stream"}, content=closed())
    for event in EventSource(stream).iter_sse():
        if event.data:  # a blank line after an ``id:`` alone dispatches an empty event
            yield event.data


def sse_data(lines: Iterable[str]) -> Iterator[str]:
    """``sse_events`` of a stream given as lines."""
    return sse_events(line.encode("utf-8") + b"\n" for line in lines)
