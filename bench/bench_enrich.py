"""Enrichment benchmark: the plain and enriched arms side by side on the stdlib-dev golden set.

    python bench/bench_enrich.py [--k 8] [--modes dense,bm25,hybrid] [--out bench/results]

Needs a real chat model: ``RAG_LLM_BASE_URL`` (default Ollama, http://localhost:11434/v1)
and ``RAG_LLM_MODEL`` (default: the first model the server lists). When none is
reachable it says so, writes that to ``bench/results/enrich.md`` and exits: no numbers are
made up. When one is reachable it

1. copies the 18 corpus files of ../shared/golden/README.md into a temp repo;
2. indexes it twice with the same embedder (``RAG_EMBEDDING_BACKEND``, default bundled):
   plain (``enrich=False``) and enriched (``enrich=True``, ``RAG_ENRICH_LANGUAGE``), each in
   its own temp data dir (a fresh enrichment cache, so every description is written);
3. runs every golden query against both, in each retrieval mode, and reports Recall@k
   (a top-k hit overlaps a gold range in the same file), MRR and, for negatives, the
   weak-evidence rate, per kind; plus the enrichment counts and descriptions per minute.

Whether or not a model is reachable, it also measures the token headroom that the
embedder leaves for a description: for every chunk of the corpus (chunked as ``index``
does, with the embedder's budget), ``max_tokens - count_tokens(indexed_text)``, and the
share of chunks in which a description of 20..100 tokens fits whole (the rest are
trimmed, see ``enrich/place.py``).

Writes ``enrich.md`` and ``enrich.json`` under ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import sysconfig
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
GOLDEN = ROOT.parent / "shared" / "golden" / "stdlib-dev.jsonl"
STDLIB = Path(sysconfig.get_paths()["stdlib"])
CORPUS = ["argparse.py", "base64.py", "bisect.py", "calendar.py", "configparser.py", "csv.py",
          "difflib.py", "email/utils.py", "fnmatch.py", "functools.py", "gzip.py", "heapq.py",
          "http/cookies.py", "pathlib.py", "shutil.py", "statistics.py", "tempfile.py",
          "urllib/parse.py"]
REPO = "stdlib-dev"


def find_model(base_url: str, model: str, api_key: str) -> tuple[str | None, str]:
    """(model, "") when a chat model answers at base_url, else (None, why not)."""
    import httpx

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        r = httpx.get(base_url.rstrip("/") + "/models", timeout=5.0, headers=headers)
        listed = [m.get("id") for m in r.json().get("data", [])] if r.is_success else []
    except (httpx.HTTPError, ValueError, AttributeError) as exc:
        return None, f"no LLM reachable at {base_url}: {type(exc).__name__}: {exc}"
    model = model or (listed[0] if listed else "")
    if not model:
        return None, f"the server at {base_url} lists no models and RAG_LLM_MODEL is not set"
    try:
        r = httpx.post(base_url.rstrip("/") + "/chat/completions", timeout=120.0, headers=headers,
                       json={"model": model, "messages": [{"role": "user", "content": "Say OK."}],
                             "max_tokens": 5})
    except httpx.HTTPError as exc:
        return None, f"model {model!r} at {base_url} did not answer: {type(exc).__name__}: {exc}"
    if not r.is_success:
        return None, f"model {model!r} at {base_url} answered HTTP {r.status_code}: {r.text[:200]}"
    return model, ""


def headroom(settings) -> dict:
    """Tokens left for a description in each corpus chunk, under the embedder's budget."""
    from codeseam.chunk import chunk_file
    from codeseam.embed import make_embedder
    from codeseam.indexing.pipeline import make_budget

    embedder = make_embedder(settings)
    if not embedder.max_tokens:
        return {"embedder": embedder.id, "note": "the embedder has no token limit: nothing is trimmed"}
    budget = make_budget(settings, embedder)
    room = sorted(embedder.max_tokens - embedder.count_tokens(c.indexed_text)
                  for rel in CORPUS
                  for c in chunk_file(rel, (STDLIB / rel).read_text(encoding="utf-8"), budget=budget))
    prefix = embedder.count_tokens("description:")
    q = {f"p{int(p * 100)}": room[int(p * (len(room) - 1))] for p in (0.1, 0.25, 0.5, 0.75, 0.9)}
    fits = {str(n): sum(r >= n + prefix + 1 for r in room) / len(room) for n in (20, 40, 60, 80, 100)}
    return {"embedder": embedder.id, "max_tokens": embedder.max_tokens, "chunks": len(room),
            "headroom_quantiles": q, "share_fitting_whole": fits}


