"""Every hit is checked against its file as it is now, before it is returned.

The oracle is the file itself: a hit is fresh when the file's lines ``start_line..end_line``
still hold the hit's text. Otherwise it is ``stale``: when the text is still somewhere in the
file, the hit moves to the lines it is at now (the occurrence nearest to the old lines) and
says so; when it is not, the hit keeps the indexed lines with ``lines_current=False`` and a
note, so old lines are never shown as current. A file that is gone, unreadable or binary
makes its hits stale with the reason.

Stored text is scrubbed (secrets replaced by ``[REDACTED:kind]``, line count kept), so a hit
whose text carries a redaction is compared with the scrubbed file; any other hit is compared
with the raw file, which is exact: scrubbing changes only the lines it redacts.

``check_hit`` is the pure core; ``check_hits`` reads each file once (``read_text``, the
indexer's own decoding) and applies it.
"""

from __future__ import annotations

import bisect
import dataclasses
import logging
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..records import Hit

log = logging.getLogger(__name__)

REDACTED_MARK = "[REDACTED:"


def line_starts(text: str) -> list[int]:
    """Offset of the first character of each line (line n starts at ``starts[n - 1]``); lines
    are counted on ``\\n`` only, as the chunker counts them."""
    starts = [0]
    find = text.find
    i = find("\n")
    while i != -1:
        starts.append(i + 1)
        i = find("\n", i + 1)
    return starts


def span_text(text: str, starts: list[int], start: int, end: int) -> str | None:
    """The text of lines ``start..end`` (inclusive, with their line ends); None when the file
    has fewer lines."""
    if start < 1 or end < start or start > len(starts):
        return None
    stop = starts[end] if end < len(starts) else len(text)
    return text[starts[start - 1]:stop]


def lines_of(needle: str, starts: list[int], offset: int) -> tuple[int, int]:
    """The lines that ``needle``, found at ``offset``, spans."""
    first = bisect.bisect_right(starts, offset)
    inner = needle.count("\n") - (1 if needle.endswith("\n") else 0)
    return first, first + max(0, inner)


def locate(needle: str, text: str, starts: list[int], near_line: int) -> tuple[int, int] | None:
    """Where ``needle`` is in ``text`` now: the lines of the occurrence nearest to
    ``near_line``; None when the text is not in the file."""
    if not needle:
        return None
    near = starts[min(max(near_line, 1), len(starts)) - 1]
    best: int | None = None
    i = text.find(needle)
    while i != -1:
        if best is None or abs(i - near) < abs(best - near):
            best = i
        if i > near:
            break  # later occurrences are farther still
        i = text.find(needle, i + 1)
    return None if best is None else lines_of(needle, starts, best)


def holds(text: str, hit: Hit) -> bool:
    """Do lines ``start..end`` of ``text`` still hold the hit's text? (A chunk cut inside a very
    long line holds part of its first or last line, so the text is looked for inside them.)
    Splits only as far as the hit's last line (C speed: the common, fresh case stays cheap)."""
    if hit.start_line < 1 or hit.end_line < hit.start_line:
        return False
    parts = text.split("\n", hit.end_line)
    if len(parts) < hit.end_line:
        return False
    span = "\n".join(parts[hit.start_line - 1:hit.end_line])
    if len(parts) > hit.end_line:
        span += "\n"
    return hit.text in span


