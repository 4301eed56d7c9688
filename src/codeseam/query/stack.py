"""The ranking stack (issue 20): file-level and name levers applied after the priors of ``rank``.

Pure functions over fused, prior-weighted candidates; ``retrieve`` applies the ones its
``RetrieveOptions`` switch on, each a lever measured alone on all three dev sets
(``bench/results/rank-ablation.md``; the ones that lost are in ``rank-dropped.md``):
``saturate`` (a file's later chunks count less), ``boost_file_coherence`` (each strong file's
best chunk), ``boost_path_match`` (query words naming the file or folder, earlier words more),
``boost_named_files`` (a code name the question says that is a file's name; with
``file_name_key``, a file the query names with its extension), ``boost_declarations`` (the
declaration of a looked-up name over its namesakes) and ``apply_legacy_prior`` (older copies).
They work in units of the best candidate's score (``top``), so they mean the same over RRF,
weighted, cosine or BM25 scores.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar

from .rank import by_score

T = TypeVar("T")


def saturate(ranked: Sequence[tuple[T, float]], file_of: Callable[[T], str], *, decay: float,
             free: int = 1) -> list[tuple[T, float]]:
    """A diverse order: a file's first ``free`` candidates keep their scores, its n-th one
    after those counts ``decay ** n`` of its score; candidates are taken greedily by that
    effective score (a reader wants the best chunk of each strong file before the third
    chunk of one). Pure; the returned scores are the effective ones, best first (ties keep
    the input order)."""
    import heapq

    if decay >= 1.0 or not ranked:
        return list(ranked)
    queues: dict[str, list[int]] = {}
    for i, (item, _) in enumerate(ranked):
        queues.setdefault(file_of(item), []).append(i)
    taken: dict[str, int] = {}
    heap = [(-ranked[idx[0]][1], idx[0], f) for f, idx in queues.items()]
    heapq.heapify(heap)
    pos = {f: 0 for f in queues}
    out: list[tuple[T, float]] = []
    while heap:
        neg, i, f = heapq.heappop(heap)
        out.append((ranked[i][0], -neg))
        taken[f] = taken.get(f, 0) + 1
        pos[f] += 1
        if pos[f] < len(queues[f]):
            j = queues[f][pos[f]]
            extra = taken[f] + 1 - free
            factor = decay ** extra if extra > 0 else 1.0
            heapq.heappush(heap, (-ranked[j][1] * factor, j, f))
    return out


def boost_file_coherence(ranked: Sequence[tuple[T, float]], file_of: Callable[[T], str], *,
                         frac: float) -> list[tuple[T, float]]:
    """Each file's best candidate gains ``frac * top * (file's summed score / the largest
    file sum)``: a file with several good candidates is likelier the answer, and lifting
    only its best chunk does not let it fill the list."""
    if not ranked or frac <= 0:
        return list(ranked)
    top = max(s for _, s in ranked)
    sums: dict[str, float] = {}
    best: dict[str, int] = {}
    for i, (item, s) in enumerate(ranked):
        f = file_of(item)
        sums[f] = sums.get(f, 0.0) + s
        if f not in best or s > ranked[best[f]][1]:
            best[f] = i
    most = max(sums.values()) or 1.0
    lift = {i: frac * top * sums[f] / most for f, i in best.items()}
    return by_score([(item, s + lift.get(i, 0.0)) for i, (item, s) in enumerate(ranked)])


def file_stem(path: str) -> str:
    """A file's name up to its first dot (``src/JsonReader.Async.cs`` -> ``JsonReader``)."""
    return path.rsplit("/", 1)[-1].split(".", 1)[0]