def render_headroom(h: dict) -> list[str]:
    if "note" in h:
        return ["## Token headroom for descriptions", "", f"`{h['embedder']}`: {h['note']}", ""]
    lines = ["## Token headroom for descriptions", "",
             f"Embedder `{h['embedder']}` ({h['max_tokens']} tokens), {h['chunks']} chunks of the "
             "corpus. Tokens left after the header and the code:", "",
             "| p10 | p25 | median | p75 | p90 |", "|---:|---:|---:|---:|---:|",
             "| " + " | ".join(str(v) for v in h["headroom_quantiles"].values()) + " |", "",
             "Share of chunks where a description of n tokens fits whole (else it is trimmed):", "",
             "| n | " + " | ".join(h["share_fitting_whole"]) + " |",
             "|---|" + "---:|" * len(h["share_fitting_whole"]),
             "| share | " + " | ".join(f"{v:.2f}" for v in h["share_fitting_whole"].values()) + " |", ""]
    return lines


def overlaps(hit, gold: dict) -> bool:
    return hit.path == gold["path"] and hit.start_line <= gold["end"] and gold["start"] <= hit.end_line


def score(queries: list[dict], results: dict[str, object], k: int) -> dict[str, dict]:
    """Per kind (and "all"): n, recall@k, MRR for positives; weak rate for negatives."""
    rows: dict[str, list] = defaultdict(list)
    for q in queries:
        res = results[q["id"]]
        hits = list(res.hits)[:k]
        if not q["gold"]:
            rows[q["kind"]].append({"weak": bool(res.weak)})
            continue
        rank = next((i for i, h in enumerate(hits, 1) if any(overlaps(h, g) for g in q["gold"])), None)
        row = {"hit": rank is not None, "rr": 1.0 / rank if rank else 0.0}
        rows[q["kind"]].append(row)
        rows["all"].append(row)
    out = {}
    for kind, rs in rows.items():
        if rs and "weak" in rs[0]:
            out[kind] = {"n": len(rs), "weak_rate": sum(r["weak"] for r in rs) / len(rs)}
        else:
            out[kind] = {"n": len(rs), "recall": sum(r["hit"] for r in rs) / len(rs),
                         "mrr": sum(r["rr"] for r in rs) / len(rs)}
    return out


def run_arm(name: str, repo: Path, data: Path, settings, queries, modes, k) -> dict:
    from codeseam import api

    def progress(event: str, **f) -> None:
        if event == "enrich":
            eta = f.get("eta_s")
            print(f"  [{name}] {f['files_done']} files, {f['described']} described, "
                  f"{f['per_minute']:.1f}/min" + (f", eta {eta / 60:.0f} min" if eta else ""), flush=True)

    s = settings.replace(data_dir=str(data))
    t = time.perf_counter()
    report = api.index(str(repo), repo_id=REPO, settings=s, progress=progress)
    index_s = time.perf_counter() - t
    per_mode = {}
    with api.open_index(s) as ix:
        for mode in modes:
            results = {q["id"]: ix.search(q["query"], repo=REPO, k=k, mode=mode) for q in queries}
            per_mode[mode] = score(queries, results, k)
    enrich = dict(getattr(report, "enrich", {}) or {})
    cache_file = data / "enrich-cache.sqlite"
    if settings.enrich and cache_file.exists():  # a fresh cache: its rows are this run's descriptions
        from codeseam.enrich import DescriptionCache

        cache = DescriptionCache(cache_file)
        enrich["descriptions_in_cache"] = cache.count()
        cache.close()
    return {"index_seconds": index_s, "chunks": report.chunks_written, "enrich": enrich,
            "scores": per_mode}


def write(out: Path, result: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "enrich.json").write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    (out / "enrich.md").write_text(render(result))


