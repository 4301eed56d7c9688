"""Retrieval evaluation on golden sets (DESIGN §8): ``codeseam eval``.

- ``golden``: the JSONL loader (``load_golden``);
- ``metrics``: Recall@k, whole@k, file-Recall@k, MRR, abstain / false-weak rates, as pure
  functions of per-query ranks;
- ``calibrate``: the weak-evidence threshold from positive vs negative score distributions;
- ``variants``: variant names (``hybrid-ast``, ``bm25-window``, ``dense-ast-enriched``,
  ``hybrid-ast+rrf20`` ...) and the index each needs;
- ``corpus`` / ``baseline``: the eval's own corpus copy and index, the plain BM25 baseline;
- ``runner``: ``run_eval(golden, root, variants=..., ks=..., settings=...)``;
- ``report``: ``write_report(result, out)``: JSON, markdown, PNG plots.

Nothing heavy is imported here.
"""

from __future__ import annotations

from typing import Any

__all__ = ["load_golden", "run_eval", "write_report", "parse_variants", "calibrate"]


def __getattr__(name: str) -> Any:
    if name == "load_golden":
        from .golden import load_golden

        return load_golden
    if name == "run_eval":
        from .runner import run_eval

        return run_eval
    if name == "write_report":
        from .report import write_report

        return write_report
    if name == "parse_variants":
        from .variants import parse_variants

        return parse_variants
    if name == "calibrate":
        from .calibrate import calibrate

        return calibrate
    raise AttributeError(f"module 'codeseam.eval' has no attribute {name!r}")
