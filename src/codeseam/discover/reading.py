"""Reading one file: a cheap sniff for discovery, and ``read_text`` for the pipeline.

Decoding policy (``decode_bytes``), first match wins, and it never fails:

1. a UTF-8 BOM → ``utf-8-sig``; a UTF-32 or UTF-16 BOM → that codec (bad units replaced);
2. valid UTF-8 → as is;
3. a PEP 263 coding cookie on line 1 or 2 (``# -*- coding: latin-1 -*-``), if it names a
   text codec that decodes the bytes;
4. cp1252, and where cp1252 leaves a byte undefined, latin-1 (defined for every byte).

Line ends are kept as they are (CRLF stays, form feeds stay); line numbers count ``\\n``.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import re
from pathlib import Path

from ..errors import FileSkipped
from . import rules
from .contain import oserror_skip, open_contained

_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


def file_hash(data: bytes) -> str:
    """sha256 of the raw bytes, 32 hex chars (the same length as ``records.content_hash``)."""
    return hashlib.sha256(data).hexdigest()[:32]


def _cookie_codec(data: bytes) -> str | None:
    for line in data.split(b"\n", 2)[:2]:
        match = _COOKIE.match(line)
        if match:
            try:
                info = codecs.lookup(match.group(1).decode("ascii"))
            except (LookupError, UnicodeDecodeError):
                return None
            return info.name if getattr(info, "_is_text_encoding", True) else None
    return None


def decode_bytes(data: bytes) -> tuple[str, str]:
    """Decode raw file bytes by the policy above. Returns ``(text, codec name)``."""
    if data.startswith(codecs.BOM_UTF8):
        try:
            return data.decode("utf-8-sig"), "utf-8-sig"
        except UnicodeDecodeError:
            return _decode_legacy(data[3:])
    wide = rules.wide_bom_codec(data)
    if wide is not None:
        return data.decode(wide, errors="replace"), wide
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return _decode_legacy(data)


def _decode_legacy(data: bytes) -> tuple[str, str]:
    """Steps 3 and 4 of the policy: a coding cookie, then cp1252, then latin-1."""
    cookie = _cookie_codec(data)
    if cookie is not None:
        try:
            return data.decode(cookie), cookie
        except (UnicodeDecodeError, LookupError, TypeError, ValueError):
            pass
    try:
        return data.decode("cp1252"), "cp1252"
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1"


def read_text(abs_path: str | Path, *, max_file_bytes: int | None = None,
              root: str | None = None) -> tuple[str, str]:
    """Read and decode one file: ``(text, file_hash)``, both from the same bytes.

    One open and one read, so a file changed after listing is read consistently in its new
    state. ``max_file_bytes=None`` means no limit. The final path component must not be a
    symlink (``discover`` hands out resolved paths); a FIFO never blocks. With ``root``
    (absolute, resolved: a repo root), the file actually opened must lie inside it
    (``contain.open_contained``), else ``symlink-escape``.

    Raises FileSkipped with reason ``vanished``, ``unreadable``, ``binary`` (a NUL character
    after decoding), ``too-large`` (grew past the limit) or ``not-a-file``.
    """
    path = os.fspath(abs_path)
    fd, st = open_contained(path, root)
    with os.fdopen(fd, "rb") as fh:
        if max_file_bytes is not None and st.st_size > max_file_bytes:
            raise FileSkipped(path, rules.TOO_LARGE, f"{st.st_size} bytes > {max_file_bytes}")
        try:
            data = fh.read() if max_file_bytes is None else fh.read(max_file_bytes + 1)
        except OSError as exc:
            raise oserror_skip(path, exc) from None
    if max_file_bytes is not None and len(data) > max_file_bytes:
        raise FileSkipped(path, rules.TOO_LARGE, f"grew past {max_file_bytes} bytes")
    text, codec = decode_bytes(data)
    if "\0" in text:
        raise FileSkipped(path, rules.BINARY, f"NUL character after decoding as {codec}")
    return text, file_hash(data)


def file_signature(abs_path: str | Path) -> tuple[int, int]:
    """``(size, mtime_ns)`` from one stat (following symlinks): the cheap unchanged check."""
    path = os.fspath(abs_path)
    try:
        st = os.stat(path)
    except OSError as exc:
        raise oserror_skip(path, exc) from None
    return st.st_size, st.st_mtime_ns


def sniff(abs_path: str, size: int, root: str | None = None,
          same_as: os.stat_result | None = None) -> tuple[str, str] | None:
    """Discovery's content check: ``(reason, detail)`` for a binary or minified file, an
    unreadable or vanished one; None when the file looks like text worth indexing.

    Reads the first 8 KiB; only a head with few newlines makes it read on to 64 KiB.
    """
    try:
        fd, _ = open_contained(abs_path, root, same_as=same_as)
    except FileSkipped as skip:
        return skip.reason, skip.detail
    try:
        head = os.read(fd, rules.SNIFF_BYTES)
        if rules.looks_binary(head):
            return rules.BINARY, "NUL byte in the first 8 KiB"
        if size < rules.MINIFIED_MIN_SAMPLE:
            return None
        if rules.newline_count_clears_minified(head.count(b"\n")):
            return None
        sample = head
        if len(head) == rules.SNIFF_BYTES:
            sample += os.read(fd, rules.MINIFIED_SAMPLE_BYTES - len(head))
        if rules.looks_minified(sample):
            avg = len(sample) // max(1, sample.count(b"\n"))
            return rules.MINIFIED, f"average line of {avg} bytes over the first {len(sample)} bytes"
        return None
    except OSError as exc:
        skipped = oserror_skip(abs_path, exc)
        return skipped.reason, skipped.detail
    finally:
        os.close(fd)