def render(r: dict) -> str:
    lines = ["# Enrichment benchmark: plain vs enriched on stdlib-dev", ""]
    if r.get("skipped"):
        lines += [f"**Arms not run.** {r['skipped']}", "",
                  "No capable chat model was reachable from this machine, so the plain and "
                  "enriched arms were not measured (the headroom below needs no model). Run `python bench/bench_enrich.py` where one is (Ollama on "
                  "localhost:11434, or set `RAG_LLM_BASE_URL` and `RAG_LLM_MODEL`).", "",
                  f"Checked at {r['when']} on {r['machine']}.", ""]
        return "\n".join(lines + render_headroom(r["headroom"]))
    arms, k = r["arms"], r["k"]
    lines += [f"Model `{r['model']}` at {r['base_url']}, language `{r['language']}`, embedder "
              f"`{r['embedding_backend']}`, k={k}, {r['queries']} queries; {r['when']}, {r['machine']}.", ""]
    e = arms["enriched"]["enrich"]
    lines += ["| arm | chunks | index time (s) |", "|---|---:|---:|"]
    for name in ("plain", "enriched"):
        a = arms[name]
        lines.append(f"| {name} | {a['chunks']} | {a['index_seconds']:.1f} |")
    lines += ["", "Enrichment counts: " + ", ".join(f"{k_}={v}" for k_, v in sorted(e.items())), ""]
    written = e.get("described") or e.get("descriptions_in_cache")
    if written:
        per_min = written * 60 / max(arms["enriched"]["index_seconds"], 1e-9)
        lines += [f"Descriptions per minute over the whole enriched run: {per_min:.1f}", ""]
    for mode in r["modes"]:
        lines += [f"## {mode}", "", "| kind | n | plain R@k | enriched R@k | plain MRR | enriched MRR |",
                  "|---|---:|---:|---:|---:|---:|"]
        plain, rich = arms["plain"]["scores"][mode], arms["enriched"]["scores"][mode]
        for kind in sorted(plain):
            p, q = plain[kind], rich.get(kind, {})
            if "weak_rate" in p:
                lines.append(f"| {kind} (weak rate) | {p['n']} | {p['weak_rate']:.3f} | "
                             f"{q.get('weak_rate', float('nan')):.3f} | | |")
            else:
                lines.append(f"| {kind} | {p['n']} | {p['recall']:.3f} | {q['recall']:.3f} | "
                             f"{p['mrr']:.3f} | {q['mrr']:.3f} |")
        lines.append("")
    return "\n".join(lines + render_headroom(r["headroom"]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--modes", default="dense,bm25,hybrid")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    args = ap.parse_args()

    from codeseam.settings import load_settings

    settings = load_settings()
    when = time.strftime("%Y-%m-%d %H:%M:%S")
    machine = f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    with tempfile.TemporaryDirectory(prefix="bench-enrich-headroom-") as tmp:
        room = headroom(settings.replace(data_dir=tmp))
    model, why = find_model(settings.llm_base_url, settings.llm_model, settings.llm_api_key)
    if model is None:
        print(f"bench_enrich: arms not run: {why}", file=sys.stderr)
        result = {"skipped": why, "when": when, "machine": machine, "headroom": room}
        write(args.out, result)
        print(render(result))
        return 0
    queries = [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines() if line.strip()]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    settings = settings.replace(llm_model=model)
    arms = {}
    with tempfile.TemporaryDirectory(prefix="bench-enrich-") as tmp:
        repo = Path(tmp) / REPO
        for rel in CORPUS:
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(STDLIB / rel, repo / rel)
        for name, enrich in (("plain", False), ("enriched", True)):
            print(f"{name}: indexing {len(CORPUS)} files ...", flush=True)
            arms[name] = run_arm(name, repo, Path(tmp) / f"data-{name}", settings.replace(enrich=enrich),
                                 queries, modes, args.k)
    result = {"model": model, "base_url": settings.llm_base_url, "language": settings.enrich_language,
              "embedding_backend": settings.embedding_backend, "k": args.k, "modes": modes,
              "queries": len(queries), "when": when, "machine": machine, "arms": arms,
              "headroom": room}
    write(args.out, result)
    print(render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
