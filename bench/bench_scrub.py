"""The scrubber, measured: labelled corpus, CPython stdlib false positives, throughput.

1. Corpus (tests/support/secret_corpus.py, generated from a seed): per-line precision and
   recall of ``scrub_text`` (a line is flagged when it changed), recall per kind. With
   ``--compare-bin DIR`` (a folder holding ``detect-secrets`` 1.5.0 and ``trufflehog3``
   executables, installed in a separate venv, not in the project), the same corpus is
   written to files and scanned by them; a line is flagged when they report it.
2. Stdlib (the 3.11.7 ``.py`` files, ``site-packages`` excluded): lines scanned,
   redactions and redactions per 100k lines, outside test folders and including them.
   Every redaction is listed (masked) in ``scrub-stdlib-findings.md``; the hand review in
   ``scrub-stdlib-review.md`` (one verdict per finding) gives the false positives per 100k.
3. Throughput: ``scrub_text`` over all stdlib ``.py`` texts held in memory, one process,
   ``--reps`` runs; best and median MB/s (UTF-8 bytes). Adversarial inputs (thousands of
   matches on one line, markers without bodies) are timed too, to show nothing goes quadratic.
   With ``--compare-bin``, detect-secrets scans a ~2 MB stdlib sample next to scrub_text.

Usage: python bench/bench_scrub.py [--reps 3] [--compare-bin /tmp/scrub-compare-venv/bin]
Writes bench/results/scrub.md, scrub.json and scrub-stdlib-findings.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from codeseam.discover import decode_bytes  # noqa: E402
from codeseam.scrub import KINDS, scrub_text  # noqa: E402
from tests.support.secret_corpus import EXT, build_corpus, evaluate, hard_negative_lines, labelled_lines  # noqa: E402

RESULTS = HERE / "results"
TEST_DIRS = {"test", "tests", "idle_test"}


# ------------------------------------------------------------------------------- corpus

def changed_lines(doc) -> set[int]:
    after = scrub_text(doc.text).text.split("\n")
    return {n for n, (a, b) in enumerate(zip(doc.text.split("\n"), after), 1) if a != b}


def recall_by_kind(corpus, flagged: dict[int, set[int]]) -> dict[str, float]:
    hit, total = Counter(), Counter()
    for i, d in enumerate(corpus):
        for n, kind in d.labels.items():
            total[kind] += 1
            hit[kind] += n in flagged[i]
    return {k: round(hit[k] / total[k], 3) for k in sorted(total)}


def _write_corpus(corpus, folder: Path) -> list[Path]:
    paths = []
    for i, d in enumerate(corpus):
        p = folder / f"doc{i:03d}{EXT[d.fmt]}"
        p.write_text(d.text)
        paths.append(p)
    return paths


def detect_secrets_lines(binary: Path, folder: Path) -> dict[str, set[int]]:
    out = subprocess.run([str(binary), "scan", "--all-files", "."], cwd=folder, check=True,
                         capture_output=True, text=True).stdout
    return {name: {r["line_number"] for r in rows} for name, rows in json.loads(out)["results"].items()}


def trufflehog3_lines(binary: Path, folder: Path) -> dict[str, set[int]]:
    out = subprocess.run([str(binary), "-z", "--no-history", "--format", "json", "."], cwd=folder,
                         capture_output=True, text=True).stdout
    found: dict[str, set[int]] = defaultdict(set)
    for r in json.loads(out or "[]"):
        found[os.path.normpath(r["path"])].add(int(r["line"]))
    return found


def corpus_section(seed: int, compare: Path | None) -> dict:
    corpus = build_corpus(seed)
    positives = sum(1 for *_, k in labelled_lines(corpus) if k)
    flagged = {i: changed_lines(d) for i, d in enumerate(corpus)}
    tools = {"codeseam": flagged}
    notes = {}
    if compare is not None:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            names = [p.name for p in _write_corpus(corpus, folder)]
            for tool, fn in (("detect-secrets 1.5.0", detect_secrets_lines), ("trufflehog3 3.0.10", trufflehog3_lines)):
                exe = compare / tool.split(" ")[0]
                if not exe.exists():
                    notes[tool] = f"not found in {compare}"
                    continue
                found = fn(exe, folder)
                tools[tool] = {i: found.get(name, set()) for i, name in enumerate(names)}
    rows = {}
    for tool, fl in tools.items():
        s = evaluate(corpus, lambda d, fl=fl, idx={id(d): i for i, d in enumerate(corpus)}: fl[idx[id(d)]])
        rows[tool] = {"precision": round(s.precision, 3), "recall": round(s.recall, 3), "tp": s.tp, "fp": s.fp,
                      "fn": s.fn, "tn": s.tn, "recall_by_kind": recall_by_kind(corpus, fl),
                      "false_alarms": s.false_alarms if tool == "codeseam" else len(s.false_alarms)}
    return {"seed": seed, "docs": len(corpus), "secret_lines": positives,
            "hard_negative_lines": len(hard_negative_lines(corpus)),
            "lines": sum(d.text.count("\n") for d in corpus), "tools": rows, "notes": notes}


# ------------------------------------------------------------------------------- stdlib

def stdlib_texts() -> list[tuple[str, str, bool]]:
    """(relative path, text, in a test folder) of every stdlib .py file, sorted by path."""
    root = Path(sysconfig.get_paths()["stdlib"])
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in ("site-packages", "__pycache__"))
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            text, _ = decode_bytes(path.read_bytes())  # the indexer's decoding policy
            is_test = bool(TEST_DIRS & set(rel.split("/")[:-1]))
            out.append((rel, text, is_test))
    return out


def n_lines(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def read_review(path: Path) -> dict[str, str]:
    """``finding id -> true|false`` from the review table (``| id | kind | verdict | note |``)."""
    verdicts = {}
    if path.exists():
        for line in path.read_text().splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) >= 3 and cells[2] in ("true", "false"):
                verdicts[cells[0].strip("`")] = cells[2]
    return verdicts


def stdlib_section(texts) -> tuple[dict, list[dict]]:
    findings = []
    totals = {"outside-tests": Counter(), "all": Counter()}
    for rel, text, is_test in texts:
        res = scrub_text(text)
        per_line = Counter()
        for r in res.redactions:
            per_line[r.line] += 1
            findings.append({"id": f"{rel}:{r.line}" + (f"#{per_line[r.line]}" if per_line[r.line] > 1 else ""),
                             "kind": r.kind, "preview": r.preview, "test": is_test})
        for scope in ("all",) + (() if is_test else ("outside-tests",)):
            totals[scope]["files"] += 1
            totals[scope]["lines"] += n_lines(text)
            totals[scope]["bytes"] += len(text.encode("utf-8", "surrogatepass"))
            totals[scope]["redactions"] += len(res.redactions)
            for r in res.redactions:
                totals[scope][f"kind:{r.kind}"] += 1
    review = read_review(RESULTS / "scrub-stdlib-review.md")
    out = {}
    for scope, c in totals.items():
        in_scope = [f for f in findings if scope == "all" or not f["test"]]
        false = sum(1 for f in in_scope if review.get(f["id"]) == "false")
        reviewed = sum(1 for f in in_scope if f["id"] in review)
        out[scope] = {"files": c["files"], "lines": c["lines"], "mb": round(c["bytes"] / 1e6, 2),
                      "redactions": c["redactions"],
                      "per_100k_lines": round(c["redactions"] / c["lines"] * 1e5, 2),
                      "by_kind": {k.split(":", 1)[1]: v for k, v in sorted(c.items()) if k.startswith("kind:")},
                      "reviewed": reviewed, "false_positives": false,
                      "false_positives_per_100k_lines": round(false / c["lines"] * 1e5, 2)}
    return out, findings


# ------------------------------------------------------------------------------- speed

def throughput(texts, reps: int) -> dict:
    nbytes = sum(len(t.encode("utf-8", "surrogatepass")) for _, t, _ in texts)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _, t, _ in texts:
            scrub_text(t)
        times.append(time.perf_counter() - t0)
    return {"mb": round(nbytes / 1e6, 2), "files": len(texts), "seconds": [round(t, 3) for t in times],
            "best_mb_s": round(nbytes / 1e6 / min(times), 1),
            "median_mb_s": round(nbytes / 1e6 / statistics.median(times), 1)}


def adversarial() -> list[dict]:
    def email_line():
        return "jane.doe@acme-corp.com " * 20000

    cases = {
        "20k emails on one line": email_line(),
        "20k emails on one line, with an allow-list": (email_line(), ("no-match",)),
        "20k secret assignments, one per line": "API_TOKEN=abcdefgh123\n" * 20000,
        "20k PEM BEGIN markers without a body": "-----BEGIN PRIVATE KEY-----\n" * 20000,
        "20k AWS key ids before a 1 MB base64 run": ("AK" + "IAABCDEFGHIJKLMNOP ") * 20000 + "Ab1/" * 250000,
        "1 MB of '@' and '+' noise": "a@+1 (" * 170000,
    }
    rows = []
    for name, case in cases.items():
        text, allow = case if isinstance(case, tuple) else (case, ())
        t0 = time.perf_counter()
        res = scrub_text(text, allow=allow)
        dt = time.perf_counter() - t0
        rows.append({"case": name, "mb": round(len(text) / 1e6, 2), "seconds": round(dt, 3),
                     "mb_s": round(len(text) / 1e6 / dt, 1), "redactions": len(res.redactions)})
    return rows


def compare_speed(texts, compare: Path | None) -> dict | None:
    exe = compare / "detect-secrets" if compare else None
    if exe is None or not exe.exists():
        return None
    sample, size = [], 0
    for rel, text, is_test in texts:
        if is_test:
            continue
        sample.append((rel, text))
        size += len(text.encode())
        if size >= 2_000_000:
            break
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as empty:
        for rel, text in sample:
            p = Path(tmp) / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
        t0 = time.perf_counter()
        subprocess.run([str(exe), "scan", "--all-files", "."], cwd=empty, check=True, capture_output=True)
        startup = time.perf_counter() - t0
        t0 = time.perf_counter()
        subprocess.run([str(exe), "scan", "--all-files", "."], cwd=tmp, check=True, capture_output=True)
        ds = time.perf_counter() - t0 - startup
    t0 = time.perf_counter()
    for _, text in sample:
        scrub_text(text)
    ours = time.perf_counter() - t0
    mb = size / 1e6
    return {"sample_files": len(sample), "sample_mb": round(mb, 2), "detect_secrets_s": round(ds, 2),
            "detect_secrets_startup_s": round(startup, 2), "detect_secrets_mb_s": round(mb / ds, 2),
            "scrub_text_s": round(ours, 3), "scrub_text_mb_s": round(mb / ours, 1), "ratio": round(ds / ours)}


# ------------------------------------------------------------------------------- report

def write_findings(findings: list[dict]) -> None:
    lines = ["# Every redaction scrub_text makes on the CPython 3.11.7 stdlib (.py files)", "",
             "Written by `bench/bench_scrub.py`. Previews are masked. `#n` numbers the n-th redaction",
             "on the same line. The hand verdicts are in `scrub-stdlib-review.md`.", "",
             "| finding | kind | preview | test folder |", "|---|---|---|---|"]
    lines += [f"| `{f['id']}` | {f['kind']} | `{f['preview']}` | {'yes' if f['test'] else 'no'} |" for f in findings]
    (RESULTS / "scrub-stdlib-findings.md").write_text("\n".join(lines) + "\n")


def write_markdown(r: dict) -> None:
    c = r["corpus"]
    out = ["# Scrubber benchmark", "",
           f"Run: {r['when']} on {r['machine']} (Python {r['python']}), `python bench/bench_scrub.py "
           f"{r['args']}`. Shared 2-core machine: timings are noisy; compare within this run.", "",
           "## Labelled corpus (per line)", "",
           f"Seed {c['seed']}: {c['docs']} generated docs, {c['lines']} lines, {c['secret_lines']} secret lines, "
           f"{c['hard_negative_lines']} hard-negative lines (tests/support/secret_corpus.py).", "",
           "| scanner | precision | recall | TP | FP | FN |", "|---|---|---|---|---|---|"]
    for tool, row in c["tools"].items():
        out.append(f"| {tool} | {row['precision']:.3f} | {row['recall']:.3f} | {row['tp']} | {row['fp']} | {row['fn']} |")
    out += ["", "Recall by kind:", "", "| kind | " + " | ".join(c["tools"]) + " |",
            "|---|" + "---|" * len(c["tools"])]
    for kind in KINDS:
        out.append(f"| {kind} | " + " | ".join(str(t["recall_by_kind"].get(kind, "-")) for t in c["tools"].values()) + " |")
    if len(c["tools"]) > 1:
        out += ["", "detect-secrets and trufflehog3 were installed for this bench only, into a separate venv",
                "(`python -m venv /tmp/scrub-compare-venv && /tmp/scrub-compare-venv/bin/pip install",
                "detect-secrets==1.5.0 trufflehog3==3.0.10`), with their default settings; they are not",
                "project dependencies. A PEM block counts one line per line of the block, so a scanner",
                "that reports only the BEGIN line misses the body lines."]
    for tool, note in c["notes"].items():
        out.append(f"- {tool}: {note}")
    s = r["stdlib"]
    out += ["", "## CPython 3.11.7 stdlib (.py, site-packages excluded)", "",
            "| scope | files | lines | redactions | per 100k lines | reviewed | false positives | FP per 100k lines |",
            "|---|---|---|---|---|---|---|---|"]
    for scope, row in s.items():
        out.append(f"| {scope} | {row['files']} | {row['lines']} | {row['redactions']} | {row['per_100k_lines']} | "
                   f"{row['reviewed']}/{row['redactions']} | {row['false_positives']} | "
                   f"{row['false_positives_per_100k_lines']} |")
    out += ["", "By kind: " + "; ".join(f"{scope}: " + ", ".join(f"{k} {v}" for k, v in row["by_kind"].items())
                                        for scope, row in s.items()),
            "", "Test folders: any folder named `test`, `tests` or `idle_test` in the path. Every finding is",
            "listed in `scrub-stdlib-findings.md`; the false-positive figures come from the hand verdicts",
            "in `scrub-stdlib-review.md`.", "", "## Throughput", ""]
    t = r["throughput"]
    out += [f"`scrub_text` over all {t['files']} stdlib .py files ({t['mb']} MB in memory), one process, "
            f"{len(t['seconds'])} runs: best **{t['best_mb_s']} MB/s**, median {t['median_mb_s']} MB/s "
            f"(seconds per run: {t['seconds']}).", ""]
    if r.get("compare_speed"):
        cs = r["compare_speed"]
        out += [f"Side by side on a {cs['sample_mb']} MB sample ({cs['sample_files']} stdlib files outside tests): "
                f"detect-secrets {cs['detect_secrets_mb_s']} MB/s ({cs['detect_secrets_s']} s after subtracting "
                f"{cs['detect_secrets_startup_s']} s of start-up), scrub_text {cs['scrub_text_mb_s']} MB/s: "
                f"about {cs['ratio']}x faster.", ""]
    out += ["Adversarial inputs (one call each):", "", "| input | MB | seconds | MB/s | redactions |",
            "|---|---|---|---|---|"]
    out += [f"| {a['case']} | {a['mb']} | {a['seconds']} | {a['mb_s']} | {a['redactions']} |" for a in r["adversarial"]]
    (RESULTS / "scrub.md").write_text("\n".join(out) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seed", type=int, default=20240611)
    ap.add_argument("--compare-bin", type=Path, default=None,
                    help="folder with detect-secrets and trufflehog3 executables (optional)")
    args = ap.parse_args()
    RESULTS.mkdir(exist_ok=True)
    texts = stdlib_texts()
    stdlib, findings = stdlib_section(texts)
    result = {
        "when": time.strftime("%Y-%m-%d %H:%M"), "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        "python": platform.python_version(), "args": " ".join(sys.argv[1:]),
        "corpus": corpus_section(args.seed, args.compare_bin),
        "stdlib": stdlib,
        "throughput": throughput(texts, args.reps),
        "compare_speed": compare_speed(texts, args.compare_bin),
        "adversarial": adversarial(),
    }
    write_findings(findings)
    write_markdown(result)
    (RESULTS / "scrub.json").write_text(json.dumps(result, indent=2) + "\n")
    print((RESULTS / "scrub.md").read_text())


if __name__ == "__main__":
    main()