def check_hit(hit: Hit, text: str | None, *, unreadable: str = "",
              scrub: Callable[[str, str], str] | None = None) -> Hit:
    """``hit`` checked against its file's current ``text`` (None: the file cannot be read, and
    ``unreadable`` says why). ``scrub(text, path)`` turns file text into stored text, for hits
    that carry a redaction. Pure."""
    was = f"{hit.start_line}-{hit.end_line}"
    if text is None:
        return dataclasses.replace(hit, stale=True, lines_current=False,
                                   note=f"{unreadable or 'the file cannot be read'}; this text is as indexed "
                                        f"(lines {was}), not as the file is now")
    if scrub is not None and REDACTED_MARK in hit.text:
        text = scrub(text, hit.path)
    if holds(text, hit):
        return hit if not hit.stale else dataclasses.replace(hit, stale=False, lines_current=True, note="")
    found = locate(hit.text, text, line_starts(text), hit.start_line)
    if found is not None:
        start, end = found
        return dataclasses.replace(
            hit, start_line=start, end_line=end, stale=True, lines_current=True,
            note=f"the file changed since it was indexed: this text is now at lines {start}-{end} "
                 f"(the index has {was})")
    return dataclasses.replace(
        hit, stale=True, lines_current=False,
        note=f"the file changed since it was indexed and no longer holds this text (indexed at lines "
             f"{was}, which now say something else)")


# -- reading the files --------------------------------------------------------------------------

def check_hits(hits: Iterable[Hit], roots: Mapping[str, str], *, max_file_bytes: int | None,
               scrub_for: Callable[[str], Callable[[str, str], str] | None] | None = None) -> tuple[Hit, ...]:
    """Each hit checked against its file, each file read once. ``roots``: repo id -> root
    folder; ``scrub_for(root)`` gives the scrub function of a repo (None: scrubbing is off)."""
    from ..discover.contain import Containment

    read: dict[tuple[str, str], tuple[str | None, str]] = {}
    scrubs: dict[str, Any] = {}  # one scrub function per repo root (it reads the allow file)
    contains: dict[str, Containment] = {}
    out = []
    for hit in hits:
        key = (hit.repo, hit.path)
        root = roots.get(hit.repo, "")
        if key not in read:
            if root and root not in contains:
                contains[root] = Containment(root)
            read[key] = current_text(root, hit.path, max_file_bytes, contains.get(root))
        text, why = read[key]
        scrub = None
        if scrub_for is not None and text is not None:
            if root not in scrubs:
                scrubs[root] = scrub_for(root)
            scrub = scrubs[root]
        out.append(check_hit(hit, text, unreadable=why, scrub=scrub))
    return tuple(out)


def current_text(root: str, path: str, max_file_bytes: int | None,
                 contain: Any = None) -> tuple[str | None, str]:
    """``(text, "")`` of the file ``root/path`` as the indexer reads it, or ``(None, why)``:
    only a file inside the repo is read (``discover.contain``). ``contain``: a
    ``Containment`` of ``root`` to reuse across the files of one pass (its folder checks)."""
    from ..discover import read_text
    from ..discover.contain import Containment, inside
    from ..errors import FileSkipped

    if not root or not os.path.isdir(root):
        return None, f"the repo folder {root or '?'} no longer exists"
    if contain is None:
        contain = Containment(root)
    root = contain.root  # resolved
    escape = contain.folder_escape(path)
    if escape is not None:  # a folder on the way was swapped for a symlink: never followed
        return None, f"the file is no longer inside the repo: {escape[1]}"
    full = os.path.join(root, path)
    try:
        if os.path.islink(full):  # indexed under its own path, read through its target
            full = os.path.realpath(full)
            if not inside(full, root):
                return None, "the file is now a symlink that leads outside the repo"
        text, _ = read_text(full, max_file_bytes=max_file_bytes, root=root)  # inside root, or a skip
    except FileSkipped as exc:
        return None, _why(exc.reason, exc.detail)
    except OSError as exc:  # read_text turns its own errors into skips; this is a last resort
        return None, f"the file cannot be read now ({exc.strerror or exc})"
    return text, ""


def _why(reason: str, detail: str) -> str:
    if reason == "vanished":
        return "the file was deleted (or renamed) since it was indexed"
    if reason == "binary":
        return "the file is now binary"
    if reason == "too-large":
        return f"the file is now too large to index ({detail})"
    if reason == "not-a-file":
        return "the path is no longer a regular file"
    if reason == "symlink-escape":
        return "the file is now a symlink that leads outside the repo"
    return f"the file cannot be read now ({detail or reason})"
