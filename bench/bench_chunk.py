"""Benchmark the chunker on the CPython stdlib (.py files, test folders excluded).

Side by side in one process and one run: a raw tree-sitter parse of the same bytes
(the floor), the cut alone (parse, units, packing, chunk texts), ``chunk_file`` (the ast
chunker with headers), ``chunk_file`` without identifier splits (the header's costliest
part), and the window baseline. The arms are interleaved file by file so machine noise
hits all of them; the ratio to the raw parse is taken per round (CPU time of this
process), and its median reported.

Quality figures:
- chunk count and a size histogram (bytes of ``text``), share under 50 characters;
- content dropped: bytes of a file missing from the concatenation of its chunks (must be 0);
- *starts inside a definition*: a chunk whose first code line (skipping blank and
  comment-only lines) lies strictly inside its innermost enclosing ``def``/``class``
  (per Python's ``ast``: first decorator line .. ``end_lineno``), i.e. after that
  definition's first line. Reported twice: by ``text`` alone (comparable with splitters
  that have no header), and *without its signature line*: neither ``text`` nor
  ``indexed_text`` contains the ``def``/``class`` line of that definition.

Usage: python bench/bench_chunk.py [--rounds 5] [--token-mode]
Writes bench/results/chunk.md and bench/results/chunk.json.
"""

from __future__ import annotations

import argparse
import ast
import gc
import json
import os
import platform
import statistics
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from codeseam.chunk import CHUNKER_VERSION, Budget, chunk_file  # noqa: E402

RESULTS = ROOT / "bench" / "results"
ARM_LABELS = {
    "cut": "cut only: parse + units + packing + chunk texts",
    "full": "`chunk_file`: records with headers (indexed_text, hash)",
    "nosplit": "`chunk_file` without identifier splits",
}
BUCKETS = [(0, 50), (50, 200), (200, 500), (500, 1000), (1000, 1500), (1500, 2001)]


def corpus() -> list[tuple[str, str, bytes]]:
    """(relative path, text, bytes) of the stdlib .py files outside test folders."""
    stdlib = sysconfig.get_paths()["stdlib"]
    out = []
    for folder, dirs, files in os.walk(stdlib):
        dirs[:] = sorted(d for d in dirs if d not in ("site-packages", "__pycache__"))
        rel_parts = Path(os.path.relpath(folder, stdlib)).parts
        if any(p in ("test", "tests", "idle_test") for p in rel_parts):
            continue
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            raw = Path(path).read_bytes()
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                text = raw.decode("latin-1")
            out.append((os.path.relpath(path, stdlib).replace(os.sep, "/"), text, raw))
    return out


def cut_only(rel: str, text: str, budget: Budget = Budget()) -> list[str]:
    """The cut alone, for the breakdown: parse, units, packing and the chunks' texts,
    without headers and records (what splitters without a header produce)."""
    from codeseam.chunk.ast_chunker import ast_units
    from codeseam.chunk.budget import Sizer
    from codeseam.chunk.pack import pack
    from codeseam.chunk.parse import error_share, parse

    data = text.encode("utf-8", "surrogatepass")
    root = parse("python", data).root_node
    error_share(root)
    sizer = Sizer(data, budget)
    segs = pack(ast_units(root, data, sizer, False), sizer)
    return [data[s[0].start:s[-1].end].decode("utf-8", "surrogatepass") for s in segs]


class _NoSplits:
    """Stands in for ``assemble.FileWords``: no identifier splits (the ``nosplit`` arm)."""

    def __init__(self, data: bytes, spans: list) -> None:
        pass

    def words(self, index: int, names) -> list:
        return []


