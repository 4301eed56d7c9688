"""Install weight before/after: a plain ``pip install`` of codeseam at two commits, side by side.

    python bench/bench_install.py [--before 8da0a77] [--work /tmp/codeseam-install] [--out bench/results]

For each commit (``--before``, and this working tree as "after"): the source tree is taken
with ``git archive`` (no worktree), a fresh venv is made, and ``pip install <tree>`` (no
extras) is timed; then the venv's size on disk (``du``), whether torch, transformers or
sentence-transformers are in it, and the largest packages. The "after" venv then indexes
and searches with the bundled model from an empty data folder, and runs stdlib-dev
(``codeseam eval``, variants dense-ast, bm25-ast, hybrid-ast) whose per-query ranks are
compared with the committed ``bench/results/eval.json``.

Both installs use this machine's pip configuration and its warm pip cache (so the times
are install times, not download times); torch==2.13.0 of the "before" commit comes from the
local CPU wheel that this machine's pip finds (on an ordinary Linux machine, PyPI serves the
CUDA build: several GB more). Writes ``install.json`` and ``install.md`` into ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "transformers", "sentence-transformers", "sentence_transformers")
GOLDEN = ROOT.parent / "shared" / "golden" / "stdlib-dev.jsonl"
VARIANTS = ("dense-ast", "bm25-ast", "hybrid-ast")


def sh(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def source_tree(commit: str | None, dest: Path) -> Path:
    """The tree of ``commit`` (None: the working tree's tracked and untracked files)."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    if commit is None:
        files = sh(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT).stdout.split("\n")
        for f in filter(None, files):
            if (ROOT / f).is_file():
                (dest / f).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / f, dest / f)
    else:
        subprocess.run(f"git archive --format=tar {commit} | tar -x -C {dest}", shell=True, check=True, cwd=ROOT)
    return dest


def du(path: Path) -> int:
    return int(sh(["du", "-sb", str(path)]).stdout.split()[0])


def install(label: str, tree: Path, work: Path) -> dict:
    venv = work / f"venv-{label}"
    if venv.exists():
        shutil.rmtree(venv)
    sh([sys.executable, "-m", "venv", str(venv)])
    pip = venv / "bin" / "pip"
    sh([str(pip), "install", "-q", "--upgrade", "pip>=24"])
    t = time.perf_counter()
    sh([str(pip), "install", "-q", str(tree)])
    seconds = time.perf_counter() - t
    listed = json.loads(sh([str(pip), "list", "--format", "json"]).stdout)
    names = {p["name"].lower(): p["version"] for p in listed}
    site = Path(sh([str(venv / "bin" / "python"), "-c", "import sysconfig;print(sysconfig.get_paths()['purelib'])"])
                .stdout.strip())
    sizes = sorted(((d.name, du(d)) for d in site.iterdir() if d.is_dir() and not d.name.endswith("-info")),
                   key=lambda x: -x[1])
    return {"label": label, "venv": str(venv), "install_seconds": round(seconds, 1), "venv_bytes": du(venv),
            "packages": len(listed), "heavy": sorted(n for n in names if n in HEAVY),
            "largest": [{"name": n, "bytes": b} for n, b in sizes[:8]]}


def use(venv: Path, work: Path) -> dict:
    """Index this repository's src/ and search it with the bundled model, from empty folders."""
    data = work / "data-after"
    shutil.rmtree(data, ignore_errors=True)
    env = dict(os.environ, RAG_DATA_DIR=str(data), RAG_KEEPALIVE="0", RAG_CONFIG=str(work / "none.toml"))
    (work / "none.toml").write_text("")
    cli = str(venv / "bin" / "codeseam")
    t = time.perf_counter()
    sh([cli, "index", str(ROOT), "--repo-id", "codeseam", "--json"], env=env)
    index_s = time.perf_counter() - t
    out = json.loads(sh([cli, "search", "where are secrets redacted before storage", "--path", "src/**", "-k", "3",
                         "--json"], env=env).stdout)
    code = "import sys, codeseam.embed.bundled, codeseam.api; print(','.join(m for m in ('torch','transformers') if m in sys.modules))"
    return {"index_seconds": round(index_s, 1), "search_hits": [h.get("path") for h in out.get("hits", [])],
            "heavy_imported": sh([str(venv / "bin" / "python"), "-c", code], env=env).stdout.strip()}


