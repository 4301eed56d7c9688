"""Freshness budgets (issue 13): what keeping every search current with the working tree costs.

Parts (``--parts``, default all):

edit      One edited file in the CPython stdlib (every .py file, tests included: ~1,790 files,
          ~44.5k chunks; bundled all-MiniLM-L6-v2): three comment lines, one with a unique
          marker, are inserted at the top of a file (every line below moves; one chunk's text
          changes), then the marker is searched. Timed per search through the keep-alive server
          (a cold `codeseam search --json` process, as a person or script runs it), through
          `codeseam mcp` (the official SDK's stdio client), and in-process (an `Index` session
          with its watcher, as `codeseam serve` runs it); "added" = the search after an edit
          minus the median of unchanged searches in the same session. Each search must return
          the new lines (the marker, at lines 1-3, not stale). Built once (bench/.cache/fresh):
          the 44.5k chunks already in the index get stand-in vectors at build time (unit
          vectors from a hash of the text, 384-d, under the bundled model's id, chunked with its
          tokenizer: identical chunks and rows) because embedding them takes 45 min to 2.5 h on
          this shared machine, and their values change nothing a search or a sync costs; every
          vector computed while measuring (the queries, the edited chunks) is the model's.
nochange  Nothing changed, with a watcher: the same queries alternately with freshness=sync and
          freshness=off in one in-process session (bundled, 1,790 files; and a generated tree of
          50,000 files with the fake embedder: the model is not involved when nothing changed).
scan      The fallback stat scan at 1,790 and 50,000 files: one full cycle alone, and the whole
          first search of a new session (manifest load + scan + hit check) minus the same search
          with freshness=off.
branch    A branch switch between two tags of pallets/flask (3.0.0 -> 3.1.0: 95 of 249 files
          change), read with git from a local copy of its history (`fetch github:pallets/flask`),
          checked out into a temp repo: the one incremental sync (time, files, chunks embedded)
          beside a clean index of 3.1.0 in a new index; then the switch back.

    python bench/bench_freshness.py [--parts edit,nochange,scan,branch] [--trials 15]
Results: bench/results/freshness.md and freshness.json (merged per part).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from _common import RESULTS, clean_env, commit, load_avg, percentile, settings_for, stamp
from bench_index import make_corpus, stdlib_files

from codeseam import api
CACHE = Path(__file__).parent / ".cache" / "fresh"
FLASK_GIT = Path("/work/.mirror/pallets+flask/repo")
CLI = [sys.executable, "-m", "codeseam.surfaces.cli"]
QUERIES = ["parse a configuration file", "read lines from a stream", "compute a checksum", "format a date",
           "copy a file tree", "split a url into parts", "retry a failed request", "escape html characters"]


def cli_env(data: Path, **extra: str) -> dict[str, str]:
    return clean_env(RAG_DATA_DIR=str(data), **extra)


def summary(xs: list[float]) -> dict:
    return {"n": len(xs), "p50": round(percentile(xs, 0.5), 4), "p95": round(percentile(xs, 0.95), 4),
            "runs": [round(x, 4) for x in xs]}


# -- corpora -----------------------------------------------------------------------------------

class StandIn:
    """The bundled embedder (id, dimension, tokenizer, limits) with stand-in document vectors:
    for building the base index only (see the docstring)."""

    def __init__(self, real) -> None:
        from codeseam.embed.fake import FakeEmbedder

        self.real, self.fake = real, FakeEmbedder(real.dim)

    def __getattr__(self, name: str):
        return getattr(self.real, name)

    def embed_documents(self, texts):
        return self.fake.embed_documents(texts)


def stdlib_index(work: Path) -> tuple[Path, Path]:
    """The stdlib corpus and its index (bundled model's id; stand-in vectors), built once."""
    corpus, data = CACHE / "stdlib", CACHE / "data-stdlib"
    marker = CACHE / "stdlib.built"
    if marker.exists():  # undo the last run's edits, in the tree and in the index
        subprocess.run(["git", "checkout", "-q", "--", "."], cwd=corpus, check=False)
        subprocess.run(["git", "clean", "-qfd"], cwd=corpus, check=False)
        api.index(corpus, repo_id="stdlib", settings=settings_for(data, keepalive=0))
        return corpus, data
    shutil.rmtree(corpus, ignore_errors=True)
    shutil.rmtree(data, ignore_errors=True)
    make_corpus(corpus, stdlib_files(with_tests=True))
    subprocess.run(["git", "add", "-A"], cwd=corpus, check=True)
    subprocess.run(["git", "-c", "user.email=b@b.invalid", "-c", "user.name=b", "commit", "-qm", "stdlib"],
                   cwd=corpus, check=True)
    t = time.perf_counter()
    with api.Index(settings_for(data, keepalive=0), create=True) as ix:
        ix.embedder = StandIn(ix.embedder)
        report = ix.index(corpus, repo_id="stdlib")
    print(f"built the stdlib index: {report.summary()} ({time.perf_counter() - t:.0f} s)", file=sys.stderr)
    marker.write_text(json.dumps({"files": report.files_indexed, "chunks": report.chunks_written}))
    return corpus, data


def generated_tree(root: Path, n_files: int, per_dir: int = 100) -> Path:
    if (root / ".built").exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    for i in range(n_files):
        d = root / f"pkg{i // per_dir:04d}"
        if i % per_dir == 0:
            d.mkdir(parents=True)
        (d / f"mod{i % per_dir:03d}.py").write_text(f"def generated_{i}(x):\n    return x * {i} + 1\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / ".built").write_text("")
    return root


def big_index(work: Path, n_files: int) -> tuple[Path, Path, dict]:
    root = generated_tree(CACHE / f"gen{n_files}", n_files)
    data = CACHE / f"data-gen{n_files}"
    marker = CACHE / f"gen{n_files}.built"
    if not marker.exists():
        shutil.rmtree(data, ignore_errors=True)
        t = time.perf_counter()
        report = api.index(root, repo_id="gen", settings=settings_for(data, embedding_backend="fake", keepalive=0))
        marker.write_text(json.dumps({"files": report.files_indexed, "chunks": report.chunks_written,
                                      "build_seconds": round(time.perf_counter() - t, 1)}))
    return root, data, json.loads(marker.read_text())


# -- one edit, timed through each surface ---------------------------------------------------------

def edit(corpus: Path, i: int, rng: random.Random, files: list[str]) -> tuple[str, str]:
    rel = files[rng.randrange(len(files))]
    path = corpus / rel
    marker = "zqfresh" + "".join("abcdefghij"[int(c)] for c in f"{i:04d}")  # one BM25 token, no digits
    path.write_text(f"# {marker}: edited by the freshness benchmark\n# two\n# three\n" + path.read_text())
    return rel, marker


def check_hit(data: dict, rel: str, marker: str) -> str:
    for h in data["hits"]:
        if h["path"] == rel and marker in h["text"]:
            if h["stale"] or h["start_line"] != 1:
                return f"stale or wrong lines: {h['start_line']}-{h['end_line']} stale={h['stale']}"
            return ""
    return f"no hit with the new lines of {rel} in {[h['path'] for h in data['hits']]}"


def edit_part(work: Path, trials: int) -> dict:
    corpus, data = stdlib_index(work)
    files = sorted(p for p in subprocess.run(["git", "ls-files"], cwd=corpus, capture_output=True, text=True,
                                             check=True).stdout.split() if p.endswith(".py"))
    out = {"corpus": json.loads((CACHE / "stdlib.built").read_text()), "trials": trials}
    out["keepalive"] = edit_keepalive(corpus, data, files, trials)
    out["mcp"] = edit_mcp(corpus, data, files, trials)
    out["in_process"] = edit_in_process(corpus, data, files, trials)
    return out


def edit_keepalive(corpus: Path, data: Path, files: list[str], trials: int) -> dict:
    env = cli_env(data, RAG_KEEPALIVE="900")

    def search(q: str) -> tuple[float, dict]:
        t = time.perf_counter()
        p = subprocess.run([*CLI, "search", q, "--json", "-k", "8"], env=env, capture_output=True, text=True)
        took = time.perf_counter() - t
        if p.returncode != 0:
            raise SystemExit(p.stderr[-2000:])
        return took, json.loads(p.stdout)

    search("warm up the keep-alive server")
    try:
        return timed_edits(corpus, files, trials, search, seed=1)
    finally:
        subprocess.run([*CLI, "stop"], env=env, capture_output=True)


def timed_edits(corpus: Path, files: list[str], trials: int, search, seed: int) -> dict:
    base = [search(QUERIES[i % len(QUERIES)])[0] for i in range(trials)]
    rng, edited, problems = random.Random(seed), [], []
    for i in range(trials):
        rel, marker = edit(corpus, seed * 1000 + i, rng, files)
        took, data = search(marker)
        edited.append(took)
        problem = check_hit(data, rel, marker)
        if problem:
            problems.append(problem)
        time.sleep(0.3)  # a person does not search the same millisecond
    b = statistics.median(base)
    return {"unchanged": summary(base), "after_edit": summary(edited),
            "added": summary([x - b for x in edited]), "problems": problems}


def edit_mcp(corpus: Path, data: Path, files: list[str], trials: int) -> dict:
    import anyio
    from mcp import Client, StdioServerParameters

    env = cli_env(data)
    params = StdioServerParameters(command=sys.executable, args=["-m", "codeseam.surfaces.cli", "mcp"], env=env)
    result: dict = {}

    async def session() -> None:
        async with Client(params, mode="legacy", read_timeout_seconds=600) as client:
            await client.call_tool("get_status", {})  # the index is open

            def search(q: str) -> tuple[float, dict]:
                t = time.perf_counter()
                r = anyio.from_thread.run(client.call_tool, "search_code", {"query": q, "k": 8})
                took = time.perf_counter() - t
                if r.is_error:
                    raise SystemExit(str(r.content))
                return took, r.structured_content

            def run() -> dict:
                search("warm up")
                return timed_edits(corpus, files, trials, search, seed=2)

            result.update(await anyio.to_thread.run_sync(run))

    anyio.run(session)
    return result


def edit_in_process(corpus: Path, data: Path, files: list[str], trials: int) -> dict:
    from codeseam.service import Service
    from codeseam.codec import search_json

    with Service(settings_for(data, keepalive=0)).open() as service:
        def search(q: str) -> tuple[float, dict]:
            t = time.perf_counter()
            r = service.search(q, k=8)
            return time.perf_counter() - t, search_json(r)

        search("warm up")
        return timed_edits(corpus, files, trials, search, seed=3)


# -- nothing changed, and the stat scan ------------------------------------------------------------

def nochange(data: Path, n: int, **over) -> dict:
    """Searches with freshness sync vs off, alternating, in one watching session."""
    from codeseam.service import Service

    with Service(settings_for(data, keepalive=0, **over)).open() as service:
        ix = service.session()
        base = ix.settings
        for q in QUERIES:
            service.search(q)  # warm
        sync, off = [], []
        for i in range(n):
            q = QUERIES[i % len(QUERIES)]
            for mode, into in (("sync", sync), ("off", off)) if i % 2 == 0 else (("off", off), ("sync", sync)):
                ix.settings = base.replace(freshness=mode)
                t = time.perf_counter()
                service.search(q, k=8)
                into.append(time.perf_counter() - t)
        modes = {r.repo_id: r.freshness for r in ix.status().repos}
    return {"sync": summary(sync), "off": summary(off),
            "added_p50_ms": round(1000 * (statistics.median(sync) - statistics.median(off)), 2), "modes": modes}


def scan_part(root: Path, data: Path, n: int, **over) -> dict:
    from codeseam.fresh.scan import StatScan

    with api.Index(settings_for(data, keepalive=0, **over)) as ix:
        repo = next(iter(ix.store.repo_records()))
        t = time.perf_counter()
        entries = ix.store.file_entries(repo)
        manifest_s = time.perf_counter() - t
        sigs = {p: (e.size, e.mtime_ns) for p, e in entries.items()}
        cycles = []
        for _ in range(n):
            scan = StatScan(str(root), sigs, since=time.time())
            r = scan.run()
            assert r.complete and not r.changed, (len(r.changed), sorted(r.changed)[:5])
            cycles.append(r.seconds)
        base = ix.settings
        first, off = [], []
        for i in range(n):
            q = QUERIES[i % len(QUERIES)]
            ix.settings = base.replace(freshness="off")
            t = time.perf_counter()
            ix.search(q)
            off.append(time.perf_counter() - t)
            ix.settings = base
            ix._refresher = None  # a new one-shot session: no manifest loaded yet
            t = time.perf_counter()
            ix.search(q)
            first.append(time.perf_counter() - t)
    return {"files": len(sigs), "folders": r.folders, "manifest_load_s": round(manifest_s, 4),
            "scan_cycle": summary(cycles), "first_search_added_p50_ms":
            round(1000 * (statistics.median(first) - statistics.median(off)), 1),
            "first_search": summary(first), "off": summary(off)}


# -- a branch switch --------------------------------------------------------------------------------

def branch_part(work: Path, old: str, new: str) -> dict:
    if not FLASK_GIT.exists():
        raise SystemExit(f"{FLASK_GIT} is missing: bring pallets/flask's history first (fetch github:pallets/flask)")
    repo = work / "flask"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(FLASK_GIT), str(repo)], check=True)
    subprocess.run(["git", "checkout", "-q", old], cwd=repo, check=True)
    s = settings_for(work / "data-flask", keepalive=0, freshness_budget=3600.0)
    out: dict = {"repo": "pallets/flask", "from": old, "to": new}
    with api.Index(s, create=True) as ix:
        t = time.perf_counter()
        first = ix.index(repo, repo_id="flask")
        out["index_old"] = {"files": first.files_indexed, "chunks": first.chunks_written,
                            "embedded": first.chunks_embedded, "seconds": round(time.perf_counter() - t, 1)}
        ix.refresher.enable_watching()
        changed = subprocess.run(["git", "diff", "--name-only", old, new], cwd=repo, capture_output=True,
                                 text=True, check=True).stdout.split()
        t = time.perf_counter()
        subprocess.run(["git", "checkout", "-q", new], cwd=repo, check=True)
        time.sleep(0.5)  # the watcher's change sets arrive
        ix.search("how are blueprints registered")
        st = ix.refresher._repos["flask"]
        out["switch"] = {**st.last_sync, "wall_seconds": round(time.perf_counter() - t, 1),
                         "git_changed_files": len(changed), "mode": st.mode}
        t = time.perf_counter()
        subprocess.run(["git", "checkout", "-q", old], cwd=repo, check=True)
        time.sleep(0.5)
        ix.search("how are blueprints registered")
        out["switch_back"] = {**st.last_sync, "wall_seconds": round(time.perf_counter() - t, 1)}
    subprocess.run(["git", "checkout", "-q", new], cwd=repo, check=True)
    t = time.perf_counter()
    clean = api.index(repo, repo_id="flask", settings=settings_for(work / "data-flask-clean", keepalive=0))
    out["clean_new"] = {"files": clean.files_indexed, "chunks": clean.chunks_written,
                        "embedded": clean.chunks_embedded, "seconds": round(time.perf_counter() - t, 1)}
    return out


