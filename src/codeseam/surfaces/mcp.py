"""The MCP server (stdio, official ``mcp`` SDK): a thin skin over :class:`codeseam.service.Service`.

Tools:

- ``index_repo(path, repo_id?, wait?, vectors?)``: checks the path against the allowed roots, then
  indexes in a background thread. By default it returns at once with the job (id, state);
  ``get_status`` follows it. With ``wait=true`` the call blocks until the job ends and sends
  progress notifications (when the client asked for them with a progress token). Either
  way other tool calls keep working while the job runs. The job is ``searchable`` once every
  file is keyword-searchable and ends when the vectors are written; a second request for the
  same repo returns the running job, one for another repo is queued behind it.
  ``vectors`` (all, source, none) is ``codeseam index --vectors``.
- ``search_code(query, repo?, path_glob?, language?, role?, k?, max_tokens?)``
- ``find_references(name, repo?, kind?, max_tokens?)``: where a name is defined and used
- ``get_status()``: indexed repos, and the running or recent jobs with their progress
- ``remove_repo(repo)``
- ``ask(question, repo?, k?)``: registered only when an LLM model is configured (RAG_LLM_MODEL)

The tools hold an ``interface.IndexServer``: a :class:`~codeseam.service.Service` over the index,
or, when ``codeseam serve`` (or the keep-alive server) already holds it, an ``owner.RemoteIndex``
through that server instead of failing: agents and the command line then share one owner.

Results are compact text (``path:start-end``, symbol and a snippet) plus structured content
(the same JSON as the CLI's ``--json``). Errors come back as tool errors with the message and
hint, never as a crash. stdout carries only the protocol: the SDK moves fd 1 to stderr while
it serves, logging goes to stderr, and no progress bars are drawn.
"""

import logging
import re
from typing import Annotated, Any, Literal

from pydantic import Field

from .. import codec
from .._version import __version__
from ..errors import CodeseamError
from ..interface import IndexServer, SearchRequest
from ..jobs import Job
from ..safety import MAX_TOKENS, MIN_TOKENS

log = logging.getLogger(__name__)

SNIPPET_LINES = 12
WAIT_POLL_SECONDS = 0.25
INSTRUCTIONS = (
    "codeseam searches indexed source code (hybrid dense + BM25) and cites exact lines. "
    "Use search_code to find code by meaning or by name, then read the cited lines; find_references lists where "
    "a symbol is defined, called, imported and used (code only) and its callers. "
    "index_repo adds or re-syncs a repository (incremental); get_status shows what is indexed. "
    "Searches see the files as they are now: changed files are re-synced first, and a hit marked STALE "
    "says where its text is now or that it is gone; never edit by the lines of a stale hit."
)


def _text(text: str, data: dict[str, Any] | None = None, *, error: bool = False):
    from mcp_types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data,
                          is_error=error)


def tool_hint(hint: str | None) -> str | None:
    """A CLI hint said in this server's terms (``codeseam index`` -> the index_repo tool)."""
    if not hint:
        return hint
    hint = re.sub(r"run `codeseam index PATH --repo-id ([^`]+)`", r"call index_repo with repo_id=\1", hint)
    return hint.replace("run `codeseam index PATH`", "call index_repo with the repository's path")


def _failure(exc: CodeseamError):
    hint = tool_hint(exc.hint)
    return _text(f"error: {exc.message}" + (f"\nhint: {hint}" if hint else ""), codec.error_json(exc, hint), error=True)


async def _run(fn, *args: Any, **kwargs: Any):
    import functools

    import anyio

    return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs))


REFS_MAX_TOKENS = 6000  # find_references' default budget: a common name has thousands of uses


def format_refs(result) -> str:
    """References for agents: one line each (``path:line:col kind in symbol: text``), the callers,
    and what a budget left out."""
    from ..references.find import reference_line

    counts = ", ".join(f"{n} {k}" for k, n in result.counts().items()) or "none"
    lines = [f"{len(result.refs)} references to {result.name} ({counts})"]
    lines += [f"note: {n}" for n in result.notes]
    lines += [reference_line(r) for r in result.refs]
    if result.callers:
        lines.append(f"callers ({len(result.callers)}):")
        lines += [f"- {c.path}:{c.start_line}-{c.end_line} {c.symbol} (lines {', '.join(map(str, c.lines))})"
                  for c in result.callers]
    if result.left_out:
        lines.append(f"{result.left_out} more references left out to fit {result.tokens} tokens: narrow with kind, "
                     "repo or a qualified name (Type.method), or raise max_tokens")
    return "\n".join(lines)


