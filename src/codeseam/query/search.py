"""One query, the right path: ``retrieve_issue`` for an issue-sized query (a pasted report or
stack trace: ``issue.is_issue``), ``retrieve`` for every other one, exactly as before."""

from __future__ import annotations

from .issue import is_issue
from .retrieve import retrieve
from .retrieve_issue import retrieve_issue


def search(store, embedder, settings, query: str, filters, k: int, **kw):
    """The ``SearchResult`` of ``query`` (the keywords are ``retrieve``'s)."""
    if is_issue(query):
        return retrieve_issue(store, embedder, settings, query, filters, k, **kw)
    return retrieve(store, embedder, settings, query, filters, k, **kw)
