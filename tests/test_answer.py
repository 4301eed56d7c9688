"""Answers with checked citations: the pure rule, and the whole step against the loopback LLM."""
from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codeseam.answer import (
    ABSTAIN_MESSAGE,
    NO_CITATION_WARNING,
    SYSTEM_PROMPT,
    UNCITED_MARK,
    Source,
    answer_question,
    build_messages,
    build_sources,
    check_citations,
    format_sources,
)
from codeseam.errors import LLMResponseError, LLMUnavailableError
from codeseam.llm import ChatClient, LLMConfig
from codeseam.records import Hit
from tests.support.fake_openai import Reply

QUESTION = "How is the retry delay computed?"


def make_hits(n: int = 5) -> list[Hit]:
    return [
        Hit(repo="demo", path=f"src/pkg/mod{i}.py", symbol=f"Retry.step{i}", kind="method",
            language="python", start_line=10 * i, end_line=10 * i + 4, score=1.0 / i,
            text=f"def step{i}(self):\n    return self.base * 2 ** {i}\n")
        for i in range(1, n + 1)
    ]


SOURCES = build_sources(make_hits())
N = len(SOURCES)


def cited(result) -> list[int]:
    return [c.n for c in result.citations]


def client_for(server, **kw) -> ChatClient:
    cfg = dict(base_url=server.base_url, model="fake-model", timeout=2.0, max_retries=1,
               backoff=0.01, backoff_max=0.02)
    cfg.update(kw)
    return ChatClient(LLMConfig(**cfg))


# -- building the request ---------------------------------------------------------------------
def test_build_sources_numbers_hits_in_order():
    hits = make_hits(4)
    sources = build_sources(hits)
    assert [s.n for s in sources] == [1, 2, 3, 4]
    for s, h in zip(sources, hits, strict=True):
        assert (s.path, s.start_line, s.end_line, s.symbol, s.text) == (
            h.path, h.start_line, h.end_line, h.symbol, h.text)
    assert build_sources([]) == []


def test_build_messages_headers_texts_and_question():
    system, user = build_messages(QUESTION, SOURCES)
    assert system == {"role": "system", "content": SYSTEM_PROMPT}
    assert user["role"] == "user"
    body = user["content"]
    positions = []
    for s in SOURCES:
        header = f"[{s.n}] {s.path}:{s.start_line}-{s.end_line} {s.symbol}"
        assert header in body
        start = body.index(header)
        assert body.index(s.text.rstrip("\n"), start) > start  # its text follows its header
        positions.append(start)
    assert positions == sorted(positions)
    assert body.rindex(QUESTION) > positions[-1]  # the question comes after the sources


def test_system_prompt_states_the_rules():
    text = SYSTEM_PROMPT.lower()
    assert "only from the sources" in text
    assert "[1]" in text and "cite" in text
    assert "do not contain the answer" in text


def test_source_text_with_backticks_keeps_its_fence_intact():
    tricky = Source(1, "README.md", 1, 5, "", "Use:\n```sh\nmake test\n```\n")
    (_, user) = build_messages("how to test?", [tricky])
    content = user["content"]
    assert "[1] README.md:1-5\n````\n" in content  # a longer fence than the text's own
    assert tricky.text.rstrip("\n") + "\n````" in content


# -- the citation rule, by example --------------------------------------------------------------
def test_good_citations_are_kept_and_rendered():
    raw = ("The delay is `base * 2 ** n` [1]. Steps two and three add jitter [2][3].\n\n"
           "The cap comes from the config [1, 4] and ranges work too [3-5].")
    r = check_citations(raw, SOURCES)
    assert cited(r) == [1, 2, 3, 4, 5]
    assert r.invalid == () and r.uncited_paragraphs == 0
    assert "[2, 3]" in r.body and "[3, 4, 5]" in r.body and "[1, 4]" in r.body
    for s in SOURCES:
        assert f"[{s.n}] {s.path}:{s.start_line}-{s.end_line} {s.symbol}" in r.text
    assert r.text == r.body + "\n\n" + format_sources(r.citations)
    assert r.notes == ()


def test_only_cited_sources_are_listed():
    r = check_citations("Only the second one matters [2].", SOURCES)
    assert cited(r) == [2]
    assert r.citations[0].path == SOURCES[1].path
    assert SOURCES[0].path not in r.text


