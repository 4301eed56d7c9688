"""The chat client against the loopback OpenAI-compatible server (no mocks of the client)."""
from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
import time

import pytest

from codeseam.errors import LLMResponseError, LLMUnavailableError
from codeseam.llm import ChatClient, LLMConfig, safe_url, sse_data
from codeseam.settings import load_settings
from tests.support.fake_openai import Reply

KEY = "sk-test-SECRET-0123456789abcdef"
MESSAGES = [{"role": "user", "content": "where is the retry delay computed?"}]


def make_client(server, **overrides) -> ChatClient:
    cfg = dict(base_url=server.base_url, model="fake-model", api_key=KEY, timeout=2.0,
               max_retries=2, backoff=0.01, backoff_max=0.05)
    cfg.update(overrides)
    return ChatClient(LLMConfig(**cfg))


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- happy paths -------------------------------------------------------------------------------
def test_complete_sends_model_messages_and_key(fake_openai):
    fake_openai.script("The delay doubles [1].")
    with make_client(fake_openai) as client:
        text = client.complete(MESSAGES, temperature=0.2, response_format={"type": "json_object"})
    assert text == "The delay doubles [1]."
    (req,) = fake_openai.requests
    assert req["path"] == "/v1/chat/completions"
    assert req["body"]["model"] == "fake-model"
    assert req["body"]["messages"] == MESSAGES
    assert req["body"]["temperature"] == 0.2
    assert req["body"]["stream"] is False
    assert req["body"]["response_format"] == {"type": "json_object"}
    assert req["headers"]["Authorization"] == f"Bearer {KEY}"


def test_no_key_sends_no_authorization(fake_openai):
    fake_openai.script("ok")
    with make_client(fake_openai, api_key="") as client:
        assert client.complete(MESSAGES) == "ok"
    assert "Authorization" not in fake_openai.requests[0]["headers"]


def test_content_as_list_of_parts(fake_openai):
    body = {"choices": [{"message": {"role": "assistant",
                                     "content": [{"type": "text", "text": "a "}, {"type": "text", "text": "b"}]}}]}
    fake_openai.script(Reply(raw=json.dumps(body)))
    with make_client(fake_openai) as client:
        assert client.complete(MESSAGES) == "a b"


@pytest.mark.parametrize("chunks", [1, 3, 9])
def test_stream_yields_deltas_in_order(fake_openai, chunks):
    content = "Retries use exponential backoff [1]; the cap is `backoff_max` [2]. Ünïcödé → 你好."
    fake_openai.script(Reply(content=content, chunks=chunks))
    with make_client(fake_openai) as client:
        deltas = list(client.stream(MESSAGES))
    assert "".join(deltas) == content
    assert all(deltas)
    assert len(deltas) == min(chunks, len(content))
    assert fake_openai.chat_requests()[0]["stream"] is True


def test_stream_accepts_a_whole_completion(fake_openai):
    """A server that ignores "stream" and answers with one JSON completion still works."""
    body = {"choices": [{"message": {"role": "assistant", "content": "whole [1]"}, "finish_reason": "stop"}]}
    fake_openai.script(Reply(raw=json.dumps(body)))
    with make_client(fake_openai) as client:
        assert list(client.stream(MESSAGES)) == ["whole [1]"]


def test_sse_parser():
    lines = [": keep-alive", "event: message", "data: {\"a\": 1}", "", "", "data: line one",
             "data:line two", "id: 7", "", "data: [DONE]"]
    assert list(sse_data(lines)) == ['{"a": 1}', "line one\nline two", "[DONE]"]


# -- retries -------------------------------------------------------------------------------------
def test_timeout_is_retried_then_reported(fake_openai):
    fake_openai.script(Reply(content="late", delay=0.6), Reply(content="late", delay=0.6))
    client = make_client(fake_openai, timeout=0.15, max_retries=1)
    with pytest.raises(LLMResponseError) as err:
        client.complete(MESSAGES)
    assert "RAG_LLM_TIMEOUT" in str(err.value)
    assert "2 attempts" in str(err.value)
    assert len(fake_openai.chat_requests()) == 2


def test_timeout_then_success(fake_openai):
    fake_openai.script(Reply(content="late", delay=0.6), "in time")
    client = make_client(fake_openai, timeout=0.15, max_retries=1)
    assert client.complete(MESSAGES) == "in time"


