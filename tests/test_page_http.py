"""The page's side of the HTTP API, without a browser: paging and highlighting on GET /search,
what /status adds for the page, the assets and their headers, the keep-alive server's page
listener, and the wheel carrying the assets. Real uvicorn, Milvus Lite, tree-sitter; the fake
embedder."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from collections import Counter
from pathlib import Path

import httpx
import pytest

from codeseam.chunk.languages import language_label
from codeseam.service import Service
from codeseam.settings import load_settings
from codeseam.surfaces import http_page
from codeseam.surfaces.http import create_app
from tests.support.browser import served
from tests.support.fixtures import RETRY_PY

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pagehttp")
    repo = tmp / "work" / "proj"
    (repo / "h").mkdir(parents=True)
    (repo / "retry.py").write_text(RETRY_PY)
    (repo / "main.go").write_text("package main\n\nfunc Retry() {}\n")
    (repo / "README.md").write_text("# retry\n\nHow to retry requests.\n")
    for n in range(30):
        (repo / "h" / f"h{n:02d}.py").write_text(f"def retry_request_{n}(r):\n    return r.retry({n})\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (tmp / "cfg.toml").write_text("")
    env = {"RAG_CONFIG": str(tmp / "cfg.toml"), "RAG_DATA_DIR": str(tmp / "data"), "RAG_EMBEDDING_BACKEND": "fake",
           "RAG_EDITOR_URL": "idea://open?file={path}&line={line}"}
    service = Service(load_settings(env=env), cwd=tmp / "work").open()
    try:
        assert service.wait(service.start_index(str(repo)).id, 120).state == "done"
        with served(create_app(service)) as url, httpx.Client(base_url=url, timeout=60) as client:
            yield {"client": client, "url": url, "repo": repo, "service": service}
    finally:
        service.close()


def test_pages_are_consecutive_slices_of_one_ranking(site):
    c = site["client"]
    full = c.get("/search", params={"q": "retry request", "k": 40}).json()
    assert len(full["hits"]) > 20 and "total" not in full  # without paging: the body is as before
    pages = []
    for offset in range(0, 40, 7):
        body = c.get("/search", params={"q": "retry request", "k": 40, "offset": offset, "limit": 7}).json()
        assert body["total"] == len(full["hits"]) and body["offset"] == offset
        assert body["weak"] == full["weak"] and body["query"] == full["query"]
        pages += body["hits"]
    assert pages == full["hits"]
    past = c.get("/search", params={"q": "retry request", "k": 40, "offset": 60, "limit": 7}).json()
    assert past["hits"] == [] and past["total"] == len(full["hits"])
    assert c.get("/search", params={"q": "retry", "offset": 101}).status_code == 422
    assert c.get("/search", params={"q": "retry", "limit": 0}).status_code == 422


def test_highlight_adds_exact_lines_and_editor_links(site):
    c = site["client"]
    plain = c.get("/search", params={"q": "retry", "k": 30}).json()["hits"]
    lit = c.get("/search", params={"q": "retry", "k": 30, "highlight": "true"}).json()["hits"]
    assert [{k: h[k] for k in p} for h, p in zip(lit, plain, strict=True)] == plain  # nothing else changes
    root = str(site["repo"].resolve())
    langs = set()
    for h in lit:
        lines = ["".join(t for _, t in line) for line in h["lines"]]
        assert lines == h["text"].rstrip("\n").split("\n") and len(lines) == h["end_line"] - h["start_line"] + 1
        assert h["editor_url"] == f"idea://open?file={root}/{h['path']}&line={h['start_line']}"  # RAG_EDITOR_URL
        langs.add(h["language"])
    assert {"python", "go"} <= langs


def test_status_lists_languages_and_the_allowed_roots(site):
    c = site["client"]
    status = c.get("/status").json()
    [repo] = status["index"]["repos"]
    files = c.get("/repos/proj").json()["files"]
    assert repo["languages"] == dict(Counter(language_label(p) for p in files).most_common())
    assert list(repo["languages"].values()) == sorted(repo["languages"].values(), reverse=True)
    roots = {r["path"]: r["from"] for r in status["allowed_roots"]}
    assert roots[str(site["repo"].resolve())] == "indexed repo"
    assert roots[str(site["repo"].parent.resolve())] == "server working directory"


def test_assets_are_served_with_their_types_and_a_strict_policy(site):
    c = site["client"]
    for path, kind in (("/", "text/html"), ("/docs", "text/html"), ("/assets/app.js", "text/javascript"), ("/assets/search.js", "text/javascript"),
                       ("/assets/docs.js", "text/javascript"), ("/assets/page.css", "text/css"),
                       ("/assets/highlight.css", "text/css"), ("/assets/icon.svg", "image/svg+xml")):
        res = c.get(path)
        assert res.status_code == 200 and res.headers["content-type"].startswith(kind), path
        assert "script-src 'self'" in res.headers["content-security-policy"]
        assert res.headers["x-content-type-options"] == "nosniff" and res.headers["x-frame-options"] == "DENY"
        text = res.text.replace('xmlns="http://www.w3.org/2000/svg"', "")  # a namespace name, not a fetch
        assert "http://" not in text and "https://" not in text, path  # nothing from elsewhere
    assert "content-security-policy" in c.get("/status").headers  # every response
    for path in ("/assets/nope.js", "/assets/index.html", "/assets/..%2Fhttp.py", "/assets/%2e%2e/http.py"):
        assert c.get(path).status_code == 404, path
    assert c.post("/page").status_code in (404, 405)  # only the keep-alive server opens a page
    html = c.get("/").text
    for name in ("app.js", "page.css", "highlight.css", "icon.svg"):
        assert f"/assets/{name}" in html
    web = Path(http_page.__file__).parent / "web"  # every module the page imports is served
    imports = {m for p in web.glob("*.js") for m in re.findall(r'from "\./([\w.]+)"', p.read_text())}
    assert imports and imports <= set(http_page.ASSETS)
    assert {p.name for p in web.iterdir() if p.suffix in (".js", ".css", ".svg")} == set(http_page.ASSETS)


def test_the_keepalive_page_listener_serves_the_same_index_behind_its_token(site):
    app = create_app(site["service"], page_server=True)
    with served(app) as url:
        first = httpx.post(url + "/page", json={"port": 0}).json()
        again = httpx.post(url + "/page", json={}).json()
        assert first == again and len(first["token"]) >= 24 and first["url"].startswith("http://127.0.0.1:")
        page = first["url"]
        assert httpx.get(page + "/").status_code == 200
        assert httpx.get(page + "/status").status_code == 401
        auth = {"Authorization": "Bearer " + first["token"]}
        ours = httpx.get(page + "/search", params={"q": "retry"}, headers=auth).json()
        assert ours == site["client"].get("/search", params={"q": "retry"}).json()
        for close in app.state.closers:  # what serve() does when the server stops
            close()
        with pytest.raises(httpx.TransportError):
            httpx.get(page + "/", timeout=2)


def test_the_wheel_carries_the_pages_assets(tmp_path):
    res = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                          "-w", str(tmp_path), str(ROOT)], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    [wheel] = tmp_path.glob("codeseam-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    web = ROOT / "src" / "codeseam" / "surfaces" / "web"
    assert {f"codeseam/surfaces/web/{p.name}" for p in web.iterdir()} <= names
