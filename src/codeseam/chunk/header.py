"""The header that goes into ``indexed_text``: what a chunk is and where it lives.

``text`` stays the clean source. ``indexed_text`` is a compact header followed by the
text; the header helps both BM25 and dense retrieval::

    json/decoder.py (python)
    method JSONDecoder.raw_decode in JSONDecoder
    doc: Decode a JSON document from ``s`` (a ``str`` beginning with   <- when not in the text
    JSONDecoder: Simple JSON <https://json.org> decoder                 <- the parent's doc
    imports: re, json.scanner
    defines: JSONDecoder.raw_decode
    words: raw decode, json decoder, scan once
    def raw_decode(self, s, idx=0):      <- only when the chunk starts inside a definition
        ...
    <text>

The header is bounded: a fixed number of imports and identifier splits in byte mode,
and at most ``Budget.header_tokens`` tokens in token mode (identifier splits go first,
then defines, imports, the documentation lines, the signature), so the code keeps most of an embedder's budget.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .budget import Budget, safe_count

MAX_IMPORTS = 12
MAX_IMPORTS_CHARS = 200
MAX_DEFINES = 12
MAX_WORDS = 24
MAX_WORDS_CHARS = 300

_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+|[^\x00-\x7f]+")
# bytes -> identifier characters kept, everything else a space (ASCII identifiers only)
_IDENT_TABLE = bytes(c if (48 <= c <= 57 or 65 <= c <= 90 or 97 <= c <= 122 or c == 95) else 32
                     for c in range(256))
# Whole words (of ``_IDENT_TABLE`` output) holding an uppercase letter, a digit or an
# underscore: the only ones ``_splittable`` can accept. Possessive, so plain lowercase
# words fail at their first space without backtracking.
_CANDIDATES = re.compile(rb"\b[a-z]*+[A-Z0-9_]\w*")
_IMPORT_TOKEN = re.compile(r"""["'<]([^"'<>\s]+)[">']|([A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::|\\|/)[A-Za-z_][A-Za-z0-9_]*)*)""")
_IMPORT_STOP = frozenset({
    "import", "from", "as", "use", "using", "include", "require", "require_relative",
    "static", "package", "type", "typeof", "open", "extern", "crate", "self", "super", "pub",
    "qualified", "hiding", "export", "namespace", "define", "library", "part", "show", "hide",
    "deferred", "only", "except", "with", "in", "const", "let", "var", "alias", "global",
})


@functools.lru_cache(maxsize=65536)
def _split_cached(name: str) -> tuple[str, ...]:
    words: list[str] = []
    for piece in re.split(r"[^0-9A-Za-z\u0080-\uffff]+", name):
        if piece:
            words.extend(w.lower() for w in _PARTS.findall(piece))
    return tuple(words)


def split_identifier(name: str) -> list[str]:
    """``getUserById`` -> ``[get, user, by, id]``; ``parse_json2`` -> ``[parse, json, 2]``;
    ``HTTPServer`` -> ``[http, server]``."""
    return list(_split_cached(name))


def _splittable(word: bytes) -> bool:
    if word[:1].isdigit():  # a number such as 0x0010, not an identifier
        return False
    core = word.strip(b"_")
    if not core:
        return False
    if b"_" in core:
        return True
    if len(core) < 4:  # NaN, IOs: not worth splitting
        return False
    if core.islower() or core.isupper():
        return not core.isalpha() and not core.isdigit()  # letters and digits: json2
    return True  # mixed case: camelCase, PascalCase


# Words already classified (a set: membership is all that is asked, and a set probe
# touches less memory than a dict's); splittable word -> its split words joined by
# spaces; the keys of the splittable ones. Bounded: cleared when large.
_MEMO: set[bytes] = set()
_SPLITTABLE: dict[bytes, str] = {}
_SPLITTABLE_SET: set[bytes] = set()
_MEMO_MAX = 300_000


def _learn(words: Iterable[bytes]) -> None:
    if len(_MEMO) > _MEMO_MAX:
        _MEMO.clear()
        _SPLITTABLE.clear()
        _SPLITTABLE_SET.clear()
    for word in words:
        if _splittable(word):
            parts = _split_cached(word.decode("ascii"))
            if len(parts) >= 2:
                _SPLITTABLE[word] = " ".join(parts)
                _SPLITTABLE_SET.add(word)
        _MEMO.add(word)


def _splits_in(ident: bytes) -> list[str]:
    """Splits of the splittable identifiers in ``ident`` (bytes after ``_IDENT_TABLE``),
    in order of first use. Set operations keep the per-word work in C."""
    words = set(ident.split())
    unknown = words.difference(_MEMO)
    if unknown:
        _learn(unknown)
    hits = words & _SPLITTABLE_SET
    if not hits:
        return []
    if len(hits) > 1:
        return list(dict.fromkeys(map(_SPLITTABLE.__getitem__, sorted(hits, key=ident.find))))
    return [_SPLITTABLE[hits.pop()]]


def _splits_of(raw: bytes, limit: int) -> list[str]:
    """Split forms of the splittable identifiers in ``raw``, first use first, deduplicated."""
    return _splits_in(raw.translate(_IDENT_TABLE))[:limit]


def identifier_splits(text: str, limit: int | None = None) -> str:
    """Split words of the identifiers in ``text`` that split into two or more parts,
    in order of first use, deduplicated: ``"getUserById(user_id)"`` ->
    ``"get user by id, user id"``. ASCII identifiers only."""
    raw = text.encode("utf-8", "surrogatepass")
    return ", ".join(_splits_of(raw, limit if limit is not None else 1 << 30))


def import_summary(data: bytes, nodes: Iterable[Any]) -> list[str]:
    """Module names from the file's top-level import nodes, deduplicated and capped."""
    names: list[str] = []
    seen: set[str] = set()
    chars = 0
    for node in nodes:
        raw = data[node.start_byte:node.end_byte].decode("utf-8", "replace")
        for m in _IMPORT_TOKEN.finditer(raw):
            name = m.group(1) or m.group(2)
            if not name or name in seen or name.lower() in _IMPORT_STOP:
                continue
            seen.add(name)
            names.append(name)
            chars += len(name) + 2
            if len(names) >= MAX_IMPORTS or chars >= MAX_IMPORTS_CHARS:
                return names
    return names


