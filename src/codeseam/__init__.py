"""codeseam: local, private code search that cuts where the code does.

The library API (heavy modules load on first use, so ``import codeseam`` stays fast)::

    import codeseam
    codeseam.index("path/to/repo")             # discover, chunk, scrub, embed, store
    result = codeseam.search("where is the retry delay computed?")
    for hit in result.hits:
        print(hit.path, hit.start_line, hit.end_line, hit.symbol)
"""

from __future__ import annotations

from typing import Any

from ._version import __version__

_API = ("index", "search", "ask", "remove", "status", "inspect", "open_index")

__all__ = [*_API, "__version__"]


def __getattr__(name: str) -> Any:
    if name in _API:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'codeseam' has no attribute {name!r}")
