"""Enrichment against the real chat client and a loopback OpenAI-compatible server.

Scripted replies: complete, dropped ids, wrong script, malformed JSON, timeouts, HTTP
errors, an unreachable server; then the cache (re-run, model and language changes),
large files as views, the concurrency limit, the token budget, progress and estimates.
"""

from __future__ import annotations

import json
import re
import socket
import sysconfig
import threading
import time
from pathlib import Path

import pytest

from codeseam.chunk import chunk_file
from codeseam.enrich import Enricher
from codeseam.enrich.enricher import OUTCOMES
from codeseam.enrich.place import PREFIX
from codeseam.errors import ConfigError, LLMUnavailableError
from codeseam.settings import Settings
from tests.support.fake_openai import Reply

STDLIB = Path(sysconfig.get_paths()["stdlib"])
BISECT = (STDLIB / "bisect.py").read_text(encoding="utf-8")
HEAPQ = (STDLIB / "heapq.py").read_text(encoding="utf-8")
LISTING = re.compile(r"^(c\d+): lines (\d+)-(\d+)(?:, \w+ (\S+))?", re.M)

RU = {"c1": "Функция вставляет элемент в отсортированный список справа от равных.",
      "c2": "Функция находит позицию вставки справа с помощью двоичного поиска.",
      "c3": "Функция вставляет элемент в отсортированный список слева от равных.",
      "c4": "Функция `bisect_left` находит позицию вставки слева двоичным поиском."}


def _settings(server, tmp_path, **kw) -> Settings:
    base = dict(llm_base_url=server.base_url, llm_model="fake-model", data_dir=str(tmp_path / "data"),
                enrich=True, llm_timeout=5.0, enrich_concurrency=2)
    base.update(kw)
    return Settings(**base)


def _enricher(server, tmp_path, *, settings_kw=None, **kw) -> Enricher:
    kw.setdefault("backoff", 0.01)
    return Enricher.from_settings(_settings(server, tmp_path, **(settings_kw or {})), **kw)


def asked(body) -> list[tuple[str, int, int, str]]:
    """The chunk listing of a request: (id, start, end, symbol)."""
    user = body["messages"][-1]["content"]
    return [(m[1], int(m[2]), int(m[3]), m[4] or "") for m in LISTING.finditer(user)]


def describe_all(body) -> str:
    """A model that describes every id it is asked about, naming the symbol and lines."""
    return json.dumps({i: f"The code of {sym or 'module'} spans lines {a} to {b} of this file."
                       for i, a, b, sym in asked(body)})


def desc_of(chunk) -> str | None:
    for line in chunk.indexed_text.split("\n"):
        if line.startswith(PREFIX):
            return line[len(PREFIX):]
    return None


def _partition_holds(stats) -> bool:
    return stats["chunks"] == sum(stats[k] for k in OUTCOMES)


@pytest.fixture
def bisect_chunks():
    chunks = chunk_file("bisect.py", BISECT)
    assert len(chunks) == 4  # the scripted replies below assume these four functions
    return chunks


# -- the reply shapes the issue lists ---------------------------------------------------

def test_complete_reply_describes_every_chunk_in_one_request(fake_openai, tmp_path, bisect_chunks):
    fake_openai.responder = describe_all
    with _enricher(fake_openai, tmp_path) as enricher:
        out = enricher.enrich_file("bisect.py", BISECT, bisect_chunks)
        stats = enricher.stats()
    [body] = fake_openai.chat_requests()
    assert body["response_format"] == {"type": "json_object"}
    user = body["messages"][-1]["content"]
    for n, line in enumerate(BISECT.split("\n")[:-1], 1):  # the whole file, numbered
        assert f"{n:>3}| {line}" in user
    assert [a[1:3] for a in asked(body)] == [(c.start_line, c.end_line) for c in bisect_chunks]
    for before, after in zip(bisect_chunks, out, strict=True):
        assert after.text == before.text  # text never changes
        assert desc_of(after) == (f"The code of {before.symbol} spans lines "
                                  f"{before.start_line} to {before.end_line} of this file.")
        assert after.indexed_text.endswith("\n" + before.text)
    assert stats["described"] == 4 and stats["requests"] == 1 and _partition_holds(stats)


