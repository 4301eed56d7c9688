"""Store benchmark: Milvus Lite 2.5.1 behind codeseam.store, measured on this machine.

    python bench/bench_store.py [--sizes 10000,100000] [--queries 200] [--cold 3] [--quick]

Measures, with real stdlib code as text (line windows of every stdlib .py file, with the
path header an ``indexed_text`` carries) and 384-d unit vectors (the model's dimension) made
by signed feature hashing of each window's identifiers: not the model's vectors (embedding
100k chunks takes over an hour here), but clustered by shared vocabulary the way text
embeddings are, which matters for the approximate-index recall measured in 2b:

1. insert throughput (rows/s) per ``insert_chunks`` call size, while building the index;
2. warm in-process search latency p50/p95 at each size: dense alone, BM25 alone, both one
   after the other (what the caller fuses), Milvus' own ``hybrid_search`` with RRFRanker;
   plus a repo-filtered dense search and ``repo_records()`` (read on every search);
2b. at the largest size, the dense index choices Lite offers, side by side on the same
   vectors: FLAT with COSINE vs IP, IVF_FLAT (nlist 128 / 1024, nprobe 16 / 64), p50 and
   recall@40 against exact numpy search (tie-aware: a hit counts if its exact score reaches
   the 40th best);
3. sync costs: ``file_entries`` for 1,790 files (a no-op re-sync reads it once),
   ``vectors_by_hash`` for 256 hashes, ``flush``;
4. cold open of each index, fresh subprocesses, variants side by side per round: pymilvus'
   default path vs ``Store.open`` (with the time spent in ``load_collection``); and
   ``Store.open`` in a thread while the main thread imports onnxruntime + tokenizers (what a
   cold query embed does) vs one after the other; plus what loading costs per field set;
5. durability under SIGKILL: a subprocess writes rows and is killed right after
   ``insert_chunks`` returns (with and without ``flush()``), the client alone or together
   with its Milvus Lite server, or in the middle of a long write; then the file is reopened
   and what survived is counted.

Writes bench/results/store.md and bench/results/store.json. Timings on this shared 2-core
machine are noisy: compare the variants measured side by side, and read ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import signal
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import time
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "bench")]

from _common import percentile  # noqa: E402

from codeseam.records import Chunk, content_hash  # noqa: E402
from codeseam.settings import Settings  # noqa: E402
from codeseam.store import ChunkRow, FileEntry, Filters, IndexMeta, Store  # noqa: E402

RESULTS = ROOT / "bench" / "results"
STDLIB = Path(sysconfig.get_paths()["stdlib"])
DIM = 384
META = IndexMeta("bench-random-384", DIM, "bench", 1)
QUERIES = ["retry delay", "parse http header", "json decoder error", "socket timeout", "read file lines",
           "thread lock acquire", "unicode encode error", "temporary directory cleanup", "regex compile flags",
           "date time format", "subprocess return code", "gzip compress level", "hash digest update",
           "argument parser add option", "csv writer row", "base64 decode", "url quote path", "heap push pop",
           "path join exists", "logging handler format", "zip file extract", "decimal rounding context",
           "email message header", "sqlite cursor execute", "queue get timeout"]


# -- data ----------------------------------------------------------------------------------------

def stdlib_windows(n: int, lines: int = 8) -> list[tuple[str, int, str]]:
    """(path, start_line, text) line windows over the stdlib, cycling until there are ``n``."""
    files = sorted(p for p in STDLIB.rglob("*.py") if "site-packages" not in p.parts)
    out: list[tuple[str, int, str]] = []
    shift = 0
    while len(out) < n:
        for f in files:
            rel = f.relative_to(STDLIB).as_posix()
            text = f.read_text(encoding="utf-8", errors="replace").split("\n")
            for start in range(shift, len(text), lines):
                body = "\n".join(text[start:start + lines])
                if body.strip():
                    out.append((rel if shift == 0 else f"copy{shift}/{rel}", start + 1, body))
                    if len(out) >= n:
                        return out
        shift += 3
    return out


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def hashed_vectors(texts: list[str]) -> np.ndarray:
    """Signed feature hashing of identifiers into DIM dims, L2-normalised (see the docstring)."""
    out = np.zeros((len(texts), DIM), dtype=np.float32)
    for i, text in enumerate(texts):
        for w in _WORD.findall(text.lower()):
            h = zlib.crc32(w.encode())
            out[i, h % DIM] += 1.0 if (h >> 16) & 1 else -1.0
    out[:, 0] += 1e-3  # no all-zero rows
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def rows_of(windows, vectors, repo_of) -> list[ChunkRow]:
    rows = []
    for i, (path, start, body) in enumerate(windows):
        c = Chunk(path, "python", f"w{start}", "", "window", start, start + body.count("\n"), body,
                  f"# {path}\n# python window\n{body}")
        repo = repo_of(i)
        rows.append(ChunkRow(content_hash(repo, path, str(start)), repo, "fh", c, vectors[i]))
    return rows


def summary(ms: list[float]) -> dict:
    return {"p50_ms": round(percentile(ms, 0.5), 2), "p95_ms": round(percentile(ms, 0.95), 2),
            "mean_ms": round(statistics.fmean(ms), 2), "n": len(ms)}


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


# -- 1-3: build, warm search, sync costs ------------------------------------------------------------

def build_and_search(size: int, n_queries: int, workdir: Path, index_choice: bool = False) -> dict:
    settings = Settings(data_dir=str(workdir / f"idx{size}"))
    windows = stdlib_windows(size)
    vectors = hashed_vectors([f"{p} {body}" for p, _, body in windows])
    rows = rows_of(windows, vectors, lambda i: "stdlib" if i % 10 else "other")
    inserts: dict[int, list[float]] = {}
    out: dict = {"rows": size}
    with Store.open(settings, expect=META, create=True) as store:
        i, sizes = 0, [100, 500, 2000]
        while i < len(rows):
            batch = rows[i:i + sizes[(i // 2000) % 3]]
            ms = timed(lambda batch=batch: store.insert_chunks(batch))
            inserts.setdefault(len(batch), []).append(len(batch) / (ms / 1000))
            i += len(batch)
        out["flush_ms"] = round(timed(store.flush), 1)
        out["insert_rows_per_s"] = {str(k): round(statistics.median(v)) for k, v in sorted(inserts.items())}
        store.put_repo_record("stdlib", {"root": str(STDLIB)})
        store.put_repo_record("other", {"root": "/other"})
        out["search"] = warm_search(store, n_queries)
        out["sync"] = sync_costs(store, rows)
        if index_choice:
            out["index_choice"] = dense_index_choice(store, vectors)
    return out


def warm_search(store: Store, n: int) -> dict:
    rnd = random.Random(1)
    texts = [rnd.choice(QUERIES) for _ in range(n)]
    qvecs = hashed_vectors(texts)
    k, f, only = 40, Filters(), Filters(repos=("stdlib",))
    variants = {
        "dense": lambda i: store.dense_search(qvecs[i], k, f),
        "bm25": lambda i: store.bm25_search(texts[i], k, f),
        "dense+bm25 (sequential)": lambda i: (store.dense_search(qvecs[i], k, f), store.bm25_search(texts[i], k, f)),
        "hybrid_search (Milvus RRF)": lambda i: store.hybrid_search(qvecs[i], texts[i], k, f),
        "dense, repo filter": lambda i: store.dense_search(qvecs[i], k, only),
        "dense+bm25, repo filter": lambda i: (store.dense_search(qvecs[i], k, only),
                                              store.bm25_search(texts[i], k, only)),
        "repo_records()": lambda i: store.repo_records(),
    }
    for fn in variants.values():  # warm up
        for i in range(5):
            fn(i)
    times: dict[str, list[float]] = {name: [] for name in variants}
    for i in range(n):  # interleaved, so machine noise hits every variant alike
        for name, fn in variants.items():
            times[name].append(timed(lambda fn=fn, i=i: fn(i)))
    return {name: summary(ms) for name, ms in times.items()} | {"k": k}


def sync_costs(store: Store, rows: list[ChunkRow]) -> dict:
    files = sorted(p.relative_to(STDLIB).as_posix() for p in STDLIB.rglob("*.py") if "site-packages" not in p.parts)
    entries = [FileEntry("stdlib", p, 1000 + i, 10**18 + i, content_hash(p), 3, time.time()) for i, p in enumerate(files)]
    put_ms = timed(lambda: store.put_file_entries(entries))
    reads = [timed(lambda: store.file_entries("stdlib")) for _ in range(15)]
    assert len(store.file_entries("stdlib")) == len(files)
    hashes = [r.chunk.hash for r in rows[:256]]
    vbh = [timed(lambda: store.vectors_by_hash(hashes)) for _ in range(10)]
    return {"files": len(files), "put_file_entries_ms": round(put_ms, 1),
            "file_entries": summary(reads), "vectors_by_hash_256": summary(vbh)}


def dense_index_choice(store: Store, vectors: np.ndarray, n_queries: int = 40) -> dict:
    from pymilvus import DataType, MilvusClient

    client, k = store._m.client, 40
    queries = hashed_vectors(QUERIES)[:n_queries]
    kth = [float(np.sort(vectors @ q)[-k]) for q in queries]
    configs = [("FLAT", "COSINE", {}, {}), ("FLAT", "IP", {}, {}),
               ("IVF_FLAT", "IP", {"nlist": 128}, {"nprobe": 16}), ("IVF_FLAT", "IP", {"nlist": 128}, {"nprobe": 64}),
               ("IVF_FLAT", "IP", {"nlist": 1024}, {"nprobe": 64})]
    made = set()
    for index, metric, build, _ in configs:
        name = f"choice_{index}_{metric}_{build.get('nlist', 0)}".lower()
        if name in made:
            continue
        made.add(name)
        schema = MilvusClient.create_schema(auto_id=False)
        schema.add_field("id", DataType.INT64, is_primary=True)
        schema.add_field("v", DataType.FLOAT_VECTOR, dim=DIM)
        ip = MilvusClient.prepare_index_params()
        ip.add_index("v", index_type=index, metric_type=metric, params=build)
        client.create_collection(name, schema=schema, index_params=ip)
        for i in range(0, len(vectors), 500):
            client.insert(name, [{"id": j, "v": vectors[j].tolist()} for j in range(i, min(len(vectors), i + 500))])
        client.flush(name)
    times: dict[str, list[float]] = {}
    recall: dict[str, list[float]] = {}
    for qi, q in enumerate(queries):  # interleaved
        for index, metric, build, search in configs:
            label = f"{index} {metric}" + (f" nlist={build['nlist']} nprobe={search['nprobe']}" if build else "")
            name = f"choice_{index}_{metric}_{build.get('nlist', 0)}".lower()
            t = time.perf_counter()
            hits = client.search(name, data=[q.tolist()], anns_field="v", limit=k,
                                 search_params={"metric_type": metric, "params": search})[0]
            times.setdefault(label, []).append((time.perf_counter() - t) * 1000)
            recall.setdefault(label, []).append(sum(float(vectors[h["id"]] @ q) >= kth[qi] - 1e-4 for h in hits) / k)
    for name in made:
        client.drop_collection(name)
    return {label: summary(ms) | {"recall@40": round(statistics.fmean(recall[label]), 3)}
            for label, ms in times.items()}


# -- 4: cold open -------------------------------------------------------------------------------

COLD_DEFAULT = """
import time, sys, warnings
t0 = time.perf_counter()
warnings.simplefilter("ignore")
import pymilvus
t1 = time.perf_counter()
c = pymilvus.MilvusClient(sys.argv[1] + "/index.db")
c.load_collection("codeseam")
t2 = time.perf_counter()
c.search("codeseam", data=[[384 ** -0.5] * 384], anns_field="dense", limit=8, output_fields=["path"])
t3 = time.perf_counter()
print({"import": t1 - t0, "open": t2 - t1, "first_search": t3 - t2, "total": t3 - t0})
"""

COLD_STORE = """
import time, sys
t0 = time.perf_counter()
from codeseam.settings import Settings
from codeseam.store import Store, Filters
from codeseam.store.client import MilvusCalls
spent = {"load_collection": 0.0}
call = MilvusCalls.call
def timed_call(self, what, method, *args, **kwargs):
    t = time.perf_counter()
    try:
        return call(self, what, method, *args, **kwargs)
    finally:
        if method == "load_collection":
            spent["load_collection"] += time.perf_counter() - t