@functools.lru_cache(maxsize=65536)
def _name_split(name: str) -> tuple[str, ...]:
    out = []
    for part in name.split("."):
        parts = _split_cached(part)
        if len(parts) >= 2:
            out.append(" ".join(parts))
    return tuple(out)


def _name_splits(names: Iterable[str]) -> list[str]:
    out: list[str] = []
    for name in names:
        out.extend(_name_split(name))
    return out


class FileWords:
    """Identifier splits for the chunks of one file.

    The file is translated once (identifier bytes kept, the rest spaces) and scanned
    once per chunk span for *candidates*: only a word with an uppercase letter, a digit or
    an underscore can split (``_splittable``), and plain lowercase words, the bulk of
    code, are never made into objects. The file's splittable identifiers are found once
    (``hits``: words never seen before are classified and remembered). A chunk's are
    ``hits`` intersected with its candidates: C-level set work against a small per-file
    set, sorted for a stable order.
    """

    __slots__ = ("spans", "hits", "split")

    def __init__(self, data: bytes, spans: list[tuple[int, int]]) -> None:
        ident = data.translate(_IDENT_TABLE)
        self.spans = [ident[a:b].split() for a, b in spans]
        words: set[bytes] = set().union(*self.spans)
        unknown = words.difference(_MEMO)
        if unknown:
            _learn(unknown)
        self.hits = words & _SPLITTABLE_SET
        # this file's splittable words and their splits: a small dict, looked up per chunk
        self.split = {w: _SPLITTABLE[w] for w in self.hits}

    def words(self, index: int, names: Iterable[str]) -> list[str]:
        """Splits for chunk ``index``: its symbol and defined names, then what it uses."""
        out = _name_splits(names) if names else []
        if self.hits:
            used = self.hits.intersection(self.spans[index])
            if used:
                if len(used) == 1:
                    out.append(self.split[used.pop()])
                else:
                    out.extend(map(self.split.__getitem__, sorted(used)))
        return _bounded(out) if len(out) > 1 else out


def _bounded(words: list[str]) -> list[str]:
    words = list(dict.fromkeys(words))
    if len(words) > MAX_WORDS:
        del words[MAX_WORDS:]
    if sum(map(len, words)) + 2 * len(words) <= MAX_WORDS_CHARS:
        return words
    chars = 0
    for i, w in enumerate(words):
        chars += len(w) + 2
        if chars > MAX_WORDS_CHARS:
            return words[:i]
    return words  # pragma: no cover - the sum above was over the limit


@dataclass(slots=True)
class HeaderParts:
    path: str
    language: str
    kind: str
    symbol: str
    parent: str
    imports: list[str]
    defines: list[str]
    words: list[str]
    sig: str
    doc: str = ""  # first line of the named definition's documentation
    parent_doc: str = ""  # ... and of its parent's (``parent``)

    def doc_lines(self) -> list[str]:
        lines = [f"doc: {self.doc}"] if self.doc else []
        if self.parent_doc:
            lines.append(f"{self.parent}: {self.parent_doc}" if self.parent else f"doc: {self.parent_doc}")
        return lines

    def render(self) -> str:
        what = f"{self.kind} {self.symbol}".rstrip() if self.symbol else self.kind
        if self.parent:
            what += f" in {self.parent}"
        return "\n".join(header_lines(
            f"{self.path} ({self.language})", what, self.doc, self.parent_doc, self.parent,
            "imports: " + ", ".join(self.imports) if self.imports else "", self.defines,
            self.words, self.sig))


