"""codec.py: every record through its JSON and back (through json.dumps as well) is the record
it was, within the precision a shape keeps; the request type and the protocols it travels with."""

from __future__ import annotations

import dataclasses
import inspect
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codeseam import codec, errors
from codeseam.indexing.report import IndexReport
from codeseam.interface import MODES, CodeIndex, IndexServer, SearchRequest
from codeseam.jobs import Job
from codeseam.records import (ROLES, Answer, Caller, Citation, Cut, Fit, Hit, IndexProgress, LeftOut, Reference,
                              RefsResult, RepoStatus, SearchResult, Skip, Status)

text = st.text(max_size=40)
name = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=20)
count = st.integers(0, 10**9)
line = st.integers(1, 10**6)
score = st.floats(-1e6, 1e6, allow_nan=False).map(lambda x: round(x, 6))  # the shape keeps 6 decimals
maybe_float = st.none() | st.floats(-10, 10, allow_nan=False)
stamp = st.floats(0, 4e9, allow_nan=False)

hits = st.builds(Hit, name, name, text, text, name, line, line, score, text, st.sampled_from(ROLES),
                 st.booleans(), st.booleans(), text)
progress = st.builds(IndexProgress, st.tuples(name, name), count, count, count, count)
fits = st.builds(Fit, count, count, st.lists(st.builds(LeftOut, name, name, line, line, text, text, count),
                                             max_size=3).map(tuple),
                 st.none() | st.builds(Cut, name, line, line, line))
results = st.builds(SearchResult, text, st.booleans(), st.lists(hits, max_size=4).map(tuple), maybe_float,
                    maybe_float, st.booleans(), st.none() | progress, st.lists(name, max_size=2).map(tuple),
                    st.lists(text, max_size=2).map(tuple), st.none() | fits)
# a top-level reference has no enclosing definition: its symbol lines are (0, 0)
symbol_lines = st.just((0, 0)) | st.tuples(line, line)
references = st.builds(lambda at, *f: Reference(*f[:9], *at, f[9]), symbol_lines, name, name, name,
                       st.sampled_from(ROLES), line, line, st.sampled_from(["def", "call", "import", "use"]), text,
                       text, text)
callers = st.builds(Caller, name, name, text, text, line, line, st.lists(line, max_size=3).map(tuple))
refs_results = st.builds(RefsResult, text, st.lists(references, max_size=4).map(tuple),
                         st.lists(callers, max_size=2).map(tuple), st.sampled_from(["index", "scan"]), count, count,
                         count, st.none() | count, st.lists(text, max_size=2).map(tuple))
repo_status = st.builds(RepoStatus, name, text, count, count,
                        st.none() | st.integers(1, 4 * 10**9).map(float),  # whole seconds: the shape keeps those
                        name, st.dictionaries(name, count, max_size=3).map(lambda d: tuple(d.items())),
                        st.lists(st.sampled_from(ROLES), unique=True).map(tuple), text, text)
statuses = st.builds(Status, text, name, text, count, text, count, st.lists(repo_status, max_size=3).map(tuple))
citations = st.builds(Citation, st.integers(1, 99), name, line, line, text)
answers = st.builds(Answer, text, text, st.lists(citations, max_size=3).map(tuple), st.booleans(),
                    st.lists(text, max_size=2).map(tuple))
skips = st.builds(Skip, name, name, text)
reports = st.builds(
    IndexReport, name, text, st.booleans(), count, count, count, count, count, count, count, count, count,
    count, count, st.lists(skips, max_size=3), st.lists(text, max_size=2), st.dictionaries(name, count, max_size=3),
    st.dictionaries(name, count, max_size=3), st.dictionaries(name, count | text, max_size=2), stamp, stamp,
    st.lists(name, max_size=2))
jobs = st.builds(Job, name, text, name, st.sampled_from(["running", "done", "failed", "cancelled"]), name, stamp,
                 st.none() | stamp, st.none() | count, count, count, count, text, st.none() | text, st.none() | text,
                 st.none() | reports.map(codec.report_json))


