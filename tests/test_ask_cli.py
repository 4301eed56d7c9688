"""`codeseam ask`: the real CLI, the real chat client and a loopback chat-completions server
with scripted replies (good citations, a citation never sent, none at all, a timeout, a 500,
nothing listening), over an index built with the fake embedder on real Milvus Lite."""

from __future__ import annotations

import json
import re
import socket
import subprocess

import pytest

from codeseam import api
from codeseam.answer import ABSTAIN_MESSAGE, NO_CITATION_WARNING
from codeseam.settings import load_settings
from codeseam.surfaces.cli import main
from tests.support.fake_openai import Reply
from tests.support.fixtures import RETRY_PY

QUESTION = ["how", "is", "the", "retry", "delay", "computed?"]
SOURCE_HEAD = re.compile(r"^\[(\d+)\] (\S+):(\d+)-(\d+)(?: (\S+))?$", re.M)


@pytest.fixture
def indexed(isolated_env, monkeypatch, fake_openai):
    root = isolated_env / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "retry.py").write_text(RETRY_PY)
    (root / "main.go").write_text("package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    monkeypatch.setenv("RAG_EMBEDDING_BACKEND", "fake")
    api.index(root, settings=load_settings())
    monkeypatch.setenv("RAG_LLM_MODEL", "fake-model")
    monkeypatch.setenv("RAG_LLM_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("RAG_LLM_TIMEOUT", "0.6")
    return fake_openai


def run(capsys, *args: str) -> tuple[int, str, str]:
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def cli_error(err: str) -> str:
    """The CLI's own error report (the fake server's threads may log on stderr too)."""
    assert "error: " in err, err
    mine = err[err.index("error: "):]
    assert "Traceback" not in mine, mine
    return mine


def sent_sources(server) -> dict[int, tuple[str, int, int, str]]:
    """The numbered sources the LLM was given, parsed from the request it received."""
    user = server.chat_requests()[-1]["messages"][1]["content"]
    return {int(n): (p, int(a), int(b), s or "") for n, p, a, b, s in SOURCE_HEAD.findall(user)}


def test_good_citations_are_rendered_as_path_lines(indexed, capsys):
    indexed.script("The delay is drawn with full jitter [1]. It never exceeds `cap` [1][2].")
    code, out, err = run(capsys, "ask", *QUESTION, "-k", "3")
    assert code == 0, err
    sources = sent_sources(indexed)
    assert 1 <= len(sources) <= 3
    assert "[1, 2]" in out and "Sources:" in out
    for n in (1, 2):
        path, a, b, sym = sources[n]
        assert f"[{n}] {path}:{a}-{b}" + (f" {sym}" if sym else "") in out
    assert indexed.chat_requests()[-1]["stream"] is False  # not a terminal: whole answer
    assert err == ""


def test_json_shape_and_citations_match_what_was_sent(indexed, capsys):
    indexed.script("Jitter is applied [1]. Policies retry OS errors [2].")
    code, out, _ = run(capsys, "ask", *QUESTION, "--json")
    assert code == 0
    doc = json.loads(out)
    assert set(doc) == {"answer", "citations", "weak", "notes"} and doc["weak"] is False
    assert doc["answer"] == "Jitter is applied [1]. Policies retry OS errors [2]."  # no Sources list
    sources = sent_sources(indexed)
    assert [(c["n"], c["path"], c["start_line"], c["end_line"], c["symbol"]) for c in doc["citations"]] == \
        [(n, *sources[n]) for n in (1, 2)]
    # every cited span is a real span of the indexed file
    for c in doc["citations"]:
        if c["path"] == "pkg/retry.py":
            assert 1 <= c["start_line"] <= c["end_line"] <= RETRY_PY.count("\n")


def test_citation_never_sent_is_removed_and_noted(indexed, capsys):
    indexed.script("The delay doubles per attempt [1]. The cap is eight seconds [9].")
    code, out, err = run(capsys, "ask", *QUESTION)
    assert code == 0
    assert "[9]" not in out and "The cap is eight seconds" in out
    assert "note: removed citation [9]: not among the" in err


def test_citation_never_sent_json(indexed, capsys):
    indexed.script("The delay doubles per attempt [1]. The cap is eight seconds [9].")
    code, out, _ = run(capsys, "ask", *QUESTION, "--json")
    doc = json.loads(out)
    assert code == 0 and [c["n"] for c in doc["citations"]] == [1]
    assert "[9]" not in doc["answer"] and any("[9]" in n for n in doc["notes"])


def test_no_citations_at_all_is_flagged(indexed, capsys):
    indexed.script("The delay doubles on every retry.")
    code, out, err = run(capsys, "ask", *QUESTION)
    assert code == 0 and out.rstrip("\n").endswith(NO_CITATION_WARNING)
    assert "cites none of the sources" in err
    indexed.script("The delay doubles on every retry.")
    doc = json.loads(run(capsys, "ask", *QUESTION, "--json")[1])
    assert doc["citations"] == [] and doc["answer"] == "The delay doubles on every retry."


def test_stream_prints_deltas_then_the_checked_sources(indexed, capsys):
    raw = "Full jitter is used [1].\n\nThe cap bounds it [2, 7]."
    indexed.script(Reply(content=raw, chunks=7))
    code, out, err = run(capsys, "ask", *QUESTION, "--stream")
    assert code == 0
    assert indexed.chat_requests()[-1]["stream"] is True
    shown = "Full jitter is used [1].\n\nThe cap bounds it [2]."  # checked as it arrived: [7] never shown
    assert out.startswith(shown)
    tail = out[len(shown):]
    assert tail.startswith("\n\nSources:\n[1] ") and "[2] " in tail and "[7]" not in out
    assert "removed citation [7]" in err


def test_stream_cut_midway_is_a_clear_error(indexed, capsys):
    indexed.script(Reply(content="The delay is computed from the attempt [1] with jitter.", chunks=6,
                         cut_after=2))
    code, out, err = run(capsys, "ask", *QUESTION, "--stream")
    assert code == 1 and out.endswith("\n") and out.strip()
    assert "LLM stream" in cli_error(err)


def test_weak_evidence_abstains_without_calling_the_llm(indexed, capsys, monkeypatch):
    monkeypatch.setenv("RAG_WEAK_THRESHOLD", "2.0")  # nothing is that similar: always weak
    indexed.script("must never be used [1]")
    code, out, err = run(capsys, "ask", *QUESTION)
    assert code == 0 and out.strip() == ABSTAIN_MESSAGE
    assert "abstained (weak evidence): no LLM call" in err
    code, out, _ = run(capsys, "ask", *QUESTION, "--json")
    assert code == 0 and json.loads(out) == {"answer": ABSTAIN_MESSAGE, "citations": [], "weak": True,
                                            "notes": ["abstained (weak evidence): no LLM call"]}
    assert indexed.chat_requests() == []


def test_timeout_names_the_setting(indexed, capsys):
    indexed.script(*[Reply(content="late [1]", delay=1.5)] * 3)
    code, out, err = run(capsys, "ask", *QUESTION)
    assert code == 1 and out == ""
    assert "RAG_LLM_TIMEOUT" in cli_error(err)
    assert len(indexed.chat_requests()) == 3  # retried, then given up


def test_server_error_is_reported(indexed, capsys):
    indexed.script(*[Reply(status=500, error="model crashed")] * 3)
    code, out, err = run(capsys, "ask", *QUESTION)
    assert code == 1 and out == ""
    assert "500" in cli_error(err)


def test_unreachable_llm_names_base_url_and_search_still_works(indexed, capsys, monkeypatch):
    with socket.socket() as s:  # a port with nothing listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("RAG_LLM_BASE_URL", f"http://127.0.0.1:{port}/v1")
    code, out, err = run(capsys, "ask", *QUESTION)
    assert code == 1 and "RAG_LLM_BASE_URL" in err and f"127.0.0.1:{port}" in err
    code, out, _ = run(capsys, "search", "retry", "delay", "--json")
    assert code == 0 and json.loads(out)["hits"]


def test_no_model_configured_names_the_setting_and_search_still_works(indexed, capsys, monkeypatch):
    monkeypatch.delenv("RAG_LLM_MODEL")
    code, out, err = run(capsys, "ask", *QUESTION)
    assert code == 1 and out == ""
    assert "RAG_LLM_MODEL" in err and "RAG_LLM_BASE_URL" in err and "search" in err
    assert indexed.requests == []  # refused before retrieval, nothing sent anywhere
    code, out, _ = run(capsys, "search", "compute_retry_delay", "--json")
    assert code == 0 and json.loads(out)["hits"][0]["symbol"] == "compute_retry_delay"


def test_limits_and_usage(indexed, capsys):
    code, _, err = run(capsys, "ask", "x" * 32_001)
    assert code == 1 and "too long" in err
    code, _, err = run(capsys, "ask", "why", "-k", "101")
    assert code == 2 and "101" in err  # a usage error (click)
    code, _, err = run(capsys, "ask", *QUESTION, "--repo", "nope")
    assert code == 1 and "not indexed" in err
    assert indexed.chat_requests() == []


def test_split_answer_reassembles_the_rendered_text(indexed, capsys):
    from codeseam.codec import split_answer
    from codeseam.records import Answer, Citation

    cite = Citation(1, "a.py", 1, 3, "f")
    cases = [
        Answer("q", "Body [1].\n\nSources:\n[1] a.py:1-3 f", (cite,), False),
        Answer("q", "Body.\n\n" + NO_CITATION_WARNING, (), False),
        Answer("q", ABSTAIN_MESSAGE, (), True),
        Answer("q", "The sources do not contain the answer.", (), False),
    ]
    for a in cases:
        body, tail = split_answer(a)
        assert (body + "\n\n" + tail if tail else body) == a.answer
        assert "Sources:" not in body and NO_CITATION_WARNING not in body
