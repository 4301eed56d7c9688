"""A background indexing run and its live progress (``service.Service`` runs them; the HTTP API
and the MCP tools show them; ``codec`` turns them into JSON and back)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from .errors import ConfigError, FatalError


class JobCancelled(FatalError):
    """The indexing job was stopped (server shutdown)."""


class UnknownJobError(ConfigError):
    """No indexing job has this id (or it was forgotten: the last KEEP_JOBS are kept)."""


@dataclass
class Job:
    """One background indexing run and its live progress."""

    id: str
    path: str
    repo_id: str
    state: str = "running"  # running | done | failed | cancelled
    phase: str = "starting"  # queued, starting, discover, plan, files, writing, embedding, done
    started: float = field(default_factory=time.time)
    finished: float | None = None
    files_total: int | None = None
    files_done: int = 0
    chunks_embedded: int = 0
    chunks_written: int = 0
    current_file: str = ""
    error: str | None = None
    hint: str | None = None
    report: dict[str, Any] | None = None
    # every file is keyword-searchable (the vectors are being filled in: phase "embedding")
    searchable: bool = False
    chunks_pending: int = 0  # rows still waiting for their vector
    eta_seconds: float | None = None  # until they are written, at the rate measured
    vectors: str | None = None  # the vectors choice asked for (None: the repo's recorded one)
    queued_behind: str = ""  # the job this one waits for (one keyword phase at a time)
    # the worker's side (never in JSON)
    cancel: threading.Event = field(default_factory=threading.Event, repr=False, compare=False)
    stop_reason: str = field(default="the server is shutting down", repr=False, compare=False)
    finished_event: threading.Event = field(default_factory=threading.Event, repr=False, compare=False)

    @property
    def running(self) -> bool:
        return self.state == "running"

    def line(self) -> str:
        """One line for people: what the job is doing or how it ended."""
        head = f"job {self.id} ({self.repo_id}): {self.state}"
        if self.running and self.phase == "queued":
            return f"{head}, queued behind job {self.queued_behind}"
        if self.running and self.searchable:
            left = "" if self.eta_seconds is None else f", about {self.eta_seconds:.0f}s left"
            return (f"{head}, searchable; embedding: {self.chunks_embedded} chunks embedded, "
                    f"{self.chunks_pending} waiting{left}")
        if self.running:
            total = "?" if self.files_total is None else self.files_total
            return (f"{head}, {self.phase}: {self.files_done}/{total} files, "
                    f"{self.chunks_embedded} chunks embedded, {self.chunks_written} written")
        if self.state == "done" and self.report:
            r = self.report
            return (f"{head}: {r.get('files_indexed', 0)} files indexed, {r.get('files_unchanged', 0)} "
                    f"unchanged, {r.get('chunks_written', 0)} chunks written in {r.get('seconds', 0):.1f}s")
        return f"{head}: {self.error or ''}".rstrip(": ")

    # -- the progress callback of the indexing run -------------------------------------
    def progress(self, event: str, **f: Any) -> None:
        if self.cancel.is_set():
            raise JobCancelled(f"indexing stopped: {self.stop_reason}",
                               hint="run the index again; it finishes what this run left")
        if event == "files":
            self.phase, self.files_total = "files", f.get("total")
        elif event == "file":
            self.files_done, self.current_file = f.get("done", self.files_done), f.get("path", "")
        elif event == "backfill":  # the written rows get their vectors from here on
            self.phase = "embedding"
        elif event == "embedded":
            self.phase, self.chunks_embedded = "embedding", self.chunks_embedded + f.get("count", 0)
        elif event == "written":
            self.phase, self.chunks_written = "writing", self.chunks_written + f.get("chunks", 0)
        elif event in ("discover", "plan"):
            self.phase = event
