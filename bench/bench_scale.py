"""Cost as the work grows (issue 16): one table at 10k, 100k and 300k chunks, and the first
index of a 100k-chunk corpus with the real model (time to the first keyword and dense hit).

    python bench/bench_scale.py --sizes 10000,100000,300000      # the growth table
    python bench/bench_scale.py --first-index 100000             # real model, stops at the first dense hit

Corpora (synthetic: real code, repeated): copies of the CPython stdlib's .py files (tests
included) in one git repository, ``a/``, ``b/``, ... in full and a last copy in part (files in
a fixed pseudo-random order until the corpus makes the target number of chunks). Embedding
300k chunks with the real model would take many hours on these 2 shared cores, so the growth
table's indexes are built with a stand-in embedder (``bench_search.StandIn``): the bundled
model's id, dimension and token counts (so the chunks are the ones a real index holds) with
hashed unit vectors (store-side costs do not depend on the values: the dense search is an
exact scan). Query vectors come from the real bundled model. Measured per size:

- first index: wall seconds (fake vectors: store, chunking and scrubbing costs only), peak
  RSS of the indexing process (``ru_maxrss``) and of its Milvus Lite server (``VmHWM``);
- index size on disk (the Lite file);
- no-op re-sync: in the same process (warm), and a fresh ``codeseam index`` process that
  opens the index itself (``RAG_KEEPALIVE=0``);
- warm hybrid search p50 (in-process ``Index.search``, query embedding included);
- cold search p50: a fresh ``codeseam search --json`` process with no owner running
  (``RAG_KEEPALIVE=0``: the first search after the owner has exited);
- RSS of a keep-alive owner and of its Milvus Lite server after one search (loaded, idle).

``--first-index N`` indexes the N-chunk corpus for the first time with the real bundled
model (``RAG_EMBEDDING_PRECISION`` as set, default of the settings), searching after every
written batch: the time to the first BM25 hit on a file of the first batch, to every file
being keyword-searchable (the last written batch), and to the first hit that the dense signal
answered (the first backfill page); the run is then stopped (a partial index is left).

Results: bench/results/scale.md and scale.json (merged per size, so sizes can be run apart).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
RESULTS = ROOT / "bench" / "results"

from _common import commit, latency, load_avg, stamp  # noqa: E402
from bench_search import (STDLIB, StandIn, base_env, cli_command, golden_queries,  # noqa: E402
                          settings_for, stdlib_files)

from codeseam import api, embed  # noqa: E402

import bench_search  # noqa: E402

# ../shared is beside the main checkout; a worktree under wt/ has it one level further up
bench_search.GOLDEN = next((p / "shared" / "golden" / "stdlib-dev.jsonl" for p in (ROOT.parent, ROOT.parent.parent)
                            if (p / "shared" / "golden" / "stdlib-dev.jsonl").exists()), bench_search.GOLDEN)


def chunk_counts(cache: Path, settings) -> dict[str, int]:
    """Chunks per stdlib file with the bundled model's budget (cached)."""
    path = cache / "chunks-per-file.json"
    if path.exists():
        return json.loads(path.read_text())
    from codeseam.chunk import chunk_file
    from codeseam.discover.reading import read_text
    from codeseam.errors import FileSkipped
    from codeseam.indexing.pipeline import make_budget

    budget = make_budget(settings, embed.make_embedder(settings))
    counts = {}
    for rel in stdlib_files():
        try:
            text, _ = read_text(STDLIB / rel)
        except FileSkipped:
            continue
        counts[str(rel)] = len(chunk_file(str(rel), text, budget=budget))
    path.write_text(json.dumps(counts))
    return counts


def make_corpus(dest: Path, counts: dict[str, int], size: int) -> int:
    """Copies of the stdlib until ``size`` chunks; returns the chunks expected."""
    order = sorted(counts, key=lambda r: hashlib.sha1(r.encode()).hexdigest())
    full = sum(counts.values())
    total, copy = 0, 0
    dest.mkdir(parents=True)
    while total < size:
        for rel in order:
            if total >= size:
                break
            target = dest / "abcdefghij"[copy] / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(STDLIB / rel, target)
            total += counts[rel]
        copy += 1
    subprocess.run(["git", "init", "-q"], cwd=dest, check=True)
    return total if total < full * 10 else total


