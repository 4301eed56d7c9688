"""The int8 path on repos-dev and semble-dev: hybrid, dense and BM25 per repository.

    python bench/bench_int8_sets.py OUT.json [--cache DIR] [--precision int8]

Each precision is its own embedder id and so its own eval indexes: this builds them under
``--cache`` (default ``bench/.cache/int8-sets``, every chunk embedded again: about 70 minutes for
the two sets on this 2-core machine) and writes ``bench_rank.scores`` of hybrid-ast, dense-ast
and bm25-ast. fp32's figures are ``bench/bench_rank.py --sets repos,semble --variants
hybrid-ast,dense-ast,bm25-ast --dump F`` over the default cache; the comparison is written by
hand in ``bench/results/int8.md``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

import bench_rank  # noqa: E402

VARIANTS = ["hybrid-ast", "dense-ast", "bm25-ast"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--cache", default=str(ROOT / "bench" / ".cache" / "int8-sets"))
    ap.add_argument("--precision", default="int8", choices=("int8", "fp32"))
    args = ap.parse_args()
    res = bench_rank.run_sets(VARIANTS, ("repos", "semble"), Path(args.cache),
                              overrides={"embedding_precision": args.precision})
    Path(args.out).write_text(json.dumps({n: bench_rank.scores(res, n) for n in VARIANTS}, indent=1))


if __name__ == "__main__":
    main()
