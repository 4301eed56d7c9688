"""Query analysis: what a query's words are to BM25 and which definitions it names.

Pure functions of the query text: ``bm25_query`` (identifier splits added), ``strip_noise``
(question words out), ``content_words``, ``query_names`` / ``names_definition`` (the
definitions a lookup asks for), ``is_lookup``; ``analyze`` decides once what a query is
(``QueryInfo``: its names, path words, file names, closing place, and its intent from
``intent.py``); ``with_forms`` gives BM25 each word's other forms.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .intent import intent

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
""".split())  # noqa: SIM905 - a word list reads better as words
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


def names_definition(path: str, symbol: str, names: Sequence[tuple[str, ...]], packages: bool = True) -> bool:
    """Does one of ``names`` name the definition ``symbol`` of ``path``? A name matches
    the end of the module-qualified symbol (``urllib/parse.py`` + ``urljoin`` is matched by
    ``urljoin``, ``parse.urljoin`` and ``urllib.parse.urljoin``), or with ``packages`` a
    qualified name the end of the folder-qualified one: where the package is the folder, as in
    Go, ``assert.Contains`` names ``Contains`` of ``assert/assertions.go``."""
    if not symbol or symbol.startswith("<") or not names:
        return False
    own = tuple(symbol.lower().split("."))
    module = tuple(path.lower().rsplit(".", 1)[0].replace("/", ".").split(".")) if path else ()
    folders = tuple(path.lower().split("/")[:-1])
    quals = [(module, 1)] + ([(folders, 2)] if packages else [])  # a folder qualifies a qualified name only
    return any(least <= len(n) <= len(q) + len(own) and (q + own)[-len(n):] == n
               for q, least in quals for n in names)


def strip_noise(query: str, extra: Iterable[str] = ()) -> str:
    """The query without ``NOISE_WORDS`` and ``extra`` words (unchanged when nothing else
    is left)."""
    drop = {w.lower() for w in extra}
    words = [w for w in content_words(query) if w.lower() not in drop]
    return " ".join(words) if words else query


def project_words(scope: Sequence[str]) -> frozenset[str]:
    """The words that name the one repository a search covers (``lazy.nvim`` -> lazy.nvim,
    lazy, nvim, lazynvim); none when it covers several, where a repository's name tells
    them apart. A question names the project it is about ("how dio sends a request"): the
    name says nothing about where in it the answer is, and every file named after the
    project (``dio.dart``, ``dio_mixin.dart``) would match it in BM25 and in the path match."""
    if len(scope) != 1:
        return frozenset()
    low = scope[0].lower()
    parts = re.findall(r"[a-z0-9]+", low)
    return frozenset(w for w in (low, "".join(parts), *parts) if len(w) > 1)


def is_lookup(query: str) -> bool:
    """A short query that looks a definition up ("where is ndiff defined", "bisect_left")."""
    return len(content_words(query)) <= SHORT_QUERY_WORDS


# -- the query, analysed once -------------------------------------------------------------------

# camelCase / PascalCase / snake_case names inside a question ("how does StateManager track ...")
_EMBEDDED_NAME = re.compile(r"\b(?:[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*|[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*"
                            r"|[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+)\b")
_QUALIFIER = re.compile(r"::|\\|->|\.|#")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
# A file name with its extension ("framework.dart", `lib/cli/run.js`: its last part); matched
# against whole file names, so a product name shaped like one ("Node.js") costs nothing.
_FILE_NAME = re.compile(r"(?<![\w.-])(?:[\w.-]*/)?([A-Za-z0-9_][\w-]*\.[a-z][a-z0-9]{0,4})(?![\w.-])")
PATH_STOP = NOISE_WORDS | frozenset({"not", "if", "has", "have", "which", "get", "set", "via", "using", "use"})
_NOT_A_PLACE = PATH_STOP | frozenset({"all", "now", "good", "real", "them", "both", "each", "every", "some", "any", "more",
                          "less", "free", "sure", "once", "later", "case", "cases", "example", "instance", "default"})


