"""codeseam's chunker side by side with LlamaIndex's ``CodeSplitter`` on the stdlib corpus.

Same corpus as bench/bench_chunk.py (CPython stdlib .py files, test folders excluded),
same process, same run. Timed arms, interleaved file by file with the order rotating per
file (``bench_chunk.interleaved``), CPU time of this process, ratio to the raw
parse taken per round (median of rounds reported, plus the best round):

- ``raw``: ``parser.parse(raw_bytes)`` with tree-sitter-language-pack's python parser;
- ``cut``: codeseam's cut alone (``cut_only`` from bench_chunk.py);
- ``full``: ``codeseam.chunk.chunk_file`` (records with the ``indexed_text`` header);
- ``li_default``: ``CodeSplitter(language="python").split_text(text)`` (its defaults:
  max_chars=1500, count_mode="char");
- ``li_2000``: ``CodeSplitter(language="python", max_chars=2000)`` (codeseam's budget is
  2000 UTF-8 bytes of ``text``; the stdlib is nearly all ASCII, so 2000 characters is
  close).

Quality per splitter: chunks, mean and largest characters, share under 50 characters,
empty chunks, chunks over the splitter's own limit, and content dropped: characters of the
file not reproduced (each chunk placed in order at its first occurrence after the previous
one; the file's characters no chunk covers; 0 for an exact cover), and non-whitespace
characters dropped (the multiset of non-whitespace characters of the file minus that of
the chunks; also the number of files whose non-whitespace character sequence differs).

It needs llama-index-core, which is not a codeseam dependency; run it with a separate
virtualenv that has llama-index-core, tree-sitter==0.26.1 and
tree-sitter-language-pack==0.13.0 (codeseam itself is imported from src/, so only those
are needed)::

    python -m venv /tmp/lvenv
    /tmp/lvenv/bin/pip install llama-index-core tree-sitter==0.26.1 tree-sitter-language-pack==0.13.0
    /tmp/lvenv/bin/python bench/bench_splitters.py [--rounds 5]

Writes bench/results/splitters.md and bench/results/splitters.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_chunk import RESULTS, corpus, cut_only, interleaved  # puts src on sys.path

from codeseam.chunk import CHUNKER_VERSION, Budget, chunk_file

LI_MAX_CHARS = 2000
ARMS = {
    "raw": "raw tree-sitter parse (`parser.parse(bytes)`)",
    "cut": "codeseam cut only (parse + units + packing + chunk texts)",
    "full": "codeseam `chunk_file` (records with indexed_text header, hash)",
    "li_default": "LlamaIndex `CodeSplitter` defaults (max_chars=1500)",
    "li_2000": f"LlamaIndex `CodeSplitter` max_chars={LI_MAX_CHARS}",
}


def splitters() -> dict:
    """The two CodeSplitter configurations (both get the pack's python parser by default)."""
    from llama_index.core.node_parser import CodeSplitter

    return {"li_default": CodeSplitter(language="python"),
            "li_2000": CodeSplitter(language="python", max_chars=LI_MAX_CHARS)}


def li_settings(splitter) -> dict:
    keys = ("language", "max_chars", "count_mode", "chunk_lines", "chunk_lines_overlap")
    out = {k: getattr(splitter, k) for k in keys}
    out["parser"] = type(splitter._parser).__module__ + "." + type(splitter._parser).__name__
    return out


def _safe(split):
    """CodeSplitter raises ValueError when the tree's first child is ERROR; count it."""
    def run(text: str):
        try:
            return split(text)
        except ValueError:
            return None
    return run


def time_rounds(files, rounds: int, lis: dict) -> dict:
    """CPU and wall seconds per arm and round, arms interleaved file by file with the
    order rotating per file (bench_chunk.interleaved)."""
    import tree_sitter_language_pack as pack

    parser = pack.get_parser("python")
    li_default, li_2000 = _safe(lis["li_default"].split_text), _safe(lis["li_2000"].split_text)
    arms = {
        "raw": lambda rel, text, raw: parser.parse(raw),
        "cut": lambda rel, text, raw: cut_only(rel, text),
        "full": lambda rel, text, raw: chunk_file(rel, text),
        "li_default": lambda rel, text, raw: li_default(text),
        "li_2000": lambda rel, text, raw: li_2000(text),
    }
    for rel, text, raw in files:  # warm every arm once (grammar, memoised identifier splits)
        for arm in arms.values():
            arm(rel, text, raw)
    return interleaved(files, arms, rounds, progress=True)


def coverage(text: str, chunks: list[str]) -> dict:
    """How much of ``text`` the chunks reproduce (see the module docstring)."""
    pos = covered = not_found = 0
    for c in chunks:
        if not c:
            continue
        at = text.find(c, pos)
        if at < 0:
            not_found += 1
            continue
        covered += len(c)
        pos = at + len(c)
    joined = "".join(chunks)
    file_nws = "".join(text.split())
    chunk_nws = "".join(joined.split())
    nws_dropped = 0
    if file_nws != chunk_nws:
        nws_dropped = sum((Counter(file_nws) - Counter(chunk_nws)).values())
    return {"exact": joined == text, "dropped": len(text) - covered, "not_found": not_found,
            "nws_dropped": nws_dropped, "nws_sequence_differs": file_nws != chunk_nws}


def quality(files, split, limit: int, limit_unit: str) -> dict:
    """Chunk figures over the corpus for ``split(rel, text) -> list[str] | None``."""
    chars: list[int] = []
    failed: list[str] = []
    exact = dropped = not_found = nws_dropped = nws_files = over = 0
    nws_by_file: dict[str, int] = {}
    for rel, text, _ in files:
        chunks = split(rel, text)
        if chunks is None:
            failed.append(rel)
            continue
        chars += [len(c) for c in chunks]
        size = (lambda c: len(c.encode("utf-8", "surrogatepass"))) if limit_unit == "bytes" else len
        over += sum(size(c) > limit for c in chunks)
        cov = coverage(text, chunks)
        exact += cov["exact"]
        dropped += cov["dropped"]
        not_found += cov["not_found"]
        nws_dropped += cov["nws_dropped"]
        nws_files += cov["nws_sequence_differs"]
        if cov["nws_sequence_differs"]:
            nws_by_file[rel] = cov["nws_dropped"]
    n = len(chars)
    total = sum(len(t) for r, t, _ in files if r not in failed)
    return {
        "files_split": len(files) - len(failed), "files_failed": failed,
        "chunks": n,
        "mean_chars": round(sum(chars) / max(n, 1), 1),
        "max_chars": max(chars, default=0),
        "limit": f"{limit} {limit_unit}", "over_limit": over,
        "under_50_chars": sum(ch < 50 for ch in chars),
        "under_50_chars_share": round(sum(ch < 50 for ch in chars) / max(n, 1), 4),
        "empty_chunks": sum(ch == 0 for ch in chars),
        "files_exact_cover": exact,
        "file_chars": total,
        "dropped_chars": dropped,
        "dropped_share": round(dropped / max(total, 1), 5),
        "chunks_not_found_in_file": not_found,
        "nonws_dropped_chars": nws_dropped,
        "files_nonws_sequence_differs": nws_files,
        "nonws_dropped_by_file": nws_by_file,
    }


DEMO = 'x = 1\ny = """' + "a" * 40 + "\\n" + "TAIL " * 20 + '"""\nz = 2\n'


def demo_string_tail(splitter_class) -> dict:
    """A string over the limit with an escape sequence inside: CodeSplitter recurses into
    ``string_content``, whose only children are the escape sequences, and the text after
    the last child of that node is never appended (observed here, see ``chunks``)."""
    chunks = splitter_class(language="python", max_chars=60).split_text(DEMO)
    return {"text": DEMO, "max_chars": 60, "chunks": chunks,
            "tail_kept": "TAIL" in "".join(chunks)}


def all_quality(files, lis: dict) -> dict:
    default_budget = Budget()
    return {
        "cut": quality(files, lambda rel, text: cut_only(rel, text), default_budget.max_bytes, "bytes"),
        "full": quality(files, lambda rel, text: [c.text for c in chunk_file(rel, text)],
                        default_budget.max_bytes, "bytes"),
        **{name: quality(files, lambda rel, text, s=_safe(sp.split_text): s(text), sp.max_chars, "chars")
           for name, sp in lis.items()},
    }


def write(results: dict) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "splitters.json").write_text(json.dumps(results, indent=1) + "\n")
    t, q = results["timing"], results["quality"]
    s = results["settings"]
    d = results["demo_string_tail"]
    lines = [
        "# codeseam's chunker vs LlamaIndex CodeSplitter",
        "",
        f"Corpus: {results['files']} stdlib .py files of CPython {results['python']} without test "
        f"folders, {results['mb']} MB (bench_chunk.corpus). Machine: {results['machine']}; load "
        f"average (1, 5, 15 min) at start {results['load_start']}, at end {results['load_end']}. "
        f"llama-index-core {results['llama_index_core']}, tree-sitter {results['tree_sitter']}, "
        f"tree-sitter-language-pack {results['tree_sitter_language_pack']}, codeseam chunker "
        f"`{CHUNKER_VERSION}`. Written by `bench/bench_splitters.py` "
        f"(run under a separate venv with llama-index-core).",
        "",
        "Settings: codeseam default `Budget()` (max_bytes=2000, min_bytes=200); CodeSplitter "
        f"defaults `{s['li_default']}`; CodeSplitter close to ours `{s['li_2000']}`. Both "
        "CodeSplitters use tree-sitter-language-pack's python parser (their default, checked: "
        f"`{s['li_default']['parser']}`).",
        "",
        f"## Throughput ({t['rounds']} rounds, one process, arms interleaved file by file, order rotating)",
        "",
        "| arm | MB/s best round (CPU) | ratio to raw parse: median of rounds / best round (CPU) | "
        "chunks | mean chars | largest chars | under 50 chars | chars dropped | non-ws chars dropped |",
        "|---|---|---|---|---|---|---|---|---|",
        f"| {ARMS['raw']} | {t['raw_mb_s_best_cpu']} | 1 | | | | | | |",
    ]
    for name in list(ARMS)[1:]:
        a = q[name]
        lines.append(
            f"| {ARMS[name]} | {t[name + '_mb_s_best_cpu']} | **{t[f'ratio_{name}_median_cpu']}** / "
            f"{t[f'ratio_{name}_best_cpu']} | {a['chunks']} | {a['mean_chars']} | {a['max_chars']} | "
            f"{a['under_50_chars_share']:.2%} ({a['under_50_chars']}) | {a['dropped_chars']} "
            f"({a['dropped_share']:.2%}) | {a['nonws_dropped_chars']} |")
    lines += [
        "",
        "Per-round CPU ratios to the raw parse: "
        + "; ".join(f"{n} {t[f'ratio_{n}_per_round_cpu']}" for n in list(ARMS)[1:]) + ".",
        "Best-round wall ratios: " + "; ".join(f"{n} {t[f'ratio_{n}_best_wall']}" for n in list(ARMS)[1:])
        + ".",
        "",
        "## Chunks in detail",
        "",
        "| | " + " | ".join(list(ARMS)[1:]) + " |",
        "|---|" + "---|" * (len(ARMS) - 1),
    ]
    rows = [("files split", "files_split"), ("files the splitter refused", "files_failed"),
            ("limit", "limit"), ("chunks over the limit", "over_limit"),
            ("empty chunks", "empty_chunks"), ("files covered exactly (concatenation == file)", "files_exact_cover"),
            ("chars dropped", "dropped_chars"), ("chunks not found in their file", "chunks_not_found_in_file"),
            ("non-whitespace chars dropped", "nonws_dropped_chars"),
            ("files whose non-whitespace sequence differs", "files_nonws_sequence_differs")]
    for label, key in rows:
        vals = [q[n][key] for n in list(ARMS)[1:]]
        vals = [len(v) if isinstance(v, list) else v for v in vals]
        lines.append(f"| {label} | " + " | ".join(str(v) for v in vals) + " |")
    lines += [
        "",
        "*Chars dropped*: each chunk is placed in order at its first occurrence after the "
        "previous one; the file's characters no chunk covers (0 for an exact cover). "
        "*Non-whitespace chars dropped*: the multiset of non-whitespace characters of the file "
        "minus that of all its chunks. The timing of `chunk_file` includes building records "
        "(header, hash), which CodeSplitter does not do; `cut` is the like-for-like arm. "
        "CodeSplitter's `split_text` includes its callback-manager event, as a user pays it.",
        "",
        "CodeSplitter strips every chunk, so the whitespace between chunks is lost. Its non-whitespace "
        "drop by file: " + "; ".join(
            f"{n} " + ", ".join(f"{f} {c}" for f, c in q[n]["nonws_dropped_by_file"].items())
            for n in ("li_default", "li_2000")) + ". "
        "Cause, reproduced by the script (`demo_string_tail` in the JSON): when a string "
        "is over the limit, CodeSplitter recurses into its `string_content`, whose only "
        "children are escape sequences, and the text after the last child is never appended: "
        f"with max_chars={d['max_chars']} the chunks of `{d['text']!r}` are "
        f"`{d['chunks']}` (the TAIL text kept: {d['tail_kept']}).",
    ]
    (RESULTS / "splitters.md").write_text("\n".join(lines) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    from importlib.metadata import version

    files = corpus()
    mb = round(sum(len(raw) for _, _, raw in files) / 1e6, 2)
    print(f"{len(files)} files, {mb} MB", file=sys.stderr)
    lis = splitters()
    results = {
        "files": len(files), "mb": mb, "python": platform.python_version(),
        "machine": f"{platform.platform()}, {platform.machine()}, {os.cpu_count()} CPUs (shared)",
        "llama_index_core": version("llama-index-core"), "tree_sitter": version("tree-sitter"),
        "tree_sitter_language_pack": version("tree-sitter-language-pack"),
        "chunker_version": CHUNKER_VERSION,
        "settings": {"codeseam": {"max_bytes": Budget().max_bytes, "min_bytes": Budget().min_bytes},
                     **{n: li_settings(sp) for n, sp in lis.items()}},
        "load_start": [round(x, 2) for x in os.getloadavg()],
        "timing": time_rounds(files, args.rounds, lis),
        "load_end": [round(x, 2) for x in os.getloadavg()],
    }
    results["quality"] = all_quality(files, lis)
    results["demo_string_tail"] = demo_string_tail(type(lis["li_default"]))
    write(results)
    print((RESULTS / "splitters.md").read_text())


if __name__ == "__main__":
    main()