def through_json(data):
    return json.loads(json.dumps(data))


@settings(max_examples=60, deadline=None)
@given(results)
def test_search_results_round_trip(result):
    assert codec.search_result(through_json(codec.search_json(result, evidence=True))) == result
    # the CLI's shape leaves out the evidence scores, and nothing else
    plain = codec.search_result(through_json(codec.search_json(result)))
    assert plain == dataclasses.replace(result, best_similarity=None, evidence=None)


@settings(max_examples=60, deadline=None)
@given(refs_results)
def test_refs_results_round_trip(result):
    assert codec.refs_result(through_json(codec.refs_json(result))) == result
    assert codec.refs_json(result)["counts"] == result.counts()


@settings(max_examples=60, deadline=None)
@given(statuses)
def test_statuses_round_trip(status):
    assert codec.status_record(through_json(codec.status_json(status))) == status


@settings(max_examples=60, deadline=None)
@given(answers)
def test_answers_round_trip(answer):
    assert codec.answer_record(through_json(codec.answer_json(answer, text=True)), answer.question) == answer
    body, tail = codec.split_answer(answer)
    assert codec.answer_json(answer)["answer"] == body and (body + "\n\n" + tail if tail else body) == answer.answer


@settings(max_examples=60, deadline=None)
@given(reports)
def test_index_reports_round_trip(report):
    assert codec.report_record(through_json(codec.report_json(report))) == report


@settings(max_examples=60, deadline=None)
@given(jobs)
def test_jobs_round_trip(job):
    assert codec.job_record(through_json(codec.job_json(job))) == job
    compact = codec.job_json(job, compact=True)
    if job.report is not None:  # counts instead of the per-file lists
        assert "skips" not in compact["report"] and compact["report"]["skipped"] == len(job.report["skips"])


def test_a_record_that_went_through_a_server_encodes_as_the_local_one():
    """Idempotence where a shape keeps less than the record: a score to 6 decimals, a sync
    time to the second."""
    hit = Hit("r", "a.py", "f", "function", "python", 1, 2, 0.123456789, "x", stale=True, lines_current=False)
    result = SearchResult("q", False, (hit,), 0.5)
    once = codec.search_json(result)
    assert codec.search_json(codec.search_result(once)) == once and once["hits"][0]["score"] == 0.123457
    status = Status("u", "c", "e", 3, "ast", 4, (RepoStatus("r", "/r", 1, 2, 1700000000.75, "clean"),))
    once = codec.status_json(status)
    assert codec.status_json(codec.status_record(once)) == once and once["repos"][0]["last_sync"] == "2023-11-14T22:13:20Z"


def every_error_class():
    seen, todo = [], [errors.CodeseamError]
    while todo:
        cls = todo.pop()
        seen.append(cls)
        todo.extend(cls.__subclasses__())
    return [c for c in seen if c.__module__ == "codeseam.errors" and c is not errors.FileSkipped]


@pytest.mark.parametrize("cls", every_error_class(), ids=lambda c: c.__name__)
def test_errors_round_trip(cls):
    exc = cls("the message", hint="the hint")
    back = codec.error_record(409, through_json(codec.error_json(exc)))
    assert type(back) is cls and (back.message, back.hint) == ("the message", "the hint")
    for kind in ("KeyError", "FileSkipped", None):  # not a codeseam error, one a server never answers with
        assert type(codec.error_record(500, {"error": "x", "type": kind})) is errors.FatalError
    assert codec.error_record(502, "not json").message == "the server answered HTTP 502"


# -- the request ------------------------------------------------------------------------------