def header_lines(head: str, what: str, doc: str, parent_doc: str, parent: str, imports_line: str,
                 defines: list[str], words: list[str], sig: str) -> list[str]:
    """The lines of a byte-mode header (``HeaderParts.render``); ``head`` is the path line,
    ``what`` the kind and symbol line, ``imports_line`` the file's imports line or ""."""
    lines = [head, what]
    if doc:
        lines.append("doc: " + doc)
    if parent_doc:
        lines.append(f"{parent}: {parent_doc}" if parent else "doc: " + parent_doc)
    if imports_line:
        lines.append(imports_line)
    if defines:
        lines.append("defines: " + ", ".join(defines))
    if words:
        lines.append("words: " + ", ".join(words))
    if sig:
        lines.append(sig)
        lines.append("    ...")
    return lines


class HeaderFitter:
    """Token mode: fits a chunk's header into ``Budget.header_tokens``.

    Each header line is counted once (imports and signatures repeat across a file's
    chunks and are cached); lines are taken in priority order (path and symbol,
    continuation signature, documentation lines, imports, defines, identifier splits), a list that does not fit
    is cut to the longest prefix that does. A newline is reckoned as one token, so the
    sum bounds the header for word-piece and byte-level tokenizers alike; the text then
    fits beside it (``Budget.text_tokens`` keeps a margin for the joining newline).
    """

    def __init__(self, budget: Budget) -> None:
        self.count: Callable[[str], int] = budget.count_tokens  # type: ignore[assignment]
        self.limit = budget.header_tokens
        self.cache: dict[str, int] = {}

    def tokens(self, line: str) -> int:
        n = self.cache.get(line)
        if n is None:
            n = safe_count(self.count, line) + 1  # + the newline
            if len(self.cache) < 4096:
                self.cache[line] = n
        return n

    def fit(self, p: HeaderParts) -> str:
        what = f"{p.kind} {p.symbol}".rstrip() if p.symbol else p.kind
        if p.parent:
            what += f" in {p.parent}"
        lines = [f"{p.path} ({p.language})", what]
        left = self.limit - sum(self.tokens(ln) for ln in lines)
        while left < 0 and len(lines[0]) > 12:  # a very long path: keep its tail
            lines[0] = "..." + lines[0][len(lines[0]) // 2:]
            left = self.limit - sum(self.tokens(ln) for ln in lines)
        if left < 0:
            return lines[0][-40:]
        if p.sig:
            sig_lines = p.sig.split("\n") + ["    ..."]
            while len(sig_lines) > 1 and sum(self.tokens(ln) for ln in sig_lines) > left:
                sig_lines = sig_lines[:-2] + ["    ..."] if len(sig_lines) > 2 else []
            cost = sum(self.tokens(ln) for ln in sig_lines)
            if sig_lines and cost <= left:
                left -= cost
            else:
                sig_lines = []
        else:
            sig_lines = []
        for line in p.doc_lines():  # documentation before imports and splits
            cost = self.tokens(line)
            if cost <= left:
                lines.append(line)
                left -= cost
        for label, items in (("imports: ", p.imports), ("defines: ", p.defines), ("words: ", p.words)):
            if not items or left <= 0:
                continue
            line = self._prefix(label, items, left)
            if line:
                lines.append(line)
                left -= self.tokens(line)
        return "\n".join(lines + sig_lines)

    def _prefix(self, label: str, items: list[str], left: int) -> str:
        """The longest ``label + items[:k]`` line that fits ``left`` tokens ("" if none)."""
        line = label + ", ".join(items)
        if self.tokens(line) <= left:
            return line
        lo, hi = 0, len(items) - 1  # items[:lo] fits (lo may be 0)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.tokens(label + ", ".join(items[:mid])) <= left:
                lo = mid
            else:
                hi = mid - 1
        return label + ", ".join(items[:lo]) if lo else ""


def indexed_text(parts: HeaderParts, text: str, budget: Budget,
                 fitter: HeaderFitter | None = None) -> str:
    """Header + text. In token mode the header is fitted to ``Budget.header_tokens``
    (the text already fits ``Budget.text_tokens``), so the whole fits ``max_tokens``."""
    if not budget.token_mode:
        return parts.render() + "\n" + text
    fitter = fitter or HeaderFitter(budget)
    return fitter.fit(parts) + "\n" + text