def path_words(path: str, singular: bool = True) -> frozenset[str]:
    """The words of a file's name and its folder's name (``src/flask/blueprints.py`` ->
    blueprints, flask; ``RetryPolicy.swift`` -> retrypolicy, retry, policy); with ``singular``
    a plural word also without its ``s`` (``utils`` -> util, which ``utility`` then meets as a
    prefix, ``params`` -> param for ``parameters``)."""
    from ..chunk import split_identifier

    parts = path.rsplit("/", 2)
    stem = file_stem(path)
    out = {stem.lower(), *split_identifier(stem)}
    if len(parts) > 1 and parts[-2] not in ("", ".", ".."):
        out.update({parts[-2].lower(), *split_identifier(parts[-2])})
    if singular:
        out.update({w[:-1] for w in out if len(w) >= 5 and w.endswith("s") and not w.endswith("ss")})
    return frozenset(w for w in out if len(w) > 1)


def word_matches(word: str, names: frozenset[str], min_prefix: int = 4) -> bool:
    """``word`` is one of ``names``, or one is a prefix of the other of at least
    ``min_prefix`` letters (``redirects`` ~ ``redirect``, ``blueprint`` ~ ``blueprints``)."""
    if word in names:
        return True
    for n in names:
        short, long_ = (word, n) if len(word) <= len(n) else (n, word)
        if len(short) >= min_prefix and long_.startswith(short):
            return True
    return False


def boost_path_match(ranked: Sequence[tuple[T, float]], path_of: Callable[[T], str], words: Sequence[str], *,
                     weight: float, decay: float = 0.0, singular: bool = True) -> list[tuple[T, float]]:
    """Each candidate gains ``weight * top * share`` where ``share`` is the weighted fraction of
    the query's ``words`` that name its file or folder (``path_words``, ``word_matches``); the
    i-th word weighs ``1 / (1 + decay * i)``: a question names its subject first ("how upload
    requests stream data": ``UploadRequest`` before ``DataStreamRequest``)."""
    if not ranked or weight <= 0 or not words:
        return list(ranked)
    top = max(s for _, s in ranked)
    weights = [1.0 / (1.0 + decay * i) for i in range(len(words))]
    total = sum(weights)
    cache: dict[str, float] = {}
    out = []
    for item, s in ranked:
        p = path_of(item)
        if p not in cache:
            names = path_words(p, singular)
            cache[p] = sum(w for w, word in zip(weights, words, strict=True) if word_matches(word, names)) / total
        out.append((item, s + weight * top * cache[p]))
    return by_score(out)


def name_key(name: str) -> str:
    """What a code name says about a file name: its last part, lower case, no ``_`` or ``-``
    (``Rack::Response`` -> response, ``ManageHook`` -> managehook, ``show_exceptions`` ->
    showexceptions)."""
    last = re.split(r"::|\.|#", name)[-1] or name
    return last.lower().replace("_", "").replace("-", "")


def _stem_key(path: str) -> str:
    return name_key(file_stem(path))


def file_name_key(path: str) -> str:
    """A path's whole file name, lower case (what a query's ``framework.dart`` is matched with)."""
    return path.rsplit("/", 1)[-1].lower()


def boost_named_files(ranked: Sequence[tuple[T, float]], path_of: Callable[[T], str], role_weight: Callable[[T], float],
                      keys: frozenset[str], *, weight: float,
                      key: Callable[[str], str] = _stem_key) -> list[tuple[T, float]]:
    """The best candidate of each file whose name (up to its first dot; ``key``) is one of the
    code names the query says (``keys``, ``name_key``) gains ``weight * top * role_weight``: a
    question about ``ManageHook`` is about ``ManageHook.hs`` before a file that only uses it
    (its best chunk only: the file comes first, not all of it). With ``key=file_name_key``,
    ``keys`` are whole file names the query says (``framework.dart``)."""
    if not ranked or weight <= 0 or not keys:
        return list(ranked)
    top = max(s for _, s in ranked)
    out, seen = [], set()
    for item, s in ranked:
        path = path_of(item)
        if path not in seen and key(path) in keys:
            s += weight * top * role_weight(item)
        seen.add(path)
        out.append((item, s))
    return by_score(out)


