"""A real browser for the page's tests: Debian's headless Chromium driven by Selenium.

Nothing is downloaded: the browser and its driver come from apt (``chromium``,
``chromium-driver``; ``.ci/run`` installs them) and Selenium is given both paths, so Selenium
Manager never runs. The flags keep Chromium off the network (background networking,
component updates, sync), which a closed network would refuse anyway.

``skip_reason()`` is None when the browser is there. Outside CI a missing browser skips the
browser tests with that reason; in CI (``CI`` set) it fails them: CI must run them.
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CHROMIUM = os.environ.get("CODESEAM_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = os.environ.get("CODESEAM_CHROMEDRIVER") or shutil.which("chromedriver") or "/usr/bin/chromedriver"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--disable-extensions", "--no-default-browser-check",
         "--window-size=1280,900", "--force-device-scale-factor=1", "--lang=en-US"]


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def skip_reason() -> str | None:
    """Why the browser tests cannot run here, or None."""
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not (Path(p).is_file() and os.access(p, os.X_OK))]
    if missing:
        return (f"no headless Chromium here ({', '.join(missing)} missing): "
                "`apt-get install -y chromium chromium-driver` (.ci/run does)")
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed: `pip install -e '.[dev]'`"
    return None


def require_browser() -> None:
    """Skip (outside CI) or fail (in CI) when the browser is missing."""
    import pytest

    reason = skip_reason()
    if reason is None:
        return
    if in_ci():
        pytest.fail(f"CI must run the browser tests: {reason}")
    pytest.skip(reason)


def chromium(user_data_dir: Path, *, width: int = 1280, height: int = 900):
    """A Selenium driver for a fresh headless Chromium profile in ``user_data_dir``."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--window-size={width},{height}")
    options.add_argument(f"--user-data-dir={user_data_dir}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    driver.set_script_timeout(30)
    return driver


@contextmanager
def served(app) -> Iterator[str]:
    """``app`` served by uvicorn in a thread on 127.0.0.1:<free port>."""
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    server = uvicorn.Server(uvicorn.Config(app, log_config=None, access_log=False, lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(15)
        sock.close()
