"""What a skin sends and what answers it: the search request, and the index a skin holds.

:class:`SearchRequest` is one search as every layer passes it, declared here once and checked
when built, so a bad ``k`` reads the same whichever skin received it. A new search parameter is
a field (and its check) here and a flag in the skins that offer it: ``api``, ``service`` and
``owner`` pass the request on, the HTTP client sends every field (``codec.request_params``).

:class:`Searcher` is what a skin holds (zoekt's ``Searcher``): a :class:`CodeIndex` for the CLI
(``api.Index`` opened here, or ``owner.RemoteIndex`` through the server that holds the index) or
an :class:`IndexServer` for the MCP skin (``service.Service``, or ``RemoteIndex``). A skin never
knows which one it holds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from .errors import ConfigError
from .safety import MAX_K, check_k, check_max_tokens, check_query, check_roles

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Sequence

    from .indexing.report import IndexReport
    from .jobs import Job
    from .records import Answer, RefsResult, SearchResult, Status

MODES = ("hybrid", "dense", "bm25")  # the retrieval signals (query/retrieve.py)
Progress = Callable[..., None]


@dataclass(frozen=True)
class SearchRequest:
    """One search: the query, its filters, how many hits, which signals; checked when built.

    ``offset``/``limit`` choose the page of the ``k`` ranked hits a skin shows (the HTTP page
    pages with them); a search itself always ranks ``k`` hits, so pages are slices of one
    ranking (``page``). ``max_tokens``: keep the best hits that fit that many tokens, whole
    definitions first (``fit.py``; ``k`` defaults to ``fit.FIT_K`` then), and say in the
    result's ``fit`` what was left out."""

    query: str
    repo: str | None = None
    path_glob: str | None = None  # gitignore syntax on repo-relative paths
    language: str | None = None  # as people write it: Python, py, golang
    role: tuple[str, ...] = ()  # file roles (records.ROLES); a comma list or a sequence when built
    k: int | None = None  # None: settings.k
    mode: str = "hybrid"  # one of MODES
    offset: int = 0
    limit: int | None = None
    max_tokens: int | None = None  # a token budget: safety.MIN_TOKENS..MAX_TOKENS
    files: bool = False  # also rank files: the result's ``files`` (``query/files.py``)

    def __post_init__(self) -> None:
        fix = object.__setattr__
        fix(self, "query", check_query(self.query))
        fix(self, "repo", self.repo or None)
        fix(self, "path_glob", self.path_glob or None)
        fix(self, "language", self.language if self.language and self.language.strip() else None)
        fix(self, "role", check_roles(self.role))
        fix(self, "k", check_k(self.k))
        if self.mode not in MODES:
            raise ConfigError(f"mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        if isinstance(self.offset, bool) or not isinstance(self.offset, int) or not 0 <= self.offset <= MAX_K:
            raise ConfigError(f"offset must be an integer within 0..{MAX_K}, not {self.offset!r}")
        if self.limit is not None:
            fix(self, "limit", check_k(self.limit))
        fix(self, "max_tokens", check_max_tokens(self.max_tokens))
        if not isinstance(self.files, bool):
            raise ConfigError(f"files must be true or false, not {self.files!r}")

    @classmethod
    def of(cls, request: SearchRequest | str, **options: Any) -> SearchRequest:
        """``request`` as it is, or a request for the query ``request`` with ``options``."""
        if isinstance(request, SearchRequest):
            return request.replace(**options) if options else request
        return cls(request, **options)

    def replace(self, **changes: Any) -> SearchRequest:
        return dataclasses.replace(self, **changes)

    def page(self, hits: Iterable[Any]) -> list[Any]:
        """The hits this request's page shows (``offset``, at most ``limit``)."""
        hits = list(hits)
        return hits[self.offset: None if self.limit is None else self.offset + self.limit]

    @property
    def paged(self) -> bool:
        return bool(self.offset) or self.limit is not None


class Searcher(Protocol):
    """What every index a skin holds answers. ``search``/``ask`` take a request, or a query and
    the request's fields as keywords; ``refs``: where a name is defined and used (``kind``: a
    comma list or a sequence of def, call, import, use; ``max_tokens``: the references that fit)."""

    def search(self, request: SearchRequest | str, /, **options: Any) -> SearchResult: ...
    def refs(self, name: str, *, repo: str | None = None, kind: str | Sequence[str] | None = None,
             max_tokens: int | None = None) -> RefsResult: ...
    def ask(self, request: SearchRequest | str, /, *, on_delta: Callable[[str], None] | None = None,
            **options: Any) -> Answer: ...
    def status(self) -> Status: ...
    def remove(self, repo: str) -> int: ...
    def close(self) -> None: ...


class CodeIndex(Searcher, Protocol):
    """An index the CLI holds for one operation (``owner.call``): ``api.Index`` or ``RemoteIndex``."""

    def index(self, path: str, *, repo_id: str | None = None, progress: Progress | None = None,
              wait: bool = True, vectors: str | None = None) -> IndexReport: ...
    def inspect(self, repo: str) -> dict[str, Any]: ...


class IndexServer(Searcher, Protocol):
    """An index a server holds for its clients, indexing in the background (what the MCP skin
    holds): ``service.Service`` or ``RemoteIndex``."""

    @property
    def llm_configured(self) -> bool: ...
    def open(self) -> Any: ...
    def start_index(self, path: str, repo_id: str | None = None, vectors: str | None = None) -> Job: ...
    def job(self, job_id: str) -> Job: ...
    def jobs(self) -> list[Job]: ...
