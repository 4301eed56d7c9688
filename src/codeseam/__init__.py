"""codeseam: local, private code search that cuts where the code does.

The library API (heavy modules load on first use, so ``import codeseam`` stays fast)::

    import codeseam
    codeseam.index("path/to/repo")             # discover, chunk, scrub, embed, store
    result = codeseam.search("where is the retry delay computed?")
    refs = codeseam.refs("parse_args")             # where a name is defined and used
    for hit in result.hits:
        print(hit.path, hit.start_line, hit.end_line, hit.symbol)
"""

from __future__ import annotations

from typing import Any

from ._version import __version__

_API = ("index", "search", "refs", "ask", "remove", "status", "inspect", "open_index")

__all__ = [*_API, "__version__"]


def __getattr__(name: str) -> Any:
    if name == "open_index":
        from . import api

        return api.open_index
    if name in _API:  # on the index wherever it is held: through the CLI's keep-alive server, say
        from .owner import library

        return getattr(library, name)
    raise AttributeError(f"module 'codeseam' has no attribute {name!r}")
