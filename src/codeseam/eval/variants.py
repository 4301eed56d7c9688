"""Variants: which index and which retrieval each column of the report measures.

A variant name is ``<mode>-<chunker>[-enriched][+option...]``:

- mode: ``dense``, ``bm25`` or ``hybrid`` (dense + BM25, fused);
- chunker: ``ast`` (syntax-aware), ``window`` (the product's line windows) or ``lines``
  (the naive baseline: 2000-byte line windows, no header, embedded as they are);
- ``-enriched``: the index is built with LLM descriptions (``settings.enrich``);
- options (retrieval settings on top of the configured ones; ``OPTION_HELP`` lists them all):
  numbers, ``+rrf<K>`` (RRF with k=K), ``+w<W>`` (weighted score fusion, dense weight W),
  ``+rw<W>`` (RRF, the lists weigh ``2W`` and ``2(1-W)``), ``+t<X>`` (weak threshold X),
  ``+wk<W>`` (dense weight when the result is weak), and the ``RetrieveOptions`` numbers
  (``+depth<N>``, ``+def<W>``, ``+symb<W>``, ``+sat<X>``, ``+free<N>``, ``+coh<X>``,
  ``+path<X>``, ``+decl<X>``, ``+head<N>``, ``+legacy<X>``, ``+named<X>``, ``+pdec<X>``,
  ``+fname<X>``, ``+kbeh<X>``, ``+scope<X>``);
  switches, ``+frag``, ``+rawq``,
  ``+sym``/``+nosym``, ``+noise``/``+nonoise``, ``+role``/``+norole``, ``+kind``/``+nokind``,
  ``+expand``/``+noexpand``, ``+symhard``, ``+fetch``/``+nofetch``, ``+rare``/``+norare``,
  ``+forms``/``+noforms``, ``+chg``/``+nochg``, ``+topsym``/``+fileall`` (which intents get
  coherence and saturation), ``+pathtop``/``+pathall`` (which get the path match),
  ``+decltop``/``+declall`` (which get the declaration boost), ``+pkg``/``+nopkg`` (a qualified
  name also through its folder),
  ``+sing``/``+nosing`` (plural path words also singular), ``+proj``/``+noproj`` (the searched
  repository's name out of the BM25 query and the path match).

``bm25-window`` is special: it is the simple alternative people reach for, *plain BM25
over 2000-byte line windows* (``bm25-lines`` is the same index read the same way): windows of at most 2000 bytes (``chunk_max_bytes``, bytes
only, no token budget), ``indexed_text`` = the window's text (no header, no identifier
splits), the query sent to BM25 as typed. It needs no dense vector, so its index is built
with the fake embedder and it has no weak-evidence flag. Every other window variant uses
the product's window chunker (header in ``indexed_text``, sized to the embedder's token
limit so nothing embedded is truncated). The ``lines`` chunker is the same plain windows
with real vectors from the configured embedder (the model reads only a window's first
tokens, as a naive tool's would): ``hybrid-lines`` is *RRF of BM25 and the embedder over
2000-byte line windows*, the baseline a real-repository comparison starts from.

Each index a variant needs is one collection per (chunker, embedder, enrichment): an
:class:`IndexSpec`. Variants that share a spec share its index.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError

MODES = ("dense", "bm25", "hybrid")
CHUNKERS = ("ast", "window", "lines")
ENRICHMENTS = ("plain", "enriched")
BASELINE = "bm25-window"
DEFAULT_VARIANTS = ("bm25-window", "dense-window", "hybrid-window", "bm25-ast", "dense-ast", "hybrid-ast")

_NAME = re.compile(r"^(dense|bm25|hybrid)-(ast|window|lines)(-enriched)?((?:\+[a-z0-9.]+)*)$")
# +<name><number>: name -> (where it goes, the field, how to read the number)
_NUMBERS: dict[str, tuple[str, str, Any]] = {
    "rrf": ("settings", "rrf_k", int), "w": ("settings", "dense_weight", "weight"),
    "rw": ("settings", "dense_weight", "weight"), "t": ("settings", "weak_threshold", float),
    "wk": ("options", "weak_dense_weight", "weight"), "depth": ("options", "depth", int),
    "def": ("options", "def_weight", float), "symb": ("options", "symbol_bonus", float),
    "sat": ("options", "saturation", float), "free": ("options", "saturation_free", int),
    "coh": ("options", "coherence", float), "path": ("options", "path_weight", float),
    "decl": ("options", "decl_weight", float), "head": ("options", "expand_head", int),
    "legacy": ("options", "legacy", float), "named": ("options", "named_file", float),
    "pdec": ("options", "path_decay", float), "fname": ("options", "file_names", float),
    "kbeh": ("options", "behaviour_kinds", float), "scope": ("options", "scope_weight", float),
}
# +<switch>: RetrieveOptions field and value
_SWITCHES: dict[str, tuple[str, Any]] = {
    "frag": ("merge", False), "rawq": ("split_query", False), "sym": ("symbols_first", True),
    "nosym": ("symbols_first", False), "noise": ("strip_noise", True), "nonoise": ("strip_noise", False),
    "role": ("role_prior", True), "norole": ("role_prior", False), "kind": ("kind_prior", True),
    "nokind": ("kind_prior", False), "expand": ("expand", True), "noexpand": ("expand", False),
    "symhard": ("symbol_bonus", None), "fetch": ("decl_fetch", True), "nofetch": ("decl_fetch", False),
    "rare": ("rare_exempt", True), "norare": ("rare_exempt", False), "forms": ("forms", True),
    "noforms": ("forms", False), "chg": ("strip_change", True), "nochg": ("strip_change", False),
    "topsym": ("file_levers", "topic+symbol"), "fileall": ("file_levers", "all"),
    "pathtop": ("path_levers", "topic+symbol"), "pathall": ("path_levers", "all"),
    "decltop": ("decl_levers", "topic+symbol"), "declall": ("decl_levers", "all"),
    "pkg": ("package_names", True), "nopkg": ("package_names", False),
    "proj": ("project_words", True), "noproj": ("project_words", False),
    "sing": ("path_singular", True), "nosing": ("path_singular", False),
}
_NUMBER_OPTION = re.compile(r"^([a-z]+?)(\d*\.?\d+)$")
OPTION_HELP = ("options: " + ", ".join(f"+{k}<N>" for k in _NUMBERS) + ", "
               + ", ".join(f"+{k}" for k in _SWITCHES))


# What the plain baselines switch off: everything but fusion (the query as typed, no prior).
PLAIN_OPTIONS = {"split_query": False, "role_prior": False, "forms": False, "strip_change": False,
                 "path_weight": 0.0, "named_file": 0.0, "decl_weight": 0.0, "saturation": 1.0, "coherence": 0.0, "legacy": 1.0,
                 "project_words": False, "file_names": 0.0, "scope_weight": 0.0,
                 "package_names": False}


@dataclass(frozen=True)
class IndexSpec:
    """One index: chunker, enrichment, and whether it is the plain BM25 baseline."""

    chunker: str
    enrich: bool = False
    plain: bool = False

    @property
    def key(self) -> str:
        if self.plain:
            return "plain-baseline" if self.dense else "bm25-baseline"
        return self.chunker + ("-enriched" if self.enrich else "")

    @property
    def dense(self) -> bool:
        """Has vectors of the configured embedder (every index but the BM25 baseline's)."""
        return not (self.plain and self.chunker == "window")


@dataclass(frozen=True)
class Variant:
    name: str
    mode: str
    spec: IndexSpec
    settings: tuple[tuple[str, Any], ...] = ()  # Settings overrides (fusion, rrf_k, dense_weight)
    options: tuple[tuple[str, Any], ...] = field(default=())  # search.RetrieveOptions fields

    @property
    def calibrated(self) -> bool:
        """Has a real dense signal, so its weak flag means something."""
        return self.spec.dense


def parse_variant(name: str) -> Variant:
    m = _NAME.match(name.strip())
    if not m:
        raise ConfigError(f"unknown variant {name!r}",
                          hint="use <mode>-<chunker>[-enriched][+option...], e.g. hybrid-ast, "
                               "bm25-window, dense-ast-enriched, hybrid-ast+rrf20, hybrid-ast+w0.7")
    mode, chunker, enriched, opts = m.group(1), m.group(2), bool(m.group(3)), m.group(4)
    if chunker == "lines" and enriched:
        raise ConfigError(f"variant {name!r}: the line-window baseline has no enriched form")
    if chunker == "lines" and mode == "bm25":
        chunker = "window"  # BM25 over plain windows needs no vectors: the bm25-window index
    plain = (mode == "bm25" and chunker == "window" and not enriched) or chunker == "lines"
    settings: dict[str, Any] = {}
    options: dict[str, Any] = {}
    for opt in filter(None, opts.split("+")):
        num = _NUMBER_OPTION.match(opt)
        if num and num.group(1) in _NUMBERS:
            where, key, cast = _NUMBERS[num.group(1)]
            value = _weight(num.group(2), name) if cast == "weight" else cast(num.group(2))
            (settings if where == "settings" else options)[key] = value
            if num.group(1) in ("rrf", "rw"):
                settings["fusion"] = "rrf"
            elif num.group(1) == "w":
                settings["fusion"] = "weighted"
        elif opt in _SWITCHES:
            key, value = _SWITCHES[opt]
            options[key] = value
        else:
            raise ConfigError(f"unknown option +{opt} in variant {name!r}", hint=OPTION_HELP)
    if plain:  # the naive baselines: the query as typed, no prior, no ranking stack
        for key, value in PLAIN_OPTIONS.items():
            options.setdefault(key, value)
    spec = IndexSpec(chunker=chunker, enrich=enriched, plain=plain)
    return Variant(name.strip(), mode, spec, tuple(sorted(settings.items())), tuple(sorted(options.items())))


def _weight(text: str, name: str) -> float:
    w = float(text)
    if not 0.0 <= w <= 1.0:
        raise ConfigError(f"dense weight in {name!r} must be within 0..1")
    return w


def parse_variants(spec: str | Sequence[str] | None) -> list[Variant]:
    """Variants from a comma list of names and/or axis values.

    Axis values (``dense``, ``bm25``, ``hybrid``; ``ast``, ``window``; ``plain``,
    ``enriched``) combine as a cross product, with ``hybrid``, ``ast`` and ``plain`` for an
    axis not given: ``plain,enriched`` is ``hybrid-ast, hybrid-ast-enriched``. ``default``
    is the standard comparison. Order is kept; duplicates are dropped.
    """
    tokens = [t.strip() for t in (spec.split(",") if isinstance(spec, str) else (spec or [])) if t.strip()]
    if not tokens:
        tokens = ["default"]
    names: list[str] = []
    axes: dict[str, list[str]] = {"mode": [], "chunker": [], "enrich": []}
    for t in tokens:
        if t == "default":
            names.extend(DEFAULT_VARIANTS)
        elif t in MODES:
            axes["mode"].append(t)
        elif t in CHUNKERS:
            axes["chunker"].append(t)
        elif t in ENRICHMENTS:
            axes["enrich"].append(t)
        else:
            names.append(t)
    if any(axes.values()):
        for mode in axes["mode"] or ["hybrid"]:
            for chunker in axes["chunker"] or ["ast"]:
                for enrich in axes["enrich"] or ["plain"]:
                    names.append(f"{mode}-{chunker}" + ("-enriched" if enrich == "enriched" else ""))
    out: list[Variant] = []
    seen: set[str] = set()
    for n in names:
        v = parse_variant(n)
        if v.name not in seen:
            seen.add(v.name)
            out.append(v)
    return out


def specs_of(variants: Sequence[Variant]) -> list[IndexSpec]:
    """The distinct indexes the variants need, in first-use order."""
    return list(dict.fromkeys(v.spec for v in variants))