def time_rounds(files, rounds: int) -> dict:
    """CPU and wall seconds per arm and round. Arms are interleaved file by file (the
    order rotates per file), so a burst of load on the shared machine hits all arms alike;
    a round is one pass over the corpus for every arm."""
    import tree_sitter_language_pack as pack
    from codeseam.chunk import assemble

    parser = pack.get_parser("python")
    words_class = assemble.FileWords

    def nosplit(rel: str, text: str) -> None:
        assemble.FileWords = _NoSplits
        try:
            chunk_file(rel, text)
        finally:
            assemble.FileWords = words_class

    arms = {
        "raw": lambda rel, text, raw: parser.parse(raw),
        "cut": lambda rel, text, raw: cut_only(rel, text),
        "full": lambda rel, text, raw: chunk_file(rel, text),
        "nosplit": lambda rel, text, raw: nosplit(rel, text),
    }
    chunk_file("warm.py", "def f():\n    return 1\n")  # load the grammar once
    for rel, text, _ in files:  # warm caches (identifier splits are memoised per process)
        chunk_file(rel, text)
    return interleaved(files, arms, rounds)


def interleaved(files, arms: dict, rounds: int, *, progress: bool = False) -> dict:
    """CPU and wall seconds of ``arms`` (name -> f(rel, text, raw); the first is the
    reference) per round, interleaved file by file with the order rotating per file; MB/s
    per arm and per-round CPU ratios to the first arm (median and best reported)."""
    names = list(arms)
    cpu: dict[str, list[float]] = {k: [] for k in names}
    wall: dict[str, list[float]] = {k: [] for k in names}
    clock, wclock = time.process_time, time.perf_counter
    for r in range(rounds):
        c_acc = dict.fromkeys(names, 0.0)
        w_acc = dict.fromkeys(names, 0.0)
        gc.collect()
        for i, (rel, text, raw) in enumerate(files):
            k = i % len(names)
            for name in names[k:] + names[:k]:
                c, w = clock(), wclock()
                arms[name](rel, text, raw)
                w_acc[name] += wclock() - w
                c_acc[name] += clock() - c
        for name in names:
            cpu[name].append(c_acc[name])
            wall[name].append(w_acc[name])
        if progress:
            print(f"round {r + 1}/{rounds}: " + ", ".join(f"{n} {c_acc[n]:.2f}s" for n in names),
                  file=sys.stderr)
    mb = sum(len(raw) for _, _, raw in files) / 1e6
    ref = names[0]
    out: dict = {"rounds": rounds, "interleaved": "file by file, order rotating",
                 "clock": "time.process_time (CPU of this process); wall via perf_counter"}
    for name in names:
        out[f"{name}_mb_s_best_cpu"] = round(mb / min(cpu[name]), 2)
        out[f"{name}_mb_s_median_cpu"] = round(mb / statistics.median(cpu[name]), 2)
        out[f"{name}_mb_s_best_wall"] = round(mb / min(wall[name]), 2)
    for name in names[1:]:
        per_round = [r / x for r, x in zip(cpu[ref], cpu[name], strict=True)]
        out[f"ratio_{name}_per_round_cpu"] = [round(x, 3) for x in per_round]
        out[f"ratio_{name}_median_cpu"] = round(statistics.median(per_round), 3)
        out[f"ratio_{name}_best_cpu"] = round(min(cpu[ref]) / min(cpu[name]), 3)
        out[f"ratio_{name}_best_wall"] = round(min(wall[ref]) / min(wall[name]), 3)
    out["cpu_s"] = {k: [round(x, 3) for x in v] for k, v in cpu.items()}
    out["wall_s"] = {k: [round(x, 3) for x in v] for k, v in wall.items()}
    return out