def test_dropped_ids_get_one_retry_then_are_counted_missing(fake_openai, tmp_path, bisect_chunks):
    fake_openai.script(
        json.dumps({"c1": "Inserts an item on the right.", "c3": "Inserts an item on the left."}),
        json.dumps({"c2": "Finds the right insertion point."}),  # the retry still lacks c4
    )
    with _enricher(fake_openai, tmp_path) as enricher:
        out = enricher.enrich_file("bisect.py", BISECT, bisect_chunks)
        stats = enricher.stats()
    first, retry = fake_openai.chat_requests()
    assert [a[0] for a in asked(first)] == ["c1", "c2", "c3", "c4"]
    assert [a[0] for a in asked(retry)] == ["c2", "c4"]  # only the missing ids, once
    assert [desc_of(c) is not None for c in out] == [True, True, True, False]
    assert out[3] == bisect_chunks[3]  # left as it was
    assert (stats["described"], stats["missing"], stats["retried"]) == (3, 1, 2)
    assert _partition_holds(stats)


def test_wrong_script_is_rejected_and_retried_once(fake_openai, tmp_path, bisect_chunks):
    fake_openai.script(
        json.dumps({"c1": RU["c1"], "c2": "Finds the insertion point on the right.",
                    "c3": "在排序列表中插入元素。", "c4": RU["c4"]}),
        json.dumps({"c2": RU["c2"], "c3": "Still English, sorry."}),
    )
    with _enricher(fake_openai, tmp_path, settings_kw={"enrich_language": "ru"}) as enricher:
        out = enricher.enrich_file("bisect.py", BISECT, bisect_chunks)
        stats = enricher.stats()
    assert [a[0] for a in asked(fake_openai.chat_requests()[1])] == ["c2", "c3"]
    assert "Russian" in fake_openai.chat_requests()[0]["messages"][-1]["content"]
    assert [desc_of(c) for c in out] == [RU["c1"], RU["c2"], None, RU["c4"]]
    assert stats["rejected_script"] == 3 and stats["missing"] == 1 and stats["described"] == 3


@pytest.mark.parametrize("bad", [
    Reply(content="Sure! {c1: 'not json'"),
    Reply(raw="<html>502 bad gateway</html>"),  # not even a chat completion
    Reply(content="[]"),
])
def test_malformed_json_is_retried(fake_openai, tmp_path, bisect_chunks, bad):
    fake_openai.script(bad)
    fake_openai.responder = describe_all
    with _enricher(fake_openai, tmp_path) as enricher:
        out = enricher.enrich_file("bisect.py", BISECT, bisect_chunks)
        stats = enricher.stats()
    assert len(fake_openai.chat_requests()) == 2
    assert all(desc_of(c) for c in out)
    assert stats["failed_requests"] == 0 and stats["described"] == 4


def test_malformed_json_every_time_skips_the_file_and_the_run_goes_on(fake_openai, tmp_path, bisect_chunks):
    fake_openai.script(*["{broken"] * 3)  # first try + 2 retries
    fake_openai.responder = describe_all
    heapq_chunks = chunk_file("heapq.py", HEAPQ)
    with _enricher(fake_openai, tmp_path) as enricher:
        out = enricher.enrich_file("bisect.py", BISECT, bisect_chunks)
        out2 = enricher.enrich_file("heapq.py", HEAPQ, heapq_chunks)
        stats = enricher.stats()
    assert out == bisect_chunks  # no descriptions, nothing raised
    assert all(desc_of(c) for c in out2 if any(ch.isalnum() for ch in c.text))
    assert stats["failed_requests"] == 1 and stats["failed"] == 4
    assert stats["described"] + stats["blank"] == len(heapq_chunks) and _partition_holds(stats)


