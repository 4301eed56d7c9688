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
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

import bench_rank  # noqa: E402
from codeseam.eval.suite import run_suite  # noqa: E402
from codeseam.settings import load_settings  # noqa: E402

VARIANTS = ["hybrid-ast", "dense-ast", "bm25-ast"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--cache", default=str(ROOT / "bench" / ".cache" / "int8-sets"))
    ap.add_argument("--precision", default="int8", choices=("int8", "fp32"))
    args = ap.parse_args()
    cache = Path(args.cache)
    settings = load_settings({"data_dir": str(cache), "embedding_precision": args.precision}, env={})

    def progress(event: str, **f) -> None:
        if event in ("repo", "skipped"):
            print(time.strftime("%H:%M:%S"), event, f, flush=True, file=sys.stderr)

    res = {
        "repos": run_suite(bench_rank.REPOS_SUITE, bench_rank.REPOS_ROOT, variants=VARIANTS, settings=settings,
                           cache_dir=cache / "rd", progress=progress),
        "semble": run_suite(bench_rank.SEMBLE_SUITE, bench_rank.SEMBLE_ROOT, variants=VARIANTS, settings=settings,
                            cache_dir=cache / "semble", progress=progress),
    }
    Path(args.out).write_text(json.dumps({n: bench_rank.scores(res, n) for n in VARIANTS}, indent=1))


if __name__ == "__main__":
    main()
