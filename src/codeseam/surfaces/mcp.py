"""The MCP server (stdio, official ``mcp`` SDK): a thin skin over :class:`codeseam.service.Service`.

Tools:

- ``index_repo(path, repo_id?, wait?)``: checks the path against the allowed roots, then
  indexes in a background thread. By default it returns at once with the job (id, state);
  ``get_status`` follows it. With ``wait=true`` the call blocks until the job ends and sends
  progress notifications (when the client asked for them with a progress token). Either
  way other tool calls keep working while the job runs; one job at a time (a second
  request is a tool error saying which job runs).
- ``search_code(query, repo?, path_glob?, language?, role?, k?, max_tokens?)``
- ``find_references(name, repo?, kind?, max_tokens?)``: where a name is defined and used
- ``get_status()``: indexed repos, and the running or recent jobs with their progress
- ``remove_repo(repo)``
- ``ask(question, repo?, k?)``: registered only when an LLM model is configured (RAG_LLM_MODEL)

When ``codeseam serve`` already holds the index, the tools go through it (``owner.RemoteService``)
instead of failing: agents and the command line then share one owner.

Results are compact text (``path:start-end``, symbol and a snippet) plus structured content
(the same JSON as the CLI's ``--json``). Errors come back as tool errors with the message and
hint, never as a crash. stdout carries only the protocol: the SDK moves fd 1 to stderr while
it serves, logging goes to stderr, and no progress bars are drawn.
"""

import logging
import re
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from .. import __version__
from ..errors import CodeseamError
from ..service import Job, Service, answer_json

if TYPE_CHECKING:  # pragma: no cover
    from ..owner import RemoteService

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
    text = f"error: {exc.message}" + (f"\nhint: {hint}" if hint else "")
    return _text(text, {"error": exc.message, "hint": hint, "type": type(exc).__name__}, error=True)


async def _run(fn, *args: Any, **kwargs: Any):
    import anyio
    import functools

    return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs))


REFS_MAX_TOKENS = 6000  # find_references' default budget: a common name has thousands of uses


def format_refs(result) -> str:
    """References for agents: one line each (``path:line:col kind in symbol: text``), the callers,
    and what a budget left out."""
    from ..references.model import reference_line

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


def format_hits(result, *, full: bool = False) -> str:
    """Compact text for agents: one header line per hit, then a fenced snippet (``full``: the
    whole text, as a token budget chose the hits)."""
    lines = [f'{len(result.hits)} results for "{result.query}"']
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


def _open_quietly(service: Service) -> None:
    try:
        service.open()
    except CodeseamError as exc:  # busy or broken: the tools report it and retry on each call
        log.warning("the index is not open yet: %s", exc)


