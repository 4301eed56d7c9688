"""Parsing with tree-sitter: one parser per grammar and thread, a time limit, error share.

tree-sitter 0.26 can stop a parse through ``progress_callback``, but only when the source
is given as a read callback (with bytes it warns and ignores it). We use that, with a
limit that grows with the file size. It does not help against a grammar whose external
scanner loops forever without returning to the parser (``cobol`` on ``abc``): such
grammars are excluded by name in ``languages.EXCLUDED``.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

log = logging.getLogger(__name__)

PARSE_SECONDS_BASE = 2.0
PARSE_SECONDS_PER_MB = 4.0
READ_SLICE = 1 << 20

_local = threading.local()


class ParseFailed(Exception):
    """The grammar could not be loaded or the parse ran out of time."""


def get_parser(language: str) -> Any:
    """A cached ``tree_sitter.Parser`` for this grammar and thread."""
    cache: dict[str, Any] | None = getattr(_local, "parsers", None)
    if cache is None:
        cache = _local.parsers = {}
    parser = cache.get(language)
    if parser is None:
        try:
            import tree_sitter
            import tree_sitter_language_pack as pack

            parser = tree_sitter.Parser(pack.get_language(language))  # type: ignore[arg-type]
        except Exception as exc:  # a broken or missing binding: the file gets windows
            raise ParseFailed(f"cannot load grammar {language!r}: {exc}") from exc
        cache[language] = parser
    return parser


def parse(language: str, data: bytes, timeout: float | None = None) -> Any:
    """Parse ``data``; raises ParseFailed when the grammar fails or time runs out."""
    parser = get_parser(language)
    limit = timeout if timeout is not None else (
        PARSE_SECONDS_BASE + PARSE_SECONDS_PER_MB * len(data) / 1e6)
    deadline = time.monotonic() + limit

    def read(offset: int, _point: Any) -> bytes:
        return data[offset:offset + READ_SLICE]

    def progress(*_state: Any) -> bool:
        return time.monotonic() > deadline

    try:
        tree = parser.parse(read, progress_callback=progress)
    except (ValueError, RuntimeError) as exc:
        parser.reset()
        raise ParseFailed(f"{language} parse stopped after {limit:.1f}s: {exc}") from exc
    if tree is None:  # pragma: no cover - only when the parser has no language
        raise ParseFailed(f"{language} parser returned no tree")
    return tree


def error_share(root: Any) -> float:
    """Share of the file's bytes that no sound subtree covers.

    An ERROR node (the root included) counts its bytes minus those of its named children
    that are sound (no error inside): tree-sitter often wraps good statements in an ERROR
    node around one bad token. Walks only the paths that carry errors, iteratively.
    """
    total = root.end_byte - root.start_byte
    if not root.has_error or total <= 0:
        return 0.0
    bad = 0
    stack = [root]
    while stack:
        node = stack.pop()
        sound = 0
        for child in node.children:
            if not child.has_error:
                if child.is_named:  # stray keywords and punctuation are not sound code
                    sound += child.end_byte - child.start_byte
            elif child.is_missing:
                bad += 1
            else:
                stack.append(child)
        if node.is_error:
            inner = sum(c.end_byte - c.start_byte for c in node.children if c.has_error)
            bad += max(0, node.end_byte - node.start_byte - sound - inner)
    return min(1.0, bad / total)