class Peak:
    """Peak RSS of the Milvus Lite server(s) of this process, sampled every 0.5 s."""

    def __init__(self) -> None:
        import threading

        self.mb = 0.0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self) -> None:
        from codeseam.faults import child_pids

        while not self._stop.wait(0.5):
            for pid in child_pids(os.getpid()):
                self.mb = max(self.mb, _status_mb(pid, "VmHWM"))

    def stop(self) -> float:
        self._stop.set()
        self._t.join()
        return round(self.mb)


def _status_mb(pid: int, key: str) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def with_standin(settings):
    embed.clear_cache()
    real = embed.make_embedder(settings)
    embed._CACHE[embed.embedder_key(settings)] = StandIn(real)


CPU_LOG: list[float] = []  # CPU seconds of each cli() call's process tree (CLI + its Milvus Lite)


def cli(env: dict, *args: str) -> float:
    """Wall seconds of one CLI process; its CPU seconds (with its Lite server) go to CPU_LOG."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    res = subprocess.run([*cli_command(), *args], env=env, capture_output=True, text=True, timeout=3600)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU_LOG.append(round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 2))
    if res.returncode != 0:
        raise RuntimeError(f"codeseam {' '.join(args)} failed: {res.stderr[-2000:]}")
    return wall


def fresh_corpus(cache: Path, size: int, prefix: str):
    """An empty data dir and a new ``size``-chunk corpus under ``cache`` (``<prefix>data-N``,
    ``<prefix>corpus-N``), and the settings for that data dir."""
    data, corpus = cache / f"{prefix}data-{size}", cache / f"{prefix}corpus-{size}"
    for p in (data, corpus):
        shutil.rmtree(p, ignore_errors=True)
    settings = settings_for(data)
    make_corpus(corpus, chunk_counts(cache, settings), size)
    return data, corpus, settings


def measure_size(cache: Path, size: int, queries: list[str], cold_reps: int) -> dict:
    data, corpus, settings = fresh_corpus(cache, size, "")
    out: dict = {}
    with_standin(settings)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    peak = Peak()
    marks: dict[str, float] = {}
    with api.open_index(settings, create=True) as ix:
        t = time.perf_counter()

        def progress(event: str, **f) -> None:  # the keyword phase's milestones
            now = round(time.perf_counter() - t, 1)
            if event == "written":
                marks.setdefault("first_batch_written_s", now)
                marks["last_batch_written_s"] = now
            elif event == "embedded" and f.get("count"):
                marks.setdefault("first_page_embedded_s", now)

        report = ix.index(corpus, repo_id="corpus", progress=progress)
        out["index_s"] = round(time.perf_counter() - t, 1)
        out.update(marks)
        # a search right after the first batch is written is answered by BM25 with partial=true
        # (tests/test_partial.py); here, the time it takes to get there
        out["lite_peak_rss_mb"] = peak.stop()
        out["indexer_peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        out["indexer_rss_before_mb"] = round(rss0)
        out["chunks"] = report.chunks_written
        out["files"] = report.files_indexed
        t = time.perf_counter()
        again = ix.index(corpus, repo_id="corpus")
        out["noop_resync_warm_s"] = round(time.perf_counter() - t, 2)
        assert again.chunks_written == 0 and again.files_indexed == 0, again.summary()
    embed.clear_cache()  # the real bundled model for queries
    with api.open_index(settings) as ix:
        for q in queries[:5]:
            ix.search(q)
        times = []
        for q in queries:
            t = time.perf_counter()
            ix.search(q)
            times.append((time.perf_counter() - t) * 1000)
        out["warm_search_ms"] = latency(times)
        out["dense_filter_ms"] = dense_filter_cost(ix, queries)
    db = Path(settings.resolved_milvus_uri)
    out["disk_mb"] = round(sum(p.stat().st_size for p in db.parent.glob(db.name + "*") if p.is_file()) / 1e6, 1)
    direct = base_env(data, RAG_KEEPALIVE="0")
    out["noop_resync_cold_s"] = round(cli(direct, "index", str(corpus), "--repo-id", "corpus"), 2)
    out["noop_resync_cold_cpu_s"] = CPU_LOG[-1]
    out["cold_search_s"] = latency([cli(direct, "search", queries[i % len(queries)], "--json") for i in range(cold_reps)])
    out["cold_search_cpu_s"] = latency(CPU_LOG[-cold_reps:])
    keep = base_env(data, RAG_KEEPALIVE="600")
    cli(keep, "search", queries[0], "--json")
    from bench_search import server_memory

    out["owner_loaded_rss_mb"] = server_memory(data)
    cli(keep, "stop")
    out["corpus_mb"] = round(sum(p.stat().st_size for p in corpus.rglob("*.py")) / 1e6, 1)
    return out


def dense_filter_cost(ix, queries: list[str]) -> dict:
    """The dense search (depth 40) with and without the ``embedded == true`` filter that keeps
    keyword-only rows out of it, interleaved."""
    from codeseam.store import Filters
    from codeseam.store import schema as sch

    vecs = [ix.embedder.embed_query(q).tolist() for q in queries]
    with_f, without = [], []
    for v in vecs:
        t = time.perf_counter()
        ix.store.dense_search(v, 40, Filters())
        with_f.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        ix.store._m.call("search", "search", ix.store.names.chunks, data=[v], anns_field="dense", limit=48,
                         output_fields=list(sch.CHUNK_FIELDS), search_params={"metric_type": sch.DENSE_METRIC})
        without.append((time.perf_counter() - t) * 1000)
    return {"with_filter": latency(with_f), "without_filter": latency(without)}


def first_index(cache: Path, size: int) -> dict:
    """The real model's first index of a ``size``-chunk corpus, stopped at the first dense hit."""
    data, corpus, settings = fresh_corpus(cache, size, "first-")
    embed.clear_cache()
    out: dict = {"precision": settings.embedding_precision}

    class Stop(Exception):
        pass

    with api.open_index(settings, create=True) as ix:
        out["embedder"] = ix.embedder.id
        ix.embedder.prepare()
        t0 = time.perf_counter()
        first_file: list[str] = []

        def progress(event: str, **f) -> None:
            now = time.perf_counter() - t0
            if event == "file" and not first_file:
                first_file.append(f["path"])
            if event == "written":
                if "first_keyword_hit_s" not in out:
                    name = Path(first_file[0]).stem
                    res = ix.search(name, mode="bm25", k=3)
                    if res.hits and res.partial:
                        out["first_keyword_hit_s"] = round(time.perf_counter() - t0, 1)
                        out["first_keyword_query"] = name
                out["all_keyword_searchable_s"] = round(now, 1)
            elif event == "embedded":
                res = ix.search("where is the retry delay computed?", k=5)
                if "dense" in res.signals:
                    out["first_dense_hit_s"] = round(time.perf_counter() - t0, 1)
                    out["progress_at_first_dense"] = {"chunks": res.progress.chunks,
                                                      "embedded": res.progress.chunks_embedded}
                    raise Stop

        try:
            ix.index(corpus, repo_id="corpus", progress=progress)
        except Stop:
            pass
    out["chunks"] = out.get("progress_at_first_dense", {}).get("chunks")
    return out


