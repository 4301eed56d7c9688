"""The library's one-shot calls (``codeseam.index``, ``codeseam.search``, ...): on the index
wherever it is held, as the CLI's commands are.

After any CLI command the keep-alive server holds a Milvus Lite index for ``RAG_KEEPALIVE``
seconds (and ``codeseam serve`` while it runs); a second process cannot open the file. So each
call goes through the server that holds the index when there is one (``route.call``), and
opens the index here otherwise. Unlike the CLI it never starts a keep-alive server: a script's
call leaves no process behind. ``index`` returns when every vector is written, either way.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from ..interface import SearchRequest
from ..settings import Settings, load_settings
from . import route


def _settings(settings: Settings | None) -> Settings:
    return settings if settings is not None else load_settings()


def index(path: str | os.PathLike[str], *, repo_id: str | None = None, settings: Settings | None = None,
          progress: Callable[..., None] | None = None, dry_run: bool = False, rebuild: bool = False,
          vectors: str | None = None):
    """Index (or incrementally re-sync) the repository at ``path``; its ``IndexReport`` once
    every vector is written. ``dry_run``: what would be indexed, touching no index."""
    from .. import api

    settings = _settings(settings)
    if dry_run:
        return api.index(path, repo_id=repo_id, settings=settings, dry_run=True)
    return route.call("index", os.fspath(path), repo_id=repo_id, progress=progress, vectors=vectors,
                      settings=settings, rebuild=rebuild, start=False)


def search(request: SearchRequest | str, /, *, settings: Settings | None = None, **options: Any):
    return route.call("search", SearchRequest.of(request, **options), settings=_settings(settings), start=False)


def ask(request: SearchRequest | str, /, *, settings: Settings | None = None,
        on_delta: Callable[[str], None] | None = None, **options: Any):
    return route.call("ask", SearchRequest.of(request, **options), on_delta=on_delta,
                      settings=_settings(settings), start=False)


def refs(name: str, *, repo: str | None = None, kind: str | Sequence[str] | None = None,
         max_tokens: int | None = None, settings: Settings | None = None):
    return route.call("refs", name, repo=repo, kind=kind, max_tokens=max_tokens, settings=_settings(settings),
                      start=False)


def remove(repo: str, *, settings: Settings | None = None) -> int:
    return route.call("remove", repo, settings=_settings(settings), start=False)


def status(settings: Settings | None = None):
    return route.call("status", settings=_settings(settings), start=False)


def inspect(repo: str, *, settings: Settings | None = None) -> dict[str, Any]:
    return route.call("inspect", repo, settings=_settings(settings), start=False)