def test_the_request_is_checked_once_when_built():
    req = SearchRequest("  retry delay ", repo="", path_glob="", language="  ", role="Test, docs,test", k=3)
    assert (req.query, req.repo, req.path_glob, req.language, req.role) == ("retry delay", None, None, None,
                                                                           ("test", "docs"))
    for bad, needle in [({"query": " "}, "empty query"), ({"query": "q", "k": 0}, "k must be"),
                        ({"query": "q", "k": True}, "k must be"), ({"query": "q", "role": "tests"}, "unknown role"),
                        ({"query": "q", "mode": "magic"}, "mode must be"), ({"query": "q", "offset": -1}, "offset"),
                        ({"query": "q", "limit": 0}, "k must be"), ({"query": "x" * 32_001}, "too long"),
                        ({"query": "q", "max_tokens": 15}, "max_tokens must be"),
                        ({"query": "q", "max_tokens": True}, "max_tokens must be")]:
        with pytest.raises(errors.ConfigError, match=needle):
            SearchRequest(**bad)
    assert SearchRequest.of(req) is req and SearchRequest.of("q", k=2) == SearchRequest("q", k=2)
    assert SearchRequest.of(req, k=5).k == 5 and req.k == 3  # frozen: a new request


def test_a_page_is_a_slice_of_the_ranking():
    hits = list(range(10))
    assert SearchRequest("q").page(hits) == hits and not SearchRequest("q").paged
    assert SearchRequest("q", offset=3, limit=4).page(hits) == [3, 4, 5, 6]
    assert SearchRequest("q", offset=8).page(hits) == [8, 9] and SearchRequest("q", offset=8).paged
    body = codec.search_json(SearchResult("q", False, ()), SearchRequest("q", offset=2))
    assert (body["total"], body["offset"], body["hits"]) == (0, 2, [])


def test_request_params_name_every_field_that_is_set():
    req = SearchRequest("q", repo="r", path_glob="src/**", language="py", role="test,docs", k=4, mode="bm25",
                        offset=1, limit=2, max_tokens=500, files=True)
    assert codec.request_params(req) == {"q": "q", "repo": "r", "path": "src/**", "lang": "py",
                                         "role": "test,docs", "k": 4, "mode": "bm25", "offset": 1, "limit": 2,
                                         "max_tokens": 500, "files": True}
    assert codec.request_params(SearchRequest("q")) == {"q": "q"}
    unset = {f.name for f in dataclasses.fields(SearchRequest) if getattr(req, f.name) == f.default}
    assert not unset, f"give {unset} a value above: every field must travel"


def test_modes_are_the_retrieval_modes():
    from codeseam.query.retrieve import MODES as RETRIEVE_MODES

    assert set(MODES) == set(RETRIEVE_MODES)


# -- the protocols ----------------------------------------------------------------------------

def members(protocol) -> dict[str, inspect.Signature]:
    names = {n for n in protocol.__dict__ if not n.startswith("_")} | set(getattr(protocol, "__annotations__", {}))
    for base in protocol.__mro__[1:]:
        if base not in (object,) and getattr(base, "_is_protocol", False) and base.__name__ != "Protocol":
            names |= {n for n in base.__dict__ if not n.startswith("_")}
    return {n: inspect.signature(getattr(protocol, n)) if callable(getattr(protocol, n, None)) else None
            for n in names}


def shape(sig: inspect.Signature | None):
    if sig is None:
        return None
    return [(p.name, p.kind, p.default) for p in sig.parameters.values()]


@pytest.mark.parametrize("protocol,impl", [
    (CodeIndex, "codeseam.api:Index"), (CodeIndex, "codeseam.owner.client:RemoteIndex"),
    (IndexServer, "codeseam.service:Service"), (IndexServer, "codeseam.owner.client:RemoteIndex"),
], ids=lambda x: x if isinstance(x, str) else x.__name__)
def test_both_sides_implement_the_protocol(protocol, impl):
    """The in-process index and the remote one take the same calls: every member of the protocol,
    with the same parameters (names, kinds, defaults)."""
    import importlib

    module, cls_name = impl.split(":")
    cls = getattr(importlib.import_module(module), cls_name)
    for member, sig in members(protocol).items():
        assert hasattr(cls, member), f"{cls_name} lacks {member}"
        if sig is not None:
            assert shape(inspect.signature(getattr(cls, member)))[: len(sig.parameters)] == shape(sig), member
