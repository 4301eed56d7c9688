"""Query analysis: what a query's words are to BM25 and which definitions it names.

Pure functions of the query text: ``bm25_query`` (identifier splits added), ``strip_noise``
(question words out), ``content_words``, ``query_names`` / ``names_definition`` (the
definitions a lookup asks for), ``is_lookup``.
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def bm25_query(query: str) -> str:
    """The text sent to BM25: the query plus the word splits of its identifiers
    (``parse_json`` → ``parse_json parse json``), matching the identifier splits that the
    chunker puts in ``indexed_text``."""
    from ..chunk import split_identifier

    extra: list[str] = []
    for ident in _IDENT.findall(query):
        parts = split_identifier(ident)
        if len(parts) > 1:
            extra.extend(parts)
    return f"{query} {' '.join(extra)}" if extra else query


# Words that say how a question is asked, not what it is about ("where is X defined",
# "X source code", "how does X work"): English function words plus code-search boilerplate.
NOISE_WORDS = frozenset("""
a an the this that these those is are was were be been of in on at to for from with by into as and or
how does do did what where when why who whose there here it its i me my we you your please
implemented implement implementation implementations defined define definition declared declaration
source code function functions method methods class classes module modules work works working
show find look locate see
""".split())
SHORT_QUERY_WORDS = 3  # a query with at most this many content words is a lookup
_QUERY_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_CAMEL = re.compile(r"[a-z][A-Z]")


def content_words(query: str) -> list[str]:
    """The query's names and words minus ``NOISE_WORDS`` (dotted names kept whole)."""
    return [t for t in _QUERY_NAME.findall(query) if t.lower() not in NOISE_WORDS and re.search("[A-Za-z]", t)]


def identifier_shaped(token: str) -> bool:
    """Written like code, not like a word: ``parse_json``, ``getUserById``, ``a.b``,
    ``b85decode``."""
    return ("_" in token or "." in token or bool(_CAMEL.search(token))
            or (any(c.isdigit() for c in token) and any(c.isalpha() for c in token)))


def query_names(query: str) -> list[tuple[str, ...]]:
    """Definition names the query asks for, as lower-cased dotted parts: every identifier-
    shaped token, and in a short query (a lookup such as "where is ndiff defined",
    "heapq nsmallest implementation") every content word."""
    words = content_words(query)
    short = len(words) <= SHORT_QUERY_WORDS
    return list(dict.fromkeys(tuple(p.lower() for p in w.split("."))
                              for w in words if short or identifier_shaped(w)))


def names_definition(path: str, symbol: str, names: Sequence[tuple[str, ...]]) -> bool:
    """Does one of ``names`` name the definition ``symbol`` of ``path``? A name matches
    the end of the module-qualified symbol (``urllib/parse.py`` + ``urljoin`` is matched by
    ``urljoin``, ``parse.urljoin`` and ``urllib.parse.urljoin``)."""
    if not symbol or symbol.startswith("<") or not names:
        return False
    module = path.rsplit(".", 1)[0].replace("/", ".").split(".") if path else []
    full = tuple(p.lower() for p in [*module, *symbol.split(".")])
    return any(0 < len(n) <= len(full) and full[-len(n):] == n for n in names)


def strip_noise(query: str, extra: Iterable[str] = ()) -> str:
    """The query without ``NOISE_WORDS`` and ``extra`` words (unchanged when nothing else
    is left)."""
    drop = {w.lower() for w in extra}
    words = [w for w in content_words(query) if w.lower() not in drop]
    return " ".join(words) if words else query


def is_lookup(query: str) -> bool:
    """A short query that looks a definition up ("where is ndiff defined", "bisect_left")."""
    return len(content_words(query)) <= SHORT_QUERY_WORDS