def test_citation_never_sent_is_removed_and_reported():
    raw = "The delay doubles [1]. It is capped at eight seconds [9].\n\nJitter is added [2, 9]."
    r = check_citations(raw, SOURCES)
    assert cited(r) == [1, 2]
    assert r.invalid == (9,)
    assert "[9]" not in r.text and "9]" not in r.body
    assert "capped at eight seconds." in r.body and "Jitter is added [2]." in r.body
    assert any("[9]" in note and f"{N} sources" in note for note in r.notes)


def test_zero_and_out_of_range_are_invalid():
    r = check_citations("Alpha [0]. Beta [6-7] [1].", SOURCES)
    assert cited(r) == [1] and r.invalid == (0, 6, 7)
    assert r.body == "Alpha. Beta [1]."


def test_no_citations_at_all_is_said_clearly():
    raw = "The delay doubles each time.\n\nIt is capped somewhere."
    r = check_citations(raw, SOURCES)
    assert r.citations == () and r.invalid == ()
    assert r.uncited_paragraphs == 2
    assert UNCITED_MARK not in r.body  # one clear warning, not a marker per paragraph
    assert r.text.endswith(NO_CITATION_WARNING)
    assert any("none of the sources" in note for note in r.notes)


def test_uncited_paragraph_is_marked_when_others_cite():
    raw = "The delay doubles [1].\n\nIt is probably fine in production.\n\nCapped [2]."
    r = check_citations(raw, SOURCES)
    assert r.uncited_paragraphs == 1
    assert "It is probably fine in production. " + UNCITED_MARK in r.body
    assert r.body.count(UNCITED_MARK) == 1
    assert any("1 paragraph" in note for note in r.notes)


def test_headings_lead_ins_and_code_blocks_need_no_citation():
    raw = ("## How it works\n\nThe steps are:\n\n- doubles the delay [1]\n- adds jitter [2]\n\n"
           "```python\ndelay = base * 2 ** attempt  # x[9]\n```")
    r = check_citations(raw, SOURCES)
    assert r.uncited_paragraphs == 0 and r.invalid == ()
    assert "x[9]" in r.body  # code is left exactly as written


def test_code_is_never_a_citation():
    raw = ("It reads `args[0]` and `opts[9]`, then args[0] and rows[9][1] [1].\n\n"
           "~~~\nitems[3] = items[9]\n~~~\n\n```\n[9]\n```")
    r = check_citations(raw, SOURCES)
    assert r.invalid == () and cited(r) == [1]
    for code in ("`args[0]`", "`opts[9]`", "args[0]", "rows[9][1]", "items[3] = items[9]", "```\n[9]\n```"):
        assert code in r.body


def test_glued_group_counts_only_when_all_numbers_were_sent_and_is_never_rewritten():
    r = check_citations("The loop uses step[2] and table[1][3].", SOURCES)
    assert cited(r) == [1, 2, 3]
    assert "step[2] and table[1][3]" in r.body


def test_markdown_link_is_not_a_citation():
    r = check_citations("See [1](https://example.test/x) and the code [2].", SOURCES)
    assert cited(r) == [2] and "[1](https://example.test/x)" in r.body


def test_source_word_form_and_spacing_forms():
    r = check_citations("A [Source 3]. B [1] [2]. C [4;5]. D [ 2 , 4 ].", SOURCES)
    assert cited(r) == [1, 2, 3, 4, 5]
    assert r.body == "A [3]. B [1, 2]. C [4, 5]. D [2, 4]."


def test_model_abstention_is_reported_not_warned():
    raw = "The sources do not contain the answer. They show `step1` only, not the cap."
    r = check_citations(raw, SOURCES)
    assert r.citations == () and r.uncited_paragraphs == 0
    assert NO_CITATION_WARNING not in r.text
    assert any("do not contain" in note for note in r.notes)


def test_models_own_source_list_is_replaced():
    raw = ("The delay doubles [1].\n\nSources:\n[1] src/pkg/mod1.py\n[4] src/made/up.py\n")
    r = check_citations(raw, SOURCES)
    assert cited(r) == [1]  # [4] was cited only in the model's own list
    assert "made/up.py" not in r.text
    assert any("own source list" in note for note in r.notes)


