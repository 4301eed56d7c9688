"""Freshness: every search sees the working tree as it is now.

- ``refresh.py``: :class:`Refresher`, per open index: dirty sets, syncs within a query's
  budget, the background catch-up of owners, the per-repo mode for ``status``;
- ``watch.py``: the file watcher (watchfiles) and its checks (watch limit, network file systems);
- ``scan.py``: the time-boxed stat scan, where nothing watches;
- ``hits.py``: each hit checked against its file's current lines (pure core ``check_hit``);
- :func:`sendable`: what ``ask`` may send to the model, and the notes that say what it left out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ..records import Answer, Hit
from .refresh import Refresher

__all__ = ["Refresher", "sendable", "with_notes"]


def sendable(hits: Sequence[Hit]) -> tuple[tuple[Hit, ...], tuple[str, ...]]:
    """The hits ``ask`` may send to the model, and notes for the answer: a hit whose text is no
    longer in its file is left out (its text is not what the file says); a stale hit whose text
    moved is sent with its current lines, and the answer says so."""
    keep = tuple(h for h in hits if h.lines_current)
    notes = [f"left out {h.path}:{h.start_line}-{h.end_line}: {h.note}" for h in hits if not h.lines_current]
    moved = [h for h in keep if h.stale]
    if moved:
        notes.append(f"{len(moved)} source(s) changed since they were indexed and are cited at their current "
                     f"lines: " + ", ".join(f"{h.path}:{h.start_line}-{h.end_line}" for h in moved))
    return keep, tuple(notes)


def with_notes(answer: Answer, notes: Sequence[str]) -> Answer:
    return dataclasses.replace(answer, notes=(*answer.notes, *notes)) if notes else answer
