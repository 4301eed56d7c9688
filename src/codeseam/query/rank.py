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
    scores are multiplied by ``KIND_WEIGHTS``. A query that describes one behaviour or change
    ("fix hang on revalidated cached responses", intent ``behaviour``) is answered by the
    routine that does it: there those kinds and a class's own code outside its methods (kind
    ``class``) weigh ``BEHAVIOUR_KIND_WEIGHT`` of their usual weight (``kind_weights``). Among the
    first ten candidates of repos-dev's commit queries, 1% of the ``class`` chunks and none of
    the ``module`` chunks were a target, against 9% of methods and 13% of functions
    (bench/results/rank-ablation.md, lever ``+kbeh1``).

The stack (issue 20)
    The file-level and name levers that run after these priors are in ``stack.py``.

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
    return by_score(out)


SOURCE_ROLE = "source"
_TOKEN = re.compile(r"[a-z0-9]+")  # the words of a text as the standard analyzer cuts them (evidence.query_words)
RARE_WORD = 3  # a query word at most this many chunks hold is rare (``apply_role_prior``)


FILE_TOP = 3  # a file's evidence: the sum of its best FILE_TOP candidate scores


KIND_WEIGHTS: dict[str, float] = {"module": 0.8, "header": 0.9}
# For a description of one behaviour or change: the kinds that are not one routine weigh this
# much of their ``KIND_WEIGHTS`` (any weight from 0.2 to 0.5 gave repos-dev the same lift).
BEHAVIOUR_KIND_WEIGHT = 0.4
NOT_A_ROUTINE = ("module", "header", "class")


def kind_weights(intent: str, behaviour: float = BEHAVIOUR_KIND_WEIGHT) -> dict[str, float]:
    """``KIND_WEIGHTS`` for a query of this ``intent`` (``intent.intent``): for a behaviour,
    every kind in ``NOT_A_ROUTINE`` ``behaviour`` times its weight."""
    if intent != "behaviour" or behaviour == 1.0:
        return KIND_WEIGHTS
    return {k: KIND_WEIGHTS.get(k, 1.0) * behaviour for k in NOT_A_ROUTINE}


def apply_kind_prior(ranked: Sequence[tuple[T, float]], kind_of: Callable[[T], str],
                     weights: Mapping[str, float] = KIND_WEIGHTS) -> list[tuple[T, float]]:
    return by_score([(item, score * weights.get(kind_of(item), 1.0)) for item, score in ranked])


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
    return by_score(out)


# Words that say what kind of change a commit is, not what it is about.
CHANGE_WORDS = frozenset("""
fix fixes fixed fixing bug bugs issue issues add adds added adding allow allows allowed support supports
supported make makes made use uses used handle handles handling improve improves improved improvement
remove removes removed update updates updated change changes changed correct correctly properly proper
avoid avoids prevent prevents ensure ensures when not dont don't doesnt doesn't no should must can could
being be been being also only now new instead properly incorrect wrong
""".split())  # noqa: SIM905 - a word list reads better as words



def by_score(items: list[tuple[T, float]]) -> list[tuple[T, float]]:
    """Highest score first; ties keep their order (a stable sort)."""
    return sorted(items, key=lambda p: -p[1])
