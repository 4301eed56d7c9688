"""Offline by design: ``index``, ``search`` and ``eval`` with the bundled model make no network
connection; with an HTTP embedding backend the only connections go to its host.

Each command runs as a real CLI subprocess with a ``sitecustomize.py`` on ``PYTHONPATH`` that
records every AF_INET/AF_INET6 ``connect`` and every name lookup the process makes, and
refuses those not explicitly allowed. Milvus Lite talks over a unix socket
(``store/lite.py``: ``unix:<tmp>/codeseam-*.sock``), which is local and allowed. The Milvus
Lite server is a C++ process that Python patches cannot see, so where the kernel permits it
the same commands also run inside a fresh network namespace (``unshare -n``: no interface up,
not even loopback) and must still succeed.
"""

from __future__ import annotations

import json
import os
import sys
import subprocess
import textwrap
from pathlib import Path

import pytest

from tests.test_crash import ROOT, cli_command

GUARD = textwrap.dedent('''
    """Test guard: log every inet connect and name lookup; refuse those not allowed."""
    import errno, json, os, socket

    _LOG = os.environ.get("CODESEAM_NET_LOG", "")
    _ALLOW = {a for a in os.environ.get("CODESEAM_NET_ALLOW", "").split(",") if a}
    _HOSTS = {a.rsplit(":", 1)[0] for a in _ALLOW}

    def _note(kind, target, allowed):
        if _LOG:
            with open(_LOG, "a") as fh:
                fh.write(json.dumps({"kind": kind, "to": target, "allowed": allowed, "pid": os.getpid()}) + "\\n")

    def _check(sock, address):
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            target = f"{address[0]}:{address[1]}"
            allowed = target in _ALLOW
            _note("connect", target, allowed)
            if not allowed:
                raise OSError(errno.ENETUNREACH, f"network blocked by the offline test: {target}")

    _connect, _connect_ex = socket.socket.connect, socket.socket.connect_ex

    def connect(self, address):
        _check(self, address)
        return _connect(self, address)

    def connect_ex(self, address):
        _check(self, address)
        return _connect_ex(self, address)

    _getaddrinfo = socket.getaddrinfo

    def getaddrinfo(host, *args, **kwargs):
        name = host.decode() if isinstance(host, bytes) else str(host)
        allowed = name in _HOSTS
        _note("lookup", name, allowed)
        if not allowed:
            raise socket.gaierror(socket.EAI_NONAME, f"name lookup blocked by the offline test: {name}")
        return _getaddrinfo(host, *args, **kwargs)

    socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo = connect, connect_ex, getaddrinfo
''')

REPO_FILES = {
    "geometry.py": textwrap.dedent('''\
        def polygon_area(points):
            """Area of a simple polygon by the shoelace formula."""
            total = 0.0
            for (x1, y1), (x2, y2) in zip(points, points[1:] + points[:1]):
                total += x1 * y2 - x2 * y1
            return abs(total) / 2


        def centroid(points):
            """Mean of the vertices."""
            n = len(points)
            return sum(p[0] for p in points) / n, sum(p[1] for p in points) / n
        '''),
    "textutil.py": textwrap.dedent('''\
        import re


        def slugify_title(title):
            """Lower-case words joined by dashes, for URLs."""
            words = re.findall(r"[a-z0-9]+", title.lower())
            return "-".join(words)
        '''),
}

GOLDEN = [
    {"id": "q1", "repo": "offrepo", "query": "area of a polygon", "kind": "prose",
     "gold": [{"path": "geometry.py", "symbol": "polygon_area", "start": 1, "end": 6}]},
    {"id": "q2", "repo": "offrepo", "query": "slugify_title", "kind": "symbol",
     "gold": [{"path": "textutil.py", "symbol": "slugify_title", "start": 4, "end": 7}]},
]