def test_a_timeout_is_retried_and_a_hung_server_is_skipped_in_bounded_time(fake_openai, tmp_path, bisect_chunks):
    fake_openai.script(Reply(delay=1.0))
    fake_openai.responder = describe_all
    with _enricher(fake_openai, tmp_path, settings_kw={"llm_timeout": 0.3}) as enricher:
        out = enricher.enrich_file("bisect.py", BISECT, bisect_chunks)
        assert all(desc_of(c) for c in out) and enricher.stats()["failed_requests"] == 0

    fake_openai.responder = lambda body: Reply(delay=1.0)
    with _enricher(fake_openai, tmp_path, settings_kw={"llm_timeout": 0.3,
                                                       "llm_model": "other-model"}) as enricher:
        t = time.perf_counter()
        out = enricher.enrich_file("bisect.py", BISECT, bisect_chunks)
        elapsed = time.perf_counter() - t
        stats = enricher.stats()
    assert out == bisect_chunks and stats["failed"] == 4 and stats["failed_requests"] == 1
    assert stats["requests"] == 3  # first try + 2 retries, each cut at the timeout
    assert elapsed < 3 * 0.3 + 1.5


def test_http_errors_are_retried_with_backoff(fake_openai, tmp_path, bisect_chunks):
    fake_openai.script(Reply(status=500), Reply(status=429, headers={"Retry-After": "0"}))
    fake_openai.responder = describe_all
    with _enricher(fake_openai, tmp_path) as enricher:
        out = enricher.enrich_file("bisect.py", BISECT, bisect_chunks)
        stats = enricher.stats()
    assert all(desc_of(c) for c in out)
    assert stats["requests"] == 3 and stats["failed_requests"] == 0


def test_repeated_failures_stop_asking_for_the_rest_of_the_run(fake_openai, tmp_path, bisect_chunks):
    fake_openai.responder = lambda body: Reply(status=400, error="response_format is not supported")
    files = [(f"f{i}.py", BISECT, chunk_file(f"f{i}.py", BISECT)) for i in range(6)]
    with _enricher(fake_openai, tmp_path, max_consecutive_failures=2, retries=1) as enricher:
        outs = list(enricher.enrich_many(files))
        stats = enricher.stats()
    assert [o for o in outs] == [f[2] for f in files]
    # the circuit opens at 2 failures in a row; with 2 files in flight one more may be under way
    assert 2 <= stats["failed_requests"] <= 3 and stats["requests"] <= 2 * stats["failed_requests"]
    assert stats["failed"] == 4 * stats["failed_requests"]
    assert stats["skipped"] == 6 * 4 - stats["failed"] and _partition_holds(stats)


# -- an LLM that is not there ----------------------------------------------------------------

def test_no_model_configured_is_one_clear_error_up_front(fake_openai, tmp_path):
    with pytest.raises(LLMUnavailableError, match="RAG_LLM_MODEL"):
        _enricher(fake_openai, tmp_path, settings_kw={"llm_model": ""})
    assert fake_openai.chat_requests() == []


def test_an_unreachable_server_is_one_clear_error_up_front(tmp_path):
    with socket.socket() as s:  # a port with nothing listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = Settings(llm_base_url=f"http://127.0.0.1:{port}/v1", llm_model="m",
                        data_dir=str(tmp_path), enrich=True)
    t = time.perf_counter()
    with pytest.raises(LLMUnavailableError, match="RAG_LLM_BASE_URL"):
        Enricher.from_settings(settings)
    assert time.perf_counter() - t < 10


def test_an_unknown_language_stops_before_any_request(fake_openai, tmp_path):
    with pytest.raises(ConfigError, match="RAG_ENRICH_LANGUAGE"):
        _enricher(fake_openai, tmp_path, settings_kw={"enrich_language": "xx"})
    assert fake_openai.requests == []


def test_a_server_that_breaks_mid_run_does_not_abort(fake_openai, tmp_path, bisect_chunks):
    fake_openai.responder = describe_all
    enricher = _enricher(fake_openai, tmp_path)
    first = enricher.enrich_file("bisect.py", BISECT, bisect_chunks)
    fake_openai.responder = lambda body: Reply(drop=True)  # connections die unanswered
    heapq_chunks = chunk_file("heapq.py", HEAPQ)
    second = enricher.enrich_file("heapq.py", HEAPQ, heapq_chunks)
    enricher.close()
    assert all(desc_of(c) for c in first) and second == heapq_chunks
    stats = enricher.stats()
    assert stats["failed"] + stats["blank"] == len(heapq_chunks) and stats["failed_requests"] >= 1


