"""File names that hold a secret: never stored, shown only redacted (issue 40).

A repository can name a file after a secret (``AKIA....txt``, ``sk-proj-....json``). A row's
``path`` is its key for deletes and freshness and is returned by every search, so such a file
cannot be indexed under its name without storing the secret, and not under a redacted name
either (the name is how the file is found again on disk). It is skipped instead, with reason
``secret-name`` and its path redacted (``[REDACTED:aws-access-key-id].txt``), and every other
skip's path is redacted the same way. The check runs the scrubber once over all the names of a
discovery (one Aho-Corasick pass), so it costs one scrub of the path list.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ..discover import Discovery
from ..records import Skip

SECRET_NAME = "secret-name"


def redacted_names(paths: Sequence[str]) -> dict[str, str]:
    """``{path: redacted path}`` for the paths in which the scrubber finds a secret; pure."""
    from ..scrub import scrub_text

    if not paths:
        return {}
    clean = [p for p in paths if "\n" not in p]  # a newline in a name cannot be one line of the list
    out = scrub_text("\n".join(clean)).text.split("\n")
    found = {p: r for p, r in zip(clean, out, strict=True) if p != r}
    for p in paths:
        if "\n" in p:
            r = scrub_text(p).text
            if r != p:
                found[p] = r
    return found


def drop_secret_names(d: Discovery) -> Discovery:
    """``d`` without the files whose names hold a secret (skipped as ``secret-name``), every
    skip's path redacted."""
    names = redacted_names([*(f.path for f in d.files), *(s.path for s in d.skips)])
    if not names:
        return d
    files = tuple(f for f in d.files if f.path not in names)
    skips = [dataclasses.replace(s, path=names.get(s.path, s.path)) for s in d.skips]
    skips += [Skip(names[f.path], SECRET_NAME, "the file name holds a secret: not indexed, so the name is never "
                   "stored (rename the file to index it)") for f in d.files if f.path in names]
    return dataclasses.replace(d, files=files, skips=tuple(sorted(skips, key=lambda s: (s.path, s.reason))))
