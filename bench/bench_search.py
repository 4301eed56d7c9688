"""Search latency (issue 3): warm in-process and cold CLI, at 10k and 100k chunks.

Indexes. Real code text: the whole stdlib (every .py file, tests included) copied into one git
repository, twice in full (``a/``, ``b/``) and a third time in part (``c/``, files in a fixed
pseudo-random order until the index holds the target number of chunks); the 10k index is such
a part alone. Embedding 100k chunks with the bundled model would take hours here (3-20
chunks/s), so the indexes are built with a stand-in embedder that has the bundled model's id,
dimension (384) and token counts (the real tokenizer, so the chunks are the ones a real index
holds) but hashed vectors (``StandIn``). The CLI then opens them as bundled indexes. The cost
of the exact (FLAT) dense search does not depend on the vectors' values: it scans every row.
Query vectors come from the real bundled model (ONNX) everywhere below. The indexes are kept
in ``--cache`` and reused while their meta (embedder, chunker, schema) still matches.

Measures, per index size, with the golden queries of ../shared/golden/stdlib-dev.jsonl:

1. warm in-process: ``Index.search`` (hybrid, k=8: query embedding + dense + BM25 + fusion),
   and side by side the parts (query embedding, dense alone, BM25 alone) and the dense search at
   other depths. (``retrieve`` itself sends BM25 to the Lite server while the query is embedded
   since the ranking stack, so the "overlapped" variant this bench measured before is gone.)
2. cold CLI, a fresh ``codeseam search QUERY --json`` process each time: (a) opening the Lite
   file itself (RAG_KEEPALIVE=0), (b) through a running keep-alive server, (c) the first call,
   which starts the keep-alive server; plus the keep-alive server's memory (its process and
   its Milvus Lite process) and what the call through it imports (``-X importtime``).

    python bench/bench_search.py                 # 10k and 100k
    python bench/bench_search.py --sizes 10000 --cold-reps 3
Results: bench/results/search.md and search.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import RESULTS, ROOT, commit, latency, load_avg, stamp

from codeseam import api, embed
from codeseam.embed import FakeEmbedder
from codeseam.settings import load_settings

STDLIB = Path(sysconfig.get_paths()["stdlib"])
GOLDEN = ROOT.parent / "shared" / "golden" / "stdlib-dev.jsonl"
HEAVY = ["numpy", "pymilvus", "milvus_lite", "onnxruntime", "tokenizers", "tree_sitter", "torch", "fastapi"]
K = 8


class StandIn(FakeEmbedder):
    """The bundled model's id, dimension and token counts, with hashed vectors (see above)."""

    def __init__(self, real) -> None:
        super().__init__(dim=real.dim, max_tokens=real.max_tokens)
        self.id, self._real = real.id, real

    def count_tokens(self, text: str) -> int:
        return self._real.count_tokens(text)

    def count_tokens_many(self, texts):
        return self._real.count_tokens_many(texts)


