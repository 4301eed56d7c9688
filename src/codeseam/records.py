"""The records that flow between pipeline stages.

All are frozen dataclasses: a stage returns new records, it never mutates what it was given.
Line numbers are 1-based and inclusive, counted on ``\\n`` only (tree-sitter rows).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

# Chunk kinds. ``window`` is a line/byte window (baseline chunker, or fallback for files
# without a usable grammar).
KINDS = ("function", "class", "method", "header", "module", "section", "window")

# File roles (``discover.roles.file_role`` decides them from each ecosystem's conventions).
ROLES = ("source", "test", "docs", "example", "changelog", "config", "build", "generated", "benchmark",
         "fixture", "locale")


def content_hash(*parts: str) -> str:
    """A short stable hash of text parts (sha256, 32 hex chars)."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A file that discovery decided to index."""

    path: str  # repo-relative, forward slashes, no leading ./
    abs_path: str
    language: str | None  # tree-sitter grammar name, or None when no grammar applies
    size: int
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class Skip:
    """A file that was not indexed, and why. ``reason`` is a short stable code
    (``binary``, ``too-large``, ``symlink-escape``, ``lockfile``, ``minified``,
    ``unreadable``, ``vanished``, ``ignored`` ...); ``detail`` is for humans."""

    path: str
    reason: str
    detail: str = ""


@dataclass(frozen=True)
class Chunk:
    """One unit of code: what is stored, embedded, searched and cited.

    ``text`` is the clean source of lines ``start_line..end_line`` (what reaches the LLM and
    the citation). ``role`` is the file's role (source, test, docs, ...: ``discover.roles``). ``indexed_text`` is ``text`` with a header (path, symbol path, parent,
    language, the file's imports, identifier splits): the field that is embedded and
    BM25-indexed. ``hash`` is derived from both and recomputed by ``dataclasses.replace``.
    """

    path: str
    language: str
    symbol: str
    parent: str
    kind: str
    start_line: int
    end_line: int
    text: str
    indexed_text: str
    role: str = "source"  # the file's role (discover.roles), set by the indexer
    hash: str = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "hash", content_hash(self.text, self.indexed_text))

    @property
    def nbytes(self) -> int:
        return len(self.text.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True, slots=True)
class Redaction:
    """One secret found by the scrubber. Never carries the secret itself."""

    line: int  # 1-based line within the scanned text
    kind: str  # the family, as in the placeholder: openai-key, github-token, email, ...
    preview: str  # masked preview, safe to print
    rule: str = ""  # the rule that found it: gitlab-pat, url-credentials, ...


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result.

    Every hit is checked against its file as it is on disk before it is returned
    (``fresh/hits.py``). ``stale``: the file no longer holds this text at the lines the index
    has (the index is behind the working tree). ``lines_current``: ``start_line..end_line``
    are where the text is in the file now (for a stale hit whose text moved, the lines it
    moved to); False when the text is no longer in the file (then the lines are the indexed
    ones, never to be read as current). ``note`` says what happened, for people."""

    repo: str
    path: str
    symbol: str
    kind: str
    language: str
    start_line: int
    end_line: int
    score: float
    text: str
    role: str = "source"  # the file's role: source, test, docs, example, changelog, ...
    stale: bool = False
    lines_current: bool = True
    note: str = ""


@dataclass(frozen=True, slots=True)
class IndexProgress:
    """How far indexing of the repos a search covered has got, while it is not finished:
    files whose chunks are written (keyword-searchable) of the files the run works through,
    and chunk rows with their dense vector of the rows written."""

    repos: tuple[str, ...]
    files_indexed: int
    files_total: int
    chunks: int
    chunks_embedded: int
    eta_seconds: float | None = None  # until the vectors are complete (the owner's measured rate)


@dataclass(frozen=True, slots=True)
class LeftOut:
    """A hit a token budget left out: where it is and what showing it would have cost."""

    repo: str
    path: str
    start_line: int
    end_line: int
    symbol: str
    kind: str
    tokens: int


@dataclass(frozen=True, slots=True)
class Cut:
    """The one hit a budget cut: not even the best hit fitted whole, so its first lines
    ``start_line..end_line`` are shown; the whole hit ends at ``full_end_line``."""

    path: str
    start_line: int
    end_line: int
    full_end_line: int


@dataclass(frozen=True, slots=True)
class Fit:
    """What a token budget (``max_tokens``) kept of a search's hits (``fit.py``): the tokens the
    kept hits cost, the hits ``left_out`` (rank order), and the best hit ``cut`` when not even
    it fitted whole."""

    max_tokens: int
    tokens: int
    left_out: tuple[LeftOut, ...] = ()
    cut: Cut | None = None


@dataclass(frozen=True, slots=True)
class FileSpan:
    """One of a ranked file's best spans (the indexed lines of a candidate chunk)."""

    start_line: int
    end_line: int
    symbol: str
    score: float