def test_a_refused_connection_mid_run_is_counted_not_raised(tmp_path, bisect_chunks):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = Settings(llm_base_url=f"http://127.0.0.1:{port}/v1", llm_model="m",
                        data_dir=str(tmp_path), enrich=True)
    with Enricher.from_settings(settings, probe=False, backoff=0.01) as enricher:
        out = enricher.enrich_file("bisect.py", BISECT, bisect_chunks)
        stats = enricher.stats()
    assert out == bisect_chunks
    assert stats["requests"] == 1 and stats["failed"] == 4  # nothing listening: not retried


# -- cache -------------------------------------------------------------------------------------

def test_rerun_hits_the_cache_and_sends_only_changed_chunks(fake_openai, tmp_path, bisect_chunks):
    fake_openai.responder = describe_all
    with _enricher(fake_openai, tmp_path) as enricher:
        first = enricher.enrich_file("bisect.py", BISECT, bisect_chunks)
    n = len(fake_openai.chat_requests())
    with _enricher(fake_openai, tmp_path) as enricher:
        again = enricher.enrich_file("bisect.py", BISECT, bisect_chunks)
        assert enricher.stats()["cached"] == 4 and enricher.stats()["requests"] == 0
    assert len(fake_openai.chat_requests()) == n  # no second request
    assert [c.indexed_text for c in again] == [c.indexed_text for c in first]

    edited = BISECT.replace("lo = mid + 1", "lo = mid + 1  # go right", 1)
    edited_chunks = chunk_file("bisect.py", edited)
    changed = {c.start_line for c, o in zip(edited_chunks, bisect_chunks, strict=True) if c.hash != o.hash}
    assert len(changed) == 1
    with _enricher(fake_openai, tmp_path) as enricher:
        enricher.enrich_file("bisect.py", edited, edited_chunks)
        assert enricher.stats()["cached"] == 3
    assert [a[1] for a in asked(fake_openai.chat_requests()[-1])] == sorted(changed)


@pytest.mark.parametrize("change", [{"llm_model": "other-model"}, {"enrich_language": "de"}])
def test_model_or_language_change_re_enriches(fake_openai, tmp_path, bisect_chunks, change):
    fake_openai.responder = describe_all
    with _enricher(fake_openai, tmp_path) as enricher:
        enricher.enrich_file("bisect.py", BISECT, bisect_chunks)
        fp = enricher.fingerprint()
    with _enricher(fake_openai, tmp_path, settings_kw=change) as enricher:
        enricher.enrich_file("bisect.py", BISECT, bisect_chunks)
        assert enricher.stats()["cached"] == 0 and enricher.stats()["described"] == 4
        assert enricher.fingerprint() != fp
    with _enricher(fake_openai, tmp_path) as enricher:  # the first setup is still cached
        enricher.enrich_file("bisect.py", BISECT, bisect_chunks)
        assert enricher.stats()["cached"] == 4 and enricher.fingerprint() == fp
    assert len(fake_openai.chat_requests()) == 2


def test_estimate_counts_cache_misses_and_uses_the_measured_rate(fake_openai, tmp_path, bisect_chunks):
    fake_openai.responder = describe_all
    with _enricher(fake_openai, tmp_path) as enricher:
        est = enricher.estimate(bisect_chunks)
        assert (est["to_describe"], est["cached"], est["basis"]) == (4, 0, "assumed (11 descriptions per minute)")
        assert est["seconds"] == pytest.approx(4 * 60 / 11)
        assert enricher.estimate(10)["to_describe"] == 10
        enricher.enrich_file("bisect.py", BISECT, bisect_chunks)
    with _enricher(fake_openai, tmp_path) as enricher:
        heapq_chunks = chunk_file("heapq.py", HEAPQ)
        est = enricher.estimate(bisect_chunks + heapq_chunks)
    assert est["cached"] == 4 and est["to_describe"] == len(heapq_chunks)
    assert est["basis"] == "measured in earlier runs" and 0 < est["seconds_per_chunk"] < 5


# -- large files, concurrency, token budget, progress --------------------------------------------