def format_hits(result) -> str:
    """Compact text for agents: one header line per hit, then a fenced snippet (the whole text
    when a token budget chose the hits, and a last line saying what it left out)."""
    from ..fit import left_out_note

    from .render import short_query

    full = result.fit is not None
    lines = [f'{len(result.hits)} results for "{short_query(result.query)}"']
    if result.files:
        lines.append("files to open:")
        lines += [f"  {f.path}  ({f.role}, score {f.score:.4f}) "
                  + ", ".join(f"{s.start_line}-{s.end_line} {s.symbol}".rstrip() for s in f.spans)
                  for f in result.files]
    if result.weak:
        lines.append("weak evidence: nothing indexed is close to this query; these are only the nearest matches")
    lines += [f"note: {n}" for n in result.notes]
    for i, h in enumerate(result.hits, 1):
        where = f"{h.path}:{h.start_line}-{h.end_line}" if h.lines_current else f"{h.path} (NOT at its indexed lines)"
        lines.append(f"\n[{i}] {where} {h.symbol}  ({h.repo}, {h.language}, {h.role}, score {h.score:.4f})"
                     + ("  STALE" if h.stale else ""))
        if h.note:
            lines.append(f"stale: {h.note}")
        body = h.text.rstrip("\n").split("\n")
        fence = "````" if "```" in h.text else "```"
        lines.append(f"{fence}{h.language}\n" + "\n".join(body if full else body[:SNIPPET_LINES]) + f"\n{fence}")
        if len(body) > SNIPPET_LINES and not full:
            lines.append(f"... {len(body) - SNIPPET_LINES} more lines (to line {h.end_line})")
    if result.fit is not None:
        lines.append(left_out_note(result.fit))
    return "\n".join(lines)


def format_status(st, jobs: list[Job], llm: bool) -> str:
    lines = [f"index: {st.uri} (embedder {st.embedder}, {st.dim}-d; chunker {st.chunker})"]
    lines += [f"- {r.repo_id}: {r.files} files, {r.chunks} chunks, {r.state}, root {r.root}"
              + (f"; freshness {r.freshness}" + (f" ({r.freshness_note})" if r.freshness_note else "")
                 if r.freshness else "") for r in st.repos]
    if not st.repos:
        lines.append("no repos indexed yet: call index_repo with a repository path")
    lines += [j.line() for j in jobs]
    lines.append("ask: " + ("available" if llm else "off (no LLM configured: RAG_LLM_MODEL)"))
    return "\n".join(lines)


