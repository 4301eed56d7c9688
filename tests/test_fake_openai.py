"""The loopback OpenAI server itself behaves as scripted (it underpins the LLM tests)."""
from __future__ import annotations

import httpx

from tests.support.fake_openai import Reply


def test_scripted_chat_and_embeddings(fake_openai):
    fake_openai.script("hello [1]", Reply(status=500))
    r = httpx.post(fake_openai.base_url + "/chat/completions", json={"messages": []})
    assert r.json()["choices"][0]["message"]["content"] == "hello [1]"
    r = httpx.post(fake_openai.base_url + "/chat/completions", json={"messages": []})
    assert r.status_code == 500
    r = httpx.post(fake_openai.base_url + "/embeddings", json={"input": ["a b", "a b"]})
    vecs = [d["embedding"] for d in r.json()["data"]]
    assert vecs[0] == vecs[1] and len(vecs[0]) == fake_openai.dim


def test_streaming(fake_openai):
    fake_openai.script(Reply(content="streamed answer text", chunks=5))
    with httpx.stream("POST", fake_openai.base_url + "/chat/completions",
                      json={"messages": [], "stream": True}) as r:
        lines = [line for line in r.iter_lines() if line.startswith("data: ")]
    assert lines[-1] == "data: [DONE]"
    assert len(lines) >= 6
