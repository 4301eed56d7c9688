"""What Milvus Lite 2.5.1 does when a collection is loaded, and what its cost depends on.

Milvus Lite keeps each collection as a SQLite table of protobuf rows (``id, milvus_id, data``)
and, on ``load_collection``, reads every row back and inserts it into one in-memory growing
segment, one row at a time (``MilvusLocal::DoLoadCollection`` in its source). This probe
builds Lite files of N rows with real chunk texts (stdlib chunks, hashed unit vectors) in
several shapes and times a cold load of each in a fresh Lite server, so the cost can be
split between the row's parts:

- ``full``: the codeseam chunk schema (text, indexed_text + BM25 sparse, dense 384-d, ...);
- ``no-text``: the same without ``text`` (what a search returns would have to come from
  elsewhere);
- ``no-dense``: without the dense field (a dummy 2-d vector instead);
- ``dense-only``: id + dense only;
- ``bm25-only``: id + indexed_text with its BM25 sparse vector (+ a 2-d dummy vector);
- ``scalars-only``: the scalar and text fields, no BM25, a dummy vector;
- ``lean``: the display fields packed into one JSON VARCHAR (``payload``).

    python bench/probe_lite_load.py --rows 20000 --shapes full,no-text
    python bench/probe_lite_load.py --rows 100000 --perf    # perf profile of the full load

Results: printed as JSON (and bench/results/lite-load.json with --write).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
STDLIB = Path(sysconfig.get_paths()["stdlib"])
SPARSE_INDEX = json.loads(os.environ.get("PROBE_SPARSE_INDEX", "null")) or {
    "index_type": "SPARSE_INVERTED_INDEX", "metric_type": "BM25"}
SHAPES = ("full", "no-text", "no-dense", "dense-only", "bm25-only", "scalars-only", "lean")


def real_chunks(n: int) -> list:
    from codeseam.chunk import Budget, chunk_file

    out = []
    for p in sorted(STDLIB.glob("*.py")):
        try:
            text = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        out.extend(chunk_file(p.name, text, budget=Budget(max_tokens=254, count_tokens=lambda t: len(t) // 4)))
        if len(out) >= n:
            break
    return out[:n]


def schema_for(shape: str, dim: int):
    from pymilvus import DataType, Function, FunctionType, MilvusClient

    s = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
    s.add_field("id", DataType.VARCHAR, is_primary=True, max_length=512)
    ip = MilvusClient.prepare_index_params()
    if shape == "bm25-only":
        s.add_field("indexed_text", DataType.VARCHAR, max_length=65535, enable_analyzer=True,
                    analyzer_params={"type": "standard"})
        s.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        s.add_function(Function(name="bm25", function_type=FunctionType.BM25,
                                input_field_names=["indexed_text"], output_field_names=["sparse"]))
        ip.add_index("sparse", **SPARSE_INDEX)
    if shape == "scalars-only":
        for name in ("repo_id", "path", "language", "symbol", "parent", "kind", "file_hash", "chunk_hash"):
            s.add_field(name, DataType.VARCHAR, max_length=4096)
        s.add_field("start_line", DataType.INT64)
        s.add_field("end_line", DataType.INT64)
        s.add_field("text", DataType.VARCHAR, max_length=65535)
        s.add_field("indexed_text", DataType.VARCHAR, max_length=65535)
    if shape in ("full", "no-text", "no-dense"):
        for name in ("repo_id", "path", "language", "symbol", "parent", "kind", "file_hash", "chunk_hash"):
            s.add_field(name, DataType.VARCHAR, max_length=4096)
        s.add_field("start_line", DataType.INT64)
        s.add_field("end_line", DataType.INT64)
        if shape not in ("no-text", "bm25-only"):
            s.add_field("text", DataType.VARCHAR, max_length=65535)
        s.add_field("indexed_text", DataType.VARCHAR, max_length=65535, enable_analyzer=True,
                    analyzer_params={"type": "standard"})
        s.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        s.add_function(Function(name="bm25", function_type=FunctionType.BM25,
                                input_field_names=["indexed_text"], output_field_names=["sparse"]))
        ip.add_index("sparse", **SPARSE_INDEX)
    if shape == "lean":
        for name in ("repo_id", "path", "language", "chunk_hash", "file_hash"):
            s.add_field(name, DataType.VARCHAR, max_length=4096)
        s.add_field("payload", DataType.VARCHAR, max_length=65535)
        s.add_field("indexed_text", DataType.VARCHAR, max_length=65535, enable_analyzer=True,
                    analyzer_params={"type": "standard"})
        s.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        s.add_function(Function(name="bm25", function_type=FunctionType.BM25,
                                input_field_names=["indexed_text"], output_field_names=["sparse"]))
        ip.add_index("sparse", **SPARSE_INDEX)
    vdim = 2 if shape in ("no-dense", "bm25-only", "scalars-only", "lean") else dim
    s.add_field("dense", DataType.FLOAT_VECTOR, dim=vdim)
    ip.add_index("dense", index_type="FLAT", metric_type="IP")
    return s, ip, vdim


def row_for(shape: str, i: int, c, vec) -> dict:
    row = {"id": f"r{i:08d}", "dense": vec}
    if shape == "dense-only":
        return row
    if shape == "lean":
        return {**row, "repo_id": "repo", "path": f"copy{i // 5000}/{c.path}", "language": c.language,
                "chunk_hash": c.hash, "file_hash": "f" * 16, "indexed_text": c.indexed_text,
                "payload": json.dumps([c.text, c.symbol, c.parent, c.kind, c.start_line, c.end_line])}
    if shape == "bm25-only":
        return {**row, "indexed_text": c.indexed_text}
    row.update(repo_id="repo", path=f"copy{i // 5000}/{c.path}", language=c.language, symbol=c.symbol,
               parent=c.parent, kind=c.kind, file_hash="f" * 16, chunk_hash=c.hash,
               start_line=c.start_line, end_line=c.end_line, indexed_text=c.indexed_text)
    if shape not in ("no-text", "bm25-only"):
        row["text"] = c.text
    return row


def build(db: Path, shape: str, rows: int, chunks: list, dim: int = 384) -> None:
    from pymilvus import MilvusClient

    client = MilvusClient(str(db))
    schema, index, vdim = schema_for(shape, dim)
    client.create_collection("c", schema=schema, index_params=index)
    rng = np.random.default_rng(0)
    batch = []
    for i in range(rows):
        v = rng.standard_normal(vdim).astype(np.float32)
        batch.append(row_for(shape, i, chunks[i % len(chunks)], (v / np.linalg.norm(v)).tolist()))
        if len(batch) == 500:
            client.insert("c", batch)
            batch = []
    if batch:
        client.insert("c", batch)
    client.close()


def timed_load(db: Path, perf_out: Path | None = None) -> dict:
    """Start a fresh Lite server for ``db`` (codeseam's own spawn) and time load_collection."""
    from codeseam.store.lite import start_lite
    from pymilvus import MilvusClient

    server = start_lite(db)
    server.wait_ready()
    client = MilvusClient(uri=server.uri, timeout=600)
    perf = None
    if perf_out is not None:
        perf = subprocess.Popen(["perf", "record", "-F", "199", "-g", "-p", str(server.proc.pid), "-o",
                                 str(perf_out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
    t, cpu0 = time.perf_counter(), _cpu_s(server.proc.pid)
    client.load_collection("c")
    seconds = time.perf_counter() - t
    cpu = _cpu_s(server.proc.pid) - cpu0
    rss = _rss_mb(server.proc.pid)
    if perf is not None:
        perf.send_signal(2)
        perf.wait()
    client.close()
    server.stop()
    return {"load_s": round(seconds, 2), "load_cpu_s": round(cpu, 2), "lite_rss_mb": rss}


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process (less noisy than wall time on a shared machine)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_mb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024
    return -1


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "codeseam-probe-lite"))
    ap.add_argument("--perf", action="store_true", help="perf-record the load of the first shape")
    ap.add_argument("--keep", action="store_true", help="reuse files already built in --dir")
    ap.add_argument("--write", action="store_true", help="write bench/results/lite-load.{json,md}")
    args = ap.parse_args()
    work = Path(args.dir)
    work.mkdir(parents=True, exist_ok=True)
    chunks = real_chunks(min(args.rows, 20000))
    out = {"rows": args.rows, "distinct_chunks": len(chunks), "date": time.strftime("%Y-%m-%d %H:%M"),
           "load_average": [round(x, 2) for x in os.getloadavg()],
           "mean_text_bytes": int(np.mean([len(c.text.encode()) for c in chunks])),
           "mean_indexed_text_bytes": int(np.mean([len(c.indexed_text.encode()) for c in chunks])),
           "shapes": {}}
    for n, shape in enumerate(args.shapes.split(",")):
        db = work / f"{shape}-{args.rows}.db"
        if not (args.keep and db.exists()):
            for p in work.glob(f"{shape}-{args.rows}.db*"):
                p.unlink() if p.is_file() else shutil.rmtree(p)
            t = time.perf_counter()
            build(db, shape, args.rows, chunks)
            built = round(time.perf_counter() - t, 1)
        else:
            built = None
        perf_out = work / f"perf-{shape}.data" if (args.perf and n == 0) else None
        res = timed_load(db, perf_out)
        res.update(build_s=built, file_mb=round(db.stat().st_size / 1e6, 1))
        out["shapes"][shape] = res
        print(shape, res, file=sys.stderr, flush=True)
    out["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(out, indent=1))
    if args.write:
        results = ROOT / "bench" / "results"
        (results / "lite-load.json").write_text(json.dumps(out, indent=1))
        (results / "lite-load.md").write_text(render(out))


def render(r: dict) -> str:
    lines = ["# What a cold Milvus Lite 2.5.1 load costs, by what a row holds", "",
             f"Written by `python bench/probe_lite_load.py --rows {r['rows']} --write` ({r['date']}, load average "
             f"{r['load_average']} at start, {r['load_average_end']} at end: wall seconds swing with the neighbours, "
             "the Lite process's CPU seconds much less). Rows: real stdlib chunks "
             f"({r['distinct_chunks']} distinct, text {r['mean_text_bytes']} B and indexed_text "
             f"{r['mean_indexed_text_bytes']} B on average, repeated under other ids), hashed unit vectors.", "",
             "| row shape | load, wall (s) | load, Lite CPU (s) | Lite RSS loaded (MB) | file (MB) |",
             "|---|---:|---:|---:|---:|"]
    for shape, v in r["shapes"].items():
        lines.append(f"| {shape} | {v['load_s']} | {v['load_cpu_s']} | {v['lite_rss_mb']} | {v['file_mb']} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
