"""The eval report: JSON (every per-query rank), markdown tables, matplotlib PNGs.

Files written into ``out`` (names prefixed with ``prefix``, default ``eval``):

- ``eval.json``: settings, indexes, and per variant its summary plus, per query, the
  ranks (first overlap, first whole, first same-file), the weak flag, the best dense
  similarity and the top results as ``path:start-end``;
- ``eval.md``: the overall table, one table per kind, the negatives, the per-query ranks;
- ``eval-recall.png``: Recall@k (and whole@k) for k = 1..20, one line per variant;
- ``eval-kinds.png``: MRR and Recall@5 per kind, one bar per variant.

Everything in them is a function of the results (no clock, no host), so a re-run with the
same index gives the same files; run timings are kept apart, in ``run`` of the JSON only
when ``include_run`` is set.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import metrics
from .runner import EvalResult, VariantResult

SETTINGS_SHOWN = ("chunk_max_bytes", "chunk_min_bytes", "fusion", "rrf_k", "dense_weight", "embedding_backend",
                  "scrub")


def fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def result_json(res: EvalResult, *, settings: Any = None, include_run: bool = False,
                extra: dict | None = None, hits: int = metrics.CURVE_K) -> dict:
    """Everything as JSON; ``hits``: how many results per query to list (0: ranks only)."""
    variants: dict[str, Any] = {}
    for r in res.results:
        v = r.variant
        entry: dict[str, Any] = {"mode": v.mode, "index": v.spec.key, "settings": dict(v.settings),
                                 "options": dict(v.options), "skipped": r.skipped}
        if r.skipped is None:
            entry["summary"] = metrics.summarize(r.outcomes, res.ks)
            entry["queries"] = [_query_json(o, hits) for o in r.outcomes]
        variants[v.name] = entry
    out: dict[str, Any] = {
        "golden": res.golden, "root": res.root, "corpus": res.corpus, "repo": res.repo_id,
        "ks": list(res.ks), "curve_k": metrics.CURVE_K, "mrr_cutoff": metrics.MRR_CUTOFF,
        "queries": {"total": len(res.queries), "negative": sum(q.negative for q in res.queries)},
        "settings": {k: getattr(settings, k) for k in SETTINGS_SHOWN} if settings is not None else {},
        "indexes": res.indexes, "variants": variants,
    }
    if extra:
        out.update(extra)
    if include_run:
        out["run"] = {**res.run, "variant_seconds": {r.name: round(r.seconds, 2) for r in res.results}}
    return out


def _query_json(o: metrics.Outcome, hits: int = metrics.CURVE_K) -> dict:
    out: dict[str, Any] = {"id": o.id, "kind": o.kind, "rank": o.rank, "whole_rank": o.whole_rank,
                           "file_rank": o.file_rank, "weak": o.weak,
                           "best_similarity": None if o.best_similarity is None else round(o.best_similarity, 6),
                           "evidence": None if o.evidence is None else round(o.evidence, 6)}
    if len(o.target_ranks) > 1:
        out["target_ranks"] = list(o.target_ranks)
        out["ndcg@10"] = None if o.ndcg is None else round(o.ndcg, 6)
    if hits:
        out["hits"] = [f"{p}:{a}-{b}" for p, a, b in o.results[:hits]]
    return out


# -- markdown --------------------------------------------------------------------------------

def overall_table(res: EvalResult, names: Sequence[str] | None = None) -> str:
    ks = res.ks
    head = (["variant"] + [f"R@{k}" for k in ks] + [f"whole@{k}" for k in ks] + [f"fileR@{k}" for k in ks]
            + ["MRR", "MRR@10", "abstain (neg)", "false-weak (pos)"])
    rows = []
    for r in _ran(res, names):
        s = metrics.summarize(r.outcomes, ks)
        o = s[metrics.OVERALL]
        rows.append([r.name] + [fmt(o[f"recall@{k}"]) for k in ks] + [fmt(o[f"whole@{k}"]) for k in ks]
                    + [fmt(o[f"file_recall@{k}"]) for k in ks]
                    + [fmt(o["mrr"]), fmt(o["mrr@10"]), fmt(s["negative"]["abstain"]), fmt(o["false_weak"])])
    return _table(head, rows)


def kind_table(res: EvalResult, kind: str, names: Sequence[str] | None = None) -> str:
    ks = res.ks
    head = ["variant", "n"] + [f"R@{k}" for k in ks] + [f"whole@{k}" for k in ks] + ["MRR", "false-weak"]
    rows = []
    for r in _ran(res, names):
        g = metrics.summarize(r.outcomes, ks)["by_kind"].get(kind)
        if g is None:
            continue
        rows.append([r.name, str(g["n"])] + [fmt(g[f"recall@{k}"]) for k in ks]
                    + [fmt(g[f"whole@{k}"]) for k in ks] + [fmt(g["mrr"]), fmt(g["false_weak"])])
    return _table(head, rows)


def rank_table(res: EvalResult, names: Sequence[str] | None = None) -> str:
    """Per query: the first-overlap rank per variant (``-`` past the top 20), and weak flags."""
    ran = _ran(res, names)
    head = ["id", "kind"] + [r.name for r in ran]
    rows = []
    for i, q in enumerate(res.queries):
        cells = []
        for r in ran:
            o = r.outcomes[i]
            cell = "weak" if o.negative and o.weak else ("ok" if o.negative and o.weak is False else "")
            if not o.negative:
                cell = str(o.rank) if o.rank is not None else "-"
                if o.weak:
                    cell += " (weak)"
            cells.append(cell or "n/a")
        rows.append([q.id, q.kind] + cells)
    return _table(head, rows)


def markdown(res: EvalResult, *, title: str | None = None, settings: Any = None,
             sections: Sequence[str] = ()) -> str:
    pos = sum(1 for q in res.queries if not q.negative)
    neg = len(res.queries) - pos
    lines = [f"# {title or 'Retrieval eval: ' + Path(res.golden).name}", ""]
    lines.append(f"Golden set `{Path(res.golden).name}`: {len(res.queries)} queries ({pos} with gold, "
                 f"{neg} negative); corpus: {_corpus_text(res)}.")
    lines.append(f"Results per query: top {metrics.CURVE_K}; MRR over the top {metrics.MRR_CUTOFF} "
                 f"(MRR@10 over the top 10, as in the golden README); averages over queries.")
    if settings is not None:
        lines.append("Settings: " + ", ".join(f"{k}={getattr(settings, k)}" for k in SETTINGS_SHOWN) + ".")
    lines += ["", "## Indexes", ""]
    lines.append(_table(["index", "embedder", "chunker", "chunks", "budget", "indexed_text"],
                        [[k, i.get("embedder", ""), i.get("chunker", ""), str(i.get("chunks", "")),
                          i.get("budget", ""), i.get("indexed_text", "")] for k, i in res.indexes.items()]))
    skipped = [r for r in res.results if r.skipped]
    if skipped:
        lines += ["", "Skipped: " + "; ".join(f"`{r.name}` ({r.skipped})" for r in skipped)]
    lines += ["", "## Overall (queries with gold)", "", overall_table(res)]
    kinds = metrics.kinds_in([o for r in _ran(res) for o in r.outcomes])
    for kind in kinds:
        lines += ["", f"## Kind: {kind}", "", kind_table(res, kind)]
    for extra in sections:
        lines += ["", extra.rstrip()]
    lines += ["", "## Per query: rank of the first overlapping result", "",
              "`-`: none in the top 20; `(weak)`: flagged weak; negatives: `weak` (abstained) or `ok` "
              "(answered).", "", rank_table(res)]
    return "\n".join(lines) + "\n"


def _corpus_text(res: EvalResult) -> str:
    if res.corpus == "gold":
        n = len({g.path for q in res.queries for g in q.gold})
        return f"the {n} files the gold names, from `{res.root}`"
    return f"every file under `{res.root}` that discovery keeps"


def _ran(res: EvalResult, names: Sequence[str] | None = None) -> list[VariantResult]:
    ran = [r for r in res.results if r.skipped is None]
    if names is not None:
        ran = [r for r in ran if r.name in set(names)]
    return ran


def _table(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


# -- weak-evidence calibration -----------------------------------------------------------------

TRANSLATED_KINDS = ("prose-tr", "prose-de")  # kinds of the golden sets' translated queries
FALSE_WEAK_BUDGET = 0.14  # the budget threshold: at most this share of English positives weak


def calibration(res: EvalResult, name: str | None = None) -> tuple[dict, str] | None:
    """Thresholds for a calibrated variant's weak scores (the evidence score, else the best
    dense similarity; ``name``, else the first variant that ran): the balanced-accuracy one,
    and the one that flags the most negatives with at most ``FALSE_WEAK_BUDGET`` of the
    English positives weak; their sensitivity, and a markdown section."""
    from .calibrate import calibrate, calibrate_budget, rates, sensitivity

    ran = [r for r in _ran(res) if r.variant.calibrated and (name is None or r.name == name)]
    if not ran:
        return None
    r = ran[0]
    pos, neg = metrics.similarity_split(r.outcomes)
    if not pos or not neg:
        return None
    c = calibrate(pos, neg)
    eng = [o.weak_score for o in r.outcomes if not o.negative and o.kind not in TRANSLATED_KINDS
           and o.weak_score is not None]
    b = calibrate_budget(eng, neg, FALSE_WEAK_BUDGET) if eng else None
    what = "evidence score" if any(o.evidence is not None for o in r.outcomes) else "best dense similarity"
    grid = sorted({round(c.threshold + d, 4) for d in (-0.1, -0.05, -0.03, -0.02, -0.01, 0, 0.01, 0.02, 0.03,
                                                       0.05, 0.1)})
    sens = sensitivity(pos, neg, grid)
    data: dict[str, Any] = {"variant": r.name, "index": r.variant.spec.key, "threshold": round(c.threshold, 4),
                            "abstain": c.abstain, "false_weak": c.false_weak, "balanced_accuracy": c.balanced_accuracy,
                            "gap": [round(c.gap[0], 4), round(c.gap[1], 4)], "n_pos": c.n_pos, "n_neg": c.n_neg,
                            "sensitivity": sens, "positives": sorted(round(x, 4) for x in pos),
                            "negatives": sorted(round(x, 4) for x in neg), "score": what}
    if b is not None:
        all_fw = rates(pos, neg, b.threshold)[1]
        data["budget"] = {"max_false_weak": FALSE_WEAK_BUDGET, "threshold": round(b.threshold, 4),
                          "abstain": b.abstain, "false_weak_english": b.false_weak, "false_weak_all": all_fw,
                          "n_english": b.n_pos}
    rows = [[fmt(x["threshold"]), fmt(x["abstain"]), fmt(x["false_weak"]), fmt(x["balanced_accuracy"])]
            for x in sens]
    md = "\n".join([
        f"## Weak-evidence threshold ({what})", "",
        f"From `{r.name}` ({c.n_pos} queries with gold, {c.n_neg} negatives): the threshold that maximises "
        f"balanced accuracy is **{c.threshold:.4f}**, the middle of the widest best gap "
        f"({c.gap[0]:.4f} .. {c.gap[1]:.4f}): abstain {c.abstain:.3f} on negatives, false-weak "
        f"{c.false_weak:.3f} on positives.", "",
        (f"With at most {FALSE_WEAK_BUDGET:.0%} of the {b.n_pos} English positives weak: threshold "
         f"**{b.threshold:.4f}**, abstain {b.abstain:.3f} on negatives, false-weak {b.false_weak:.3f} on English "
         f"positives ({data['budget']['false_weak_all']:.3f} on all positives).") if b is not None else "", "",
        f"Score, positives: min {min(pos):.3f}, median {_median(pos):.3f}, max {max(pos):.3f}; "
        f"negatives: min {min(neg):.3f}, median {_median(neg):.3f}, max {max(neg):.3f}.", "",
        "Sensitivity:", "", _table(["threshold", "abstain (neg)", "false-weak (pos)", "balanced acc."], rows),
    ])
    return data, md


def _median(xs: Sequence[float]) -> float:
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


# -- plots ----------------------------------------------------------------------------------

def plot_curves(res: EvalResult, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    ks = list(range(1, metrics.CURVE_K + 1))
    for r in _ran(res):
        pos = [o for o in r.outcomes if not o.negative]
        axes[0].plot(ks, metrics.curve(pos, "rank"), marker=".", label=r.name)
        axes[1].plot(ks, metrics.curve(pos, "whole_rank"), marker=".", label=r.name)
    for ax, name in zip(axes, ("Recall@k (overlap)", "whole@k (contains the definition)"), strict=True):
        ax.set_title(name)
        ax.set_xlabel("k")
        ax.set_xticks([1, 5, 10, 15, 20])
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("share of queries with gold")
    axes[1].legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)


def plot_kinds(res: EvalResult, path: Path, k: int = 5) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ran = _ran(res)
    kinds = metrics.kinds_in([o for r in ran for o in r.outcomes])
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    width = 0.8 / max(1, len(ran))
    for i, r in enumerate(ran):
        by_kind = metrics.summarize(r.outcomes, (k,))["by_kind"]
        xs = [j + i * width for j in range(len(kinds))]
        axes[0].bar(xs, [by_kind[kd]["mrr"] or 0 for kd in kinds], width, label=r.name)
        axes[1].bar(xs, [by_kind[kd][f"recall@{k}"] or 0 for kd in kinds], width, label=r.name)
    for ax, name in zip(axes, ("MRR per kind", f"Recall@{k} per kind"), strict=True):
        ax.set_title(name)
        ax.set_xticks([j + width * (len(ran) - 1) / 2 for j in range(len(kinds))], kinds)
        ax.set_ylim(0, 1.02)
        ax.grid(axis="y", alpha=0.3)
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)


def write_report(res: EvalResult, out: str | Path, *, prefix: str = "eval", settings: Any = None,
                 title: str | None = None, sections: Sequence[str] = (), extra_json: dict | None = None,
                 include_run: bool = False, plots: bool = True, hits: int = metrics.CURVE_K) -> list[Path]:
    """Write JSON, markdown and (with ``plots``) PNGs into ``out``; returns the paths."""
    out_p = Path(out)
    out_p.mkdir(parents=True, exist_ok=True)
    paths = [out_p / f"{prefix}.json", out_p / f"{prefix}.md"]
    data = result_json(res, settings=settings, include_run=include_run, extra=extra_json, hits=hits)
    paths[0].write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    paths[1].write_text(markdown(res, title=title, settings=settings, sections=sections), encoding="utf-8")
    if plots and _ran(res):
        paths.append(out_p / f"{prefix}-recall.png")
        plot_curves(res, paths[-1])
        paths.append(out_p / f"{prefix}-kinds.png")
        plot_kinds(res, paths[-1])
    return paths