def build_server(service: "Service | RemoteService", *, open_on_start: bool = False):
    """The MCPServer with codeseam's tools over ``service``. With ``open_on_start`` the index is
    opened in the background as the session starts (after stdout is claimed by the SDK), so the
    handshake is not delayed; a tool call made meanwhile waits for it."""
    import threading
    from contextlib import asynccontextmanager

    import anyio
    from mcp.server.mcpserver import Context, MCPServer
    from mcp_types import CallToolResult, ToolAnnotations

    from .cli_index import search_json, status_json

    @asynccontextmanager
    async def lifespan(_server):
        if open_on_start:
            threading.Thread(target=_open_quietly, args=(service,), name="codeseam-open", daemon=True).start()
        yield {}

    server = MCPServer("codeseam", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING",
                       lifespan=lifespan)
    K = Annotated[int, Field(ge=1, le=100, description="Number of results (1..100)")]
    Budget = Annotated[int, Field(ge=16, le=1_000_000, description="Fit the result to this many tokens")]

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True))
    async def index_repo(ctx: Context, path: str, repo_id: str | None = None, wait: bool = False) -> CallToolResult:
        """Index (or incrementally re-sync) the repository folder at `path` (absolute, under an
        allowed root). Runs in the background and returns the job at once; follow it with
        get_status. With wait=true, block until done and report progress."""
        try:
            job = await _run(service.start_index, path, repo_id)
        except CodeseamError as exc:
            return _failure(exc)
        if not wait:
            return _text(f"started {job.line()}; path {job.path}\ncall get_status to follow it",
                         job.to_json(compact=True))
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
        return _text(text, job.to_json(compact=True), error=failed)

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def search_code(query: str, repo: str | None = None, path_glob: str | None = None,
                    language: str | None = None, role: str | None = None,
                    k: K | None = None, max_tokens: Budget | None = None) -> CallToolResult:
        """Search the indexed code by meaning and by name (hybrid dense + BM25). Filters: repo id,
        path glob (e.g. 'src/**/*.py'), language (e.g. python, go), role (comma list of source,
        test, docs, example, changelog, config, build, generated, benchmark, fixture; default:
        all, source preferred); k results (default 8).
        Returns path:start-end, the symbol, the file's role and a snippet for each hit. Files changed
        since they were indexed are re-synced first; a hit that could not be is marked STALE with a note.
        With max_tokens: the best hits that fit that many tokens, whole, definitions first (k 30 unless
        given), and a line saying which hits were left out."""
        from ..fit import FIT_K, fit_result, left_out_note

        try:
            result = service.search(query, repo=repo, path_glob=path_glob, language=language,
                                    k=FIT_K if max_tokens is not None and k is None else k, role=role)
        except CodeseamError as exc:
            return _failure(exc)
        if max_tokens is None:
            return _text(format_hits(result), search_json(result))
        result, fitted = fit_result(result, max_tokens)
        return _text(format_hits(result, full=True) + "\n" + left_out_note(fitted), {**search_json(result), "fit": fitted})

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def find_references(name: str, repo: str | None = None, kind: str | None = None,
                        max_tokens: Budget | None = None) -> CallToolResult:
        """Where a symbol is defined and used: every occurrence of `name` in code (not comments or
        strings) at the files' current lines, as `path:line:col kind in enclosing-symbol: line`, then
        its callers (the definitions whose bodies reference it). `name` may be qualified: Type.method,
        pkg::name. kind: comma list of def, call, import, use (default all). Fitted to max_tokens
        (default 6000); what did not fit is counted at the end."""
        from ..references.model import fit_refs, refs_json

        try:
            result = fit_refs(service.refs(name, repo=repo, kind=kind), max_tokens or REFS_MAX_TOKENS)
        except CodeseamError as exc:
            return _failure(exc)
        return _text(format_refs(result), refs_json(result))

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def get_status() -> CallToolResult:
        """What is indexed (repos, files, chunks), where, and the running or recent indexing jobs."""
        try:
            st = service.status()
        except CodeseamError as exc:
            return _failure(exc)
        jobs = service.jobs()
        data = {"index": status_json(st), "jobs": [j.to_json(compact=True) for j in jobs],
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
            return _text(answer.answer + notes, {**answer_json(answer), "text": answer.answer})

    return server


def run_stdio(settings) -> None:
    """Serve MCP over stdio until the client closes the connection."""
    import anyio

    from ..owner import RemoteService, live_server, remove_server_file, write_server_file

    service: Service | RemoteService | None = None
    served = live_server(settings)
    if served is not None and served.kind == "http":  # `codeseam serve` holds the index: use it
        try:
            service = RemoteService(served, settings)
            log.warning("the index is held by the codeseam server at %s (pid %d): serving through it",
                        served.url, served.pid)
        except CodeseamError as exc:
            log.warning("cannot use the codeseam server at %s: %s", served.url, exc)
    if service is None:
        service = Service(settings, on_open=lambda: write_server_file(settings, "mcp"))
    server = build_server(service, open_on_start=True)
    _remove_on_term(settings)
    try:
        anyio.run(server.run_stdio_async)
    finally:
        remove_server_file(settings)
        service.close()


def _remove_on_term(settings) -> None:
    """On SIGTERM (an MCP client's last resort after closing stdin), drop the server file, then
    die as usual: the index lock and the Milvus Lite process go with this process, and an
    interrupted indexing run is finished by the next one."""
    import os
    import signal
    import threading

    from ..owner import remove_server_file

    def on_term(signum: int, frame: Any) -> None:
        remove_server_file(settings)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, on_term)
