"""Crash consistency: SIGKILL ``codeseam index`` (the real CLI, in a subprocess) at fault points
and at random moments, re-run it, and compare ``inspect`` with a clean build of the same tree
into another index: same (path, chunk hash, start, end) rows, no duplicates, nothing missing,
no stale rows, same manifest file hashes.

The helpers here (tree, runs, comparison) are shared with ``bench/bench_reliability.py``,
which does the long loop (20+ kills).

Every run pins ``PYTHONHASHSEED``: while these tests were written, chunk headers listed
identifier splits in an order that followed the hash seed (``chunk_hash`` / ``chunk_hashes``),
so two clean builds in two processes differed in a few chunk hashes. The chunker no longer
does (guarded by ``test_chunk_hashes_do_not_depend_on_the_hash_seed`` in
``test_reliability.py``); the pin keeps any such regression out of what these tests measure.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STDLIB = Path(sysconfig.get_paths()["stdlib"])
HASH_SEED = "0"
BIG_FILE = "generated/many_functions.py"
BIG_FUNCTIONS = 600  # > 512 rows: two chunk-row upsert sub-batches in one write batch


# -- the tree ------------------------------------------------------------------------------

def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@t.invalid", "-c", "user.name=t", "-c", "commit.gpgsign=false",
                    *args], cwd=cwd, check=True, capture_output=True)


def stdlib_sample(n: int, seed: int = 8) -> list[Path]:
    """``n`` stdlib .py files of modest size (2-60 KB), chosen reproducibly."""
    files = sorted(p for p in STDLIB.glob("*.py") if 2_000 <= p.stat().st_size <= 60_000)
    files += sorted(p for p in STDLIB.glob("*/*.py") if 2_000 <= p.stat().st_size <= 60_000
                    and "test" not in p.parts[-2] and "site-packages" not in p.parts)
    return random.Random(seed).sample(files, min(n, len(files)))


def big_file_text(tag: str = "") -> str:
    return "\n\n".join(
        f"def generated_{i}(value{tag}):\n    \"\"\"Generated function {i} of the crash tree{tag}.\"\"\"\n"
        f"    total = value * {i} + {i % 7}\n    if total > {i * 3}:\n        total -= {i}\n"
        f"    return total\n" for i in range(BIG_FUNCTIONS)) + "\n"


def make_tree(root: Path, n_files: int, *, big: bool = True) -> Path:
    """A git repository: ``n_files`` stdlib modules (as ``lib/<pkg>/<name>.py``) and one
    generated file whose chunk rows take more than two upsert sub-batches."""
    root.mkdir(parents=True)
    for src in stdlib_sample(n_files):
        rel = src.relative_to(STDLIB)
        dest = root / "lib" / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
    if big:
        (root / BIG_FILE).parent.mkdir(parents=True, exist_ok=True)
        (root / BIG_FILE).write_text(big_file_text())
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "tree")
    return root


def mutate(root: Path, rng: random.Random, round_no: int) -> dict[str, int]:
    """Change the tree as a developer would between runs: edit, delete, add and rename files
    (deletes make the next run delete rows). Returns what it did."""
    files = sorted(p for p in (root / "lib").rglob("*.py"))
    rng.shuffle(files)
    done = Counter()
    for p in files[:3]:  # edit: a new function in the middle, a changed line
        lines = p.read_text(encoding="utf-8", errors="surrogateescape").split("\n")
        at = rng.randrange(len(lines))
        lines.insert(at, f"def crash_round_{round_no}_{at}():\n    return {round_no}\n")
        p.write_text("\n".join(lines), encoding="utf-8", errors="surrogateescape")
        done["edited"] += 1
    for p in files[3:5]:
        p.unlink()
        done["deleted"] += 1
    if len(files) > 6:
        src = files[5]
        src.rename(src.with_name(f"renamed_{round_no}_{src.name}"))
        done["renamed"] += 1
    for i in range(2):
        new = root / "lib" / "added" / f"round_{round_no}_{i}.py"
        new.parent.mkdir(parents=True, exist_ok=True)
        new.write_text(f'"""Added in round {round_no}."""\n\n\ndef added_{round_no}_{i}(x):\n'
                       f"    return x + {i}\n")
        done["added"] += 1
    big = root / BIG_FILE
    if big.exists() and round_no % 2:
        big.write_text(big_file_text(f"_{round_no}"))  # every chunk of the big file changes
        done["big-rewritten"] += 1
    git(root, "add", "-A")
    git(root, "commit", "-qm", f"round {round_no}")
    return dict(done)


# -- runs ----------------------------------------------------------------------------------

def cli_command() -> list[str]:
    exe = Path(sys.executable).with_name("codeseam")
    if exe.exists():
        return [str(exe)]
    return [sys.executable, "-c", "from codeseam.surfaces.cli import main; main()"]


def run_env(data_dir: Path, *, faults: str = "", log: Path | None = None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "CODESEAM_FAULTS"))}
    env.update(RAG_EMBEDDING_BACKEND="fake", RAG_DATA_DIR=str(data_dir), RAG_CONFIG=os.devnull, RAG_KEEPALIVE="0",
               PYTHONHASHSEED=HASH_SEED, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    if faults:
        env["CODESEAM_FAULTS"] = faults
    if log is not None:
        env["CODESEAM_FAULTS_LOG"] = str(log)
    env.update(extra)
    return env


@dataclass
class Run:
    rc: int
    stdout: str
    stderr: str
    seconds: float
    landed: str = ""  # the last fault point reached before the end (with a log)
    killed_by: str = ""  # "fault", "timer" or ""

    @property
    def killed(self) -> bool:
        return self.rc == -signal.SIGKILL


def codeseam(args: list[str], env: dict[str, str], *, kill_after: float | None = None,
             log: Path | None = None, timeout: float = 300) -> Run:
    """Run the real CLI; with ``kill_after``, SIGKILL it after that many seconds."""
    t = time.monotonic()
    proc = subprocess.Popen([*cli_command(), *args], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    timer = False
    try:
        out, err = proc.communicate(timeout=kill_after if kill_after is not None else timeout)
    except subprocess.TimeoutExpired:
        if kill_after is None:
            proc.kill()
            raise
        timer = True
        proc.send_signal(signal.SIGKILL)
        out, err = proc.communicate(timeout=timeout)
    run = Run(proc.returncode, out, err, time.monotonic() - t)
    if run.killed:
        run.killed_by = "timer" if timer else "fault"
    if log is not None and log.exists():
        lines = log.read_text().split("\n")
        run.landed = next((ln for ln in reversed(lines) if ln.strip()), "")
    return run


def index_run(root: Path, data_dir: Path, *, faults: str = "", kill_after: float | None = None,
              log: Path | None = None) -> Run:
    if log is not None and log.exists():
        log.unlink()
    return codeseam(["index", str(root), "--json"], run_env(data_dir, faults=faults, log=log),
                    kill_after=kill_after, log=log)


def finish(root: Path, data_dir: Path) -> Run:
    """Re-run to completion; the run must succeed."""
    run = index_run(root, data_dir)
    assert run.rc == 0, f"re-run failed ({run.rc}): {run.stderr[-2000:]}"
    return run


def inspect_cli(data_dir: Path, repo: str) -> dict:
    run = codeseam(["inspect", repo, "--json"], run_env(data_dir))
    assert run.rc == 0, run.stderr[-2000:]
    return json.loads(run.stdout)


def inspect_api(data_dir: Path, repo: str) -> dict:
    from codeseam import api
    from codeseam.settings import load_settings

    settings = load_settings({"embedding_backend": "fake", "data_dir": str(data_dir)},
                             env={"RAG_CONFIG": os.devnull})
    return api.inspect(repo, settings=settings)


# -- comparison ----------------------------------------------------------------------------

def row_key(row: dict) -> tuple:
    return (row["path"], row["chunk_hash"], row["start_line"], row["end_line"])


def compare(got: dict, clean: dict) -> dict[str, list]:
    """What differs between an index and a clean build ({} when they agree)."""
    rows = Counter(row_key(r) for r in got["chunks"])
    want = Counter(row_key(r) for r in clean["chunks"])
    problems = {
        "duplicates": sorted(k for k, n in rows.items() if n > 1),
        "missing": sorted(want - rows),
        "stale": sorted(set(rows) - set(want)),
        "manifest": sorted(p for p in set(got["files"]) | set(clean["files"])
                           if got["files"].get(p) != clean["files"].get(p)),
    }
    return {k: v[:20] for k, v in problems.items() if v}


def clean_build(root: Path, data_dir: Path, repo: str) -> dict:
    if data_dir.exists():
        shutil.rmtree(data_dir)
    run = index_run(root, data_dir)
    assert run.rc == 0, run.stderr[-2000:]
    return inspect_api(data_dir, repo)


def probe(root: Path, data_dir: Path, tmp: Path) -> tuple[Counter, float]:
    """How often each fault point is reached by an index run of ``root`` against a copy of
    ``data_dir``, and how long that run took (so a kill can be aimed at a point, or a moment,
    that the next real run reaches)."""
    copy = tmp / "probe-data"
    if copy.exists():
        shutil.rmtree(copy)
    if data_dir.exists():
        shutil.copytree(data_dir, copy)
    log = tmp / "probe.log"
    run = index_run(root, copy, log=log)
    assert run.rc == 0, run.stderr[-2000:]
    counts = Counter(line.split()[0] for line in log.read_text().split("\n") if line.strip())
    shutil.rmtree(copy)
    return counts, run.seconds


# -- the test ------------------------------------------------------------------------------

@pytest.mark.slow
def test_kills_at_every_stage_then_rerun_equals_clean_build(tmp_path: Path):
    """Kill at each kind of point (mid-insert of a big file, mid-delete, chunking, embedding,
    a manifest write, a random moment, and again during the repairing run); after each,
    a re-run must leave exactly what a clean build of the same tree leaves."""
    root = make_tree(tmp_path / "crashrepo", 16)
    data, clean_dir = tmp_path / "data", tmp_path / "clean"
    repo = "crashrepo"
    rng = random.Random(20240808)
    kills: list[tuple[str, str]] = []
    log = tmp_path / "points.log"

    def kill(faults: str = "", kill_after: float | None = None) -> None:
        run = index_run(root, data, faults=faults, kill_after=kill_after, log=log)
        assert run.killed, f"{faults or kill_after}: not killed (rc {run.rc}) {run.stderr[-500:]}"
        kills.append((faults or f"timer {kill_after:.1f}s", run.landed))

    def repaired(want: dict) -> None:
        finish(root, data)
        assert compare(inspect_api(data, repo), want) == {}, kills[-1]

    # 1. first build: killed between the two chunk-row sub-batches of the big file
    clean = clean_build(root, clean_dir, repo)
    kill("insert:2=kill")
    assert kills[-1][1] == "insert 2"
    repaired(clean)
    # 2. a changed tree: killed in the middle of deleting rows, then again while the next
    #    run (which repairs) embeds
    mutate(root, rng, 1)
    clean = clean_build(root, clean_dir, repo)
    kill("delete:2=kill")
    kill("embed:1=kill")
    repaired(clean)
    # 3. killed while chunking, and during a manifest write
    mutate(root, rng, 2)
    clean = clean_build(root, clean_dir, repo)
    kill("chunk:3=kill")
    kill("write:3=kill")
    repaired(clean)
    # 4. killed at a random moment of a run (aimed within the length of a probe run)
    mutate(root, rng, 3)
    clean = clean_build(root, clean_dir, repo)
    _, seconds = probe(root, data, tmp_path)
    kill(kill_after=rng.uniform(0.4, 0.9) * seconds)
    repaired(clean)
    assert len(kills) == 6
    # after all that, a re-run is a no-op
    again = json.loads(finish(root, data).stdout)
    assert (again["files_indexed"], again["chunks_written"], again["files_deleted"]) == (0, 0, 0)