def render(r: dict) -> str:
    sizes = sorted(r.get("sizes", {}), key=int)
    out = ["# Cost as the work grows: 10k, 100k, 300k chunks", "",
           "Written by `python bench/bench_scale.py` (see its docstring for how); each size records when, at which "
           "commit and under which load it ran. Corpora: copies of the stdlib's .py files (real code, synthetic "
           "corpus). Indexes built with **hashed unit vectors** (a stand-in with the bundled model's id, dimension and "
           "tokenizer): index times are store, chunking and scrubbing costs only, **not** embedding; query vectors "
           "come from the real model. 2 shared cores: compare within the table.", ""]
    if sizes:
        rows = [("chunks", lambda s: s["chunks"]), ("files", lambda s: s["files"]),
                ("corpus (MB of source)", lambda s: s["corpus_mb"]),
                ("first index, fake vectors (s)", lambda s: s["index_s"]),
                ("  first batch written: first files BM25-searchable (s)", lambda s: s["first_batch_written_s"]),
                ("  last batch written: every file BM25-searchable (s)", lambda s: s["last_batch_written_s"]),
                ("indexing process peak RSS (MB)", lambda s: s["indexer_peak_rss_mb"]),
                ("Milvus Lite peak RSS while indexing (MB)", lambda s: s["lite_peak_rss_mb"]),
                ("index on disk (MB)", lambda s: s["disk_mb"]),
                ("no-op re-sync, warm session (s)", lambda s: s["noop_resync_warm_s"]),
                ("no-op re-sync, fresh process opening the index (s)", lambda s: s["noop_resync_cold_s"]),
                ("  its CPU seconds (CLI process + its Milvus Lite)", lambda s: s["noop_resync_cold_cpu_s"]),
                ("warm hybrid search p50 (ms)", lambda s: s["warm_search_ms"]["p50"]),
                ("dense search p50, with / without the embedded filter (ms)",
                 lambda s: f"{s['dense_filter_ms']['with_filter']['p50']} / {s['dense_filter_ms']['without_filter']['p50']}"),
                ("cold search p50, first after the owner exited (s)", lambda s: s["cold_search_s"]["p50"]),
                ("  its CPU seconds (CLI process + its Milvus Lite), p50", lambda s: s["cold_search_cpu_s"]["p50"]),
                ("loaded keep-alive owner RSS (MB)", lambda s: s["owner_loaded_rss_mb"].get("server")),
                ("its Milvus Lite RSS (MB)", lambda s: s["owner_loaded_rss_mb"].get("milvus_lite"))]
        head = "| | " + " | ".join(f"{int(s) // 1000}k" for s in sizes) + " | growth per step |"
        out += [head, "|---|" + "---:|" * len(sizes) + "---|"]
        for label, get in rows:
            vals = []
            for s in sizes:
                try:
                    vals.append(get(r["sizes"][s]))
                except (KeyError, TypeError):
                    vals.append(None)
            growth = []
            for a, b in zip(vals, vals[1:], strict=False):
                growth.append(f"x{b / a:.2f}" if isinstance(a, (int, float)) and isinstance(b, (int, float)) and a else "")
            out.append(f"| {label} | " + " | ".join("" if v is None else str(v) for v in vals) + " | "
                       + ", ".join(g for g in growth if g) + " |")
        out += ["", "Runs: " + "; ".join(f"{int(s) // 1000}k at {r['sizes'][s]['meta']['date']} (commit "
                                          f"{r['sizes'][s]['meta']['commit']}, load {r['sizes'][s]['meta']['load']})"
                                          for s in sizes)]
    if r.get("notes"):  # written by hand into scale.json after the runs, kept across re-renders
        out += ["", "Notes (written by hand after the runs): " + r["notes"]]
    f = r.get("first_index")
    if f:
        out += ["", f"## First index of a {f['size'] // 1000}k-chunk corpus with the real model", "",
                f"Embedder `{f['embedder']}` ({f['meta']['date']}, commit {f['meta']['commit']}, load {f['meta']['load']}); "
                "searched after every written batch; stopped at the first dense hit.", "",
                "| | seconds from the start of the run |", "|---|---:|",
                f"| first BM25 hit (query `{f.get('first_keyword_query')}`, a file of the first batch) | {f.get('first_keyword_hit_s')} |",
                f"| every file keyword-searchable (last batch written) | {f.get('all_keyword_searchable_s')} |",
                f"| first hit answered by the dense signal (first backfill page) | {f.get('first_dense_hit_s')} |",
                "", f"At the first dense hit: {f.get('progress_at_first_dense')}."]
    return "\n".join(out) + "\n"