def base_env(data: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAG_")}
    env.update(RAG_DATA_DIR=str(data), RAG_CONFIG=str(data.parent / f"{data.name}.toml"), **extra)
    return env


def settings_for(data: Path):
    data.mkdir(parents=True, exist_ok=True)
    (data.parent / f"{data.name}.toml").write_text("")
    return load_settings({"keepalive": 0}, env=base_env(data))


def stdlib_files() -> list[Path]:
    out = []
    for p in sorted(STDLIB.rglob("*.py")):
        rel = p.relative_to(STDLIB)
        if rel.parts[0] != "site-packages" and "__pycache__" not in rel.parts:
            out.append(rel)
    return out


def spread(rels: list[Path]) -> list[Path]:
    """A fixed pseudo-random order, so a part of the stdlib is not one package."""
    return sorted(rels, key=lambda r: hashlib.sha1(str(r).encode()).hexdigest())


def copy_files(dest: Path, rels: list[Path]) -> None:
    for rel in rels:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(STDLIB / rel, dest / rel)


def pick(counts: dict[str, int], want: int) -> list[Path]:
    chosen, total = [], 0
    for rel in spread([Path(p) for p in counts]):
        if total >= want:
            break
        chosen.append(rel)
        total += counts[str(rel)]
    return chosen


def index_with_standin(settings, root: Path):
    embed.clear_cache()
    real = embed.make_embedder(settings)
    embed._CACHE[embed.embedder_key(settings)] = StandIn(real)
    try:
        t = time.perf_counter()
        report = api.index(root, repo_id="stdlib", settings=settings)
        return report, time.perf_counter() - t
    finally:
        embed.clear_cache()


def chunks_in(settings) -> int:
    try:
        return sum(r.chunks for r in api.status(settings=settings).repos)
    except Exception:  # noqa: BLE001 - missing, or built by another chunker/embedder: rebuild
        return -1


def build(cache: Path, size: int) -> dict:
    """The index of ~``size`` chunks under ``cache`` (reused when it is there and current)."""
    data, corpus = cache / f"data-{size}", cache / f"corpus-{size}"
    settings = settings_for(data)
    have = chunks_in(settings)
    if have >= size:
        return {"rows": have, "build_seconds": None, "reused": True}
    shutil.rmtree(data, ignore_errors=True)
    shutil.rmtree(corpus, ignore_errors=True)
    settings = settings_for(data)
    corpus.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=corpus, check=True)
    counts_file = cache / "chunks-per-file.json"
    seconds = 0.0
    if counts_file.exists():
        counts = json.loads(counts_file.read_text())
    else:  # one full copy tells how many chunks each file makes
        copy_files(corpus / "a", stdlib_files())
        _, seconds = index_with_standin(settings, corpus)
        with api.open_index(settings) as ix:
            entries = ix.store.file_entries("stdlib")
        counts = {p[2:]: e.n_chunks for p, e in entries.items()}
        counts_file.write_text(json.dumps(counts))
        if size < sum(counts.values()):  # this index is smaller than one copy: start again
            shutil.rmtree(data)
            shutil.rmtree(corpus)
            return build(cache, size)
    full = sum(counts.values())
    copies, rest = divmod(size, full)
    for name in "abcdefgh"[:copies]:
        if not (corpus / name).exists():
            copy_files(corpus / name, [Path(p) for p in counts])
    copy_files(corpus / "abcdefgh"[copies], pick(counts, rest))
    report, more = index_with_standin(settings, corpus)
    return {"rows": chunks_in(settings), "build_seconds": round(seconds + more, 1), "reused": False,
            "stdlib_chunks": full, "full_copies": copies}


def golden_queries() -> list[str]:
    return [json.loads(line)["query"] for line in GOLDEN.read_text().splitlines() if line.strip()]


# -- warm, in-process ------------------------------------------------------------------------------

def warm(settings, queries: list[str], rounds: int) -> dict:
    from codeseam.query.analysis import bm25_query
    from codeseam.store import Filters

    embed.clear_cache()  # the real bundled model
    with api.open_index(settings) as ix:
        for q in queries[:10]:
            ix.search(q)
        depth = max(4 * K, 40)
        variants = {
            "hybrid: Index.search": lambda q: ix.search(q),
            "query embedding alone (bundled, ONNX)": lambda q: ix.embedder.embed_query(q),
            "dense search alone (depth 40)": lambda q: ix.store.dense_search(vecs[q], depth, Filters()),
            "dense search alone (depth 16)": lambda q: ix.store.dense_search(vecs[q], 16, Filters()),
            "dense search alone (depth 100)": lambda q: ix.store.dense_search(vecs[q], 100, Filters()),
            "BM25 search alone (depth 40)": lambda q: ix.store.bm25_search(bm25_query(q), depth, Filters()),
        }
        vecs = {q: ix.embedder.embed_query(q) for q in queries}
        times: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(rounds):
            for q in queries:
                for name, fn in variants.items():  # interleaved: the machine's noise hits all alike
                    t = time.perf_counter()
                    fn(q)
                    times[name].append((time.perf_counter() - t) * 1000)
    return {"ms": {name: latency(xs) for name, xs in times.items()}}