MilvusCalls.call = timed_call
s = Store.open(Settings(data_dir=sys.argv[1]), expect=None, create=False)
t2 = time.perf_counter()
s.dense_search([384 ** -0.5] * 384, 8, Filters())
t3 = time.perf_counter()
print({"import": None, "open": t2 - t0, "first_search": t3 - t2, "total": t3 - t0,
       "load_collection": spent["load_collection"], "pandas_loaded": "pandas" in sys.modules})
"""

COLD_IMPORTS = """
import time, sys
t0 = time.perf_counter()
if sys.argv[2] == "plain":
    import warnings; warnings.simplefilter("ignore"); import pymilvus
else:
    from codeseam.store.connect import import_pymilvus; import_pymilvus()
t1 = time.perf_counter()
print({"total": t1 - t0, "pandas_loaded": "pandas" in sys.modules})
"""

COLD_OVERLAP = """
import time, sys
t0 = time.perf_counter()
from codeseam.settings import Settings
from codeseam.store import Store, Filters
from concurrent.futures import ThreadPoolExecutor
settings = Settings(data_dir=sys.argv[1])
if sys.argv[2] == "background":
    future = ThreadPoolExecutor(1).submit(Store.open, settings, expect=None, create=False)
    import onnxruntime, tokenizers
    s = future.result()