def int8_check(venv: Path, work: Path, tree: Path) -> dict:
    """The int8 path (RAG_EMBEDDING_PRECISION=int8) in the venv without torch: without the int8
    extra (sympy) the error names it; with it the graph is derived from an empty data folder
    and a query embedded; which heavy modules got imported; what the extra adds on disk."""
    def attempt(data: Path) -> dict:
        shutil.rmtree(data, ignore_errors=True)
        code = ("import json, sys, time; from codeseam.embed import prepare; from codeseam.settings import Settings; "
                "from codeseam.errors import EmbeddingError\n"
                f"t = time.perf_counter()\ntry:\n    e = prepare(Settings(data_dir={str(data)!r}, embedding_precision='int8')); "
                "v = e.embed_query('where is the retry delay computed?'); "
                "out = {'id': e.id, 'dim': int(v.shape[0]), 'seconds': round(time.perf_counter() - t, 1)}\n"
                "except EmbeddingError as exc:\n    out = {'error': str(exc)}\n"
                "out['heavy'] = [m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules]\n"
                "print(json.dumps(out))")
        return json.loads(sh([str(venv / "bin" / "python"), "-c", code]).stdout)

    subprocess.run([str(venv / "bin" / "pip"), "uninstall", "-y", "-q", "sympy", "mpmath"], capture_output=True)
    without = attempt(work / "data-int8-a")
    before = du(venv)
    sh([str(venv / "bin" / "pip"), "install", "-q", f"{tree}[int8]"])
    return {"without_extra": without, "with_extra": attempt(work / "data-int8-b"), "extra_bytes": du(venv) - before}


def stdlib_ranks(venv: Path, work: Path) -> dict:
    """stdlib-dev in the fresh venv; per-query ranks against the committed eval.json."""
    cache = work / "eval-after"
    shutil.rmtree(cache, ignore_errors=True)  # embedded in this venv, not read from an earlier run's cache
    env = dict(os.environ, RAG_KEEPALIVE="0", RAG_CONFIG=str(work / "none.toml"), RAG_DATA_DIR=str(work / "data-eval"))
    stdlib = sysconfig.get_paths()["stdlib"]
    sh([str(venv / "bin" / "codeseam"), "eval", str(GOLDEN), "--root", stdlib, "--variants", ",".join(VARIANTS),
        "--cache-dir", str(cache), "--out", str(cache / "report"), "--json"], env=env)
    got = json.loads((cache / "report" / "eval.json").read_text())
    ref = json.loads((ROOT / "bench" / "results" / "eval.json").read_text())
    out = {}
    for v in VARIANTS:
        a = {q["id"]: q for q in ref["variants"][v]["queries"]}
        b = {q["id"]: q for q in got["variants"][v]["queries"]}
        diff = [{"id": i, "before": a[i]["rank"], "after": b[i]["rank"]} for i in a if a[i]["rank"] != b[i]["rank"]]
        hits = sum(a[i]["hits"] != b[i]["hits"] for i in a)
        weak = sum(a[i].get("weak") != b[i].get("weak") for i in a)
        out[v] = {"queries": len(a), "rank_differences": diff, "hit_lists_differing": hits, "weak_differing": weak,
                  "mrr_before": ref["variants"][v]["summary"]["overall"]["mrr"],
                  "mrr_after": got["variants"][v]["summary"]["overall"]["mrr"]}
    return out


