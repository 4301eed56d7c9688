"""Records to JSON and back: the one module that knows the shapes, which are public (every
``--json``, the HTTP API's bodies, the MCP tools' structured content; the README documents
them). The HTTP client decodes a server's answers with it (``owner/client.py``), so a record
that went through a server is the record the local call returns: ``decode(encode(r)) == r``
within the precision a shape keeps (a score to 6 decimals, a sync time to the second;
``tests/test_codec.py``). It imports no heavy module: the CLI's path through a server stays light.
"""

from __future__ import annotations

import calendar
import dataclasses
import time
from typing import TYPE_CHECKING, Any

from . import errors
from .interface import SearchRequest
from .jobs import Job
from .records import (Answer, Caller, Citation, Cut, FileHit, FileSpan, Fit, Hit, IndexProgress, LeftOut, Reference,
                      RefsResult, RepoStatus, SearchResult, Skip, Status)

if TYPE_CHECKING:  # pragma: no cover
    from .indexing.report import IndexReport

# SearchRequest fields whose HTTP query parameter has another name (GET /search)
WIRE_NAMES = {"query": "q", "path_glob": "path", "language": "lang"}
GET_QUERY_CHARS = 2000  # a longer query travels in a POST /search body (URLs stay short)
TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


# -- search -----------------------------------------------------------------------------------

def request_params(request: SearchRequest) -> dict[str, Any]:
    """``GET /search``'s query parameters for ``request`` (every field that is not its default)."""
    params: dict[str, Any] = {}
    for f in dataclasses.fields(request):
        value = getattr(request, f.name)
        if value != f.default:
            params[WIRE_NAMES.get(f.name, f.name)] = ",".join(value) if isinstance(value, tuple) else value
    return params


def hit_json(h: Hit) -> dict[str, Any]:
    """``stale``: the file changed since the hit was indexed; ``current_lines``: where its text is
    in the file now (null when it is no longer there: then ``start_line`` .. ``end_line`` are the
    indexed lines, not the file's); ``note`` says what happened."""
    return {"repo": h.repo, "path": h.path, "symbol": h.symbol, "kind": h.kind, "language": h.language,
            "role": h.role, "start_line": h.start_line, "end_line": h.end_line, "score": round(h.score, 6),
            "text": h.text, "stale": h.stale,
            "current_lines": [h.start_line, h.end_line] if h.lines_current else None, "note": h.note}


def hit_record(d: dict[str, Any]) -> Hit:
    return Hit(d["repo"], d["path"], d["symbol"], d["kind"], d["language"], d["start_line"], d["end_line"],
               d["score"], d["text"], role=d.get("role", "source"), stale=bool(d.get("stale")),
               lines_current=d.get("current_lines", ()) is not None, note=d.get("note") or "")


def search_json(result: SearchResult, request: SearchRequest | None = None, *,
                evidence: bool = False) -> dict[str, Any]:
    """A search result as ``codeseam search --json`` prints it. ``evidence`` adds the scores the
    weak flag is decided on (the HTTP API); a ``request`` that pages adds ``total`` (the hits
    found) and ``offset``, and keeps only its page of the hits."""
    body: dict[str, Any] = {
        "query": result.query, "weak": result.weak, "hits": [hit_json(h) for h in result.hits],
        "partial": result.partial, "signals": list(result.signals),
        "progress": None if result.progress is None else {**dataclasses.asdict(result.progress),
                                                           "repos": list(result.progress.repos)},
        "notes": list(result.notes),
    }
    if result.fit is not None:
        body["fit"] = fit_json(result.fit)
    if result.files is not None:
        body["files"] = [file_json(f) for f in result.files]
    if evidence:
        body.update(best_similarity=result.best_similarity, evidence=result.evidence)
    if request is not None:
        body.update(hits=request.page(body["hits"]), total=len(body["hits"]), offset=request.offset)
    return body


def search_result(data: dict[str, Any]) -> SearchResult:
    p = data.get("progress")
    progress = None if not p else IndexProgress(**{**p, "repos": tuple(p["repos"])})
    return SearchResult(data["query"], bool(data["weak"]), tuple(hit_record(h) for h in data["hits"]),
                        data.get("best_similarity"), evidence=data.get("evidence"),
                        partial=bool(data.get("partial")), progress=progress,
                        signals=tuple(data.get("signals", ())), notes=tuple(data.get("notes", ())),
                        fit=fit_record(data["fit"]) if data.get("fit") else None,
                        files=None if data.get("files") is None else tuple(file_record(f) for f in data["files"]))