else:
    import onnxruntime, tokenizers
    s = Store.open(settings, expect=None, create=False)
s.dense_search([384 ** -0.5] * 384, 8, Filters())
print({"total": time.perf_counter() - t0})
"""


def run_cold(code: str, *args: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env,
                         timeout=300, cwd=str(ROOT))
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return eval(out.stdout.strip().splitlines()[-1])


def cold(data_dir: Path, rounds: int) -> dict:
    variants = {
        "import pymilvus (plain)": (COLD_IMPORTS, "plain"),
        "import pymilvus (codeseam, no pandas)": (COLD_IMPORTS, "stubbed"),
        "pymilvus default: import + MilvusClient(file) + load + search": (COLD_DEFAULT,),
        "codeseam: import + Store.open + search": (COLD_STORE,),
        "sequential: import onnxruntime+tokenizers, then Store.open + search": (COLD_OVERLAP, "sequential"),
        "overlapped: Store.open in a thread while importing onnxruntime+tokenizers": (COLD_OVERLAP, "background"),
    }
    got: dict[str, list[dict]] = {k: [] for k in variants}
    for _ in range(rounds):
        for name, (code, *extra) in variants.items():
            got[name].append(run_cold(code, str(data_dir), *extra))
    out = {}
    for name, runs in got.items():
        out[name] = {key: round(statistics.median(r[key] for r in runs), 3)
                     for key in runs[0] if isinstance(runs[0][key], float)}
        if "pandas_loaded" in runs[0]:
            out[name]["pandas_loaded"] = any(r["pandas_loaded"] for r in runs)
    return out


def load_composition(workdir: Path, n: int, rounds: int) -> dict:
    """Load time after a server restart, per field set (which fields make loading slow)."""
    from pymilvus import DataType, Function, FunctionType, MilvusClient

    windows = stdlib_windows(n)
    vecs = hashed_vectors([f"{p} {b}" for p, _, b in windows])
    configs = {"id + dense": ("dense",), "id + dense + text": ("dense", "text"),
               "id + indexed_text + BM25 sparse": ("bm25",), "all of these": ("dense", "text", "bm25")}
    settings = Settings(data_dir=str(workdir / "load"))
    with Store.open(settings, expect=META, create=True) as store:
        client = store._m.client
        for parts in configs.values():
            cname = "load_" + "_".join(parts)
            schema = MilvusClient.create_schema(auto_id=False)
            schema.add_field("id", DataType.INT64, is_primary=True)
            ip = MilvusClient.prepare_index_params()
            if "dense" in parts:
                schema.add_field("dense", DataType.FLOAT_VECTOR, dim=DIM)
                ip.add_index("dense", index_type="FLAT", metric_type="IP")
            if "text" in parts:
                schema.add_field("text", DataType.VARCHAR, max_length=65535)
            if "bm25" in parts:
                schema.add_field("indexed_text", DataType.VARCHAR, max_length=65535, enable_analyzer=True)
                schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
                schema.add_function(Function(name="bm25", function_type=FunctionType.BM25,
                                             input_field_names=["indexed_text"], output_field_names=["sparse"]))
                ip.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
            client.create_collection(cname, schema=schema, index_params=ip)
            for i in range(0, n, 500):
                batch = []
                for j in range(i, min(n, i + 500)):
                    row: dict = {"id": j}
                    if "dense" in parts:
                        row["dense"] = vecs[j].tolist()
                    if "text" in parts:
                        row["text"] = windows[j][2]
                    if "bm25" in parts:
                        row["indexed_text"] = f"# {windows[j][0]}\n{windows[j][2]}"
                    batch.append(row)
                client.insert(cname, batch)
    times: dict[str, list[float]] = {name: [] for name in configs}
    for _ in range(rounds):
        for name, parts in configs.items():
            with Store.open(settings, expect=META, create=False) as store:  # a fresh server
                cname = "load_" + "_".join(parts)
                t = time.perf_counter()
                store._m.client.load_collection(cname)
                times[name].append(time.perf_counter() - t)
    return {"rows": n, "rounds": rounds, "load_s": {k: round(statistics.median(v), 2) for k, v in times.items()}}


# -- 5: durability under SIGKILL ---------------------------------------------------------------------

WRITER = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, sys.argv[4])
    from codeseam.settings import Settings
    from codeseam.store import Store
    from bench_store import META, rows_of, stdlib_windows, hashed_vectors, FileEntry
    n, mode = int(sys.argv[2]), sys.argv[3]
    windows = stdlib_windows(n)
    rows = rows_of(windows, hashed_vectors([w[2] for w in windows]), lambda i: "r")
    store = Store.open(Settings(data_dir=sys.argv[1]), expect=META, create=True)
    print("server", store._m._alive.__self__.proc.pid, flush=True)
    if mode == "midwrite":
        for i in range(0, n, 100):
            store.insert_chunks(rows[i:i + 100])
            print("batch", i + 100, flush=True)
        time.sleep(60)
    store.insert_chunks(rows)
    store.put_file_entries([FileEntry("r", f"f{i}.py", 1, 1, "h", 1, 0.0) for i in range(100)])
    store.put_repo_record("r", {"state": "clean"})
    if mode == "flush":
        store.flush()
    print("done", flush=True)
    time.sleep(60)
""")


