"""`codeseam open`: the page of the server that holds the index. The keep-alive server listens
on a private unix socket, so it serves its page on a loopback port behind a fresh token that
the printed URL carries in its fragment. Real subprocesses on a temp data dir (the ``box``
fixture of test_keepalive.py), the fake embedder; the last test opens that URL in Chromium."""

from __future__ import annotations

import subprocess
import time
from urllib.parse import parse_qs, urlparse

import httpx
import pytest

from codeseam import owner
from tests.support.browser import chromium, require_browser
from tests.test_keepalive import CLI, box, cli, live, wait_dead  # noqa: F401 - box is a fixture


def opened(res: subprocess.CompletedProcess) -> tuple[str, str, dict]:
    """(base url, token, query) of the URL `codeseam open --no-browser` printed."""
    assert res.returncode == 0, res.stderr
    url = res.stdout.strip()
    parts = urlparse(url)
    assert parts.scheme == "http" and parts.hostname == "127.0.0.1" and parts.path == "/"
    token = parts.fragment.removeprefix("token=") if parts.fragment.startswith("token=") else ""
    return f"http://127.0.0.1:{parts.port}", token, parse_qs(parts.query)


def test_open_serves_the_keepalive_servers_page_behind_a_fresh_token(box):  # noqa: F811 - the pytest fixture imported above
    res = cli(box, "open", "--no-browser")
    base, token, query = opened(res)
    info = live(box)  # the keep-alive server was started for it
    assert len(token) >= 24 and query == {}
    page = httpx.get(base + "/")
    assert page.status_code == 200 and "app.js" in page.text  # the shell needs no token
    assert httpx.get(base + "/status").status_code == 401  # the data does
    auth = {"Authorization": f"Bearer {token}"}
    status = httpx.get(base + "/status", headers=auth).json()
    assert [r["repo"] for r in status["index"]["repos"]] == ["proj"]
    hits = httpx.get(base + "/search", params={"q": "compute_retry_delay", "highlight": "true"}, headers=auth).json()
    assert hits["hits"][0]["symbol"] == "compute_retry_delay" and hits["hits"][0]["lines"]
    assert httpx.post(base + "/page", headers=auth).status_code in (404, 405)  # only on the private socket

    again = opened(cli(box, "open", "--no-browser", "retry delay"))
    assert again[:2] == (base, token) and again[2] == {"q": ["retry delay"]}  # one page per server
    assert live(box).pid == info.pid
    # CLI calls still go through the same server, which the page keeps alive
    assert cli(box, "search", "parse_header_line", "--json").returncode == 0

    assert cli(box, "stop").returncode == 0 and wait_dead(info.pid, 15)
    with pytest.raises(httpx.TransportError):
        httpx.get(base + "/", timeout=2)  # the page stopped with its server


def test_open_prints_a_running_serves_url(box):  # noqa: F811 - the pytest fixture imported above
    proc = subprocess.Popen([*CLI, "serve", "--port", "0"], cwd=box["work"], env=box["env"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    box["pids"].add(proc.pid)
    try:
        deadline = time.monotonic() + 60
        while (info := owner.live_server(box["settings"])) is None or info.pid != proc.pid:
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
            time.sleep(0.05)
        base, token, _ = opened(cli(box, "open", "--no-browser"))
        assert base == info.url and token == ""  # its own page; no token needed on loopback
        assert httpx.get(base + "/status").status_code == 200
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_open_refuses_plainly_without_a_keepalive_server(box):  # noqa: F811 - the pytest fixture imported above
    res = cli(box, "open", "--no-browser", RAG_KEEPALIVE="0")
    assert res.returncode == 1 and res.stdout == ""
    assert res.stderr.startswith("error: no server holds the index") and "codeseam serve" in res.stderr


def test_the_opened_url_works_in_a_browser(box, tmp_path):  # noqa: F811 - the pytest fixture imported above
    require_browser()
    url = cli(box, "open", "--no-browser", "compute retry delay").stdout.strip()
    driver = chromium(tmp_path / "profile")
    try:
        driver.get(url)
        deadline = time.monotonic() + 30
        while not driver.find_elements("css selector", "#hits > li.hit"):
            assert time.monotonic() < deadline, driver.find_element("id", "search-notes").text
            time.sleep(0.1)
        first = driver.find_element("css selector", "#hits > li.hit").get_attribute("data-citation")
        assert first.startswith("retry.py:")
        assert "token" not in driver.current_url  # the fragment was taken out of the address
    finally:
        driver.quit()
        cli(box, "stop")
