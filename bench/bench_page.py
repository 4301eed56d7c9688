"""Time to first result on the page, warm, beside ``GET /search`` in the same run (issue 15).

Index. Real code text: CPython stdlib files (a fixed pseudo-random order, no tests) copied into
one git repository until about ``--chunks`` chunks, built like bench_search.py's indexes: a
stand-in embedder with the bundled model's id, dimension and tokenizer but hashed vectors
(embedding 10k chunks with the bundled model takes ~10 minutes here; the exact FLAT search
scans every row whatever the values). The server then opens it as a bundled index, so every
query below is embedded by the real bundled model (ONNX).

Server. ``codeseam serve``'s app (``create_app``) under uvicorn on 127.0.0.1 in this process,
warmed up with a few searches. Arms, interleaved per query, each query once per round:

1. ``GET /search?q=Q`` (httpx): the API as programs call it (k=8);
2. ``GET /search?q=Q&k=50&offset=0&limit=10&highlight=true`` (httpx): what the page fetches
   for its first page (one ranking of 50 hits, the first 10 with highlighted lines);
3. the page in headless Chromium, typing: the query is put in the box with one ``input``
   event; time until its first hit is in the DOM (a MutationObserver), measured in the page
   with ``performance.now()``. Includes the page's 150 ms typing debounce;
4. the page, Enter: the same, submitted at once (no debounce): the page's own cost.

Queries: the 80 queries of ../shared/golden/stdlib-dev.jsonl (or --queries FILE).

    python bench/bench_page.py                    # ~10k chunks, 2 rounds
    python bench/bench_page.py --chunks 3000 --rounds 1
    python bench/bench_page.py --screenshots docs # also the README's screenshots (see below)

With ``--screenshots DIR`` (or ``--screenshots-only``, into docs/) it also saves page-search.png,
page-ask.png and page-status.png, on a real index (this repository's src/ embedded by the
bundled model): a search, ask answered by the scripted loopback LLM
(tests/support/fake_openai.py: no chat model runs here), status with a running indexing job.

Results: bench/results/page.md and page.json.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OMP_NUM_THREADS", "2")

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import httpx  # noqa: E402

from _common import commit, latency, load_avg, stamp  # noqa: E402
from bench_search import STDLIB, index_with_standin, settings_for, spread, stdlib_files  # noqa: E402
from codeseam import api, present  # noqa: E402
from codeseam.service import Service  # noqa: E402
from codeseam.surfaces.http import create_app  # noqa: E402

RESULTS = ROOT / "bench" / "results"
DEBOUNCE_MS = 150  # web/common.js

FIRST_RESULT = """
const [q, how, done] = arguments;
const box = document.getElementById('q'), hits = document.getElementById('hits');
const t0 = performance.now();
const observer = new MutationObserver(() => {
  if (hits.dataset.query === q && hits.querySelector('li.hit')) {
    observer.disconnect();
    done(performance.now() - t0);
  }
});
observer.observe(hits, {childList: true, attributes: true, subtree: false});
box.value = q;
box.dispatchEvent(new Event('input', {bubbles: true}));
if (how === 'enter') document.getElementById('search-form').requestSubmit();
"""


def golden_file() -> Path:
    """../shared/golden/stdlib-dev.jsonl beside the checkout (or beside a worktree's parent)."""
    for base in (ROOT.parent, ROOT.parent.parent):
        path = base / "shared" / "golden" / "stdlib-dev.jsonl"
        if path.exists():
            return path
    raise SystemExit("no ../shared/golden/stdlib-dev.jsonl: pass --queries FILE")


def build(cache: Path, chunks: int) -> dict:
    """An index of about ``chunks`` chunks under ``cache`` (reused when it is there)."""
    data, corpus = cache / f"data-{chunks}", cache / f"corpus-{chunks}"
    settings = settings_for(data)
    try:
        have = sum(r.chunks for r in api.status(settings=settings).repos)
    except Exception:  # noqa: BLE001 - missing or stale: build it
        have = 0
    if have >= chunks * 0.9:
        return {"rows": have, "build_seconds": None, "reused": True, "settings": settings, "corpus": corpus}
    shutil.rmtree(data, ignore_errors=True)
    shutil.rmtree(corpus, ignore_errors=True)
    settings = settings_for(data)
    corpus.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=corpus, check=True)
    files = [r for r in spread(stdlib_files()) if "test" not in r.parts[0] and "idlelib" not in r.parts]
    budget, used = chunks * 470, 0  # ~470 bytes of stdlib source per chunk (bench_index.py's corpus)
    for rel in files:
        if used >= budget:
            break
        (corpus / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(STDLIB / rel, corpus / rel)
        used += (STDLIB / rel).stat().st_size
    _, seconds = index_with_standin(settings, corpus)
    rows = sum(r.chunks for r in api.status(settings=settings).repos)
    return {"rows": rows, "build_seconds": round(seconds, 1), "reused": False, "settings": settings, "corpus": corpus}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chunks", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--cache", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "codeseam-bench-page")
    ap.add_argument("--queries", type=Path, help="a golden JSONL file (default: stdlib-dev.jsonl)")
    ap.add_argument("--screenshots", type=Path, help="also save the page's screenshots into this folder")
    ap.add_argument("--screenshots-only", action="store_true", help="only the screenshots (default folder docs/)")
    args = ap.parse_args()

    from tests.support.browser import chromium, served

    if args.screenshots_only:
        return shoot(args.screenshots or ROOT / "docs", args.cache)
    load0 = load_avg()
    built = build(args.cache, args.chunks)
    settings = built.pop("settings")
    corpus = built.pop("corpus")
    golden = args.queries or golden_file()
    queries = [json.loads(x)["query"] for x in golden.read_text().splitlines() if x.strip()]
    times: dict[str, list[float]] = {"api": [], "api_page": [], "page_typing": [], "page_enter": []}
    with Service(settings.replace(keepalive=0), cwd=corpus.parent).open() as service, \
            served(create_app(service)) as url, httpx.Client(base_url=url, timeout=60) as client, \
            tempfile.TemporaryDirectory() as profile:
        driver = chromium(Path(profile))
        try:
            driver.get(url + "/")
            ready(driver)
            for q in queries[:5]:  # warm: the query embedder, the store, the page's code paths
                client.get("/search", params={"q": q})
                driver.execute_async_script(FIRST_RESULT, q + " warm", "enter")
            for _ in range(args.rounds):
                for q in queries:
                    t = time.perf_counter()
                    assert client.get("/search", params={"q": q}).status_code == 200
                    times["api"].append((time.perf_counter() - t) * 1000)
                    present._highlight.cache_clear()  # every arm highlights its hits afresh
                    t = time.perf_counter()
                    res = client.get("/search", params={"q": q, "k": 50, "offset": 0, "limit": 10, "highlight": "true"})
                    assert res.status_code == 200 and res.json()["hits"]
                    times["api_page"].append((time.perf_counter() - t) * 1000)
                    for how in ("typing", "enter"):
                        driver.get(url + "/")  # a fresh page: no earlier result on screen
                        ready(driver)  # loaded and idle: its own status requests are done
                        present._highlight.cache_clear()
                        driver.execute_script("document.getElementById('q').focus()")
                        times["page_" + how].append(driver.execute_async_script(FIRST_RESULT, q, how))
        finally:
            driver.quit()
    load1 = load_avg()
    stats = {k: latency(v) for k, v in times.items()}
    out = {"when": stamp(), "commit": commit(), "load_start": load0, "load_end": load1, "index": built, "queries": len(queries), "rounds": args.rounds,
           "ms": stats, "raw_ms": {k: [round(x, 2) for x in v] for k, v in times.items()}}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "page.json").write_text(json.dumps(out, indent=1) + "\n")
    (RESULTS / "page.md").write_text(report(out, args))
    print((RESULTS / "page.md").read_text())
    if args.screenshots:
        shoot(args.screenshots, args.cache)


