"""Helpers every benchmark script shares: where things are, what commit and how loaded the machine
was, one percentile, a clean environment for codeseam runs. It leaves ``sys.path`` alone: each
script puts the ``src/`` it measures first (``bench_reliability`` a snapshot of it).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
RESULTS = ROOT / "bench" / "results"


def commit() -> str:
    """The checkout's short commit, saying so when ``src/`` has uncommitted changes."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "src"], cwd=ROOT, capture_output=True,
                               text=True, check=True).stdout.strip()
        return head + (" (with uncommitted changes under src/)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def cpu_info() -> dict[str, Any]:
    """This machine's CPU: ``{"model", "cores", "flags"}`` (flags as a sorted list, empty where
    /proc/cpuinfo cannot be read): the int8 and batch-size results depend on it."""
    model, flags = "unknown", []
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and model == "unknown":
                model = value.strip()
            elif key.strip() == "flags" and not flags:
                flags = sorted(set(value.split()))
    except OSError:
        pass
    return {"model": model, "cores": os.cpu_count(), "flags": flags}


def load_avg() -> list[float]:
    """The 1, 5 and 15 minute load averages (the machine is shared: every result says how busy)."""
    return [round(x, 2) for x in os.getloadavg()]


def stamp() -> str:
    return time.strftime("%Y-%m-%d %H:%M")


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values``, interpolated between the two nearest ranks (the
    'inclusive' method: ``percentile(xs, 0.5)`` is the median). The one definition every script
    uses (they computed p95 two ways: by index ``int(q * n)`` and by ``round(q * (n - 1))``)."""
    if not values:
        raise ValueError("no values")
    if len(values) == 1 or q <= 0:
        return min(values)
    if q >= 1:
        return max(values)
    return statistics.quantiles(values, n=1000, method="inclusive")[round(q * 1000) - 1]


def latency(values: Sequence[float], digits: int = 2) -> dict[str, Any]:
    """``{"p50", "p95", "n"}`` of ``values`` (in the unit they are in), rounded to ``digits``."""
    return {"p50": round(percentile(values, 0.5), digits), "p95": round(percentile(values, 0.95), digits),
            "n": len(values)}


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """``(seconds, result)`` of ``fn()`` (wall clock)."""
    started = time.perf_counter()
    result = fn()
    return time.perf_counter() - started, result


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without the developer's ``RAG_*`` settings, offline, with this
    checkout's ``src/`` on ``PYTHONPATH`` (for the ``codeseam`` subprocesses a script starts), plus
    ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "CODESEAM_"))}
    env.update(RAG_CONFIG=os.devnull, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               PYTHONPATH=os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH", "")) if p))
    env.update(extra)
    return env


def settings_for(data: Path, **over: Any):
    """Settings on the data dir ``data``: the defaults and ``over``, nothing from this shell or a
    config file."""
    from codeseam.settings import load_settings

    data.mkdir(parents=True, exist_ok=True)
    return load_settings({"data_dir": str(data), **over}, env=clean_env())
