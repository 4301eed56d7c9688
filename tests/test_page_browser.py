"""The page (``GET /``) in a real browser: Debian's headless Chromium driven by Selenium, against
a real server (uvicorn on 127.0.0.1), real Milvus Lite, real tree-sitter, the fake embedder and
the scripted loopback LLM (tests/support/fake_openai.py).

The oracle for what the page shows is the HTTP API itself: the hits on a page are the API's
hits for the same query and filters, in the same order. Skipped outside CI when Chromium is
not installed (tests/support/browser.py says how to install it); CI must run these."""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path
from urllib.parse import parse_qs, quote, urlparse

import httpx
import pytest

from codeseam.service import Service
from codeseam.settings import load_settings
from codeseam.surfaces.http import create_app
from tests.support.browser import chromium, require_browser, served
from tests.support.fake_openai import FakeOpenAI, Reply
from tests.support.fixtures import RETRY_PY

pytestmark = pytest.mark.usefixtures("browser_present")
TOKEN = "page-token-for-tests-0123456789"
PAGE_SIZE = 10
Q = "compute retry delay exponential backoff jitter"
HOSTILE_DIR = 'evil"><img src=x onerror=window.__pwned=1>'
PWN = "window.__pwned=1"
HOSTILE_FILES = {
    "xss.html": f'<script>{PWN}</script>\n<img src=x onerror="{PWN}">\n<a href="javascript:{PWN}">click</a>\n',
    "notes.md": f'# pwned notes\n\n[click me](javascript:{PWN})\n\n"><img src=x onerror={PWN}>\n<svg onload={PWN}>\n',
    f'"><img src=x onerror={PWN}>.py': f'def pwned_handler():\n    return "<script>{PWN}</script>"\n',
    f"javascript:{PWN}.js": f'function pwnedLink() {{ location.href = "javascript:{PWN}"; }}\n',
}


@pytest.fixture(scope="module")
def browser_present():
    require_browser()


def handler(n: int) -> str:
    return (f"def handle_request_{n:02d}(request):\n"
            f'    """Handle request number {n} and retry it when the backend fails."""\n'
            f"    return request.retry({n})\n")


