"""The keyword phase's chunks/s (`Index.index(wait=False)`: discover, read, scrub, chunk, write
keyword-only rows; the fake embedder, so no vector is computed), with pymilvus' per-character
VARCHAR check on (as pymilvus ships) and off (as ``store._imports`` sets it), in alternating
runs on fresh data dirs, so load drift on a shared machine hits both sides alike. Wall time is
noisy on a loaded machine; this process's CPU seconds (``cpu``: the client side, not the Milvus
Lite server process) are what the check costs.

    PYTHONPATH=src python bench/bench_keyword_phase.py /work/shared/corpora/flask [PAIRS]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import load_avg, settings_for


def run(root: str, check: bool) -> tuple[int, float, float]:
    from pymilvus.client import entity_helper

    from codeseam import api

    entity_helper.CHECK_STR_ARRAY = check
    with tempfile.TemporaryDirectory() as d, api.Index(settings_for(Path(d), embedding_backend="fake"),
                                                       create=True) as ix:
        t, cpu = time.perf_counter(), time.process_time()
        report = ix.index(root, wait=False)
        seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
        ix.filler.close()  # its pages would compete with the next run
    return report.chunks_written, seconds, cpu


def main(root: str, pairs: int = 3) -> None:
    from codeseam.store._imports import import_pymilvus

    import_pymilvus()
    rates: dict[bool, list[float]] = {True: [], False: []}
    cpus: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(pairs):
        for check in (True, False):
            chunks, seconds, cpu = run(root, check)
            rates[check].append(chunks / seconds)
            cpus[check].append(cpu)
            print(f"{Path(root).name} check={check}: {chunks} chunks in {seconds:.2f}s = {chunks / seconds:.0f}/s, "
                  f"cpu {cpu:.2f}s", flush=True)
    print(f"median chunks/s: check on {statistics.median(rates[True]):.0f}, off {statistics.median(rates[False]):.0f}; "
          f"median client cpu s: on {statistics.median(cpus[True]):.2f}, off {statistics.median(cpus[False]):.2f}; "
          f"load {load_avg()}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3)
