"""Which dense indexes Milvus Lite 2.5.1 accepts, and whether IVF_FLAT honours nprobe.

100,000 clustered unit vectors (2,000 Gaussian centres + noise, 384-d, seed 0), 50 queries
near random rows; recall@40 against the exact inner-product top 40 computed with numpy.
Prints the outcome; run once, it takes ~12 minutes (the IVF build on Lite is slow).

    python bench/probe_lite_indexes.py
"""
import numpy as np
import time
import tempfile
import statistics
from pymilvus import MilvusClient, DataType
d = tempfile.mkdtemp()
c = MilvusClient(d + "/t.db")
rng = np.random.default_rng(0)
N, D = 100_000, 384
# clustered vectors: 2000 centres + noise, unit length
centres = rng.normal(size=(2000, D)).astype(np.float32)
X = centres[rng.integers(0, 2000, N)] + 0.6 * rng.normal(size=(N, D)).astype(np.float32)
X /= np.linalg.norm(X, axis=1, keepdims=True)
Q = X[rng.integers(0, N, 50)] + 0.3 * rng.normal(size=(50, D)).astype(np.float32)
Q /= np.linalg.norm(Q, axis=1, keepdims=True)
truth = [set(np.argsort(-(X @ q))[:40].tolist()) for q in Q]
for index, build, searches in [("HNSW", {"M": 16, "efConstruction": 200}, [{"ef": 64}, {"ef": 128}]),
                               ("IVF_FLAT", {"nlist": 256}, [{"nprobe": 8}, {"nprobe": 32}, {"nprobe": 128}]),
                               ("IVF_SQ8", {"nlist": 256}, [{"nprobe": 32}])]:
    name = "c_" + index.lower()
    try:
        schema = MilvusClient.create_schema(auto_id=False)
        schema.add_field("id", DataType.INT64, is_primary=True)
        schema.add_field("v", DataType.FLOAT_VECTOR, dim=D)
        ip = MilvusClient.prepare_index_params()
        ip.add_index("v", index_type=index, metric_type="IP", params=build)
        c.create_collection(name, schema=schema, index_params=ip)
        t = time.time()
        for i in range(0, N, 5000):
            c.insert(name, [{"id": j, "v": X[j].tolist()} for j in range(i, min(N, i + 5000))])
        c.flush(name)
        print(index, "built", round(time.time() - t, 1), "s", c.describe_index(name, "v"))
    except Exception as e:  # noqa: BLE001 - any failure to build is this probe's finding: print it, go on
        print(index, "FAILED", str(e)[:200])
        continue
    for sp in searches:
        ts, rec = [], []
        for qi, q in enumerate(Q):
            t = time.perf_counter()
            hits = c.search(name, data=[q.tolist()], anns_field="v", limit=40, search_params={"metric_type": "IP", "params": sp})[0]
            ts.append((time.perf_counter() - t) * 1000)
            rec.append(len({h["id"] for h in hits} & truth[qi]) / 40)
        print(f"  {index} {sp}: p50 {statistics.median(ts):.2f} ms recall@40 {statistics.fmean(rec):.3f}")
