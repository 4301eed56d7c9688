"""What an indexing run reports (``IndexReport``), and the dry run that reports what a run
would index without touching any index (``codeseam index --dry-run``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..chunk import chunk_file
from ..discover import Discovery, discover, read_text
from ..errors import FileSkipped
from ..records import Chunk, Skip


@dataclass
class IndexReport:
    """What one run did. ``summary()`` is the one-line end-of-run message; ``codec.report_json``
    its JSON."""

    repo_id: str
    root: str
    dry_run: bool = False
    files_seen: int = 0
    files_indexed: int = 0
    files_unchanged: int = 0
    files_deleted: int = 0
    chunks_written: int = 0
    chunks_embedded: int = 0
    chunks_reused: int = 0
    chunks_moved: int = 0  # reused from a renamed file's old rows (moves.py)
    redactions: int = 0
    redacted_files: int = 0
    truncated: int = 0
    skips: list[Skip] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    by_language: dict[str, int] = field(default_factory=dict)
    by_reason: dict[str, int] = field(default_factory=dict)
    enrich: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    embed_seconds: float = 0.0
    unfinished: list[str] = field(default_factory=list)  # left for the next run (stop_when)
    chunks_pending: int = 0  # rows still waiting for their vector when the run returned (filled behind)
    vectors: str = "all"  # the repo's vectors choice: all | source | none

    def summary(self) -> str:
        if self.dry_run:
            return (f"{self.repo_id}: would index {self.files_seen} files, "
                    f"{len(self.skips)} skipped (dry run)")
        parts = [
            f"{self.repo_id}: {self.files_indexed} files indexed, {self.files_unchanged} unchanged, "
            f"{self.files_deleted} removed, {len(self.skips)} skipped",
            f"{self.chunks_written} chunks written ({self.chunks_embedded} embedded, "
            f"{self.chunks_reused} reused)",
            f"{self.redactions} redactions in {self.redacted_files} files",
        ]
        if self.chunks_pending:
            parts.append(f"{self.chunks_pending} chunks wait for their vectors")
        if self.vectors != "all":
            parts.append(f"vectors: {self.vectors}")
        return "; ".join(parts) + f" in {self.seconds:.1f}s"


def count_reasons(skips: Sequence[Skip]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for s in skips:
        counts[s.reason] = counts.get(s.reason, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def dry_run(root: str, repo_id: str, settings) -> IndexReport:
    """What would be indexed and what is skipped, by language and by reason; touches no index.

    With enrichment on, the files are also chunked to count the chunks that would need a
    description (cache misses) and estimate the time that takes."""
    d = discover(root, max_file_bytes=settings.max_file_bytes, exclude=settings.private_dirs)
    report = IndexReport(repo_id=repo_id, root=d.root, dry_run=True, files_seen=len(d.files),
                         skips=list(d.skips), warnings=list(d.warnings),
                         by_language=d.counts_by_language(), by_reason=d.counts_by_reason())
    if settings.enrich:
        report.enrich = _enrich_estimate(d, settings)
    return report


def _enrich_estimate(d: Discovery, settings) -> dict[str, Any]:
    from ..embed import make_embedder
    from ..enrich import Enricher
    from .pipeline import make_budget

    budget = make_budget(settings, make_embedder(settings))
    chunks: list[Chunk] = []
    for f in d.files:
        try:
            text, _ = read_text(f.abs_path, max_file_bytes=settings.max_file_bytes, root=d.root)
        except FileSkipped:
            continue
        if settings.scrub:
            from ..scrub import load_allow, scrub_text

            text = scrub_text(text, allow=load_allow(d.root, settings.scrub_allow), path=f.path).text
        chunks.extend(chunk_file(f.path, text, budget=budget, chunker=settings.chunker))
    enricher = Enricher.from_settings(settings, probe=False)
    try:
        return dict(enricher.estimate(chunks))
    finally:
        enricher.close()