def shoot(folder: Path, cache: Path) -> None:
    """The README's screenshots, on a real index: this repository's src/ embedded by the bundled
    model (kept in the cache); search, ask answered by the scripted LLM, status with a job."""
    from tests.support.browser import chromium, served
    from tests.support.fake_openai import FakeOpenAI, Reply

    folder.mkdir(parents=True, exist_ok=True)
    data, corpus = cache / "shots-data", cache / "shots" / "codeseam"
    settings = settings_for(data)
    if not corpus.exists():
        shutil.copytree(ROOT / "src" / "codeseam", corpus / "src" / "codeseam",
                        ignore=shutil.ignore_patterns("__pycache__", "web"))
        subprocess.run(["git", "init", "-q", str(corpus)], check=True)
    extra = cache / "shots" / "tests-support"  # indexed from the status view while shooting
    shutil.rmtree(extra, ignore_errors=True)
    shutil.copytree(ROOT / "tests" / "support", extra, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(["git", "init", "-q", str(extra)], check=True)
    query = "where are secrets redacted before they are stored"
    with FakeOpenAI() as llm, Service(settings.replace(llm_model="scripted", llm_base_url=llm.base_url),
                                      cwd=corpus.parent).open() as service, \
            served(create_app(service)) as url, tempfile.TemporaryDirectory() as profile:
        if "codeseam" not in service.repo_roots():
            service.wait(service.start_index(str(corpus), "codeseam").id, 3600)
        with contextlib.suppress(Exception):
            service.remove("tests-support")
        driver = chromium(Path(profile), width=1280, height=860)
        try:
            driver.get(url + "/?q=" + query.replace(" ", "+") + "&path=src%2F**")
            wait(driver, "#hits > li.hit")
            driver.save_screenshot(str(folder / "page-search.png"))
            hits = httpx.get(url + "/search", params={"q": query}).json()["hits"]
            a, b = hits[0], hits[1]
            llm.responder = lambda body: Reply(
                f"Secrets are redacted in `{a['symbol'] or a['path']}` ({a['path']}), before chunking, so "
                f"the stored text never holds them [1]. `{b['symbol'] or b['path']}` is part of the same "
                "path [2].", chunks=16, piece_delay=0.05)
            driver.get(url + "/?view=ask")
            driver.find_element("id", "question").send_keys(query)
            driver.find_element("id", "ask-button").click()
            wait(driver, "#ask-sources > li")
            driver.save_screenshot(str(folder / "page-ask.png"))
            driver.get(url + "/?view=status")
            wait(driver, "#repos tbody tr")
            driver.find_element("id", "index-path").send_keys(str(extra))
            driver.find_element("css selector", "#index-form button").click()
            deadline = time.monotonic() + 300
            while not driver.execute_script("const j = document.querySelector('#jobs .job.running progress');"
                                            "return j && j.value > 0"):
                assert time.monotonic() < deadline, "the job did not show progress"
                time.sleep(0.2)
            driver.save_screenshot(str(folder / "page-status.png"))
            for job in service.jobs():
                service.wait(job.id, 600)
        finally:
            driver.quit()


def ready(driver, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not driver.execute_script("return !!(window.codeseamPage && window.codeseamPage.ready)"):
        assert time.monotonic() < deadline, "the page did not get ready"
        time.sleep(0.01)


def wait(driver, css: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not driver.find_elements("css selector", css):
        assert time.monotonic() < deadline, css
        time.sleep(0.1)


def report(out: dict, args) -> str:
    s, ix = out["ms"], out["index"]
    api50 = s["api"]["p50"]
    rows = [
        ("`GET /search?q=Q` (httpx; k=8)", "api"),
        ("`GET /search?q=Q&k=50&offset=0&limit=10&highlight=true` (httpx; the page's request)", "api_page"),
        ("page, Enter: first hit in the DOM (Chromium)", "page_enter"),
        (f"page, typing: first hit in the DOM, incl. the {DEBOUNCE_MS} ms debounce (Chromium)", "page_typing"),
    ]
    lines = [
        "# The page: time to first result, warm, beside GET /search",
        "",
        f"Written by `python bench/bench_page.py {' '.join(sys.argv[1:])}` ({out['when']}, commit {out['commit']}; "
        f"load average at start {out['load_start']}, at end {out['load_end']}; 2 shared cores: compare within "
        "the table, ratios are the reliable part).",
        "",
        f"Index: {ix['rows']:,} chunks of CPython stdlib code (no tests), built with a stand-in embedder that has the "
        "bundled model's id, dimension and tokenizer (see the script); every query is embedded by the real bundled "
        f"model (ONNX). Server: `codeseam serve`'s app under uvicorn on 127.0.0.1, warm. {out['queries']} golden "
        f"queries (stdlib-dev) x {out['rounds']} rounds, the four arms interleaved per query; the highlighting cache "
        "(present.py) is cleared before each arm, so every arm highlights its hits afresh. Browser: Debian's "
        "headless Chromium (Selenium); times measured in the page with `performance.now()` from the `input` event "
        "(or Enter) to the first hit in the DOM, on a freshly loaded page once it is idle (its status requests done).",
        "",
        "| | p50 ms | p95 ms | n | p50 / API |",
        "|---|---:|---:|---:|---:|",
    ]
    for label, key in rows:
        lines.append(f"| {label} | {s[key]['p50']} | {s[key]['p95']} | {s[key]['n']} | {s[key]['p50'] / api50:.2f}x |")
    own = s["page_enter"]["p50"] - s["api_page"]["p50"]
    lines += [
        "",
        f"The page's own share (Enter minus its request through httpx, p50): {own:.1f} ms (fetch from the page, JSON, "
        f"building the DOM for 10 highlighted hits). The request the page makes costs {s['api_page']['p50'] / api50:.2f}x "
        "the plain `GET /search`: it ranks 50 hits (candidate depth 200 instead of 40) so that its pages are slices "
        "of one ranking, and highlights the 10 it shows with Pygments.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