def test_stream_timeout_before_first_byte(fake_openai):
    fake_openai.script(Reply(content="late", delay=0.6))
    client = make_client(fake_openai, timeout=0.15, max_retries=0)
    with pytest.raises(LLMResponseError, match="RAG_LLM_TIMEOUT"):
        list(client.stream(MESSAGES))


def test_500_is_retried_then_reported(fake_openai):
    fake_openai.script(*[Reply(status=500, error="model runner crashed")] * 3)
    with pytest.raises(LLMResponseError) as err:
        make_client(fake_openai, max_retries=2).complete(MESSAGES)
    assert "HTTP 500" in str(err.value) and "model runner crashed" in str(err.value)
    assert "3 attempts" in str(err.value)
    assert len(fake_openai.chat_requests()) == 3


@pytest.mark.parametrize("first", [Reply(status=503), Reply(status=502), Reply(drop=True)])
def test_transient_failure_then_success(fake_openai, first):
    fake_openai.script(first, "recovered")
    assert make_client(fake_openai, max_retries=1).complete(MESSAGES) == "recovered"
    assert len(fake_openai.chat_requests()) == 2


def test_stream_open_is_retried(fake_openai):
    fake_openai.script(Reply(status=500), Reply(content="second try", chunks=2))
    assert "".join(make_client(fake_openai).stream(MESSAGES)) == "second try"


def test_429_honours_retry_after(fake_openai):
    fake_openai.script(Reply(status=429, headers={"Retry-After": "0.3"}), "ok")
    client = make_client(fake_openai, backoff=0.01, backoff_max=1.0)
    t0 = time.monotonic()
    assert client.complete(MESSAGES) == "ok"
    assert time.monotonic() - t0 >= 0.28


@pytest.mark.parametrize("status,hint", [(400, None), (401, "RAG_LLM_API_KEY"), (403, "RAG_LLM_API_KEY"),
                                         (404, "RAG_LLM_MODEL"), (422, None)])
def test_4xx_is_not_retried(fake_openai, status, hint):
    fake_openai.script(Reply(status=status, error="you sent something wrong"), "never reached")
    with pytest.raises(LLMResponseError) as err:
        make_client(fake_openai).complete(MESSAGES)
    assert f"HTTP {status}" in str(err.value) and "you sent something wrong" in str(err.value)
    if hint:
        assert hint in str(err.value)
    assert len(fake_openai.chat_requests()) == 1


# -- malformed replies ----------------------------------------------------------------------------
@pytest.mark.parametrize("raw,match", [
    ("{not json", "not valid JSON"),
    ("", "not valid JSON"),
    ('{"id": "x", "object": "chat.completion"}', "no choices"),
    ('{"choices": []}', "no choices"),
    ('[1, 2]', "no choices"),
    ('{"choices": [{"message": {"content": 42}}]}', "unexpected type"),
    ('{"error": {"message": "context length exceeded"}}', "context length exceeded"),
])
def test_malformed_completion(fake_openai, raw, match):
    fake_openai.script(Reply(raw=raw))
    with pytest.raises(LLMResponseError, match=match):
        make_client(fake_openai).complete(MESSAGES)
    assert len(fake_openai.chat_requests()) == 1


def _event(piece: str | None = None, finish: str | None = None) -> str:
    delta = {"content": piece} if piece is not None else {}
    return "data: " + json.dumps({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}) + "\n\n"


@pytest.mark.parametrize("raw,match", [
    (_event("ok") + "data: {oops\n\n", "malformed stream event"),
    ("data: [1, 2]\n\n", "malformed stream event"),
    ('data: {"error": {"message": "model crashed"}}\n\n', "model crashed"),
    (_event("partial"), "ended before the answer was complete"),
    ("this is not an event stream\n", "ended before the answer was complete"),
])
def test_malformed_stream(fake_openai, raw, match):
    fake_openai.script(Reply(raw_stream=raw))
    with pytest.raises(LLMResponseError, match=match):
        list(make_client(fake_openai).stream(MESSAGES))