def render(res: dict) -> str:
    b, a = res["before"], res["after"]
    mb = lambda n: f"{n / 1e6:,.0f} MB"  # noqa: E731
    lines = [
        "# Install weight: `pip install codeseam` before and after the torch-free graph (issue 21)",
        "",
        f"Commits: before `{res['before_commit']}`, after `{res['after_commit']}`. Measured {res['date']} on this "
        f"machine (2 cores, shared: {res['load']}), one fresh venv each, `pip install <tree>` without extras, "
        "warm pip cache (install time, not download time; the before commit's torch==2.13.0 is this machine's "
        "local CPU wheel: PyPI's default build for Linux is the CUDA one, several GB more).",
        "",
        "| | before | after | after / before |",
        "|---|---|---|---|",
        f"| venv size | {mb(b['venv_bytes'])} | {mb(a['venv_bytes'])} | {a['venv_bytes'] / b['venv_bytes']:.2f} |",
        f"| install time | {b['install_seconds']} s | {a['install_seconds']} s | "
        f"{a['install_seconds'] / b['install_seconds']:.2f} |",
        f"| packages | {b['packages']} | {a['packages']} | |",
        f"| torch / transformers / sentence-transformers | {', '.join(b['heavy']) or 'none'} | "
        f"{', '.join(a['heavy']) or 'none'} | |",
        "",
        "Largest packages after: " + ", ".join(f"{p['name']} {mb(p['bytes'])}" for p in a["largest"]) + ".",
        "",
        "Largest packages before: " + ", ".join(f"{p['name']} {mb(p['bytes'])}" for p in b["largest"]) + ".",
        "",
        "## The after venv at work",
        "",
        f"`codeseam index` of this repository with the bundled model from an empty data folder: "
        f"{res['use']['index_seconds']} s; a search found {res['use']['search_hits']}; modules of torch/transformers "
        f"imported: {res['use']['heavy_imported'] or 'none'}.",
        "",
        f"The int8 path (`RAG_EMBEDDING_PRECISION=int8`) in the same venv, from an empty data folder: without the "
        f"`int8` extra: {' '.join(str(res['int8']['without_extra'].get('error')).split())}; with it (sympy, {mb(res['int8']['extra_bytes'])}): "
        f"{res['int8']['with_extra'].get('id')} derived and a query embedded in "
        f"{res['int8']['with_extra'].get('seconds')} s; torch/transformers imported: "
        f"{', '.join(res['int8']['with_extra']['heavy']) or 'none'}.",
        "",
        "stdlib-dev (`codeseam eval`, per-query ranks against the committed bench/results/eval.json):",
        "",
        "| variant | queries | ranks differing | hit lists differing | weak flags differing | MRR before | MRR after |",
        "|---|---|---|---|---|---|---|",
    ]
    for v, r in res["stdlib"].items():
        lines.append(f"| {v} | {r['queries']} | {len(r['rank_differences'])} | {r['hit_lists_differing']} | "
                     f"{r['weak_differing']} | {r['mrr_before']:.4f} | {r['mrr_after']:.4f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", default="8da0a77")
    ap.add_argument("--work", default="/tmp/codeseam-install")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    ap.add_argument("--resume", action="store_true", help="reuse the installs of an interrupted run")
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    res = {"before_commit": args.before, "after_commit": sh(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT).stdout.strip(),
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "load": f"load average {os.getloadavg()[0]:.1f} at start"}
    partial = work / "partial.json"  # the installs and the index run, kept for --resume
    if args.resume and partial.exists():
        res.update({k: v for k, v in json.loads(partial.read_text()).items() if k in ("after", "before", "use")})
    else:
        res["after"] = install("after", source_tree(None, work / "src-after"), work)
        res["before"] = install("before", source_tree(args.before, work / "src-before"), work)
        res["use"] = use(Path(res["after"]["venv"]), work)
        partial.write_text(json.dumps(res))
    res["int8"] = int8_check(Path(res["after"]["venv"]), work, source_tree(None, work / "src-int8"))
    res["stdlib"] = stdlib_ranks(Path(res["after"]["venv"]), work)
    out = Path(args.out)
    (out / "install.json").write_text(json.dumps(res, indent=1) + "\n")
    (out / "install.md").write_text(render(res))
    print(render(res))


if __name__ == "__main__":
    main()