@dataclass(frozen=True, slots=True)
class FileHit:
    """A file as an answer (``search --files``): its chunks' evidence summed (``query/files.py``)
    and its best spans, best first."""

    repo: str
    path: str
    language: str
    role: str
    score: float
    spans: tuple[FileSpan, ...]


@dataclass(frozen=True, slots=True)
class SearchResult:
    query: str
    weak: bool  # best dense similarity below the calibrated threshold
    hits: tuple[Hit, ...]
    best_similarity: float | None = None
    evidence: float | None = None  # the score the weak flag is decided on (evidence.py)
    # True while a repo in scope is being indexed (or its last run did not finish): hits come
    # from what is written so far, and dense hits only from rows that have their vectors.
    partial: bool = False
    progress: IndexProgress | None = None
    signals: tuple[str, ...] = ()  # the retrieval signals that returned candidates: dense, bm25
    notes: tuple[str, ...] = ()  # freshness notes: changes not synced yet, a missing repo folder
    fit: Fit | None = None  # what a token budget left out (a search with max_tokens)
    files: tuple[FileHit, ...] | None = None  # the ranked files (a search with files=True)


@dataclass(frozen=True, slots=True)
class Citation:
    n: int
    path: str
    start_line: int
    end_line: int
    symbol: str


@dataclass(frozen=True, slots=True)
class Answer:
    question: str
    answer: str
    citations: tuple[Citation, ...]
    weak: bool
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class RepoStatus:
    """One indexed repo, as ``status`` reports it."""

    repo_id: str
    root: str
    files: int
    chunks: int
    last_sync: float | None
    state: str
    languages: tuple[tuple[str, int], ...] = ()  # (language label, files), most files first
    roles: tuple[str, ...] = ()  # the file roles that have chunks, in ROLES order
    freshness: str = ""  # watch | scan | missing | off (fresh/refresh.py)
    freshness_note: str = ""  # why a repo is not watched, what failed
    vectors: str = "all"  # which rows get dense vectors: all | source | none (--vectors)
    vectors_pending: int = 0  # rows still waiting for theirs (state "embedding")
    eta_seconds: float | None = None  # until they are written, at the rate measured (None: unknown)


@dataclass(frozen=True)
class Status:
    """What ``status`` reports: where the index lives, what it was built with, its repos."""

    uri: str
    collection: str
    embedder: str
    dim: int
    chunker: str
    schema_version: int
    repos: tuple[RepoStatus, ...] = ()


# -- references (``references/``: where a name is defined and used) ------------------------------

@dataclass(frozen=True, slots=True)
class Reference:
    """One place a name is defined or used, at the file's current lines. ``symbol`` is the
    definition it sits in (for a ``def``, the defined symbol), ``symbol_start..symbol_end`` that
    definition's lines (0 at the top level); ``text`` the line (scrubbed, like indexed text)."""

    repo: str
    path: str
    language: str
    role: str
    line: int
    column: int
    kind: str  # def | call | import | use
    symbol: str
    symbol_kind: str
    symbol_start: int
    symbol_end: int
    text: str


@dataclass(frozen=True, slots=True)
class Caller:
    """A definition whose body references the name (calls it, or uses it as a value)."""

    repo: str
    path: str
    symbol: str
    kind: str
    start_line: int
    end_line: int
    lines: tuple[int, ...]  # where in it the name is referenced


@dataclass(frozen=True)
class RefsResult:
    """Every reference found, definitions first. ``source`` says where the candidate files came
    from (``index``: the chunks BM25 finds the name in, plus the files changed since they were
    indexed; ``scan``: every indexed file of the repo); ``files_read`` how many files were read
    and parsed; ``left_out`` the references dropped by a limit or a token budget."""

    name: str
    refs: tuple[Reference, ...]
    callers: tuple[Caller, ...] = ()
    source: str = "index"
    candidates: int = 0
    files_read: int = 0
    left_out: int = 0
    tokens: int | None = None  # the output's tokens when a budget was given
    notes: tuple[str, ...] = ()

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.refs:
            out[r.kind] = out.get(r.kind, 0) + 1
        return out