def test_stream_without_done_but_finished_is_complete(fake_openai):
    fake_openai.script(Reply(raw_stream=_event("a") + _event("b") + _event(finish="stop")))
    assert list(make_client(fake_openai).stream(MESSAGES)) == ["a", "b"]


def test_stream_cut_mid_answer_is_reported_not_replayed(fake_openai):
    fake_openai.script(Reply(content="one two three fo", chunks=4, cut_after=2), "replayed")
    got: list[str] = []
    with pytest.raises(LLMResponseError, match="ended before"):
        for delta in make_client(fake_openai).stream(MESSAGES):
            got.append(delta)
    assert "".join(got) == "one two "  # what arrived was passed on, and nothing twice
    assert len(fake_openai.chat_requests()) == 1


# -- configuration and reachability ---------------------------------------------------------------
def test_connection_refused_names_the_setting_and_url():
    port = closed_port()
    client = ChatClient(LLMConfig(base_url=f"http://127.0.0.1:{port}/v1", model="m", api_key=KEY,
                                  timeout=2.0, backoff=0.01))
    for call in (lambda: client.complete(MESSAGES), lambda: list(client.stream(MESSAGES)), client.check):
        t0 = time.monotonic()
        with pytest.raises(LLMUnavailableError) as err:
            call()
        text = str(err.value)
        assert "RAG_LLM_BASE_URL" in text and f"127.0.0.1:{port}/v1" in text
        assert KEY not in text
        assert time.monotonic() - t0 < 1.5  # refused is not retried with backoff


@pytest.mark.parametrize("model", ["", "   "])
def test_no_model_names_the_setting(fake_openai, model):
    client = make_client(fake_openai, model=model)
    for call in (lambda: client.complete(MESSAGES), lambda: next(client.stream(MESSAGES)), client.check):
        with pytest.raises(LLMUnavailableError) as err:
            call()
        assert "RAG_LLM_MODEL" in str(err.value)
    assert fake_openai.requests == []


@pytest.mark.parametrize("url", ["localhost:11434", "", "ftp://host/v1"])
def test_bad_base_url_names_the_setting(url):
    client = ChatClient(LLMConfig(base_url=url, model="m"))
    with pytest.raises(LLMUnavailableError, match="RAG_LLM_BASE_URL"):
        client.complete(MESSAGES)


def test_check_reachable(fake_openai, caplog):
    make_client(fake_openai).check()
    with caplog.at_level(logging.WARNING, logger="codeseam.llm"):
        make_client(fake_openai, model="not-pulled").check()
    assert "not-pulled" in caplog.text  # reachable, but the model is not listed: a warning
    assert [r["path"] for r in fake_openai.requests] == []  # GETs are not recorded; no chat call


@pytest.mark.parametrize("status,setting", [(401, "RAG_LLM_API_KEY"), (500, "RAG_LLM_BASE_URL")])
def test_check_failures_name_the_setting(fake_openai, status, setting):
    fake_openai.models_status = status
    with pytest.raises(LLMUnavailableError, match=setting):
        make_client(fake_openai).check()


def test_check_tolerates_servers_without_model_list(fake_openai):
    fake_openai.models_status = 404
    make_client(fake_openai).check()


# -- the key never leaks --------------------------------------------------------------------------
@pytest.mark.parametrize("reply", [
    Reply(status=401, error=f"Incorrect API key provided: {KEY}"),
    Reply(status=500, error=f"upstream rejected Bearer {KEY}"),
    Reply(raw=f"<html>bad gateway for {KEY}</html>"),
    Reply(raw=json.dumps({"error": {"message": f"key {KEY} has no quota"}})),
])
def test_key_never_in_errors_or_logs(fake_openai, caplog, reply):
    fake_openai.script(*[reply] * 3)
    client = make_client(fake_openai)
    with caplog.at_level(logging.DEBUG), pytest.raises(LLMResponseError) as err:
        client.complete(MESSAGES)
    assert KEY not in str(err.value) and "***" in str(err.value)
    assert KEY not in caplog.text
    assert KEY not in repr(client.config)


def test_key_never_in_stream_errors(fake_openai, caplog):
    fake_openai.script(Reply(raw_stream=f'data: {{"error": {{"message": "bad key {KEY}"}}}}\n\n'))
    with caplog.at_level(logging.DEBUG), pytest.raises(LLMResponseError) as err:
        list(make_client(fake_openai).stream(MESSAGES))
    assert KEY not in str(err.value) and KEY not in caplog.text


