"""The codeseam error tree. What is fatal and what is skippable is decided here, once.

::

    CodeseamError                 base; every error codeseam raises on purpose
    ├── FatalError                stops the run; the CLI prints the message and exits non-zero
    │   ├── ConfigError           a bad setting, config file or flag
    │   ├── IndexStateError       the index cannot serve this request as it stands
    │   │   ├── NotIndexedError   the repo (or the whole index) has not been indexed
    │   │   ├── IndexMismatchError built with another embedder/chunker/schema: rebuild
    │   │   └── IndexBusyError    another process or indexer holds the index
    │   ├── StoreError            Milvus failed (disk full, server error) mid-operation
    │   ├── EmbeddingError        the embedding backend failed or is misconfigured
    │   ├── LLMError              the chat LLM failed
    │   │   ├── LLMUnavailableError  not configured or not reachable (names the setting)
    │   │   └── LLMResponseError     timeout, HTTP error, or an unusable reply
    │   └── UnsafePathError       a path outside the allowed roots, traversal or escape
    └── SkippableError            one input is skipped with a reason; the run goes on
        └── FileSkipped           a file could not be read/decoded/parsed

Each error carries a human message; ``hint`` (when set) says what to do next, such as the
exact rebuild command. Exit codes: 1 for fatal errors, 2 for usage errors (click).
"""

from __future__ import annotations

# The hint of a failed write (a StoreError from the store client, an injected fault, an OSError
# mid-run): the index is derived data, so indexing again repairs it.
REPAIR_HINT = ("if the disk is full, free space first; the index is derived data, so running "
               "`codeseam index PATH` again repairs what a failed write left behind")


class CodeseamError(Exception):
    """Base class of every error codeseam raises on purpose."""

    hint: str | None = None

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        if hint is not None:
            self.hint = hint

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""

    def __str__(self) -> str:
        base = self.message
        return f"{base}\n  hint: {self.hint}" if self.hint else base


class FatalError(CodeseamError):
    """Stops the current operation."""


class ConfigError(FatalError):
    """A setting, config file or flag is invalid."""


class IndexStateError(FatalError):
    """The index cannot serve the request in its current state."""


class NotIndexedError(IndexStateError):
    """Nothing is indexed for the requested repo (never answered with an empty list)."""


class IndexMismatchError(IndexStateError):
    """The index was built with another embedder, dimension, chunker or schema version."""


class IndexBusyError(IndexStateError):
    """Another process (or indexer) holds the index."""


class StoreError(FatalError):
    """The vector store failed during an operation."""


class EmbeddingError(FatalError):
    """The embedding backend failed or is misconfigured."""


class LLMError(FatalError):
    """The chat LLM failed."""


class LLMUnavailableError(LLMError):
    """No LLM is configured, or it cannot be reached."""


class LLMResponseError(LLMError):
    """The LLM answered with an error, timed out, or sent an unusable reply."""


class UnsafePathError(FatalError):
    """A path outside the allowed roots, a ``..`` traversal or a symlink escape."""


class SkippableError(CodeseamError):
    """One input is skipped with a reason; the run continues."""


class FileSkipped(SkippableError):
    """A file could not be read, decoded or parsed. ``reason`` is a short stable code."""

    def __init__(self, path: str, reason: str, detail: str = "") -> None:
        super().__init__(f"{path}: {reason}" + (f" ({detail})" if detail else ""))
        self.path = path
        self.reason = reason
        self.detail = detail