# -- cold, a fresh CLI process --------------------------------------------------------------------

def cli_command() -> list[str]:
    exe = Path(sys.executable).with_name("codeseam")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "codeseam.surfaces.cli"]


def run_cli(env: dict, *args: str) -> tuple[float, subprocess.CompletedProcess]:
    t = time.perf_counter()
    res = subprocess.run([*cli_command(), *args], env=env, capture_output=True, text=True, timeout=900)
    wall = time.perf_counter() - t
    if res.returncode != 0:
        raise RuntimeError(f"codeseam {' '.join(args)} failed: {res.stderr[-2000:]}")
    return wall, res


def cold(data: Path, queries: list[str], reps: dict[str, int]) -> dict:
    direct_env = base_env(data, RAG_KEEPALIVE="0")
    keep_env = base_env(data, RAG_KEEPALIVE="600")
    out: dict = {"s": {}}
    hits_direct, hits_server = {}, {}
    times = []
    for i in range(reps["direct"]):
        wall, res = run_cli(direct_env, "search", queries[i % len(queries)], "--json")
        times.append(wall)
        hits_direct[queries[i % len(queries)]] = json.loads(res.stdout)["hits"]
    out["s"]["direct"] = latency(times)
    times = []
    for i in range(reps["spawn"]):
        run_cli(keep_env, "stop")
        wall, _ = run_cli(keep_env, "search", queries[i % len(queries)], "--json")
        times.append(wall)
    out["s"]["first call, starts the server"] = latency(times)
    times = []
    for i in range(reps["server"]):
        q = queries[i % len(queries)]
        wall, res = run_cli(keep_env, "-v", "search", q, "--json")
        assert "going through it" in res.stderr, res.stderr
        times.append(wall)
        hits_server[q] = json.loads(res.stdout)["hits"]
    out["s"]["through the keep-alive server"] = latency(times)
    out["same_hits_direct_and_server"] = all(hits_server[q] == h for q, h in hits_direct.items() if q in hits_server)
    out["server_memory_mb"] = server_memory(data)
    out["imports"] = imports(keep_env, queries[0])
    run_cli(keep_env, "stop")
    return out


def server_memory(data: Path) -> dict:
    from codeseam.faults import child_pids
    from codeseam import owner

    info = owner.read_server_file(settings_for(data))
    if info is None:
        return {}

    def rss(pid: int) -> float:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0

    kids = child_pids(info.pid)
    return {"server": round(rss(info.pid)), "milvus_lite": round(sum(rss(p) for p in kids)),
            "total": round(rss(info.pid) + sum(rss(p) for p in kids))}