def durability(workdir: Path, n: int, repeats: int) -> list[dict]:
    cases = [("client", "none"), ("client", "flush"), ("client+server", "none"), ("client+server", "flush"),
             ("client", "midwrite"), ("client+server", "midwrite")]
    results = []
    for kill, mode in cases:
        for rep in range(repeats):
            data = workdir / f"dur-{kill}-{mode}-{rep}".replace("+", "-")
            proc = subprocess.Popen([sys.executable, "-c", WRITER, str(data), str(n), mode, str(ROOT / "bench")],
                                    stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
                                    start_new_session=True)
            server_pid = int(proc.stdout.readline().split()[1])
            acked = 0
            for line in proc.stdout:
                if line.startswith("done"):
                    acked = n
                    break
                if line.startswith("batch"):
                    acked = int(line.split()[1])
                    if acked >= n // 2:
                        break
            os.kill(proc.pid, signal.SIGKILL)
            if kill == "client+server":
                os.kill(server_pid, signal.SIGKILL)
            proc.wait()
            results.append(survey(data, kill, mode, acked, n))
    return results


def survey(data: Path, kill: str, mode: str, acked: int, n: int) -> dict:
    out = {"killed": kill, "mode": mode, "rows_acknowledged": acked}
    try:
        t = time.perf_counter()
        with Store.open(Settings(data_dir=str(data)), expect=META, create=False) as s:
            out["reopen_s"] = round(time.perf_counter() - t, 2)
            out["chunk_rows"] = sum(s.chunk_paths("r").values())
            out["file_rows"] = len(s.file_entries("r"))
            out["repo_record"] = bool(s.repo_records())
            out["bm25_hits"] = len(s.bm25_search("def return self", 10, Filters()))
    except Exception as exc:  # noqa: BLE001 - recorded as the finding
        out["error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
    return out


# -- report ---------------------------------------------------------------------------------------

def write_report(res: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "store.json").write_text(json.dumps(res, indent=2))
    L = [f"# Store benchmark (Milvus Lite {res['env']['milvus_lite']}, pymilvus {res['env']['pymilvus']})", "",
         f"Run {res['env']['date']} on {res['env']['machine']}; `python bench/bench_store.py "
         f"{res['env']['args']}`. Text: stdlib line windows (8 lines) with a path header; vectors: "
         f"{DIM}-d feature hashing of identifiers, unit length (see the script's docstring). The store's dense "
         "index on Lite: FLAT, inner product. Shared 2-core machine: compare rows measured side by side.", ""]
    for size in res["sizes"]:
        b = res["build"][str(size)]
        L += [f"## {size:,} rows", "", "Insert throughput (rows/s, median per `insert_chunks` call size): "
              + ", ".join(f"{k} rows/call: {v:,}" for k, v in b["insert_rows_per_s"].items())
              + f"; flush after the build: {b['flush_ms']} ms.", "",
              f"Warm search, k={b['search']['k']}, {b['search']['dense']['n']} queries, interleaved:", "",
              "| variant | p50 ms | p95 ms |", "|---|---:|---:|"]
        L += [f"| {name} | {v['p50_ms']} | {v['p95_ms']} |" for name, v in b["search"].items() if name != "k"]
        if "index_choice" in b:
            L += ["", "Dense index choices on Lite, same vectors, k=40, queries interleaved:", "",
                  "| index | p50 ms | p95 ms | recall@40 |", "|---|---:|---:|---:|"]
            L += [f"| {name} | {v['p50_ms']} | {v['p95_ms']} | {v['recall@40']} |" for name, v in b["index_choice"].items()]
        s = b["sync"]
        L += ["", f"Sync costs: `file_entries` for {s['files']:,} files p50 {s['file_entries']['p50_ms']} ms "
              f"(p95 {s['file_entries']['p95_ms']}); writing them {s['put_file_entries_ms']} ms; "
              f"`vectors_by_hash` for 256 hashes p50 {s['vectors_by_hash_256']['p50_ms']} ms.", ""]
    for size, variants in res["cold"].items():
        L += [f"## Cold open of the {int(size):,}-row index (fresh processes, median of {res['cold_rounds']})", "",
              "| variant | total s | open s | of which load_collection s | first search s |",
              "|---|---:|---:|---:|---:|"]
        for name, v in variants.items():
            L.append(f"| {name} | {v.get('total', '')} | {v.get('open', '')} | {v.get('load_collection', '')} | "
                     f"{v.get('first_search', '')} |")
        L.append("")
    lc = res.get("load_composition")
    if lc:
        L += ["", f"What loading costs: collections of {lc['rows']:,} rows with some of the chunk collection's "
              "fields, loaded by a freshly started Lite server (median of "
              f"{lc['rounds']}):", "", "| fields | load s |", "|---|---:|"]
        L += [f"| {name} | {v} |" for name, v in lc["load_s"].items()]
    L += ["", "## Durability under SIGKILL", "",
          f"A subprocess writes {res['durability_rows']:,} chunk rows (+100 manifest rows and a repo record) and "
          "is SIGKILLed right after the calls return, or half-way through 100-row batches (`midwrite`); "
          "`client+server` also SIGKILLs its Milvus Lite server process at the same moment. Then the file is reopened.", "",
          "| killed | mode | rows acknowledged | chunk rows after | manifest rows | repo record | BM25 hits | reopen s | error |",
          "|---|---|---:|---:|---:|---|---:|---:|---|"]
    for d in res["durability"]:
        L.append(f"| {d['killed']} | {d['mode']} | {d['rows_acknowledged']} | {d.get('chunk_rows', '')} | "
                 f"{d.get('file_rows', '')} | {d.get('repo_record', '')} | {d.get('bm25_hits', '')} | "
                 f"{d.get('reopen_s', '')} | {d.get('error', '')} |")
    L += ["", res.get("notes", "")]
    (out / "store.md").write_text("\n".join(L) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--cold", type=int, default=3)
    ap.add_argument("--durability-rows", type=int, default=2000)
    ap.add_argument("--durability-repeats", type=int, default=2)
    ap.add_argument("--out", default=str(RESULTS))
    ap.add_argument("--quick", action="store_true", help="tiny sizes, to check the script (writes to a temp dir)")
    args = ap.parse_args()
    if args.quick:
        args.sizes, args.queries, args.cold, args.durability_rows, args.durability_repeats = "2000", 20, 1, 500, 1
        args.out = tempfile.mkdtemp(prefix="bench-store-quick-")
    sizes = [int(s) for s in args.sizes.split(",")]
    from importlib.metadata import version

    res: dict = {"env": {"milvus_lite": version("milvus-lite"), "pymilvus": version("pymilvus"),
                         "python": platform.python_version(), "machine": f"{os.cpu_count()} CPUs, {platform.machine()}",
                         "date": time.strftime("%Y-%m-%d %H:%M"), "args": " ".join(sys.argv[1:])},
                 "sizes": sizes, "build": {}, "cold_rounds": args.cold, "durability_rows": args.durability_rows}
    with tempfile.TemporaryDirectory(prefix="bench-store-") as tmp:
        work = Path(tmp)
        for size in sizes:
            print(f"building and searching {size} rows ...", flush=True)
            res["build"][str(size)] = build_and_search(size, args.queries, work, index_choice=size == max(sizes))
        print("cold opens ...", flush=True)
        res["cold"] = {str(size): cold(work / f"idx{size}", args.cold) for size in sizes}
        print("load composition ...", flush=True)
        res["load_composition"] = load_composition(work, 2000 if args.quick else 20000, 1 if args.quick else 3)
        print("durability ...", flush=True)
        res["durability"] = durability(work, args.durability_rows, args.durability_repeats)
    out = Path(args.out)
    write_report(res, out)
    print((out / "store.md").read_text())


if __name__ == "__main__":
    main()