def test_a_large_file_is_sent_as_views_and_every_chunk_is_described(fake_openai, tmp_path):
    text = (STDLIB / "argparse.py").read_text(encoding="utf-8")
    chunks = chunk_file("argparse.py", text)
    fake_openai.responder = describe_all
    with _enricher(fake_openai, tmp_path, max_file_chars=10_000) as enricher:
        out = enricher.enrich_file("argparse.py", text, chunks)
        stats = enricher.stats()
    bodies = fake_openai.chat_requests()
    assert len(bodies) > 5
    ids = [a[0] for b in bodies for a in asked(b)]
    assert sorted(ids) == sorted(f"c{i}" for i in range(1, len(chunks) + 1))
    assert all("not shown ..." in b["messages"][-1]["content"] for b in bodies)
    for c, o in zip(chunks, out, strict=True):
        if any(ch.isalnum() for ch in c.text):
            assert f"lines {c.start_line} to {c.end_line}" in desc_of(o)
    assert stats["described"] + stats["blank"] == len(chunks)


def test_no_more_requests_in_flight_than_the_concurrency_limit(fake_openai, tmp_path):
    state = {"now": 0, "max": 0}
    lock = threading.Lock()

    def slow(body):
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.15)
        with lock:
            state["now"] -= 1
        return describe_all(body)

    fake_openai.responder = slow
    files = [(f"m{i}.py", BISECT, chunk_file(f"m{i}.py", BISECT)) for i in range(6)]
    with _enricher(fake_openai, tmp_path, settings_kw={"enrich_concurrency": 2}) as enricher:
        outs = list(enricher.enrich_many(files))
    assert state["max"] == 2
    for (path, _, chunks), out in zip(files, outs, strict=True):  # order kept
        assert [c.path for c in out] == [path] * len(chunks) and all(desc_of(c) for c in out)


def test_descriptions_are_trimmed_to_the_embedder_budget(fake_openai, tmp_path, bisect_chunks):
    def count(text):
        return len(text.split())

    long = " ".join(["word"] * 60)
    fake_openai.responder = lambda body: json.dumps({a[0]: long for a in asked(body)})
    budgets = {c.hash: count(c.indexed_text) + 20 for c in bisect_chunks}
    limit = max(budgets.values())
    with _enricher(fake_openai, tmp_path, count_tokens=count, max_tokens=limit) as enricher:
        out = enricher.enrich_file("bisect.py", BISECT, bisect_chunks)
        stats = enricher.stats()
    for c, o in zip(bisect_chunks, out, strict=True):
        assert count(o.indexed_text) <= limit and o.text == c.text
        assert o.indexed_text.endswith(c.text)
    assert stats["trimmed"] >= 1 and stats["trimmed"] + stats["dropped"] <= 4
    # the per-call budget wins over the constructor's
    with _enricher(fake_openai, tmp_path, count_tokens=count, max_tokens=limit) as enricher:
        tight = enricher.enrich_file("bisect.py", BISECT, bisect_chunks, max_tokens=min(budgets.values()) - 20)
    assert all(count(o.indexed_text) <= min(budgets.values()) - 20 or o == c
               for o, c in zip(tight, bisect_chunks, strict=True))


def test_progress_reports_counts_rate_and_eta(fake_openai, tmp_path):
    fake_openai.responder = describe_all
    events = []
    files = [(f"p{i}.py", BISECT, chunk_file(f"p{i}.py", BISECT)) for i in range(3)]
    with _enricher(fake_openai, tmp_path, progress=lambda e, **f: events.append((e, f))) as enricher:
        enricher.expect(files=3)
        for path, text, chunks in files:
            enricher.enrich_file(path, text, chunks)
    assert [e for e, _ in events] == ["enrich"] * 3
    assert [f["files_done"] for _, f in events] == [1, 2, 3]
    assert all(f["eta_s"] is not None and f["eta_s"] >= 0 for _, f in events)
    assert events[-1][1]["eta_s"] == 0.0 and events[-1][1]["described"] == 12
    assert events[-1][1]["per_minute"] > 0


def test_the_rate_is_kept_after_each_file_even_without_close(fake_openai, tmp_path, bisect_chunks):
    fake_openai.responder = describe_all
    first = _enricher(fake_openai, tmp_path)
    first.enrich_file("bisect.py", BISECT, bisect_chunks)  # not closed, as after a crash
    with _enricher(fake_openai, tmp_path) as second:
        assert second.estimate(3)["basis"] == "measured in earlier runs"
    first.close()
    first.close()  # idempotent
