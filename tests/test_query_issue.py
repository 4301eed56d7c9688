"""Issue-sized questions: the analysis (pure), the file ranking (against a brute-force
reference), and that every query of the dev sets stays on the one-line path."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from codeseam.query.files import FILE_DECAY, FILE_SPANS, rank_files
from codeseam.query.issue import (ISSUE_CHARS, PASSAGE_CHARS, Frame, bm25_text, is_issue, parse_issue, passages,
                                  resolve_frames)
from codeseam.query.pieces import Piece

GOLDEN = Path(__file__).resolve().parents[2] / "shared" / "golden"

ISSUE = '''Form.clean() drops the error of a required field
When a required field is empty, `Form.clean` raises but the error is lost.

```python
>>> f = ContactForm({})
>>> f.is_valid()
```

Traceback (most recent call last):
  File "/home/me/.venv/lib/python3.11/site-packages/django/forms/forms.py", line 200, in full_clean
    self._clean_fields()
  File "/home/me/.venv/lib/python3.11/site-packages/django/forms/fields.py", line 151, in clean
    value = self.to_python(value)
  File "/usr/lib/python3.11/json/decoder.py", line 337, in decode
    obj, end = self.raw_decode(s)
ValueError: required field missing

I think `_clean_fields` in fields.py should collect it. Thanks!
'''


def test_a_python_traceback_is_read_as_frames_messages_and_code() -> None:
    issue = parse_issue(ISSUE)
    assert issue.title == "Form.clean() drops the error of a required field"
    assert [(f.path.rsplit("/", 2)[-2:], f.line, f.function) for f in issue.frames] == [
        (["forms", "forms.py"], 200, "full_clean"), (["forms", "fields.py"], 151, "clean"),
        (["json", "decoder.py"], 337, "decode")]
    assert issue.messages == ("ValueError: required field missing",)
    assert "ContactForm" in issue.identifiers and "_clean_fields" in issue.identifiers
    assert "fields.py" in issue.files
    assert any("ContactForm" in c for c in issue.code)
    assert "Traceback" not in issue.identifiers and "home" not in issue.identifiers  # paths are not code names


@pytest.mark.parametrize(("text", "frame"), [
    ("    at Object.parse (/app/src/lib/parser.js:42:13)", ("/app/src/lib/parser.js", 42, "parse")),
    ("\tat com.acme.http.Client.send(Client.java:88)", ("Client.java", 88, "send")),
    ("File ~/env/seaborn/axisgrid.py:1490, in PairGrid.map(self, func)", ("~/env/seaborn/axisgrid.py", 1490, "map")),
    ("~/miniforge3/envs/x/seaborn/_core.py in _lookup_single(self, key)", ("~/miniforge3/envs/x/seaborn/_core.py", None,
                                                                             "_lookup_single")),
    ("panic at internal/store/lite.go:77 while opening", ("internal/store/lite.go", 77, "")),
])
def test_frames_of_other_languages_and_shells(text: str, frame: tuple) -> None:
    assert Frame(*frame) in parse_issue("An error\n" + text).frames


def test_frames_resolve_to_the_indexed_file_with_the_longest_shared_tail() -> None:
    paths = ["django/forms/fields.py", "django/db/models/fields.py", "tests/forms/fields.py", "setup.py",
             "seaborn/_base.py"]
    frames = parse_issue(ISSUE).frames + (Frame("/src/proj/setup.py", 3, "main"),
                                          Frame("/x/site-packages/matplotlib/axes/_base.py", 9, "plot"),
                                          Frame("fields.py", 1, "f"))
    got = [(p, f.function) for p, f in resolve_frames(frames, paths)]
    assert got == [("setup.py", "main"), ("django/forms/fields.py", "clean")]  # innermost first
    # decoder.py (the standard library) is not in the index; _base.py shares only its name with a
    # file in other folders; a bare fields.py names three files


def test_bm25_text_counts_the_names_not_the_common_words() -> None:
    text = bm25_text(parse_issue(ISSUE + "\nthe the the the and and when when field field field"))
    words = text.split()
    assert words.count("the") == 2 and words.count("field") <= 4  # the title's two, not the prose's four
    assert "ContactForm" in words and "_clean_fields" in words and "clean" in words  # identifier splits too
    assert text.count("Form.clean() drops the error") == 2  # the title, twice


def test_passages_fit_the_model_window_and_read_past_it() -> None:
    long = "Wrong result from resolve_redirects\n" + "word " * 3000 + "\nValueError: bad redirect\n```\nfoo()\n```"
    got = passages(parse_issue(long))
    assert 1 < len(got) <= 3 and all(len(p) <= PASSAGE_CHARS for p in got)
    assert any("ValueError: bad redirect" in p for p in got)  # the error, though it comes after 15,000 characters


def test_is_issue_and_every_dev_query_stays_a_question() -> None:
    assert is_issue(ISSUE) and is_issue("x" * (ISSUE_CHARS + 1)) and is_issue("a\nb\nc")
    assert not is_issue("where does the retry delay get computed?") and not is_issue("Rails::Engine")
    queries = []
    for path in [GOLDEN / "stdlib-dev.jsonl", *sorted((GOLDEN / "repos-dev").glob("*.jsonl"))]:
        queries += [json.loads(line)["query"] for line in path.read_text().splitlines() if line.strip()]
    for path in sorted((GOLDEN / "semble-dev").glob("*.json")):
        data = json.loads(path.read_text())
        if isinstance(data, dict):
            queries += [q["query"] for q in data.get("tasks", []) if isinstance(q, dict) and "query" in q]
    if not queries:
        pytest.skip("the dev sets are not beside this checkout")
    assert len(queries) > 500
    assert [q for q in queries if is_issue(q)] == []  # a short question is searched exactly as before


def test_parse_issue_is_linear_on_hostile_text() -> None:
    import time

    nasty = ('File "' + "a" * 100_000 + "\n" + "```" * 5000 + "at (" * 20000 + "x:" * 20000) * 1
    t0 = time.perf_counter()
    parse_issue(nasty)
    bm25_text(parse_issue(nasty))
    assert time.perf_counter() - t0 < 5.0


def _brute_files(ranked, k):
    by: dict = {}
    for p, s in ranked:
        by.setdefault((p.repo, p.path), []).append(s)
    scores = {key: sum(s * FILE_DECAY ** i for i, s in enumerate(sorted(v, reverse=True))) for key, v in by.items()}
    first = {}
    for i, (p, _) in enumerate(ranked):
        first.setdefault((p.repo, p.path), i)
    return sorted(scores, key=lambda key: (-scores[key], first[key]))[:k]


def test_rank_files_matches_a_brute_force_reference() -> None:
    rng = random.Random(7)
    for _ in range(200):
        ranked = []
        for i in range(rng.randint(0, 40)):
            path = f"f{rng.randint(0, 8)}.py"
            ranked.append((Piece("r", path, f"s{i}", "function", "python", i, i + 2, "x"), rng.random()))
        ranked.sort(key=lambda ps: -ps[1])
        k = rng.randint(1, 10)
        got = rank_files(ranked, k)
        assert [(f.repo, f.path) for f in got] == _brute_files(ranked, k)
        for f in got:
            mine = sorted((s for p, s in ranked if p.path == f.path), reverse=True)
            assert [s.score for s in f.spans] == mine[:FILE_SPANS]


def test_a_passage_is_cut_to_the_model_window_by_its_own_tokenizer(caplog) -> None:
    from codeseam.embed.fake import FakeEmbedder
    from codeseam.query.retrieve_issue import within_window

    emb = FakeEmbedder(max_tokens=50)
    code = "x = foo(a, b) + bar[c] * {d: e}; " * 40  # punctuation: many tokens per character
    cut = within_window(emb, code)
    assert emb.count_tokens(cut) <= 50 and code.startswith(cut.rstrip()) and len(cut) > 20
    assert within_window(emb, "short words") == "short words"
    with caplog.at_level("WARNING"):
        emb.embed_query(cut)
    assert "exceed" not in caplog.text  # nothing truncated, nothing logged