def file_json(f: FileHit) -> dict[str, Any]:
    """A ranked file (``search --files``): its summed evidence and best spans (indexed lines)."""
    return {"repo": f.repo, "path": f.path, "language": f.language, "role": f.role, "score": round(f.score, 6),
            "spans": [{"start_line": s.start_line, "end_line": s.end_line, "symbol": s.symbol,
                       "score": round(s.score, 6)} for s in f.spans]}


def file_record(d: dict[str, Any]) -> FileHit:
    return FileHit(d["repo"], d["path"], d["language"], d["role"], d["score"],
                   tuple(FileSpan(s["start_line"], s["end_line"], s["symbol"], s["score"]) for s in d["spans"]))


def fit_json(fit: Fit) -> dict[str, Any]:
    """What a token budget kept and left out (``search --max-tokens``'s ``"fit"``)."""
    return {"max_tokens": fit.max_tokens, "tokens": fit.tokens,
            "left_out": [dataclasses.asdict(x) for x in fit.left_out],
            "cut": None if fit.cut is None else dataclasses.asdict(fit.cut)}


def fit_record(data: dict[str, Any]) -> Fit:
    return Fit(data["max_tokens"], data["tokens"], tuple(LeftOut(**x) for x in data.get("left_out", ())),
               Cut(**data["cut"]) if data.get("cut") else None)


# -- references -------------------------------------------------------------------------------

def refs_json(result: RefsResult) -> dict[str, Any]:
    """A references result as ``codeseam refs --json`` prints it (``GET /refs``, the MCP tool)."""
    return {
        "name": result.name,
        "counts": result.counts(),
        "refs": [{"repo": r.repo, "path": r.path, "language": r.language, "role": r.role, "line": r.line,
                  "column": r.column, "kind": r.kind, "symbol": r.symbol, "symbol_kind": r.symbol_kind,
                  "symbol_lines": [r.symbol_start, r.symbol_end] if r.symbol_start else None, "text": r.text}
                 for r in result.refs],
        "callers": [{"repo": c.repo, "path": c.path, "symbol": c.symbol, "kind": c.kind,
                     "start_line": c.start_line, "end_line": c.end_line, "lines": list(c.lines)}
                    for c in result.callers],
        "source": result.source, "candidates": result.candidates, "files_read": result.files_read,
        "left_out": result.left_out, "tokens": result.tokens, "notes": list(result.notes),
    }


def reference_record(r: dict[str, Any]) -> Reference:
    start, end = r.get("symbol_lines") or (0, 0)  # null at the top level
    return Reference(r["repo"], r["path"], r["language"], r["role"], r["line"], r["column"], r["kind"], r["symbol"],
                     r["symbol_kind"], start, end, r["text"])


def refs_result(data: dict[str, Any]) -> RefsResult:
    refs = tuple(reference_record(r) for r in data["refs"])
    callers = tuple(Caller(c["repo"], c["path"], c["symbol"], c["kind"], c["start_line"], c["end_line"],
                           tuple(c["lines"])) for c in data.get("callers", ()))
    return RefsResult(data["name"], refs, callers, data.get("source", "index"), data.get("candidates", 0),
                      data.get("files_read", 0), data.get("left_out", 0), data.get("tokens"),
                      tuple(data.get("notes", ())))


# -- status -----------------------------------------------------------------------------------

def status_json(st: Status) -> dict[str, Any]:
    return {
        "uri": st.uri, "collection": st.collection, "embedder": st.embedder, "dim": st.dim,
        "chunker": st.chunker, "schema_version": st.schema_version,
        "repos": [
            {"repo": r.repo_id, "root": r.root, "files": r.files, "chunks": r.chunks, "state": r.state,
             "last_sync": time.strftime(TIME_FORMAT, time.gmtime(r.last_sync)) if r.last_sync else None,
             "languages": dict(r.languages), "roles": list(r.roles),
             "freshness": {"mode": r.freshness, "note": r.freshness_note},
             "vectors": {"choice": r.vectors, "pending": r.vectors_pending, "eta_seconds": r.eta_seconds}}
            for r in st.repos
        ],
    }


