"""The enrichment stage: ask the LLM for descriptions, guard them, cache them, place them.

See the package docstring for the policy. Every chunk handed to ``enrich_file`` ends in
exactly one outcome, so ``chunks == cached + described + missing + failed + skipped + blank``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import tenacity

from ..errors import LLMError, LLMResponseError
from ..records import Chunk, content_hash
from . import place, prompt
from .cache import FILENAME, DescriptionCache
from .prompt import BadReply, Item, View
from .script import Language, in_script, language

log = logging.getLogger(__name__)

Progress = Callable[..., None]
TokenCounter = Callable[[str], int]

# Seconds per description assumed before any run measured the model: a local 9B model
# writes about 11 descriptions per minute (measured elsewhere, see the issue).
DEFAULT_SECONDS_PER_CHUNK = 60.0 / 11
OUTCOMES = ("cached", "described", "missing", "failed", "skipped", "blank")
EVENTS = ("requests", "failed_requests", "retried", "rejected_script", "capped", "trimmed", "dropped")


def eta_seconds(done: int, total: int | None, elapsed: float) -> float | None:
    """Remaining seconds at the pace so far; ``None`` when it cannot be told yet."""
    if not total or done <= 0 or elapsed <= 0:
        return None
    return max(0.0, (total - done) * elapsed / done)


class Enricher:
    """LLM descriptions for chunks, into ``indexed_text`` only. Thread-safe.

    ``count_tokens``/``max_tokens`` (the embedder's tokenizer and limit) keep
    ``indexed_text`` within the embedder's budget; give them here or per ``enrich_file``.
    """

    def __init__(self, client: Any, *, model: str, language_code: str = "en",
                 cache: DescriptionCache | None = None, concurrency: int = 2,
                 count_tokens: TokenCounter | None = None, max_tokens: int | None = None,
                 max_file_chars: int = prompt.DEFAULT_MAX_CHARS, around: int = prompt.DEFAULT_AROUND,
                 max_description_chars: int = place.DEFAULT_MAX_CHARS, retries: int = 2,
                 backoff: float = 0.5, backoff_max: float = 8.0, max_consecutive_failures: int = 3,
                 json_mode: bool = True, progress: Progress | None = None) -> None:
        self.client = client
        self.model = model
        self.language: Language = language(language_code)
        self.cache = cache if cache is not None else DescriptionCache(None)
        self.concurrency = max(1, concurrency)
        self.count_tokens, self.max_tokens = count_tokens, max_tokens
        self.max_file_chars, self.around = max_file_chars, around
        self.max_description_chars = max_description_chars
        self.retries, self.backoff, self.backoff_max = max(0, retries), backoff, backoff_max
        self.max_consecutive_failures = max(1, max_consecutive_failures)
        self.json_mode = json_mode
        self.progress = progress
        self._slots = threading.BoundedSemaphore(self.concurrency)  # LLM requests in flight
        self._lock = threading.Lock()
        self._counts = dict.fromkeys(("chunks",) + OUTCOMES + EVENTS, 0)
        self._failures_in_row = 0
        self._open_circuit = False
        self._latency = [0.0, 0]  # seconds, chunks asked (for the rate)
        self._recorded = [0.0, 0]  # the part of _latency already written to the cache
        self._expect: dict[str, int | None] = {"files": None, "chunks": None}
        self._done = {"files": 0, "chunks": 0}
        self._t0: float | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._closed = False

    # -- construction ------------------------------------------------------------------
    @classmethod
    def from_settings(cls, settings: Any, *, probe: bool = True, transport: Any = None,
                      **options: Any) -> Enricher:
        """An enricher for ``settings`` (``llm_*``, ``enrich_language``, ``enrich_concurrency``,
        cache under ``data_path``). With ``probe`` the LLM is checked once, up front:
        ``LLMUnavailableError`` (no model configured, server unreachable, key refused) is
        raised here, so a run that asked for enrichment stops at once with a clear message
        instead of hanging or indexing without descriptions. ``ConfigError`` for an unknown
        ``enrich_language``. Other keyword ``options`` go to the constructor."""
        import dataclasses

        from ..llm import ChatClient, LLMConfig

        language(settings.enrich_language)  # fail on a bad language before any I/O
        config = dataclasses.replace(LLMConfig.from_settings(settings), max_retries=0)
        client = ChatClient(config, transport=transport)
        try:
            if probe:
                client.check()
            cache = DescriptionCache(settings.data_path / FILENAME)
        except BaseException:
            client.close()
            raise
        options.setdefault("concurrency", settings.enrich_concurrency)
        return cls(client, model=config.model, language_code=settings.enrich_language,
                   cache=cache, **options)

    def fingerprint(self) -> str:
        """Model + language + prompt version: part of the repo's pipeline fingerprint."""
        return content_hash("enrich", self.model, self.language.code, prompt.PROMPT_VERSION)

    # -- the stage ---------------------------------------------------------------------
    def expect(self, *, files: int | None = None, chunks: int | None = None) -> None:
        """Totals for the ETA in progress events (either is enough)."""
        self._expect = {"files": files, "chunks": chunks}

    def enrich_file(self, path: str, text: str, chunks: list[Chunk], *,
                    count_tokens: TokenCounter | None = None, max_tokens: int | None = None) -> list[Chunk]:
        """``chunks`` with descriptions added to ``indexed_text`` (``text`` unchanged). Never
        raises for LLM trouble: failures are counted and the chunk goes on without one."""
        if self._t0 is None:
            self._t0 = time.perf_counter()
        started = time.perf_counter()
        key = (self.model, self.language.code, prompt.PROMPT_VERSION)
        known = self.cache.get_many([c.hash for c in chunks], *key)
        lines = prompt.split_lines(text)
        items, blank = self._items(chunks, known, len(lines))
        fresh = self._describe(path, chunks[0].language if chunks else "", lines, items)
        by_id = {it.id: chunks[int(it.id[1:]) - 1] for it in items}
        self.cache.put_many(((by_id[i].hash, d) for i, d in fresh.items()), *key)
        out = self._place(chunks, known, fresh, count_tokens or self.count_tokens,
                          max_tokens if max_tokens is not None else self.max_tokens)
        self._add(chunks=len(chunks), cached=len(chunks) - len(items) - blank, blank=blank)
        self._report(path, len(chunks), time.perf_counter() - started)
        return out

    def enrich_many(self, files: Iterable[tuple[str, str, list[Chunk]]]) -> Iterator[list[Chunk]]:
        """``enrich_file`` over ``(path, text, chunks)`` items, up to ``concurrency`` files at
        once; results come back in input order."""
        window: list[Any] = []
        with ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="enrich-file") as pool:
            for path, text, chunks in files:
                window.append(pool.submit(self.enrich_file, path, text, chunks))
                if len(window) >= self.concurrency:
                    yield window.pop(0).result()
            for future in window:
                yield future.result()

    def stats(self) -> dict[str, int]:
        """Counts so far. Outcomes per chunk: ``cached``, ``described`` (fresh from the LLM),
        ``missing`` (no usable description after one retry: dropped id or wrong script),
        ``failed`` (its request failed after retries), ``skipped`` (not asked: enrichment
        stopped after repeated failures), ``blank`` (nothing to describe). Events:
        ``requests``, ``failed_requests``, ``retried`` (ids asked again),
        ``rejected_script``, ``capped`` (cut to the length cap), ``trimmed`` / ``dropped``
        (shortened / left out to fit the embedder's token limit)."""
        with self._lock:
            return dict(self._counts)

    def estimate(self, chunks: int | Iterable[Chunk]) -> dict[str, Any]:
        """For ``--dry-run``: how many chunks need a description (cache misses, when chunks
        are given; a bare count is taken as all misses) and the time that takes at the
        rate measured for this model (this run, else the cache's record, else 11/min)."""
        if isinstance(chunks, int):
            total, cached = chunks, 0
        else:
            hashes = [c.hash for c in chunks]
            total = len(hashes)
            cached = len(self.cache.get_many(hashes, self.model, self.language.code, prompt.PROMPT_VERSION))
        spc, basis = self._seconds_per_chunk()
        todo = total - cached
        return {"chunks": total, "cached": cached, "to_describe": todo, "seconds_per_chunk": spc,
                "seconds": todo * spc, "basis": basis, "model": self.model,
                "language": self.language.code}

    def close(self) -> None:
        """Record the measured rate, close the client and the cache (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._flush_rate()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        self.client.close()
        self.cache.close()

    def __enter__(self) -> Enricher:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- steps -------------------------------------------------------------------------
    def _items(self, chunks: Sequence[Chunk], known: dict[str, str], n_lines: int) -> tuple[list[Item], int]:
        items, blank = [], 0
        for i, c in enumerate(chunks, 1):
            if c.hash in known:
                continue
            if not any(ch.isalnum() for ch in c.text):
                blank += 1
                continue
            end = max(1, min(c.end_line, n_lines))
            items.append(Item(f"c{i}", max(1, min(c.start_line, end)), end, c.kind, c.symbol))
        return items, blank

    def _describe(self, path: str, lang: str, lines: list[str], items: list[Item]) -> dict[str, str]:
        if not items:
            return {}
        if self._open_circuit:
            self._add(skipped=len(items))
            return {}
        views = prompt.plan_views(lines, items, max_chars=self.max_file_chars, around=self.around)
        if len(views) > 1:
            log.info("%s: over %d characters, sent as %d views of its chunks with context",
                     path, self.max_file_chars, len(views))
        by_id = {it.id: it for it in items}
        if len(views) == 1 or self.concurrency == 1:
            results = [self._ask_view(path, lang, lines, v, by_id) for v in views]
        else:
            pool = self._views_pool()
            results = list(pool.map(lambda v: self._ask_view(path, lang, lines, v, by_id), views))
        return {k: v for r in results for k, v in r.items()}

    def _views_pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="enrich-view")
            return self._pool

    def _ask_view(self, path: str, lang: str, lines: list[str], view: View,
                  by_id: dict[str, Item]) -> dict[str, str]:
        """Descriptions for one view: one request, then one retry for the ids it lacked."""
        numbered = prompt.render_view(lines, view)
        got = self._request(path, lang, numbered, [by_id[i] for i in view.ids], retry=False)
        if got is None:
            self._add(failed=len(view.ids))
            return {}
        lacking = [i for i in view.ids if i not in got]
        if lacking:
            self._add(retried=len(lacking))
            again = self._request(path, lang, numbered, [by_id[i] for i in lacking], retry=True)
            if again is None:
                self._add(failed=len(lacking))
                lacking = []
            else:
                got.update(again)
                lacking = [i for i in lacking if i not in again]
        self._add(described=len(got), missing=len(lacking))
        if lacking:
            log.info("%s: no usable description for %d chunk(s) after a retry", path, len(lacking))
        return got

    def _request(self, path: str, lang: str, numbered: str, items: list[Item], *,
                 retry: bool) -> dict[str, str] | None:
        """Accepted descriptions by id, or ``None`` when the request failed after retries."""
        if self._open_circuit:
            return None
        messages = prompt.build_messages(path, lang, numbered, items, self.language.name, retry=retry)
        ids = [it.id for it in items]
        try:
            data = self._retrying(lambda: self._call(messages, len(ids)))
        except (LLMError, BadReply) as exc:  # unavailable, or spent retries
            self._failed(path, exc)
            return None
        with self._lock:
            self._failures_in_row = 0
        return self._accept(path, prompt.descriptions_from(data, ids))

    def _retrying(self, attempt: Callable[[], dict]) -> dict:
        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(self.retries + 1),
            wait=tenacity.wait_exponential(multiplier=self.backoff, max=self.backoff_max),
            retry=tenacity.retry_if_exception_type((LLMResponseError, BadReply)),
            before_sleep=lambda s: log.warning("enrichment request failed (%s); retry %d of %d",
                                               s.outcome.exception() if s.outcome else "?",
                                               s.attempt_number, self.retries),
            reraise=True,
        )
        return retrying(attempt)

    def _call(self, messages: list[dict], n_ids: int) -> dict:
        fmt = {"type": "json_object"} if self.json_mode else None
        with self._slots:
            self._add(requests=1)
            t = time.perf_counter()
            content = self.client.complete(messages, temperature=0.0, response_format=fmt)
            elapsed = time.perf_counter() - t
        with self._lock:
            self._latency[0] += elapsed
            self._latency[1] += n_ids
        return prompt.parse_reply(content)

    def _failed(self, path: str, exc: Exception) -> None:
        with self._lock:
            self._counts["failed_requests"] += 1
            self._failures_in_row += 1
            opened = not self._open_circuit and self._failures_in_row >= self.max_consecutive_failures
            self._open_circuit = self._open_circuit or opened
        log.warning("%s: enrichment request failed, chunks go on without descriptions: %s", path, exc)
        if opened:
            log.warning("enrichment stopped after %d failed requests in a row; the remaining "
                        "chunks are indexed without descriptions (last error: %s)",
                        self._failures_in_row, exc)

    def _accept(self, path: str, found: dict[str, str]) -> dict[str, str]:
        accepted: dict[str, str] = {}
        for key, raw in found.items():
            text, capped = place.clean(raw, self.max_description_chars)
            if capped:
                self._add(capped=1)
            if not text:
                continue
            if not in_script(text, self.language):
                self._add(rejected_script=1)
                log.debug("%s: %s rejected, not in %s script: %.60r", path, key, self.language.name, text)
                continue
            accepted[key] = text
        return accepted

    def _place(self, chunks: Sequence[Chunk], known: dict[str, str], fresh: dict[str, str],
               count_tokens: TokenCounter | None, max_tokens: int | None) -> list[Chunk]:
        counter = _safe(count_tokens) if count_tokens is not None else None
        out: list[Chunk] = []
        for i, c in enumerate(chunks, 1):
            desc = known.get(c.hash) or fresh.get(f"c{i}")
            if desc is None:
                out.append(c)
                continue
            desc, _ = place.clean(desc, self.max_description_chars)
            placed, how = place.fit(c, desc, counter, max_tokens)
            if how != "placed":
                self._add(**{how: 1})
            out.append(placed)
        return out

    # -- bookkeeping -------------------------------------------------------------------
    def _flush_rate(self) -> None:
        """Write the rate measured since the last flush (after each file and at close, so
        an estimate profits even from a run that was not closed)."""
        with self._lock:
            seconds = self._latency[0] - self._recorded[0]
            asked = int(self._latency[1] - self._recorded[1])  # a count of chunks (the list also holds seconds)
            self._recorded = list(self._latency)
        if asked > 0:
            self.cache.record_rate(self.model, seconds / asked, asked)

    def _add(self, **counts: int) -> None:
        with self._lock:
            for name, n in counts.items():
                self._counts[name] += n

    def _seconds_per_chunk(self) -> tuple[float, str]:
        with self._lock:
            seconds, asked = self._latency
        if asked:
            return seconds / asked, "measured in this run"
        stored = self.cache.rate(self.model)
        if stored is not None:
            return stored, "measured in earlier runs"
        return DEFAULT_SECONDS_PER_CHUNK, "assumed (11 descriptions per minute)"

    def _report(self, path: str, n_chunks: int, seconds: float) -> None:
        with self._lock:
            self._done["files"] += 1
            self._done["chunks"] += n_chunks
            done, counts = dict(self._done), dict(self._counts)
        self._flush_rate()
        if self.progress is None:
            return
        elapsed = time.perf_counter() - (self._t0 or time.perf_counter())
        eta = eta_seconds(done["chunks"], self._expect["chunks"], elapsed)
        if eta is None:
            eta = eta_seconds(done["files"], self._expect["files"], elapsed)
        rate = counts["described"] * 60.0 / elapsed if elapsed > 0 else 0.0
        self.progress("enrich", path=path, chunks=n_chunks, seconds=seconds, files_done=done["files"],
                      files_total=self._expect["files"], chunks_done=done["chunks"],
                      chunks_total=self._expect["chunks"], described=counts["described"],
                      cached=counts["cached"], missing=counts["missing"], failed=counts["failed"],
                      per_minute=rate, eta_s=eta)


def _safe(count_tokens: TokenCounter) -> TokenCounter:
    from ..chunk.budget import safe_count

    return lambda text: safe_count(count_tokens, text)