@dataclass(frozen=True)
class QueryInfo:
    """What a query is, decided once (``analyze``) and read by every lever.

    ``symbol``: the whole query is one name (``Session``, ``Rails::Engine``, ``basic_format_args``):
    a lookup of its declaration. ``names``: the names to look up as declarations, exactly as
    typed (the last part of a qualified name, and the whole): the query's own name for a
    symbol query, the identifier-shaped names inside a question otherwise. ``words``: the
    lower-cased content words (question words out), for matching file paths. ``intent``: the
    query's kind (``intent``), which decides the file-level levers and the path match.
    ``files``: file names the query says with their extension (``framework.dart``, ``cli.py``),
    lower case: a file of exactly that name is the one meant. ``scope``: for a behaviour, the
    word its closing phrase names as where it happens ("fix path completion in bash": bash;
    ``scope_word``), lower case, or "".
    """

    text: str
    symbol: bool
    names: tuple[str, ...]
    words: tuple[str, ...]
    intent: str
    files: tuple[str, ...] = ()
    scope: str = ""


def analyze(query: str) -> QueryInfo:
    q = query.strip()
    kind = intent(q)
    symbol = kind == "symbol"  # the whole query is one name
    if symbol:
        last = _QUALIFIER.split(q)[-1]
        names = tuple(dict.fromkeys([last]))
    else:
        names = tuple(dict.fromkeys(_EMBEDDED_NAME.findall(q)))
    words = tuple(dict.fromkeys(w.lower() for w in _WORD.findall(q)
                                if len(w) > 2 and w.lower() not in PATH_STOP))
    files = tuple(dict.fromkeys(m.lower() for m in _FILE_NAME.findall(q)))
    return QueryInfo(q, symbol, names, words, kind, files, scope_word(q) if kind == "behaviour" else "")


# A change or a behaviour often closes by saying where it happens: "fix path completion in bash",
# "emit value terminators on zsh", "require a non-empty name for blueprints" (a commit subject's
# scope, said last in English where a conventional commit says it first).
_SCOPE = re.compile(r"\b(?:in|on|for)\s+(?:the\s+)?`?([A-Za-z][\w.-]*?)`?[.!]?\s*$", re.I)


def scope_word(query: str) -> str:
    """The word after a closing "in" / "on" / "for" ("... in bash" -> bash), lower case; "" when
    the query does not close with one or it says nothing about a place ("for it", "in all")."""
    m = _SCOPE.search(query.strip())
    word = m.group(1).lower() if m else ""
    return word if len(word) > 2 and word not in _NOT_A_PLACE else ""


# -- word forms for BM25 ----------------------------------------------------------------------------
#
# BM25 over ``indexed_text`` matches exact words: "redirects" never meets ``redirect``. Milvus'
# own English stemmer on the field would fix that at the price of exact matches ("years" and
# "year" become one word, so a question about leap *years* loses its sharpest word); instead the
# query carries each word twice and its other forms once: the forms the Snowball stemmer
# (PyStemmer; Snowball is the stemmer Milvus' analyzer uses) maps to the same stem, built from the
# stem with the common English suffixes. A form the index never saw costs nothing.

_FORM_SUFFIXES = ("", "s", "es", "ed", "ing", "er", "ers", "e", "ion", "ions", "ation", "ations", "ies", "y")
_PLAIN_WORD = re.compile(r"[a-z]{4,}")


@functools.lru_cache(maxsize=1)
def _stemmer():
    import Stemmer  # PyStemmer: the Snowball stemmers in C (0.5 us a word; the pure-Python one takes 30)

    return Stemmer.Stemmer("english")


@functools.lru_cache(maxsize=4096)
def word_forms(word: str) -> tuple[str, ...]:
    """Other forms of a lower-case English ``word`` that stem like it (``redirects`` ->
    redirect, redirected, redirecting, redirection ...), without ``word`` itself."""
    if not _PLAIN_WORD.fullmatch(word):
        return ()
    st = _stemmer()
    stem = st.stemWord(word)
    bases = {stem, stem[:-1] if stem.endswith(("i", "e")) else stem}
    if len(stem) > 3 and stem[-1] == stem[-2]:  # run -> running
        bases.add(stem[:-1])
    out = []
    for base in sorted(bases):
        for suffix in _FORM_SUFFIXES:
            for cand in (base + suffix, base + base[-1] + suffix if suffix in ("ed", "ing", "er", "ers") else ""):
                if cand and cand != word and len(cand) >= 3 and cand not in out and st.stemWord(cand) == stem:
                    out.append(cand)
    return tuple(out)


def with_forms(text: str, exact: int = 2) -> str:
    """The BM25 text with each word ``exact`` times and its other forms once (``word_forms``)."""
    words = re.findall(r"\S+", text)
    extra = [f for w in words for f in word_forms(w.lower())]
    return " ".join([*(w for w in words for _ in range(exact)), *dict.fromkeys(extra)])
