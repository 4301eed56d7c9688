"""Discovery speed on the stdlib: a plain folder (walk + nested ignore files) against a git
repository holding the same files (``git ls-files``), side by side in one run.

Discovery sits on the no-op re-sync path (goal for the whole re-sync: <= 1 s on the stdlib),
so this measures what it costs and how much of that is the content sniff (the first 8 KiB of
each file, for the binary and minified checks).

Corpora, all measured warm (page cache filled by a first untimed pass):

- ``stdlib``: a copy of the CPython 3.11.7 stdlib folder without ``site-packages`` and
  without ``__pycache__`` (1,790 .py files plus data files), as a plain folder;
- ``stdlib-git``: the same copy after ``git init && git add -A && git commit``;
- ``python3.11-as-is``: the installed folder itself, ``site-packages`` included (on this
  machine that is ~50k files: a stress figure, not the goal's corpus).

Usage: python bench/bench_discover.py [--reps 7]
Writes bench/results/discover.md and bench/results/discover.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from codeseam.discover import discover  # noqa: E402
from codeseam.discover.listing import git_listing, walk_listing  # noqa: E402
from codeseam.discover.reading import sniff  # noqa: E402


def copy_stdlib(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, symlinks=True,
                    ignore=shutil.ignore_patterns("site-packages", "__pycache__"))


def make_git(path: Path) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid",
                  "commit", "-q", "-m", "stdlib"]):
        subprocess.run(["git", *args], cwd=path, check=True, env=env, capture_output=True)


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def measure(corpora: dict[str, Path], reps: int) -> dict:
    def listing_of(root: Path):
        return (lambda: git_listing(str(root))) if (root / ".git").exists() else (lambda: walk_listing(str(root)))

    def sniff_all(root: Path):
        files = discover(root).files
        return lambda: [sniff(f.abs_path, f.size) for f in files]

    steps = {name: {"discover": lambda r=root: discover(r), "listing": listing_of(root),
                    "sniff": sniff_all(root)} for name, root in corpora.items()}
    times: dict[str, dict[str, list[float]]] = {n: {s: [] for s in st} for n, st in steps.items()}
    for fn_by_step in steps.values():  # warm-up: page cache, imports, the grammar table
        for fn in fn_by_step.values():
            fn()
    for _ in range(reps):  # interleaved, so load on the shared machine hits all alike
        for name, fn_by_step in steps.items():
            for step, fn in fn_by_step.items():
                times[name][step].append(timed(fn))
    out = {}
    for name, root in corpora.items():
        d = discover(root)
        med = {s: statistics.median(v) for s, v in times[name].items()}
        out[name] = {
            "root": str(root), "is_git": d.is_git, "files": len(d.files), "skips": len(d.skips),
            "py_files": sum(f.path.endswith(".py") for f in d.files),
            "skips_by_reason": d.counts_by_reason(),
            "median_s": {s: round(v, 4) for s, v in med.items()},
            "min_s": {s: round(min(v), 4) for s, v in times[name].items()},
            "sniff_share": round(med["sniff"] / med["discover"], 3),
            "us_per_file": round(1e6 * med["discover"] / max(1, len(d.files) + len(d.skips)), 1),
        }
    return out


def write_report(results: dict, reps: int, load: tuple[float, ...]) -> None:
    out_dir = HERE / "results"
    out_dir.mkdir(exist_ok=True)
    meta = {"python": platform.python_version(), "cpus": os.cpu_count(), "reps": reps,
            "loadavg_at_start": [round(x, 2) for x in load]}
    (out_dir / "discover.json").write_text(json.dumps({"meta": meta, "results": results}, indent=2) + "\n")
    plain, git = results["stdlib"], results["stdlib-git"]
    lines = [
        "# Discovery speed",
        "",
        "Produced by `python bench/bench_discover.py` (warm page cache, median of "
        f"{reps} interleaved runs; load average at start {meta['loadavg_at_start']} on "
        f"{meta['cpus']} shared CPUs, so read ratios rather than absolute times).",
        "",
        "| corpus | mode | files listed | skipped | discover() median | min | listing only | sniff | sniff share | µs/path |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in results.items():
        m, mn = r["median_s"], r["min_s"]
        lines.append(f"| {name} | {'git' if r['is_git'] else 'folder'} | {r['files']} | {r['skips']} "
                     f"| {m['discover'] * 1000:.0f} ms | {mn['discover'] * 1000:.0f} ms "
                     f"| {m['listing'] * 1000:.0f} ms | {m['sniff'] * 1000:.0f} ms "
                     f"| {r['sniff_share']:.0%} | {r['us_per_file']} |")
    ratio = git["median_s"]["discover"] / plain["median_s"]["discover"]
    ratio_min = git["min_s"]["discover"] / plain["min_s"]["discover"]
    lines += [
        "",
        f"- stdlib ({plain['py_files']} .py files listed): git repository / plain folder = "
        f"{ratio:.2f}x by median, {ratio_min:.2f}x by best run, for the whole discover().",
        "- Skips by reason: " + "; ".join(f"{n}: {r['skips_by_reason']}" for n, r in results.items()),
        "- `sniff` is the content check alone (open + read of the first 8 KiB, rarely 64 KiB, "
        "per listed file), timed separately; `listing only` is git ls-files or the walk with "
        "ignore rules, before any per-file stat.",
    ]
    (out_dir / "discover.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="codeseam-bench-discover-") as tmp:
        plain, git = Path(tmp) / "stdlib", Path(tmp) / "stdlib-git"
        copy_stdlib(stdlib, plain)
        copy_stdlib(stdlib, git)
        make_git(git)
        results = measure({"stdlib": plain, "stdlib-git": git, "python3.11-as-is": stdlib}, args.reps)
    write_report(results, args.reps, load)


if __name__ == "__main__":
    main()