@pytest.fixture
def world(tmp_path: Path) -> dict:
    repo = tmp_path / "offrepo"
    repo.mkdir()
    for rel, text in REPO_FILES.items():
        (repo / rel).write_text(text)
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps(q) + "\n" for q in GOLDEN))
    guard = tmp_path / "guard"
    guard.mkdir()
    (guard / "sitecustomize.py").write_text(GUARD)
    return {"repo": repo, "golden": golden, "guard": guard, "tmp": tmp_path}


def guarded_env(world: dict, name: str, allow: str = "", **settings: str) -> tuple[dict, Path]:
    log = world["tmp"] / f"net-{name}.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAG_")}
    env.update(RAG_DATA_DIR=str(world["tmp"] / f"data-{name}"), RAG_CONFIG=os.devnull, RAG_KEEPALIVE="0",
               PYTHONPATH=os.pathsep.join(filter(None, [str(world["guard"]), env.get("PYTHONPATH")])),
               CODESEAM_NET_LOG=str(log), CODESEAM_NET_ALLOW=allow, **settings)
    for key in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        env.pop(key, None)  # the CLI must not depend on the caller setting these
    return env, log


def commands(world: dict) -> list[list[str]]:
    return [
        ["index", str(world["repo"])],
        ["search", "polygon area shoelace", "--json"],
        ["eval", str(world["golden"]), "--root", str(world["repo"]), "--cache-dir", str(world["tmp"] / "evalcache"),
         "--out", str(world["tmp"] / "evalout"), "--json"],
    ]


def run(args: list[str], env: dict, prefix: list[str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*(prefix or []), *cli_command(), *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)


def entries(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_the_guard_sees_and_blocks_connections(world):
    env, log = guarded_env(world, "selfcheck")
    code = textwrap.dedent("""
        import socket
        for attempt in (lambda: socket.socket().connect(("192.0.2.1", 80)),
                        lambda: socket.getaddrinfo("example.com", 443)):
            try:
                attempt()
            except OSError as exc:
                print("blocked", exc)
    """)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.count("blocked by the offline test") == 2, out.stderr
    assert [(e["kind"], e["to"], e["allowed"]) for e in entries(log)] == [
        ("connect", "192.0.2.1:80", False), ("lookup", "example.com", False)]


@pytest.mark.integration
def test_bundled_model_index_search_eval_make_no_connection(world):
    env, log = guarded_env(world, "bundled")  # the default backend: the bundled model
    for args in commands(world):
        out = run(args, env)
        assert out.returncode == 0, (args[0], out.stderr[-3000:])
        assert entries(log) == [], (args[0], entries(log))
    hits = json.loads(run(commands(world)[1], env).stdout)["hits"]
    assert hits and hits[0]["path"] == "geometry.py"


@pytest.mark.integration
def test_bundled_model_works_in_a_network_namespace(world):
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("unshare -n is not permitted here; the socket guard test covers Python-level connects")
    env, _ = guarded_env(world, "netns")
    for args in commands(world):
        out = run(args, env, prefix=["unshare", "-n"])
        assert out.returncode == 0, (args[0], out.stderr[-3000:])


def test_http_embedding_backend_connects_only_to_its_host(world, fake_openai):
    host, port = fake_openai.base_url.split("//")[1].split("/")[0].rsplit(":", 1)
    target = f"{host}:{port}"
    env, log = guarded_env(world, "openai", allow=target, RAG_EMBEDDING_BACKEND="openai",
                           RAG_EMBEDDING_BASE_URL=fake_openai.base_url, RAG_EMBEDDING_MODEL="m1")
    for args in commands(world)[:2]:
        out = run(args, env)
        assert out.returncode == 0, (args[0], out.stderr[-3000:])
    seen = entries(log)
    assert seen and {e["to"] for e in seen if e["kind"] == "connect"} == {target}
    assert all(e["allowed"] for e in seen)
    assert any(r["path"].endswith("/embeddings") for r in fake_openai.requests)
