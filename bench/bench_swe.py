"""Issue localization on swe-dev (SWE-bench Lite instances), side by side: the issue-sized
query path (``query/retrieve_issue.py``) against the one-line path every query took before
(the issue's text cut to its first 2,000 characters, as the old limit forced), in one run over
the same incremental indexes.

Usage:
  python bench/bench_swe.py --mirrors /work/.mirror [--modes hybrid,bm25] [--repos requests]
                            [--fake] [--cache DIR] [--smoke]

``--fake`` embeds with the tests' hashed embedder (fast; only the bm25 rows mean anything then).
``--smoke``: requests' first two instances, bm25 only, fake vectors (seconds; CI).
Writes bench/results/swe-dev.md and swe-dev.json (summaries and per-instance ranks; not with --smoke).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from _common import RESULTS, commit, load_avg, stamp

GOLDEN = Path(__file__).resolve().parents[2] / "shared" / "golden" / "swe-dev" / "instances.jsonl"
OLD_LIMIT = 2000


@contextlib.contextmanager
def plain_path():
    """The path every query took before: no issue analysis, the old 2,000-character cut."""
    from codeseam.query import retrieve as retrieve_mod
    from codeseam.query import search as search_mod

    original = search_mod.search

    def plain(store, embedder, s, query, filters, k, **kw):
        return retrieve_mod.retrieve(store, embedder, s, query[:OLD_LIMIT], filters, k, **kw)

    search_mod.search = plain
    try:
        yield
    finally:
        search_mod.search = original


def run(args, modes) -> object:
    from codeseam.eval import swe
    from codeseam.settings import load_settings

    settings = load_settings()
    if args.fake:
        settings = settings.replace(embedding_backend="fake")
    only = [r for r in (args.repos or "").split(",") if r]
    if args.smoke:
        only = ["psf__requests-863", "psf__requests-1963"]
    return swe.run_swe(args.golden, args.mirrors, modes=modes, settings=settings,
                       cache_dir=Path(args.cache) / ("fake" if args.fake else "model"), only=only,
                       arms={"issue path": contextlib.nullcontext, "one-line path": plain_path})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirrors", required=True)
    ap.add_argument("--golden", default=str(GOLDEN))
    ap.add_argument("--modes", default="hybrid,bm25")
    ap.add_argument("--repos", default="")
    ap.add_argument("--fake", action="store_true")
    ap.add_argument("--cache", default="/tmp/codeseam-bench-swe")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    from codeseam.eval import swe

    modes = ("bm25",) if args.smoke else tuple(m for m in args.modes.split(",") if m)
    if args.smoke:
        args.fake = True
    res = run(args, modes)
    lines = [f"# swe-dev: issue localization, the issue path against the one-line path ({stamp()})", "",
             f"commit {commit()}, load {load_avg()}, modes {', '.join(modes)}"
             + (", fake vectors (bm25 rows only)" if args.fake else ", the bundled model")
             + "; each instance's arms search the same index state", "",
             swe.markdown(res).split("\n", 2)[2]]  # type: ignore[arg-type]
    text = "\n".join(lines)
    print(text)
    if not args.smoke:
        suffix = "-fake" if args.fake else ""
        (RESULTS / f"swe-dev{suffix}.md").write_text(text, encoding="utf-8")
        (RESULTS / f"swe-dev{suffix}.json").write_text(
            json.dumps(swe.to_json(res), indent=1) + "\n", encoding="utf-8")  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