def imports(env: dict, query: str) -> dict:
    code = ("import sys, json, time\nt = time.perf_counter()\nfrom codeseam.surfaces.cli import main\n"
            f"main(['search', {query!r}, '--json'])\n"
            f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    res = subprocess.run([sys.executable, "-X", "importtime", "-c", code], env=env, capture_output=True,
                         text=True, timeout=300)
    tops = {}
    for line in res.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            _, cum, name = line.split("|")
            if not cum.strip().isdigit():
                continue
            if not name.startswith("  ") and name.strip() != "package":
                tops[name.strip()] = int(cum.strip()) / 1000
    top = dict(sorted(tops.items(), key=lambda kv: -kv[1])[:6])
    return {"heavy_loaded": json.loads(res.stdout.strip().splitlines()[-1]),
            "import_ms_total": round(sum(tops.values())), "largest_ms": {k: round(v) for k, v in top.items()}}


# -- report -----------------------------------------------------------------------------------------

def render(data: dict) -> str:
    m = data["meta"]
    lines = ["# Search latency: warm in-process and cold CLI", "",
             f"Written by `python bench/bench_search.py {m['args']}` ({m['date']}, commit {m['commit']}; "
             f"load average at start {m['load']}, at end {m['load_end']}; 2 shared cores: compare within a "
             "table, ratios are the reliable part).", "",
             "Indexes: real stdlib code (two full copies and a part, see the script), built with a stand-in "
             "embedder that has the bundled model's id, 384 dimensions and its tokenizer but hashed vectors; "
             "the exact FLAT dense search scans every row whatever the values. Query vectors: the real bundled "
             f"model (ONNX). Queries: the {m['queries']} golden queries of stdlib-dev.jsonl; k={K}.", ""]
    for size, r in data["sizes"].items():
        b = r["build"]
        lines += [f"## {int(size):,} chunks ({b['rows']:,} rows)", "",
                  "Warm, in-process (ms; each query once per round, variants interleaved):", "",
                  "| | p50 | p95 | n |", "|---|---:|---:|---:|"]
        for name, v in r["warm"]["ms"].items():
            bold = "**" if name.startswith("hybrid: ") else ""
            lines.append(f"| {name} | {bold}{v['p50']}{bold} | {v['p95']} | {v['n']} |")
        lines += ["", "Cold CLI, a fresh `codeseam search QUERY --json` process (s, wall):", "",
                  "| | p50 | p95 | n |", "|---|---:|---:|---:|"]
        c = r["cold"]
        for name, v in c["s"].items():
            lines.append(f"| {name} | {v['p50']} | {v['p95']} | {v['n']} |")
        mem, imp = c["server_memory_mb"], c["imports"]
        lines += ["", f"Same hits directly and through the server: {c['same_hits_direct_and_server']}. "
                  f"Keep-alive server memory (RSS): {mem.get('server')} MB its process + {mem.get('milvus_lite')} "
                  f"MB Milvus Lite = {mem.get('total')} MB. A call through it imports none of "
                  f"{', '.join(HEAVY)}: {imp['heavy_loaded'] == []} (loaded: {imp['heavy_loaded']}); its imports "
                  f"take {imp['import_ms_total']} ms (largest: "
                  + ", ".join(f"{k} {v}" for k, v in imp["largest_ms"].items()) + ").", ""]
    lines += ["Goals (issue 3): warm hybrid search including the query embedding <= 30 ms p50 at 100k; "
              "cold CLI `codeseam search` <= 1.5 s."]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100000,10000")
    ap.add_argument("--cache", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "codeseam-bench-search"))
    ap.add_argument("--rounds", type=int, default=3, help="warm: rounds over the query set")
    ap.add_argument("--cold-reps", type=int, default=5, help="cold: direct and first-call runs per size")
    ap.add_argument("--server-reps", type=int, default=20, help="cold: runs through the running server")
    args = ap.parse_args()
    queries = golden_queries()
    data: dict = {"meta": {"date": stamp(), "commit": commit(), "load": load_avg(), "queries": len(queries),
                           "args": " ".join(sys.argv[1:])}, "sizes": {}}
    cache = Path(args.cache)
    for size in sorted((int(s) for s in args.sizes.split(",") if s), reverse=True):
        r = {"build": build(cache, size)}
        print(f"{size}: {r['build']}", file=sys.stderr)
        settings = settings_for(cache / f"data-{size}")
        r["warm"] = warm(settings, queries, args.rounds)
        print(json.dumps(r["warm"]), file=sys.stderr)
        reps = {"direct": args.cold_reps, "spawn": args.cold_reps, "server": args.server_reps}
        r["cold"] = cold(cache / f"data-{size}", queries, reps)
        print(json.dumps(r["cold"]), file=sys.stderr)
        data["sizes"][str(size)] = r
    data["meta"]["load_end"] = load_avg()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "search.json").write_text(json.dumps(data, indent=2) + "\n")
    (RESULTS / "search.md").write_text(render(data))
    print(render(data))


if __name__ == "__main__":
    main()