def status_record(data: dict[str, Any]) -> Status:
    def when(stamp: str | None) -> float | None:
        return float(calendar.timegm(time.strptime(stamp, TIME_FORMAT))) if stamp else None

    repos = tuple(RepoStatus(r["repo"], r["root"], r["files"], r["chunks"], when(r.get("last_sync")),
                             r["state"], tuple((r.get("languages") or {}).items()), tuple(r.get("roles") or ()),
                             freshness=(r.get("freshness") or {}).get("mode", ""),
                             freshness_note=(r.get("freshness") or {}).get("note", ""),
                             vectors=(r.get("vectors") or {}).get("choice", "all"),
                             vectors_pending=int((r.get("vectors") or {}).get("pending", 0)),
                             eta_seconds=(r.get("vectors") or {}).get("eta_seconds"))
                  for r in data.get("repos", ()))
    return Status(data["uri"], data["collection"], data.get("embedder", ""), data.get("dim", 0),
                  data.get("chunker", ""), data.get("schema_version", 0), repos)


# -- answers ----------------------------------------------------------------------------------

def split_answer(answer: Answer) -> tuple[str, str]:
    """``(body, tail)``: the checked answer text, and what ``answer.py`` appended to it (the
    ``Sources:`` list, or the no-citation warning; empty when nothing was appended)."""
    from .answer import NO_CITATION_WARNING, format_sources

    text = answer.answer
    tails = [format_sources(answer.citations)] if answer.citations else []
    tails.append(NO_CITATION_WARNING)
    for tail in tails:
        if text.endswith("\n\n" + tail):
            return text[: -len(tail) - 2], tail
    return text, ""


def answer_json(answer: Answer, *, text: bool = False) -> dict[str, Any]:
    """An answer as ``ask --json`` prints it: ``answer`` is the checked text without its Sources
    list. ``text`` adds the whole answer, Sources included (``POST /ask``, the MCP tool)."""
    body, _ = split_answer(answer)
    out = {"answer": body, "citations": [dataclasses.asdict(c) for c in answer.citations], "weak": answer.weak,
           "notes": list(answer.notes)}
    return {**out, "text": answer.answer} if text else out


def answer_record(data: dict[str, Any], question: str) -> Answer:
    """The answer to ``question`` from ``answer_json(..., text=True)``."""
    return Answer(question, data["text"], tuple(Citation(**c) for c in data["citations"]), bool(data["weak"]),
                  tuple(data.get("notes", ())))


# -- indexing jobs and reports ------------------------------------------------------------------

JOB_FIELDS = tuple(f.name for f in dataclasses.fields(Job) if f.compare)  # the worker's fields stay out


def job_json(job: Job, *, compact: bool = False) -> dict[str, Any]:
    """A job as JSON. ``compact`` drops the report's per-file lists (skips, warnings), keeping
    their counts: status listings stay small however large the repo."""
    out = {name: getattr(job, name) for name in JOB_FIELDS}
    if compact and job.report is not None:
        report = {k: v for k, v in job.report.items() if k not in ("skips", "warnings")}
        out["report"] = {**report, "skipped": len(job.report.get("skips", ())),
                         "warning_count": len(job.report.get("warnings", ()))}
    return out


def job_record(data: dict[str, Any]) -> Job:
    return Job(**{k: v for k, v in data.items() if k in JOB_FIELDS})


def report_json(report: IndexReport) -> dict[str, Any]:
    """An indexing run's report (``index --json``, a finished job's ``report``)."""
    return {**report.__dict__, "skips": [dataclasses.asdict(s) for s in report.skips]}


def report_record(data: dict[str, Any]) -> IndexReport:
    from .indexing.report import IndexReport

    return IndexReport(**{**data, "skips": [Skip(**s) for s in data.get("skips", ())]})


# -- errors -----------------------------------------------------------------------------------

def error_body(message: str, hint: str | None = None, kind: str = "Error") -> dict[str, Any]:
    """An error as the servers answer it: ``{"error", "hint", "type"}``."""
    return {"error": message, "hint": hint, "type": kind}


def error_json(exc: errors.CodeseamError, hint: str | None = None) -> dict[str, Any]:
    """``hint``: the skin's own words for the error's hint (the CLI's command, said as a tool)."""
    return error_body(exc.message, hint or exc.hint, type(exc).__name__)


def error_record(status: int, data: Any) -> errors.CodeseamError:
    """The codeseam error a server's error body describes (the same class when it is one)."""
    data = data if isinstance(data, dict) else {}
    message = str(data.get("error") or f"the server answered HTTP {status}")
    cls = getattr(errors, str(data.get("type") or ""), None)
    if not (isinstance(cls, type) and issubclass(cls, errors.CodeseamError)) or cls is errors.FileSkipped:
        cls = errors.FatalError
    return cls(message, hint=data.get("hint") or None)