def build_server(service: IndexServer, *, open_on_start: bool = False):
    """The MCPServer with codeseam's tools over ``service``. With ``open_on_start`` the index is
    opened in the background as the session starts (after stdout is claimed by the SDK), so the
    handshake is not delayed; a tool call made meanwhile waits for it."""
    import threading
    from contextlib import asynccontextmanager

    import anyio
    from mcp.server.mcpserver import Context, MCPServer
    from mcp_types import CallToolResult, ToolAnnotations

    def _open_quietly() -> None:
        try:
            service.open()
        except CodeseamError as exc:  # busy or broken: the tools report it and retry on each call
            log.warning("the index is not open yet: %s", exc)

    @asynccontextmanager
    async def lifespan(_server):
        if open_on_start:
            threading.Thread(target=_open_quietly, name="codeseam-open", daemon=True).start()
        yield {}

    server = MCPServer("codeseam", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING",
                       lifespan=lifespan)
    K = Annotated[int, Field(ge=1, le=100, description="Number of results (1..100)")]
    Budget = Annotated[int, Field(ge=MIN_TOKENS, le=MAX_TOKENS, description="Fit the result to this many tokens")]

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True))
    async def index_repo(ctx: Context, path: str, repo_id: str | None = None, wait: bool = False,
                         vectors: Literal["all", "source", "none"] | None = None) -> CallToolResult:
        """Index (or incrementally re-sync) the repository folder at `path` (absolute, under an
        allowed root). Runs in the background and returns the job at once; follow it with
        get_status: it is searchable (keyword) once the job says searchable, and done when every
        vector is written. With wait=true, block until done and report progress. vectors: which
        files get dense vectors (all, source, none; default the repo's recorded choice, else all).
        A job already running for the repo is returned instead of a second one."""
        try:
            job = await _run(service.start_index, path, repo_id, vectors)
        except CodeseamError as exc:
            return _failure(exc)
        if not wait:
            return _text(f"started {job.line()}; path {job.path}\ncall get_status to follow it",
                         codec.job_json(job, compact=True))
        while job.running:
            await ctx.report_progress(job.files_done, job.files_total, job.line())
            await anyio.sleep(WAIT_POLL_SECONDS)
            try:
                job = await _run(service.job, job.id)
            except CodeseamError as exc:
                return _failure(exc)
        await ctx.report_progress(job.files_done, job.files_total, job.line())
        failed = job.state != "done"
        text = job.line() + (f"\nhint: {job.hint}" if failed and job.hint else "")
        return _text(text, codec.job_json(job, compact=True), error=failed)

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def search_code(query: str, repo: str | None = None, path_glob: str | None = None,
                    language: str | None = None, role: str | None = None,
                    k: K | None = None, max_tokens: Budget | None = None, files: bool = False) -> CallToolResult:
        """Search the indexed code by meaning and by name (hybrid dense + BM25). `query` may be a
        question, a name, or a whole issue or stack trace (up to 32,000 characters). Filters: repo id,
        path glob (e.g. 'src/**/*.py'), language (e.g. python, go), role (comma list of source,
        test, docs, example, changelog, config, build, generated, benchmark, fixture; default:
        all, source preferred); k results (default 8).
        Returns path:start-end, the symbol, the file's role and a snippet for each hit. Files changed
        since they were indexed are re-synced first; a hit that could not be is marked STALE with a note.
        With max_tokens: the best hits that fit that many tokens, whole, definitions first (k 30 unless
        given), and a line saying which hits were left out. With files: first the ranked files to
        open (path, score, best spans), then the hits."""
        try:
            result = service.search(SearchRequest(query, repo=repo, path_glob=path_glob, language=language,
                                                  role=tuple((role or "").split(",")), k=k, max_tokens=max_tokens,
                                                  files=files))
        except CodeseamError as exc:
            return _failure(exc)
        return _text(format_hits(result), codec.search_json(result))

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def find_references(name: str, repo: str | None = None, kind: str | None = None,
                        max_tokens: Budget | None = None) -> CallToolResult:
        """Where a symbol is defined and used: every occurrence of `name` in code (not comments or
        strings) at the files' current lines, as `path:line:col kind in enclosing-symbol: line`, then
        its callers (the definitions whose bodies reference it). `name` may be qualified: Type.method,
        pkg::name. kind: comma list of def, call, import, use (default all). Fitted to max_tokens
        (default 6000); what did not fit is counted at the end."""
        try:
            result = service.refs(name, repo=repo, kind=kind, max_tokens=max_tokens or REFS_MAX_TOKENS)
        except CodeseamError as exc:
            return _failure(exc)
        return _text(format_refs(result), codec.refs_json(result))

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def get_status() -> CallToolResult:
        """What is indexed (repos, files, chunks), where, and the running or recent indexing jobs."""
        try:
            st = service.status()
        except CodeseamError as exc:
            return _failure(exc)
        jobs = service.jobs()
        data = {"index": codec.status_json(st), "jobs": [codec.job_json(j, compact=True) for j in jobs],
                "llm": service.llm_configured}
        return _text(format_status(st, jobs, service.llm_configured), data)

    @server.tool(annotations=ToolAnnotations(destructive_hint=True))
    def remove_repo(repo: str) -> CallToolResult:
        """Remove a repository (all its chunks and its file list) from the index."""
        try:
            n = service.remove(repo)
        except CodeseamError as exc:
            return _failure(exc)
        return _text(f"removed {repo}: {n} chunks", {"repo": repo, "removed_chunks": n})

    if service.llm_configured:
        @server.tool(annotations=ToolAnnotations(read_only_hint=True))
        def ask(question: str, repo: str | None = None, k: K | None = None) -> CallToolResult:
            """Answer a question about the indexed code with checked citations [n] to exact lines.
            Abstains (no LLM call) when the search finds nothing close."""
            try:
                answer = service.ask(question, repo=repo, k=k)
            except CodeseamError as exc:
                return _failure(exc)
            notes = "".join(f"\nnote: {n}" for n in answer.notes)
            return _text(answer.answer + notes, codec.answer_json(answer, text=True))

    return server


def run_stdio(settings) -> None:
    """Serve MCP over stdio until the client closes the connection: through the server that holds
    the index when there is one, else holding it here (``owner.hold.Holder``: opened in the
    background as the session starts, closed in the one order when it ends; a SIGTERM kills the
    process as it is, which leaves the index consistent)."""
    import contextlib

    import anyio

    from ..owner import RemoteIndex, live_server
    from ..owner.hold import Holder

    served = live_server(settings)
    remote = None
    if served is not None and served.kind == "http":  # `codeseam serve` holds the index: use it
        try:
            remote = RemoteIndex(served, settings)
            remote.llm_configured  # noqa: B018 - reaches the server now: a bad token or a dead server says so here
            log.warning("the index is held by the codeseam server at %s (pid %d): serving through it",
                        served.url, served.pid)
        except CodeseamError as exc:
            log.warning("cannot use the codeseam server at %s: %s", served.url, exc)
            if remote is not None:
                remote.close()
            remote = None
    with contextlib.ExitStack() as stack:
        service: IndexServer = (stack.enter_context(remote) if remote is not None else
                                stack.enter_context(Holder(settings, kind="mcp", lazy=True, signals=False)).service)
        anyio.run(build_server(service, open_on_start=True).run_stdio_async)
