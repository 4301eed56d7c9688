"""`codeseam ask`: answer a question from the index with checked citations.

Retrieval runs first; on weak evidence the command abstains (exit 0, the abstention is the
answer, ``"weak": true`` in --json) without calling the LLM. Otherwise the numbered sources
go to the chat model (RAG_LLM_BASE_URL, RAG_LLM_MODEL, RAG_LLM_API_KEY). On a terminal the
reply streams as it arrives, then the checked ``Sources:`` list follows and notes (removed
citations, uncited paragraphs) go to stderr. Without a terminal, or with --no-stream, the
checked answer is printed whole. --json prints
``{"answer", "citations": [{"n", "path", "start_line", "end_line", "symbol"}], "weak", "notes"}``
where ``answer`` is the checked text without the Sources list.
"""

from __future__ import annotations

import sys

import click

from .cli import emit_json, settings_from


@click.command("ask")
@click.argument("question", nargs=-1, required=True)
@click.option("--repo", help="Only this repo.")
@click.option("-k", type=click.IntRange(1, 100), help="Number of sources sent to the LLM (1..100; default 8).")
@click.option("--json", "as_json", is_flag=True, help="Print the answer and its citations as JSON.")
@click.option("--stream/--no-stream", default=None,
              help="Print the reply as it arrives (default: on a terminal, not with --json).")
def ask_cmd(question: tuple[str, ...], repo: str | None, k: int | None, as_json: bool,
            stream: bool | None) -> None:
    """Answer QUESTION from the indexed code, citing sources as [n] path:start-end.

    Needs an OpenAI-compatible chat model: RAG_LLM_MODEL (e.g. qwen2.5-coder:7b)
    and RAG_LLM_BASE_URL (default: Ollama at http://localhost:11434/v1).
    Abstains, without asking the LLM, when the search finds nothing close.
    """
    from .. import codec, owner
    from ..errors import CodeseamError
    from ..interface import SearchRequest
    from ..service import require_llm

    settings = settings_from()
    served = owner.live_server(settings)
    if served is None or served.kind != "http":  # a server that holds the index uses its own settings
        require_llm(settings)
    if stream is None:
        stream = sys.stdout.isatty()
    stream = stream and not as_json
    shown: list[str] = []

    def on_delta(delta: str) -> None:
        shown.append(delta)
        click.echo(delta, nl=False)
        sys.stdout.flush()

    from .cli import read_query

    request = SearchRequest(read_query(question), repo=repo, k=k)  # "-": the question from standard input
    try:
        answer = owner.call("ask", request, on_delta=on_delta if stream else None, settings=settings)
    except CodeseamError:
        if shown:
            click.echo("")  # end the half-streamed line before the error
        raise
    if as_json:
        emit_json(codec.answer_json(answer))
        return
    if shown:  # the raw reply is on screen: add what the check produced
        _, tail = codec.split_answer(answer)
        click.echo("\n\n" + tail if tail else "")
    else:
        click.echo(answer.answer)
    for note in answer.notes:
        click.echo(f"note: {note}", err=True)