def _defs(text: str) -> list[tuple[int, int, int]]:
    """(first line incl. decorators, def/class line, end line) of every definition."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([d.lineno for d in node.decorator_list] + [node.lineno])
            out.append((first, node.lineno, node.end_lineno))
    return out


def quality(files, chunker: str, budget: Budget) -> dict:
    sizes: list[int] = []
    chars: list[int] = []
    dropped = inside = inside_no_sig = checked = 0
    for rel, text, _ in files:
        chunks = chunk_file(rel, text, budget=budget, chunker=chunker)
        sizes += [c.nbytes for c in chunks]
        chars += [len(c.text) for c in chunks]
        if chunker == "ast":
            joined = "".join(c.text for c in chunks)
            dropped += 0 if joined == text else abs(len(text.encode()) - len(joined.encode())) or 1
        else:  # overlapping windows: a line no window holds is dropped
            held = set()
            for c in chunks:
                held.update(range(c.start_line, c.end_line + 1))
            lines = text.split("\n")
            dropped += sum(len(lines[i - 1].encode()) + 1 for i in range(1, len(lines) + 1)
                           if i not in held and lines[i - 1])
        defs = _defs(text)
        lines = text.split("\n")
        for c in chunks:
            first = c.start_line
            while first <= c.end_line and (not lines[first - 1].strip()
                                           or lines[first - 1].lstrip().startswith("#")):
                first += 1
            if first > c.end_line:
                continue
            checked += 1
            holders = [d for d in defs if d[0] <= first <= d[2]]
            if not holders:
                continue
            d = min(holders, key=lambda d: d[2] - d[0])
            if d[0] < first:
                inside += 1
                sig = lines[d[1] - 1].strip()
                if sig not in c.text and sig not in c.indexed_text:
                    inside_no_sig += 1
    n = len(sizes)
    hist = {f"{lo}-{hi - 1}": sum(lo <= s < hi for s in sizes) for lo, hi in BUCKETS}
    return {
        "chunks": n,
        "mean_bytes": round(sum(sizes) / max(n, 1), 1),
        "max_bytes": max(sizes) if sizes else 0,
        "histogram_bytes": hist,
        "under_50_chars_share": round(sum(ch < 50 for ch in chars) / max(n, 1), 4),
        "content_dropped_bytes": dropped,
        "chunks_checked_for_start": checked,
        "start_inside_definition_share": round(inside / max(checked, 1), 4),
        "start_inside_definition_without_signature_share": round(inside_no_sig / max(checked, 1), 4),
    }


def token_mode(files) -> dict:
    from tokenizers import Tokenizer

    from codeseam.embed.bundled import bundled_model_dir

    tok = Tokenizer.from_file(str(bundled_model_dir() / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()

    def count(text: str) -> int:
        return len(tok.encode(text, add_special_tokens=False).ids)

    budget = Budget(max_tokens=254, count_tokens=count)
    w = time.perf_counter()
    worst = n = 0
    for rel, text, _ in files:
        for c in chunk_file(rel, text, budget=budget):
            worst = max(worst, count(c.indexed_text))
            n += 1
    wall = time.perf_counter() - w  # includes the check's own counting
    mb = sum(len(raw) for _, _, raw in files) / 1e6
    return {"max_tokens": 254, "chunks": n, "max_indexed_tokens": worst,
            "mb_s_including_check": round(mb / wall, 2)}


def write(results: dict) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "chunk.json").write_text(json.dumps(results, indent=1) + "\n")
    t, q, b = results["timing"], results["ast"], results["window_baseline"]
    lines = [
        "# Chunker benchmark",
        "",
        f"Corpus: {results['files']} stdlib .py files of CPython {results['python']} without test "
        f"folders, {results['mb']} MB. Machine: {results['machine']}. Chunker `{CHUNKER_VERSION}`, "
        f"default budget (max 2000 B, min 200 B). Written by `bench/bench_chunk.py`.",
        "",
        "## Throughput (one process, same run, arms interleaved file by file)",
        "",
        "| | MB/s (best round, CPU) | ratio to raw parse: median of rounds (CPU) / best round (CPU) / best round (wall) |",
        "|---|---|---|",
        f"| raw tree-sitter parse | {t['raw_mb_s_best_cpu']} | 1 |",
    ]
    for name, label in ARM_LABELS.items():
        lines.append(f"| {label} | {t[name + '_mb_s_best_cpu']} | **{t[f'ratio_{name}_median_cpu']}** / "
                     f"{t[f'ratio_{name}_best_cpu']} / {t[f'ratio_{name}_best_wall']} |")
    lines += [
        "",
        "Per-round CPU ratios: " + "; ".join(f"{name} {t[f'ratio_{name}_per_round_cpu']}"
                                             for name in ARM_LABELS)
        + f". Load average (1, 5, 15 min) at start {results['load_start']}, at end {results['load_end']}.",
        "",
        "Target: `chunk_file` >= 0.75 of the raw parse. The machine is shared (2 CPUs, other "
        "sessions running tests and benchmarks), so the arms run file by file in rotating "
        "order and the ratio is taken per round on this process's CPU time. The cut-only arm "
        "uses the chunker's internal modules to show where the time goes; the difference to "
        "`chunk_file` is building the records (the `indexed_text` header, text decoding, the "
        "content hash). The no-splits arm is `chunk_file` with the identifier splits switched "
        "off (the `words:` line and the per-file word sets behind it), the costliest part of "
        "the header; bench/results/eval-header.md measures what that line is worth in "
        "retrieval.",
        "",
        "## Chunks",
        "",
        "| | ast | window baseline |",
        "|---|---|---|",
        f"| chunks | {q['chunks']} | {b['chunks']} |",
        f"| mean bytes | {q['mean_bytes']} | {b['mean_bytes']} |",
        f"| largest (bytes) | {q['max_bytes']} | {b['max_bytes']} |",
        f"| under 50 characters | {q['under_50_chars_share']:.2%} | {b['under_50_chars_share']:.2%} |",
        f"| content dropped (bytes) | {q['content_dropped_bytes']} | {b['content_dropped_bytes']} |",
        f"| start inside a definition (text) | {q['start_inside_definition_share']:.2%} | "
        f"{b['start_inside_definition_share']:.2%} |",
        f"| ... and without its signature line (text + indexed_text) | "
        f"{q['start_inside_definition_without_signature_share']:.2%} | "
        f"{b['start_inside_definition_without_signature_share']:.2%} |",
        "",
        "Size histogram (bytes of text):",
        "",
        "| bytes | ast | window baseline |",
        "|---|---|---|",
    ]
    for k in q["histogram_bytes"]:
        lines.append(f"| {k} | {q['histogram_bytes'][k]} | {b['histogram_bytes'][k]} |")
    lines += [
        "",
        "*Starts inside a definition*: the chunk's first code line (blank and comment-only "
        "lines skipped) lies strictly inside its innermost enclosing `def`/`class` per Python's "
        "`ast` (span: first decorator line .. `end_lineno`), i.e. the chunk does not begin at a "
        "definition. Pieces of a split function and class-level code between methods count. "
        "*Without its signature line*: neither `text` nor `indexed_text` holds that definition's "
        "`def`/`class` line (the ast chunker puts it in the header of every continuation piece).",
    ]
    if "token_mode" in results:
        tm = results["token_mode"]
        lines += ["", "## Token mode", "",
                  f"Budget max_tokens=254 with the bundled all-MiniLM-L6-v2 tokenizer: {tm['chunks']} "
                  f"chunks, largest indexed_text {tm['max_indexed_tokens']} tokens, "
                  f"{tm['mb_s_including_check']} MB/s (including the check's own counting)."]
    (RESULTS / "chunk.md").write_text("\n".join(lines) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--token-mode", action="store_true")
    args = ap.parse_args()
    files = corpus()
    mb = round(sum(len(raw) for _, _, raw in files) / 1e6, 2)
    print(f"{len(files)} files, {mb} MB", file=sys.stderr)
    results = {
        "files": len(files), "mb": mb, "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs (shared)",
        "chunker_version": CHUNKER_VERSION,
        "load_start": [round(x, 2) for x in os.getloadavg()],
        "timing": time_rounds(files, args.rounds),
        "load_end": [round(x, 2) for x in os.getloadavg()],
    }
    print(json.dumps({k: v for k, v in results["timing"].items() if "ratio" in k}), file=sys.stderr)
    results["ast"] = quality(files, "ast", Budget())
    results["window_baseline"] = quality(files, "window", Budget())
    if args.token_mode:
        results["token_mode"] = token_mode(files)
    write(results)
    print((RESULTS / "chunk.md").read_text())


if __name__ == "__main__":
    main()