def test_safe_url_drops_credentials():
    assert safe_url(f"https://user:{KEY}@api.example.test:8443/v1?key={KEY}") == "https://api.example.test:8443/v1"


# -- settings and import cost ---------------------------------------------------------------------
def test_from_settings(isolated_env, monkeypatch):
    cfg = LLMConfig.from_settings(load_settings())
    assert cfg.base_url == "http://localhost:11434/v1" and cfg.model == ""
    monkeypatch.setenv("RAG_LLM_BASE_URL", "http://10.0.0.5:8000/v1")
    monkeypatch.setenv("RAG_LLM_MODEL", "qwen2.5-coder:7b")
    monkeypatch.setenv("RAG_LLM_API_KEY", KEY)
    monkeypatch.setenv("RAG_LLM_TIMEOUT", "12.5")
    cfg = LLMConfig.from_settings(load_settings())
    assert (cfg.base_url, cfg.model, cfg.api_key, cfg.timeout) == (
        "http://10.0.0.5:8000/v1", "qwen2.5-coder:7b", KEY, 12.5)


def test_import_is_cheap():
    code = ("import sys, codeseam.llm, codeseam.answer; "
            "heavy = {'torch', 'sentence_transformers', 'onnxruntime', 'pymilvus', 'tree_sitter'}; "
            "print(sorted(heavy & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- issue 40, finding 6: an overall deadline and a reply-size cap ------------------------------

def test_a_drip_fed_stream_stops_at_the_deadline(fake_openai):
    """Before: RAG_LLM_TIMEOUT bounds each read only, so a server sending a piece every 0.2 s
    (under the 1 s timeout) held the call for the whole reply (here 100 x 0.2 s = 20 s)."""
    fake_openai.script(Reply(content="x" * 400, chunks=100, piece_delay=0.2))
    client = make_client(fake_openai, timeout=1.0, deadline=1.5)
    t0 = time.monotonic()
    got: list[str] = []
    with pytest.raises(LLMResponseError, match=r"longer than 1.5s in all \(RAG_LLM_DEADLINE\)"):
        for piece in client.stream([{"role": "user", "content": "hi"}]):
            got.append(piece)
    assert time.monotonic() - t0 < 3.0 and 0 < len(got) < 100


def test_a_slow_completion_stops_at_the_deadline_retries_included(fake_openai):
    fake_openai.script(*[Reply(content="late", delay=0.8) for _ in range(5)])
    client = make_client(fake_openai, timeout=0.5, deadline=1.2, max_retries=4, backoff=0.01)
    t0 = time.monotonic()
    with pytest.raises(LLMResponseError):
        client.complete([{"role": "user", "content": "hi"}])
    assert time.monotonic() - t0 < 2.5
    assert len(fake_openai.chat_requests()) < 5  # the retries stop at the deadline too


@pytest.mark.parametrize("stream", [False, True])
def test_a_huge_reply_is_refused_at_the_cap(fake_openai, stream):
    """Before: a 20 MB reply was read whole (and sent on: a 42 MB response, +100 MB RSS)."""
    fake_openai.script(Reply(content="y" * 300_000, chunks=30))
    client = make_client(fake_openai, max_reply_bytes=100_000)
    messages = [{"role": "user", "content": "hi"}]
    with pytest.raises(LLMResponseError, match=r"over 100000 bytes \(RAG_LLM_MAX_REPLY_BYTES\)"):
        if stream:
            assert sum(len(p) for p in client.stream(messages)) < 100_000
        else:
            client.complete(messages)
    fake_openai.script(Reply(content="small answer"))
    assert client.complete(messages) == "small answer"


def test_settings_carry_the_deadline_and_cap():
    s = load_settings(env={"RAG_LLM_DEADLINE": "30", "RAG_LLM_MAX_REPLY_BYTES": "65536"})
    config = LLMConfig.from_settings(s)
    assert (config.deadline, config.max_reply_bytes) == (30.0, 65536)
    defaults = LLMConfig.from_settings(load_settings(env={}))
    assert defaults.deadline == 300.0 and defaults.max_reply_bytes == 1_048_576