# A line that declares a name: a declaring keyword, optional qualifiers, the name, then the end
# of the name. Type declarations rank above functions; other mentions of the name (an
# ``extension``, an ``impl ... for``, a call) declare nothing.
TYPE_KEYWORDS = ("class", "struct", "interface", "enum", "trait", "type", "protocol", "module", "defmodule",
                 "object", "record", "typedef", "namespace", "union", "actor", "data class", "abstract class",
                 "sealed class", "case class", "defprotocol", "newtype", "typealias", "mixin")
FUNCTION_KEYWORDS = ("def", "defp", "defmacro", "func", "fn", "fun", "function", "sub", "proc", "let", "const",
                     "var", "val")


def _decl_pattern(keywords: Sequence[str]) -> str:
    kw = "|".join(re.escape(k) for k in sorted(keywords, key=len, reverse=True))
    return r"(?:^|[\s(])(?:" + kw + r")\s+(?:[A-Za-z_$][\w$]*(?:\.|::))*NAME(?=$|[\s<({:\[;=,]|\.\.)"


_TYPE_DECL = _decl_pattern(TYPE_KEYWORDS)
_FUNC_DECL = _decl_pattern(FUNCTION_KEYWORDS)


def declaration_tier(text: str, name: str) -> float:
    """2 when ``text`` declares the type ``name`` (``class Session``, ``pub struct Router``,
    ``defmodule Ecto.Schema``), 1 when it declares a function or value of that name, 0 else."""
    if not name or name not in text:
        return 0.0
    esc = re.escape(name)
    if re.search(_TYPE_DECL.replace("NAME", esc), text, re.MULTILINE):
        return 2.0
    if re.search(_FUNC_DECL.replace("NAME", esc), text, re.MULTILINE):
        return 1.0
    return 0.0


def boost_declarations(ranked: Sequence[tuple[T, float]], tier_of: Callable[[T], float], *,
                       weight: float) -> list[tuple[T, float]]:
    """Each candidate gains ``weight * top * tier`` (``tier_of``: how surely it declares a
    name the query looks up)."""
    if not ranked or weight <= 0:
        return list(ranked)
    top = max(s for _, s in ranked)
    return by_score([(item, s + weight * top * tier_of(item)) for item, s in ranked])


# -- legacy copies and platform twins --------------------------------------------------------------

LEGACY_DIRS = frozenset({"deprecated", "legacy", "compat", "_compat", "obsolete", "old", "backport", "backports"})
_VERSION_DIR = re.compile(r"^v(\d+)$")
_MAYBE_LEGACY = re.compile(r"(?:^|/)(?:" + "|".join(sorted(LEGACY_DIRS)) + r"|v\d+)/", re.IGNORECASE)


def legacy_paths(paths: Sequence[str]) -> frozenset[str]:
    """The paths that are an older copy: under a legacy folder (``deprecated/``, ``compat/``,
    ...), or under a version folder (``v3/``) when a candidate under the same parent has a
    newer one (``v4/``). A lone ``v1/`` (a package named by its API version) is not legacy."""
    newest: dict[str, int] = {}
    versioned: list[tuple[str, str, int]] = []
    out = set()
    for p in paths:
        if not _MAYBE_LEGACY.search(p):  # most paths: no legacy or version folder at all
            continue
        parts = p.split("/")[:-1]
        if any(d.lower() in LEGACY_DIRS for d in parts):
            out.add(p)
        for i, d in enumerate(parts):
            m = _VERSION_DIR.match(d.lower())
            if m:
                prefix = "/".join(parts[:i])
                n = int(m.group(1))
                newest[prefix] = max(newest.get(prefix, n), n)
                versioned.append((p, prefix, n))
    out.update(p for p, prefix, n in versioned if n < newest[prefix])
    return frozenset(out)


def apply_legacy_prior(ranked: Sequence[tuple[T, float]], path_of: Callable[[T], str], *,
                       weight: float) -> list[tuple[T, float]]:
    """Scores of older copies (``legacy_paths``) times ``weight``."""
    if weight >= 1.0 or not ranked:
        return list(ranked)
    old = legacy_paths([path_of(item) for item, _ in ranked])
    if not old:
        return list(ranked)
    return by_score([(item, s * weight if path_of(item) in old else s) for item, s in ranked])