def git_repo(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """One index (repos `proj` and `evil`) behind an open app and a token-protected one, and an
    empty index with no chat model configured."""
    tmp = tmp_path_factory.mktemp("page")
    work = tmp / "work"
    files = {"pkg/retry.py": RETRY_PY, "config.go": "package config\n\nfunc ParseJSON(data []byte) error {\n\treturn nil\n}\n",
             **{f"handlers/h{n:02d}.py": handler(n) for n in range(27)},
             "tests/test_retry.py": "from pkg.retry import compute_retry_delay\n\n\ndef test_retry_delay_grows():\n"
                                    "    assert compute_retry_delay(3) >= 0\n",
             "README.md": "# proj\n\nHandles requests and retries them when the backend fails.\n"}
    proj = git_repo(work / "proj", files)
    evil = git_repo(work / HOSTILE_DIR, HOSTILE_FILES)
    bulk = git_repo(work / "bulk", {f"m{n:03d}.py": f"def bulk_function_{n}(x):\n    return x + {n}\n" for n in range(300)})
    (tmp / "cfg.toml").write_text("")
    with FakeOpenAI() as llm:
        env = {"RAG_CONFIG": str(tmp / "cfg.toml"), "RAG_DATA_DIR": str(tmp / "data"), "RAG_EMBEDDING_BACKEND": "fake",
               "RAG_LLM_MODEL": "fake-model", "RAG_LLM_BASE_URL": llm.base_url, "RAG_LLM_TIMEOUT": "10",
               "RAG_WEAK_THRESHOLD": "0.1"}
        service = Service(load_settings(env=env), cwd=work).open()
        bare = Service(load_settings(env={**env, "RAG_DATA_DIR": str(tmp / "bare"), "RAG_LLM_MODEL": ""}), cwd=work).open()
        for path, repo_id in ((proj, "proj"), (evil, "evil")):
            job = service.wait(service.start_index(str(path), repo_id).id, 120)
            assert job.state == "done", job.line()
        try:
            with served(create_app(service)) as url, served(create_app(service, token=TOKEN)) as locked, \
                    served(create_app(bare)) as bare_url:
                driver = chromium(tmp / "profile")
                try:
                    yield {"url": url, "locked": locked, "bare": bare_url, "driver": driver, "llm": llm,
                           "proj": proj, "evil": evil, "bulk": bulk, "tmp": tmp}
                finally:
                    driver.quit()
        finally:
            service.close()
            bare.close()


# -- helpers ----------------------------------------------------------------------------------

def wait_for(driver, condition, timeout: float = 20.0, what: str = ""):
    """Poll ``condition`` until it holds; an element the page re-rendered in between (stale)
    is looked up again on the next poll."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.05,
                         ignored_exceptions=(StaleElementReferenceException,)).until(lambda d: condition(d), message=what)


def js(driver, script: str, *args):
    return driver.execute_script(script, *args)


def shown(driver, where: str = "#hits") -> list[str]:
    """The citations (path:start-end) of the hits on the page, in order."""
    return js(driver, f"return [...document.querySelectorAll('{where} > li.hit')].map(li => li.dataset.citation)")


def api_hits(site, q: str, **params) -> dict:
    res = httpx.get(site["url"] + "/search", params={"q": q, **params}, timeout=30)
    assert res.status_code == 200, res.text
    return res.json()


def cites(hits: list[dict]) -> list[str]:
    return [f"{h['path']}:{h['start_line']}-{h['end_line']}" for h in hits]


def page_hits(site, q: str, page: int = 1, **filters) -> list[str]:
    """The API's hits for page ``page`` of the page's query (pages of 10 out of 50 ranked)."""
    body = api_hits(site, q, k=50, offset=(page - 1) * PAGE_SIZE, limit=PAGE_SIZE, **filters)
    return cites(body["hits"])


def open_page(site, path: str = "/", base: str | None = None):
    d = site["driver"]
    d.get((base or site["url"]) + path)
    wait_for(d, lambda d: js(d, "return document.readyState") == "complete" and js(d, "return !!window.codeseamPage"))
    return d


def search_settled(d, expected: list[str]) -> bool:
    return shown(d) == expected and not d.find_elements("css selector", "#search-notes .busy")


def query_of(d) -> dict[str, list[str]]:
    return parse_qs(urlparse(d.current_url).query)


# -- search -----------------------------------------------------------------------------------

def test_search_as_you_type_shows_highlighted_hits_with_line_numbers_and_editor_links(site):
    d = open_page(site)
    box = d.find_element("id", "q")
    assert js(d, "return document.activeElement.id") == "q"
    box.send_keys(Q)  # keystrokes arrive faster than the debounce
    expected = page_hits(site, Q)
    assert expected and expected[0].startswith("pkg/retry.py:")
    wait_for(d, lambda d: search_settled(d, expected), what="the API's hits, in its order")
    assert len(js(d, "return window.codeseamPage.timings")) < len(Q) / 2  # debounced
    assert query_of(d) == {"q": [Q]}

    hit = api_hits(site, Q, k=50, limit=1, highlight="true")["hits"][0]
    first = d.find_element("css selector", "#hits > li.hit")
    assert first.find_element("css selector", ".loc").text == expected[0]
    assert first.find_element("css selector", ".symbol").text == hit["symbol"] == "compute_retry_delay"
    assert first.find_element("css selector", ".lang").text == "python"
    numbers = [int(n) for n in js(d, "return [...arguments[0].querySelectorAll('.ln')].map(e => e.dataset.n)", first)]
    assert numbers == list(range(hit["start_line"], hit["end_line"] + 1))
    code = js(d, "return [...arguments[0].querySelectorAll('.src')].map(e => e.textContent)", first)
    assert code == hit["text"].rstrip("\n").split("\n")  # exactly the indexed lines
    classes = set(js(d, "return [...arguments[0].querySelectorAll('.src span')].map(e => e.className)", first))
    assert {"k", "nf"} <= classes  # keywords and the function name are highlighted
    color = js(d, "return getComputedStyle(arguments[0].querySelector('.src .k')).color", first)
    plain = js(d, "return getComputedStyle(arguments[0].querySelector('.src')).color", first)
    assert color != plain  # the stylesheet from Pygments applies
    root = str(site["proj"].resolve())
    want = f"vscode://file{quote(root + '/' + hit['path'], safe='/')}:{hit['start_line']}"
    assert first.find_element("css selector", "a.open").get_attribute("href") == want
    assert first.find_element("css selector", "a.loc").get_attribute("href") == want


def test_a_pasted_issue_of_20000_characters_is_searched_through_post(site):
    d = open_page(site)
    issue = ("retry delay is wrong after a failed request\n"
             + "\n".join(f"DEBUG attempt {i} slept {i % 9} s" for i in range(2000)))[:20_000]
    res = httpx.post(site["url"] + "/search", timeout=30,
                     json={"q": issue, "k": 50, "offset": 0, "limit": PAGE_SIZE, "highlight": True})
    assert res.status_code == 200, res.text
    expected = cites(res.json()["hits"])
    assert expected
    js(d, "const dt = new DataTransfer(); dt.setData('text/plain', arguments[0]);"
          "document.getElementById('q').dispatchEvent(new ClipboardEvent('paste', {clipboardData: dt,"
          " bubbles: true, cancelable: true}))", issue)  # a paste keeps the issue's lines
    wait_for(d, lambda d: search_settled(d, expected), what="the POSTed search's hits, the issue's lines kept")
    assert not d.find_elements("css selector", "#search-notes .error")


def test_the_url_holds_query_and_filters_and_reloading_shows_the_same_results(site):
    d = open_page(site, "/?q=" + quote("handle request retry") + "&lang=python&path=" + quote("handlers/**"))
    expected = page_hits(site, "handle request retry", lang="python", path="handlers/**")
    assert len(expected) == PAGE_SIZE and all(c.startswith("handlers/") for c in expected)
    wait_for(d, lambda d: search_settled(d, expected))
    assert d.find_element("id", "q").get_attribute("value") == "handle request retry"
    assert d.find_element("id", "f-lang").get_attribute("value") == "python"
    assert d.find_element("id", "f-path").get_attribute("value") == "handlers/**"

    from selenium.webdriver.support.ui import Select

    Select(d.find_element("id", "f-lang")).select_by_value("go")
    res = httpx.get(site["url"] + "/search", params={"q": "handle request retry", "lang": "go", "path": "handlers/**"})
    assert res.status_code == 404  # no Go file under handlers/: an error, never an empty list
    wait_for(d, lambda d: "no file" in d.find_element("id", "search-notes").text)
    assert shown(d) == [] and "lang=go" in d.current_url
    assert d.find_element("css selector", "#search-notes .error .hint").text

    from selenium.webdriver.common.keys import Keys

    d.find_element("id", "f-path").send_keys(Keys.CONTROL, "a", Keys.BACKSPACE)  # an input event, as a person
    Select(d.find_element("id", "f-repo")).select_by_value("proj")
    expected = page_hits(site, "handle request retry", lang="go", repo="proj")
    wait_for(d, lambda d: search_settled(d, expected) and expected, what="go hits in proj")
    assert all(c.startswith("config.go:") for c in expected)
    assert query_of(d) == {"q": ["handle request retry"], "repo": ["proj"], "lang": ["go"]}
    d.refresh()  # a bookmark or a shared link shows the same results
    wait_for(d, lambda d: search_settled(d, expected))
    assert d.find_element("id", "f-repo").get_attribute("value") == "proj"
    langs = js(d, "return [...document.querySelectorAll('#f-lang option')].map(o => o.value)")
    [proj] = [r for r in httpx.get(site["url"] + "/status").json()["index"]["repos"] if r["repo"] == "proj"]
    assert set(langs) == {""} | set(proj["languages"]) and {"python", "go"} <= set(langs)  # from GET /status


def test_paging_through_hits_shows_consecutive_pages_of_one_ranking(site):
    q = "handle request number retry backend"
    d = open_page(site, "/?q=" + quote(q) + "&repo=proj")
    ranking = cites(api_hits(site, q, k=50, repo="proj")["hits"])
    assert len(ranking) > 2 * PAGE_SIZE
    pages = [ranking[i:i + PAGE_SIZE] for i in range(0, len(ranking), PAGE_SIZE)]
    wait_for(d, lambda d: search_settled(d, pages[0]))
    assert d.find_element("id", "prev-page").get_attribute("disabled") is not None
    assert d.find_element("id", "page-info").text == f"hits 1\u201310 of {len(ranking)}"
    d.find_element("id", "next-page").click()
    wait_for(d, lambda d: search_settled(d, pages[1]))
    assert query_of(d)["page"] == ["2"] and d.find_element("id", "page-info").text.startswith("hits 11\u201320")
    d.find_element("css selector", "body").send_keys("n")  # the key works too
    wait_for(d, lambda d: search_settled(d, pages[2]))
    seen = pages[0] + pages[1] + shown(d)
    assert len(set(seen)) == len(seen)  # no hit twice across pages
    d.back()  # the browser's history follows the pages
    wait_for(d, lambda d: search_settled(d, pages[1]))
    d.find_element("css selector", "body").send_keys("p")
    wait_for(d, lambda d: search_settled(d, pages[0]))
    d.refresh()
    wait_for(d, lambda d: search_settled(d, pages[0]))


def test_keyboard_moves_through_hits_copies_the_citation_and_opens_the_editor_link(site):
    q = "handle request number retry backend"
    d = open_page(site, "/?q=" + quote(q) + "&repo=proj")
    expected = page_hits(site, q, repo="proj")
    wait_for(d, lambda d: search_settled(d, expected))
    d.execute_cdp_cmd("Browser.grantPermissions", {"origin": site["url"],
                                                  "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]})
    body = d.find_element("css selector", "body")
    body.send_keys("/")
    assert js(d, "return document.activeElement.id") == "q"
    from selenium.webdriver.common.keys import Keys

    d.find_element("id", "q").send_keys(Keys.ARROW_DOWN)
    selected = lambda d: js(d, "const s = document.querySelector('#hits > li.selected'); return s && s.dataset.citation")  # noqa: E731
    assert selected(d) == expected[0] and js(d, "return document.activeElement.dataset.citation") == expected[0]
    active = lambda: d.switch_to.active_element  # noqa: E731
    active().send_keys("j")
    active().send_keys("j")
    active().send_keys("k")
    assert selected(d) == expected[1]
    active().send_keys("c")
    wait_for(d, lambda d: js(d, "return document.querySelector('#hits > li.selected').dataset.copied") == expected[1])
    clip = d.execute_async_script("navigator.clipboard.readText().then(arguments[0], e => arguments[0]('ERR ' + e))")
    assert clip == expected[1]
    # Enter follows the selected hit's editor link (caught here: headless Chromium has no editor)
    js(d, "document.addEventListener('click', e => { const a = e.target.closest('a.open');"
          " if (a) { e.preventDefault(); window.__opened = a.href; } }, true)")
    active().send_keys(Keys.ENTER)
    href = js(d, "return window.__opened")
    assert href.startswith("vscode://file/") and href.endswith(":" + expected[1].rsplit(":", 1)[1].split("-")[0])
    assert quote(expected[1].split(":")[0], safe="/") in href
    active().send_keys(Keys.ESCAPE)
    assert js(d, "return document.activeElement.id") == "q"


def test_the_weak_note_shows_exactly_when_the_api_says_weak(site):
    d = open_page(site)
    seen = set()
    for q in ("compute retry delay", "zebra quantum violin"):
        weak = api_hits(site, q, k=50)["weak"]
        seen.add(weak)
        box = d.find_element("id", "q")
        box.clear()
        box.send_keys(q)
        expected = page_hits(site, q)
        wait_for(d, lambda d, q=q, expected=expected: search_settled(d, expected)
                 and d.find_element("id", "hits").get_attribute("data-query") == q)
        notes = d.find_element("id", "search-notes").text
        assert ("Nothing close to this query was found" in notes) == weak, (q, notes)
    assert seen == {True, False}  # both cases were seen


def test_stale_hits_and_partial_results_are_marked(site):
    """Hits with "stale": true and a note, results with "partial": true and freshness notes
    (issues 13 and 16): the page's rendering of those fields, fed by a wrapped fetch that adds them to the server's answer."""
    d = open_page(site)
    js(d, """
        const real = window.fetch;
        window.fetch = async (url, opts) => {
          const res = await real(url, opts);
          if (!String(url).startsWith('/search')) return res;
          const body = await res.json();
          body.partial = true;
          if (body.hits.length) { body.hits[0].stale = true; body.hits[0].note = 'file changed since indexing: lines moved'; }
          body.notes = ['1 changed file not synced yet'];
          return new Response(JSON.stringify(body), {status: res.status, headers: {'Content-Type': 'application/json'}});
        };""")
    d.find_element("id", "q").send_keys("compute retry delay")
    expected = page_hits(site, "compute retry delay")
    wait_for(d, lambda d: search_settled(d, expected))
    badges = d.find_elements("css selector", "#hits .badge.stale")
    assert len(badges) == 1 and badges[0].text == "stale" and badges[0].is_displayed()
    assert "still being built" in d.find_element("css selector", "#search-notes .partial").text
    [why] = d.find_elements("css selector", "#hits .hit-note")  # the hit's note, on the stale hit only
    assert why.text == "file changed since indexing: lines moved" and why.is_displayed()
    assert "not synced yet" in d.find_element("css selector", "#search-notes .fresh").text


def test_role_filter_follows_the_api(site):
    params = {p["name"]: p for p in httpx.get(site["url"] + "/openapi.json").json()["paths"]["/search"]["get"]["parameters"]}
    d = open_page(site)
    wait_for(d, lambda d: js(d, "return window.codeseamPage.status !== null"))
    if "role" not in params:
        assert not d.find_element("id", "f-role").is_displayed()  # no filter the API does not have
        pytest.skip("GET /search has no `role` parameter yet (issue 12): the page hides the role filter")
    q = "retry delay grows"
    d = open_page(site, "/?repo=proj&q=" + quote(q))
    wait_for(d, lambda d: shown(d))
    [proj] = [r for r in httpx.get(site["url"] + "/status").json()["index"]["repos"] if r["repo"] == "proj"]
    roles = js(d, "return [...document.querySelectorAll('#f-role option')].map(o => o.value).filter(Boolean)")
    assert {"source", "test", "docs"} <= set(roles) and set(proj["roles"]) <= set(roles)  # from GET /status
    labels = set(js(d, "return [...document.querySelectorAll('#hits .badge.role')].map(e => e.textContent)"))
    assert "source" in labels  # every hit says its role
    from selenium.webdriver.support.ui import Select

    Select(d.find_element("id", "f-role")).select_by_value("test")
    expected = page_hits(site, q, repo="proj", role="test")
    assert expected and all(c.startswith("tests/") for c in expected)
    wait_for(d, lambda d: search_settled(d, expected) and query_of(d).get("role") == ["test"])
    labels = js(d, "return [...document.querySelectorAll('#hits .badge.role')].map(e => e.textContent)")
    assert labels and set(labels) == {"test"}
    d.refresh()
    wait_for(d, lambda d: search_settled(d, expected))
    assert d.find_element("id", "f-role").get_attribute("value") == "test"


# -- ask --------------------------------------------------------------------------------------

def test_ask_streams_the_answer_and_links_citations_to_their_hits(site):
    answer = ("The delay doubles with each attempt and is capped [1] (see `compute_retry_delay`).\n\n"
              "Callers retry through the same helper [1, 9].\n\nThis paragraph cites nothing.")
    site["llm"].responder = lambda body: Reply(answer, chunks=8, piece_delay=0.15)
    d = open_page(site, "/?view=ask")
    assert d.find_element("id", "view-ask").is_displayed()
    d.find_element("id", "question").send_keys("how is the retry delay computed?")
    d.find_element("id", "ask-button").click()
    partial = wait_for(d, lambda d: js(d, "const a = document.getElementById('answer');"
                                          "return a.classList.contains('streaming') && a.textContent.length > 0 && a.textContent"))
    assert answer.startswith(partial) and len(partial) < len(answer)  # it came in piece by piece
    wait_for(d, lambda d: d.find_elements("css selector", "#ask-sources > li"))
    links = d.find_elements("css selector", "#answer a.cite")
    assert {a.get_attribute("href").rsplit("#", 1)[1] for a in links} == {"source-1"}
    source = d.find_element("id", "source-1")
    hit = source.find_element("css selector", "li.hit")
    assert hit.get_attribute("data-citation") == cites(api_hits(site, "how is the retry delay computed?")["hits"])[0]
    assert hit.find_elements("css selector", ".src .k")  # the cited code, highlighted
    warnings = d.find_element("id", "ask-warnings").text
    assert "removed citation [9]" in warnings and "cite no source" in warnings
    assert d.find_element("css selector", "#answer .uncited").text == "(uncited)"
    assert d.find_element("css selector", "#answer p code").text == "compute_retry_delay"  # inline code, as text
    links[0].click()
    assert urlparse(d.current_url).fragment == "source-1"

    site["llm"].responder = lambda body: Reply("It probably sleeps a while.")  # cites nothing
    d.find_element("id", "ask-button").click()
    wait_for(d, lambda d: d.find_elements("css selector", "#ask-warnings .unverified"))
    text = d.find_element("css selector", "#ask-warnings .unverified").text
    assert "Unverified" in text and "treat it as unverified" in text
    assert d.find_elements("css selector", "#ask-sources > li") == []


def test_ask_says_plainly_when_no_model_is_configured(site):
    d = open_page(site, "/?view=ask", base=site["bare"])
    note = wait_for(d, lambda d: d.find_elements("css selector", "#ask-notes .llm-off"))[0]
    assert "No chat model is configured" in note.text and "RAG_LLM_MODEL" in note.text
    assert d.find_element("id", "ask-button").get_attribute("disabled") is not None


# -- status and indexing ----------------------------------------------------------------------

def test_status_shows_the_index_and_an_indexing_job_runs_to_the_end(site):
    d = open_page(site, "/?view=status")
    status = httpx.get(site["url"] + "/status").json()
    wait_for(d, lambda d: len(d.find_elements("css selector", "#repos tbody tr[data-repo]")) == len(status["index"]["repos"]))
    for repo in status["index"]["repos"]:
        want = [repo["repo"], repo["root"], str(repo["files"]), str(repo["chunks"]),
                ", ".join(f"{k} {v}" for k, v in repo["languages"].items())]
        # read in one script call: the status view re-renders as it polls, so elements found
        # by one call can be gone by the next
        def cells(d, name: str = repo["repo"]) -> list[str]:
            return js(d, "return [...document.querySelectorAll(`#repos tr[data-repo=\"${arguments[0]}\"] td`)]"
                         ".map(td => td.innerText.trim())", name)

        wait_for(d, lambda d, cells=cells, want=want: cells(d)[:5] == want, what=f"the row of {repo['repo']}: {want}")
    assert str(site["bulk"].parent) in d.find_element("id", "allowed-roots").text

    js(d, """window.__states = [];
             new MutationObserver(() => { for (const j of document.querySelectorAll('#jobs .job'))
               window.__states.push([j.id, j.dataset.state, j.querySelector('progress') ? 'bar' : '']); })
             .observe(document.getElementById('jobs'), {childList: true, subtree: true});""")
    d.find_element("id", "index-path").send_keys(str(site["bulk"]))
    d.find_element("css selector", "#index-form button").click()
    wait_for(d, lambda d: "is done" in d.find_element("id", "index-notes").text, timeout=120, what="the job finished")
    job = next(j for j in httpx.get(site["url"] + "/status").json()["jobs"] if j["repo_id"] == "bulk")
    states = [(state, bar) for where, state, bar in js(d, "return window.__states") if where == "job-" + job["id"]]
    assert ("running", "bar") in states and states[-1] == ("done", "")  # progress was shown, then the end
    wait_for(d, lambda d: js(d, "const h = document.querySelector(arguments[0]); return h ? h.innerText : ''",
                             f"#job-{job['id']} .hint").startswith("300 files indexed"), what="the job's summary")
    wait_for(d, lambda d: d.find_elements("css selector", "#repos tr[data-repo='bulk']"))
    # the new repo is searchable from the page and offered as a filter
    d.find_element("id", "nav-search").click()
    options = js(d, "return [...document.querySelectorAll('#f-repo option')].map(o => o.value)")
    assert "bulk" in options

    d.find_element("id", "nav-status").click()
    d.find_element("id", "index-path").send_keys("/etc")
    d.find_element("css selector", "#index-form button").click()
    err = wait_for(d, lambda d: d.find_elements("css selector", "#index-notes .error"))[0]
    assert "/etc" in err.text  # outside the allowed roots: refused, with the reason


# -- safety -----------------------------------------------------------------------------------

def test_a_hostile_repo_shows_its_text_and_runs_none_of_it(site):
    d = open_page(site, "/?repo=evil&q=" + quote("pwned onerror script javascript click"))
    expected = page_hits(site, "pwned onerror script javascript click", repo="evil")
    assert len(expected) == len(HOSTILE_FILES)
    wait_for(d, lambda d: search_settled(d, expected))
    assert js(d, "return window.__pwned") is None
    assert js(d, "return document.querySelectorAll('img, svg, iframe, object, embed').length") == 0
    assert js(d, "return document.scripts.length") == 1  # app.js only (it imports the other modules)
    assert js(d, "return [...document.querySelectorAll('a[href]')].filter(a => !/^(https?|vscode):/.test(a.href)).length") == 0
    text = d.find_element("id", "hits").text
    for needle in (f"<script>{PWN}</script>", f'<img src=x onerror="{PWN}">', f"[click me](javascript:{PWN})",
                   f'"><img src=x onerror={PWN}>.py', f"javascript:{PWN}.js"):
        assert needle in text, needle  # shown as text, exactly
    evil_root = str(site["evil"].resolve())
    for a in d.find_elements("css selector", "#hits a.open"):
        href = a.get_attribute("href")
        assert href.startswith("vscode://file/") and '"' not in href and "<" not in href and " " not in href
        assert quote(evil_root, safe="/") in href
    # ask: the model's reply and the sources are text too
    site["llm"].responder = lambda body: Reply(f'See <img src=x onerror="{PWN}"> and <script>{PWN}</script> [1].')
    d.get(site["url"] + "/?view=ask")
    from selenium.webdriver.support.ui import Select

    wait_for(d, lambda d: d.find_elements("css selector", "#ask-repo option[value='evil']"))
    Select(d.find_element("id", "ask-repo")).select_by_value("evil")
    d.find_element("id", "question").send_keys("pwned onerror script javascript click")
    d.find_element("id", "ask-button").click()
    wait_for(d, lambda d: d.find_elements("css selector", "#ask-sources > li"))
    assert "<img src=x" in d.find_element("id", "answer").text
    # status: the folder name is text as well
    d.get(site["url"] + "/?view=status")
    wait_for(d, lambda d: HOSTILE_DIR in d.find_element("id", "repos").text)
    assert js(d, "return window.__pwned") is None
    assert js(d, "return document.querySelectorAll('img, svg, iframe').length") == 0
    # the policy itself: a script injected into the page is refused by the browser
    js(d, "window.__blocked = 0; document.addEventListener('securitypolicyviolation', () => window.__blocked++);"
          "const s = document.createElement('script'); s.textContent = 'window.__pwned = 1';"
          "document.body.appendChild(s);")
    wait_for(d, lambda d: js(d, "return window.__blocked") >= 1)
    assert js(d, "return window.__pwned") is None


def test_every_asset_comes_from_the_server_itself(site):
    for path in ("/?q=retry", "/?view=status", "/docs"):
        d = open_page(site, path) if path != "/docs" else site["driver"]
        if path == "/docs":
            d.get(site["url"] + "/docs")
            wait_for(d, lambda d: d.find_elements("css selector", "#endpoints .endpoint"))
        time.sleep(0.3)
        urls = js(d, "return performance.getEntriesByType('resource').map(e => e.name)")
        assert urls and all(u.startswith(site["url"] + "/") for u in urls), urls
    titles = [e.text for e in d.find_elements("css selector", "#endpoints h3")]
    assert any(t.endswith("/search") for t in titles) and any(t.endswith("/ask") for t in titles)
    search = d.find_element("id", "get-/search").text
    for param in ("q", "repo", "lang", "path", "k", "offset", "highlight"):
        assert re.search(rf"^{param} ", search, re.M), param


def test_a_token_server_asks_for_the_token_and_the_url_fragment_can_carry_it(site):
    d = open_page(site, "/?q=" + quote("compute retry delay"), base=site["locked"])
    js(d, "localStorage.clear()")
    d.refresh()
    wait_for(d, lambda d: d.find_element("id", "token-panel").is_displayed())
    assert "bearer token" in d.find_element("id", "search-notes").text
    d.find_element("id", "token-input").send_keys("wrong-token-0123456789")
    d.find_element("css selector", "#token-form button").click()
    wait_for(d, lambda d: d.find_element("id", "token-panel").is_displayed())
    d.find_element("id", "token-input").send_keys(TOKEN)
    d.find_element("css selector", "#token-form button").click()
    expected = page_hits(site, "compute retry delay")
    wait_for(d, lambda d: search_settled(d, expected))
    assert not d.find_element("id", "token-panel").is_displayed()

    js(d, "localStorage.clear()")
    d.get(site["locked"] + "/?q=" + quote("compute retry delay") + "#token=" + TOKEN)
    wait_for(d, lambda d: search_settled(d, expected))
    assert "token" not in d.current_url  # taken out of the address bar and history
    assert js(d, "return localStorage.getItem('codeseam.token')") == TOKEN
    js(d, "localStorage.clear()")


def test_headers_forbid_inline_scripts(site):
    res = httpx.get(site["url"] + "/")
    csp = res.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "default-src 'none'" in csp
    assert res.headers["x-content-type-options"] == "nosniff"
    html = res.text
    assert not re.search(r"<script(?![^>]*\bsrc=)", html)  # no inline script
    assert not re.search(r"\son[a-z]+=", html) and "style=" not in html  # no inline handlers or styles
    assert json.loads(httpx.get(site["url"] + "/status").text)["index"]  # the API is unchanged