def test_think_blocks_are_dropped():
    r = check_citations("<think>maybe [9] or [3]</think>\nThe delay doubles [1].", SOURCES)
    assert cited(r) == [1] and r.invalid == () and "think" not in r.text


def test_empty_answer():
    r = check_citations("  \n", SOURCES)
    assert r.citations == () and "empty answer" in r.text


# -- the citation rule, as a property -------------------------------------------------------------
WORDS = ["the", "delay", "grows", "with", "each", "retry", "and", "stops", "at", "cap", "jitter"]


@st.composite
def answers(draw):
    n_sources = draw(st.integers(1, 6))
    paragraphs, valid, invalid, uncited = [], set(), set(), 0
    for _ in range(draw(st.integers(1, 4))):
        sentences, para_valid = [], set()
        for _ in range(draw(st.integers(1, 3))):
            words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6))
            if draw(st.booleans()):
                words.append(f"`arr[{draw(st.integers(0, 12))}]`")
            nums = draw(st.lists(st.integers(0, n_sources + 3), max_size=3))
            group = ""
            if nums:
                form = draw(st.sampled_from(["comma", "adjacent", "spaced", "semicolon", "range"]))
                if form == "range":
                    lo = nums[0]
                    nums = list(range(lo, lo + draw(st.integers(0, 3)) + 1))
                    group = f" [{nums[0]}-{nums[-1]}]"
                else:
                    sep = {"comma": ", ", "semicolon": "; "}.get(form)
                    joiner = "" if form == "adjacent" else " "
                    group = (" [" + sep.join(map(str, nums)) + "]") if sep else (
                        " " + joiner.join(f"[{x}]" for x in nums))
            para_valid |= {x for x in nums if 1 <= x <= n_sources}
            invalid |= {x for x in nums if not 1 <= x <= n_sources}
            sentences.append(" ".join(words) + group + ".")
        valid |= para_valid
        uncited += not para_valid
        paragraphs.append(" ".join(sentences))
    return n_sources, "\n\n".join(paragraphs), valid, invalid, uncited


@settings(max_examples=300, deadline=None)
@given(answers())
def test_citation_rule_invariants(case):
    n_sources, raw, valid, invalid, uncited = case
    sources = build_sources(make_hits(n_sources))
    r = check_citations(raw, sources)
    assert set(cited(r)) == valid and cited(r) == sorted(valid)
    assert set(r.invalid) == invalid
    for c in r.citations:
        src = sources[c.n - 1]
        assert (c.path, c.start_line, c.end_line, c.symbol) == (src.path, src.start_line, src.end_line, src.symbol)
    prose = re.sub(r"`[^`]*`", "", r.body)
    for group in re.findall(r"\[([\d, ]+)\]", prose):
        assert all(1 <= int(x) <= n_sources for x in group.split(","))
    assert re.findall(r"`arr\[\d+\]`", raw) == re.findall(r"`arr\[\d+\]`", r.body)
    words = lambda t: [w for w in re.findall(r"\b[a-z]+\b", t) if w != "uncited"]  # noqa: E731
    assert words(r.body) == words(raw)  # nothing but citations changes
    assert r.uncited_paragraphs == uncited
    if valid:
        assert r.body.count(UNCITED_MARK) == uncited
        assert r.text.endswith(format_sources(r.citations))
    else:
        assert UNCITED_MARK not in r.body and r.text.endswith(NO_CITATION_WARNING)
    again = check_citations(r.body, sources)
    assert again.citations == r.citations and again.invalid == ()


# -- the whole step, against the loopback LLM ------------------------------------------------------
def test_weak_evidence_abstains_without_calling_the_llm(fake_openai):
    fake_openai.script("should never be asked [1]")
    for hits, weak in ((make_hits(), True), ([], False)):
        answer = answer_question(QUESTION, hits, client_for(fake_openai), weak=weak)
        assert answer.weak is True and answer.citations == ()
        assert answer.answer == ABSTAIN_MESSAGE and answer.question == QUESTION
    assert fake_openai.chat_requests() == []


