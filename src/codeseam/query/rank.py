"""Ranking priors applied after fusion: file roles, definition evidence, chunk kinds, the stack.

Pure functions over fused candidates; ``retrieve.retrieve`` applies the ones its
``RetrieveOptions`` switch on (each one is a lever the eval measures alone).

Role prior
    A question about behaviour is answered by the code that behaves, not by the test that
    exercises it, the page that documents it or the changelog line that announced it. Each
    candidate's fused score is multiplied by its file role's weight (``ROLE_WEIGHTS``:
    source 1.0, everything else below). A prior, not a wall: a test still wins when it
    matches far better than any source, or when nothing else matches. And when the query
    asks for a role in words (``asked_roles``: "tests for ...", "docs", "changelog",
    "example", ...), that role weighs 1.0 like source. So does a candidate that holds a
    rare query word (``RARE_WORD``) no source candidate holds: it is what matches.

Definition evidence
    A long definition is cut into pieces, and each piece is ranked alone: three pieces of
    one function that each match a little lose to one small function that matches once.
    Candidates of the same definition (path and symbol) are ranked as a group, by the sum
    of their best ``FILE_TOP`` scores, and every candidate gains ``weight * U * (rrf_k + 1) /
    (rrf_k + group rank)`` (``apply_group_evidence``: with RRF fusion, where a first place in
    one list scores ``U = 1 / (rrf_k + 1)``, a third RRF list, of definitions).

Kind prior
    Top-level code that holds no definition (imports, constants: kind ``module``) and a
    class's header (its fields: kind ``header``) are rarely where a behaviour lives; their
    scores are multiplied by ``KIND_WEIGHTS``.

The stack (issue 20; each a lever measured alone, ``bench/results/rank-ablation.md``)
    ``saturate`` (a file's later chunks count less), ``boost_file_coherence`` (each strong
    file's best chunk), ``boost_path_match`` (query words naming the file or folder, earlier
    words more), ``boost_named_files`` (a code name the question says that is a file's name;
    with ``file_name_key``, a file the query names with its extension),
    ``boost_declarations`` (the declaration of a looked-up name over its namesakes) and
    ``apply_legacy_prior`` (older copies). The file-evidence list and the name match of the
    round before were measured, lost, and removed (``bench/results/rank-dropped.md``).

``U`` (``unit``) is the score of a first place in one list: ``1 / (rrf_k + 1)`` for RRF,
1.0 for weighted fusion (scores normalised to 0..1), so a bonus means the same under both.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TypeVar

T = TypeVar("T")

# Weight of each file role's candidates (source 1.0). Measured in bench/results/ablation.md.
ROLE_WEIGHTS: dict[str, float] = {
    "source": 1.0, "test": 0.3, "fixture": 0.3, "docs": 0.3, "changelog": 0.3, "example": 0.3,
    "benchmark": 0.3, "generated": 0.3, "config": 0.3, "build": 0.3, "locale": 0.3,
}

# Words that ask for a role ("where are the tests for X", "docs about Y"). Matched as whole
# lower-cased words of the query.
ROLE_WORDS: dict[str, frozenset[str]] = {
    "test": frozenset({"test", "tests", "tested", "testing", "unittest", "unittests", "spec", "specs",
                       "testcase", "testcases"}),
    "fixture": frozenset({"fixture", "fixtures", "testdata", "snapshot", "snapshots"}),
    "docs": frozenset({"doc", "docs", "documentation", "documented", "readme", "guide", "tutorial",
                       "manual"}),
    "changelog": frozenset({"changelog", "changelogs", "changes", "news", "history"}),
    "example": frozenset({"example", "examples", "sample", "samples", "demo", "demos"}),
    "benchmark": frozenset({"benchmark", "benchmarks", "bench", "benches"}),
    "generated": frozenset({"generated", "vendored", "vendor"}),
    "config": frozenset({"ci", "workflow", "workflows", "lint", "linter", "eslint", "tsconfig"}),
    "locale": frozenset({"locale", "locales", "i18n", "l10n", "translation", "translations", "translated",
                         "localization", "localisation", "localized", "localised", "internationalization",
                         "internationalisation"}),
    "build": frozenset({"makefile", "dockerfile", "packaging", "setup.py", "pyproject", "cargo.toml"}),
}
_PHRASES: dict[str, tuple[str, ...]] = {"changelog": ("release notes", "release note")}
# A role a query asks for also lifts the roles that live with it.
_ALSO: dict[str, tuple[str, ...]] = {"test": ("fixture",), "fixture": ("test",)}

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.]*")


def asked_roles(query: str) -> frozenset[str]:
    """The roles a query asks for by name (none for most questions about behaviour)."""
    low = query.lower()
    words = set(_WORD.findall(low))
    asked = {role for role, vocab in ROLE_WORDS.items() if words & vocab}
    asked |= {role for role, phrases in _PHRASES.items() if any(p in low for p in phrases)}
    for role in list(asked):
        asked.update(_ALSO.get(role, ()))
    return frozenset(asked)


def role_weight(role: str, asked: frozenset[str], weights: Mapping[str, float] = ROLE_WEIGHTS) -> float:
    if role in asked:
        return 1.0
    return weights.get(role, 1.0)


def apply_role_prior(ranked: Sequence[tuple[T, float]], role_of: Callable[[T], str], query: str,
                     weights: Mapping[str, float] = ROLE_WEIGHTS, *, rare: Iterable[str] = (),
                     text_of: Callable[[T], str] | None = None) -> list[tuple[T, float]]:
    """Scores times their role's weight, re-sorted (stable: ties keep the fused order).

    ``rare``: query words few chunks of the index hold. A candidate of another role that
    holds one of them while no source candidate does is *what matches* (a unique name
    only a test or a doc page mentions): it keeps its score."""
    asked = asked_roles(query)
    only_elsewhere: set[str] = set()
    if rare and text_of is not None:  # whole words, as BM25 cut them (a substring is not the word)
        words = set(rare)
        held = {id(item): words.intersection(_TOKEN.findall(text_of(item).lower())) for item, _ in ranked}
        in_source = {w for item, _ in ranked if role_of(item) == SOURCE_ROLE for w in held[id(item)]}
        only_elsewhere = words - in_source
    out = []
    for item, score in ranked:
        role = role_of(item)
        if only_elsewhere and role != SOURCE_ROLE and held[id(item)] & only_elsewhere:
            out.append((item, score))
        else:
            out.append((item, score * role_weight(role, asked, weights)))
    return _sorted(out)


SOURCE_ROLE = "source"
_TOKEN = re.compile(r"[a-z0-9]+")  # the words of a text as the standard analyzer cuts them (evidence.query_words)
RARE_WORD = 3  # a query word at most this many chunks hold is rare (``apply_role_prior``)


FILE_TOP = 3  # a file's evidence: the sum of its best FILE_TOP candidate scores


KIND_WEIGHTS: dict[str, float] = {"module": 0.8, "header": 0.9}


def apply_kind_prior(ranked: Sequence[tuple[T, float]], kind_of: Callable[[T], str],
                     weights: Mapping[str, float] = KIND_WEIGHTS) -> list[tuple[T, float]]:
    return _sorted([(item, score * weights.get(kind_of(item), 1.0)) for item, score in ranked])


def file_ranks(ranked: Sequence[tuple[T, float]], file_of: Callable[[T], str], top: int = FILE_TOP) -> dict[str, int]:
    """1-based rank of each file by the summed scores of its best ``top`` candidates (ties:
    the file seen first in ``ranked`` first)."""
    per: dict[str, list[float]] = {}
    for item, score in ranked:
        per.setdefault(file_of(item), []).append(score)
    totals = {f: sum(sorted(s, reverse=True)[:top]) for f, s in per.items()}
    order = sorted(totals, key=lambda f: -totals[f])  # sorted is stable: first-seen order on ties
    return {f: i for i, f in enumerate(order, 1)}


def apply_group_evidence(ranked: Sequence[tuple[T, float]], file_of: Callable[[T], str], *, weight: float,
                        unit: float, rrf_k: int, top: int = FILE_TOP) -> list[tuple[T, float]]:
    """Each candidate gains ``weight * unit * (rrf_k + 1) / (rrf_k + rank of its group)``
    (groups by ``file_of``: a file, or a definition); re-sorted."""
    ranks = file_ranks(ranked, file_of, top)
    scale = weight * unit * (rrf_k + 1)
    out = [(item, score + scale / (rrf_k + ranks[file_of(item)])) for item, score in ranked]
    return _sorted(out)


# Words that say what kind of change a commit is, not what it is about.
CHANGE_WORDS = frozenset("""
fix fixes fixed fixing bug bugs issue issues add adds added adding allow allows allowed support supports
supported make makes made use uses used handle handles handling improve improves improved improvement
remove removes removed update updates updated change changes changed correct correctly properly proper
avoid avoids prevent prevents ensure ensures when not dont don't doesnt doesn't no should must can could
being be been being also only now new instead properly incorrect wrong
""".split())  # noqa: SIM905 - a word list reads better as words



def _sorted(items: list[tuple[T, float]]) -> list[tuple[T, float]]:
    return sorted(items, key=lambda p: -p[1])  # stable: ties keep their order


# -- file-level coherence and diversity, paths, declarations (issue 20) --------------------------
#
# These work in units of the best candidate's score (``top``), so they mean the same over RRF,
# weighted, cosine or BM25 scores.


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
    return _sorted([(item, s + lift.get(i, 0.0)) for i, (item, s) in enumerate(ranked)])


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
    return _sorted(out)


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
    return _sorted(out)


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
    return _sorted([(item, s + weight * top * tier_of(item)) for item, s in ranked])


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
    return _sorted([(item, s * weight if path_of(item) in old else s) for item, s in ranked])