def meta() -> dict:
    return {"date": stamp(), "commit": commit(), "load": load_avg()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="")
    ap.add_argument("--first-index", type=int, default=0)
    ap.add_argument("--cold-reps", type=int, default=3)
    ap.add_argument("--cache", default=str(ROOT / "bench" / ".cache" / "scale"))
    ap.add_argument("--render", action="store_true", help="only rewrite scale.md from scale.json")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "scale.json"
    result = json.loads(path.read_text()) if path.exists() else {"sizes": {}}
    if args.render:
        (RESULTS / "scale.md").write_text(render(result))
        return
    queries = golden_queries()[:40]
    for size in [int(s) for s in args.sizes.split(",") if s]:
        m = meta()
        r = measure_size(cache, size, queries, args.cold_reps)
        r["meta"] = {**m, "load_end": load_avg()}
        result = json.loads(path.read_text()) if path.exists() else {"sizes": {}}  # another size may have landed
        result["sizes"][str(size)] = r
        path.write_text(json.dumps(result, indent=1))
        (RESULTS / "scale.md").write_text(render(result))
        print(json.dumps(r), flush=True)
    if args.first_index:
        m = meta()
        r = first_index(cache, args.first_index)
        result["first_index"] = {**r, "size": args.first_index, "meta": m}
        path.write_text(json.dumps(result, indent=1))
        (RESULTS / "scale.md").write_text(render(result))
        print(json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
