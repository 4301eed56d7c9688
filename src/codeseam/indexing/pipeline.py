"""What an index run is built with: the chunk budget, the chunker id, the pipeline fingerprint.

``make_budget`` sizes chunks to the settings and the embedder's token limit; ``chunker_id`` is
the chunker half of the index meta; ``pipeline_fingerprint`` is what decides a file's chunks
besides its content (a change re-chunks the repo, reusing vectors by hash).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..chunk import CHUNKER_VERSION, Budget
from ..discover.roles import ROLES_VERSION
from ..records import content_hash


def make_budget(settings, embedder) -> Budget:
    """The chunk budget: bytes from settings, and the embedder's token limit when it has one,
    so nothing embedded is ever truncated by the model."""
    max_tokens = getattr(embedder, "max_tokens", None)
    return Budget(
        max_bytes=settings.chunk_max_bytes,
        min_bytes=settings.chunk_min_bytes,
        max_tokens=max_tokens,
        count_tokens=embedder.count_tokens if max_tokens else None,
    )


def chunker_id(settings) -> str:
    return f"{settings.chunker}:{CHUNKER_VERSION}"


def pipeline_fingerprint(settings, budget: Budget, allow: Sequence[str], extra: str = "") -> str:
    """What decides a file's chunks besides its content. When it changes, every file of the
    repo is re-chunked (embeddings of unchanged chunks are reused)."""
    from .. import scrub

    parts = [chunker_id(settings), str(budget.max_bytes), str(budget.min_bytes),
             str(budget.max_tokens), f"scrub={settings.scrub}", f"rules={scrub.RULES_VERSION}",
             f"roles={ROLES_VERSION}", json.dumps(sorted(allow)), extra]
    return content_hash(*parts)