# -- results ----------------------------------------------------------------------------------------

def write(results: dict) -> None:
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / "freshness.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    data.update(results)
    path.write_text(json.dumps(data, indent=2) + "\n")
    (RESULTS / "freshness.md").write_text(render(data))


def when(part: dict) -> str:
    m = part.get("meta") or {}
    return f"({m.get('date')}, commit {m.get('commit')}, load {m.get('load')})" if m else ""


def ms(x: float) -> str:
    return f"{1000 * x:.0f} ms"


def render(d: dict) -> str:
    lines = ["# Freshness: what keeping every search current costs", "",
             "Written by `bench/bench_freshness.py`; 2 shared cores (other work ran beside it), so compare "
             "within a row. Budgets (issue 13): one edited file, p50 <= 1.0 s added to search latency; "
             "nothing changed with a watcher, <= 20 ms added per search.", ""]
    if "edit" in d:
        e = d["edit"]
        m = e["meta"]
        lines += ["## One edited file in the stdlib (bundled model)", "",
                  f"{e['corpus']['files']} files, {e['corpus']['chunks']} chunks; {e['trials']} trials per surface "
                  f"({m['date']}, commit {m['commit']}, load {m['load']}). Each trial inserts three comment lines "
                  "(one with a unique marker) at the top of a random file, then searches the marker: the hit must "
                  "be that file at lines 1-..., not stale. Added = search after the edit minus the median search "
                  "with nothing changed, same session.", "",
                  "| surface | unchanged search p50 | after an edit p50 | **added p50** | added p95 | wrong hits |",
                  "|---|---|---|---|---|---|"]
        for key, label in (("keepalive", "CLI through the keep-alive server (`codeseam search --json`, a new process)"),
                           ("mcp", "MCP (`codeseam mcp`, stdio client)"),
                           ("in_process", "in-process session with its watcher (`codeseam serve`'s path)")):
            r = e[key]
            lines.append(f"| {label} | {ms(r['unchanged']['p50'])} | {ms(r['after_edit']['p50'])} | "
                         f"**{ms(r['added']['p50'])}** | {ms(r['added']['p95'])} | {len(r['problems'])} |")
        lines.append("")
    if "nochange" in d:
        lines += ["## Nothing changed, with a watcher", "",
                  "The same queries alternately with `freshness=sync` and `freshness=off` in one watching session "
                  "(40 each); the 50,000-file tree uses the fake embedder (nothing is embedded when nothing "
                  f"changed). {when(d['nochange'])}", "",
                  "| repo | files | mode | search p50, off | search p50, sync | **added p50** |",
                  "|---|---|---|---|---|---|"]
        for name, r in d["nochange"].items():
            if name == "meta":
                continue
            files = r.get("built", {}).get("files") or d.get("edit", {}).get("corpus", {}).get("files", "1790")
            lines.append(f"| {name} | {files} | {', '.join(sorted(set(r['modes'].values())))} | "
                         f"{ms(r['off']['p50'])} | {ms(r['sync']['p50'])} | **{r['added_p50_ms']} ms** |")
        lines.append("")
    if "scan" in d:
        lines += ["## The fallback stat scan (no watcher)", "",
                  "One full cycle (every indexed file and folder stat'ed), and the first search of a new session "
                  "(manifest load + scan + hit check; what a one-shot `RAG_KEEPALIVE=0 codeseam search` pays on "
                  f"top of opening the index) minus the same search with freshness off. {when(d['scan'])}", "",
                  "| repo | files | folders | manifest load | scan cycle p50 | **first search added p50** |",
                  "|---|---|---|---|---|---|"]
        for name, r in d["scan"].items():
            if name == "meta":
                continue
            lines.append(f"| {name} | {r['files']} | {r['folders']} | {ms(r['manifest_load_s'])} | "
                         f"{ms(r['scan_cycle']['p50'])} | **{r['first_search_added_p50_ms']} ms** |")
        lines.append("")
    if "branch" in d:
        b = d["branch"]
        s, back, clean = b["switch"], b["switch_back"], b["clean_new"]
        lines += ["## A branch switch in a real repository", "",
                  f"{b['repo']} (its git history, checked out into a temp repo; no code committed here): "
                  f"`git checkout {b['to']}` from {b['from']} changes {s['git_changed_files']} files; the watcher's "
                  f"change set is one incremental sync (bundled model, real embedding: no cache). {when(b)}", "",
                  "| | files written or removed | chunks embedded | seconds |", "|---|---|---|---|",
                  f"| index of {b['from']} (for reference) | {b['index_old']['files']} | {b['index_old']['embedded']} | "
                  f"{b['index_old']['seconds']} |",
                  f"| **switch {b['from']} -> {b['to']}: one sync** | {s['files']} | **{s['chunks_embedded']}** | "
                  f"**{s['seconds']}** |",
                  f"| clean index of {b['to']} in a new index | {clean['files']} | {clean['embedded']} | "
                  f"{clean['seconds']} |",
                  f"| switch back {b['to']} -> {b['from']} | {back['files']} | {back['chunks_embedded']} | "
                  f"{back['seconds']} |", "",
                  "Chunks re-embedded are those whose indexed text the index does not hold (new or changed code; "
                  "renamed files keep their vectors). Switching back re-embeds what the first switch deleted: the "
                  "index keeps no vectors of content it no longer holds.", ""]
    if d.get("notes"):
        lines += ["## Notes", ""] + [f"- {n}" for n in d["notes"]] + [""]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parts", default="edit,nochange,scan,branch")
    ap.add_argument("--trials", type=int, default=15)
    ap.add_argument("--big", type=int, default=50_000, help="files in the generated tree")
    args = ap.parse_args()
    parts = args.parts.split(",")
    results: dict = {}
    meta = {"date": stamp(), "commit": commit(), "load": load_avg()}
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="codeseam-fresh-") as tmp:
        work = Path(tmp)
        if "build" in parts:  # the corpora and their indexes only (long: the stdlib with the model)
            stdlib_index(work)
            big_index(work, args.big)
            return
        if "edit" in parts:
            results["edit"] = edit_part(work, args.trials)
            print(json.dumps(results["edit"])[:2000], file=sys.stderr)
        if "nochange" in parts or "scan" in parts:
            corpus, data = stdlib_index(work)
            root, big_data, built = big_index(work, args.big)
        if "nochange" in parts:
            results["nochange"] = {"stdlib": nochange(data, 40), f"gen{args.big}": {**nochange(
                big_data, 40, embedding_backend="fake"), "built": built}}
            print(json.dumps(results["nochange"])[:2000], file=sys.stderr)
        if "scan" in parts:
            results["scan"] = {"stdlib": scan_part(corpus, data, 10),
                               f"gen{args.big}": scan_part(root, big_data, 10, embedding_backend="fake")}
            print(json.dumps(results["scan"])[:2000], file=sys.stderr)
        if "branch" in parts:
            results["branch"] = branch_part(work, "3.0.0", "3.1.0")
            print(json.dumps(results["branch"]), file=sys.stderr)
    for part in results.values():
        part["meta"] = meta
    write(results)
    print((RESULTS / "freshness.md").read_text())


if __name__ == "__main__":
    main()