def test_good_citations_end_to_end(fake_openai):
    fake_openai.script("The delay doubles per attempt [1]. It is capped [2][3].")
    answer = answer_question(QUESTION, make_hits(), client_for(fake_openai), weak=False)
    assert answer.weak is False
    assert cited(answer) == [1, 2, 3]
    assert "[2, 3]" in answer.answer and "src/pkg/mod2.py:20-24 Retry.step2" in answer.answer
    (request,) = fake_openai.chat_requests()
    assert request["messages"] == build_messages(QUESTION, build_sources(make_hits()))
    assert request["temperature"] == 0.0


def test_citation_never_sent_end_to_end(fake_openai):
    fake_openai.script("The delay doubles [1]. The cap is eight seconds [9].")
    answer = answer_question(QUESTION, make_hits(), client_for(fake_openai), weak=False)
    assert cited(answer) == [1]
    assert "[9]" not in answer.answer
    assert any("removed citation [9]" in note for note in answer.notes)


def test_no_citations_end_to_end(fake_openai):
    fake_openai.script("The delay doubles on every retry.")
    answer = answer_question(QUESTION, make_hits(), client_for(fake_openai), weak=False)
    assert answer.citations == () and answer.weak is False
    assert NO_CITATION_WARNING in answer.answer


def test_streaming_passes_checked_lines_in_order_then_checks(fake_openai):
    raw = "The delay doubles per attempt [1][2]. It is capped at a maximum [9].\n\nJitter is random [3]."
    fake_openai.script(Reply(content=raw, chunks=6))
    deltas: list[str] = []
    answer = answer_question(QUESTION, make_hits(), client_for(fake_openai), weak=False,
                             on_delta=deltas.append)
    assert "".join(deltas) == "The delay doubles per attempt [1, 2]. It is capped at a maximum.\n\nJitter is random [3]."
    assert len(deltas) >= 4  # settled words as they arrive, not the whole reply at the end
    assert fake_openai.chat_requests()[0]["stream"] is True
    assert answer.answer == check_citations(raw, build_sources(make_hits())).text
    assert cited(answer) == [1, 2, 3]


def test_a_streamed_reply_shows_no_invalid_citation_nor_its_own_source_list(fake_openai):
    """Issue 40, finding 6: before, the raw deltas went to the screen, so ``[9]`` and the
    model's own ``Sources:`` list (naming /etc/passwd, never sent) stayed there, the checked
    list printed after them."""
    raw = ("<think>the user wants [7]</think>The delay doubles [1] [9].\n"
           "```python\nx = args[9]\n```\n"
           "It is capped [2; 12].\n\nSources:\n[1] /etc/passwd:1-1\n[9] ~/.ssh/id_rsa:1-3\n")
    fake_openai.script(Reply(content=raw, chunks=40))
    deltas: list[str] = []
    answer = answer_question(QUESTION, make_hits(), client_for(fake_openai), weak=False,
                             on_delta=deltas.append)
    shown = "".join(deltas)
    assert shown == "The delay doubles [1].\n```python\nx = args[9]\n```\nIt is capped [2].\n\n"
    assert "/etc/passwd" not in shown and "[7]" not in shown and "think" not in shown
    assert "/etc/passwd" not in answer.answer and cited(answer) == [1, 2]
    # a heading that was not a trailing list (code follows it) is shown once the check keeps it
    raw = "Steps [1]:\n\nReferences to the base [2]\n\n```\nbase = 2\n```\n"
    fake_openai.script(Reply(content=raw, chunks=9))
    deltas = []
    answer = answer_question(QUESTION, make_hits(), client_for(fake_openai), weak=False,
                             on_delta=deltas.append)
    assert "References to the base [2]" in "".join(deltas) and "References" in answer.answer


@pytest.mark.parametrize("replies,kw,error,match", [
    ([Reply(content="late", delay=0.5)] * 2, {"timeout": 0.1}, LLMResponseError, "RAG_LLM_TIMEOUT"),
    ([Reply(status=500)] * 2, {}, LLMResponseError, "HTTP 500"),
    ([Reply(raw="{broken")], {}, LLMResponseError, "not valid JSON"),
    ([], {"model": ""}, LLMUnavailableError, "RAG_LLM_MODEL"),
])
def test_llm_failures_surface_as_clear_errors(fake_openai, replies, kw, error, match):
    fake_openai.script(*replies)
    with pytest.raises(error, match=match):
        answer_question(QUESTION, make_hits(), client_for(fake_openai, **kw), weak=False)
