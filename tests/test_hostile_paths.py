"""Issue 40, finding 2: a repository cannot make codeseam read a file outside it.

The attack: a tracked folder (``conf/``) is swapped for a symlink to a folder outside the
repo that holds the user's credentials (a planted AWS secret key). git still lists
``conf/settings.py`` as tracked, and every path under it resolves through the link. Real git
repos, real Milvus Lite, real file events, the fake embedder, a loopback LLM: the outside
file must not be indexed, returned by search or refs, or sent by ask, on a first index, an
incremental re-sync, a stat-scan sync, a watcher sync and a freshness check; also with a repo
``.codeseamallow`` holding ``.`` (which would store it unscrubbed).
"""

from __future__ import annotations

import os
import secrets
import shutil
import string
from pathlib import Path

import pytest

from codeseam import api
from codeseam.codec import refs_json, search_json
from codeseam.discover import discover, read_text
from codeseam.errors import ConfigError, FileSkipped
from codeseam.settings import load_settings
from tests.support.fixtures import isolated_git  # noqa: F401 - autouse
from tests.support.fresh import git

MARKER = "zqoutsidemarker"  # in the outside file only (and in the queries that look for it)
BODY = "zqoutsidebody"  # in the outside file only, never in a query: seen only if read
INSIDE = "zqinsidemarker"  # in the tracked conf/settings.py only
SECRET = "".join(secrets.choice(string.ascii_letters + string.digits + "/+") for _ in range(40))
OUTSIDE_PY = (f'def leaked_credentials():\n    """{MARKER}: the user\'s own key, {BODY}."""\n    return KEY\n\n\n'
              f'aws_secret_access_key = "{SECRET}"\nKEY = aws_secret_access_key\n')
INSIDE_PY = f'def load_settings():\n    """{INSIDE} settings loader."""\n    return {{}}\n'
APP_PY = 'def main():\n    """Start the zqappmarker application."""\n    return load_settings()\n'


def fake(data: Path, **extra) -> api.Settings:
    return load_settings({"embedding_backend": "fake", "data_dir": str(data), "keepalive": 0, **extra},
                         env={"RAG_CONFIG": os.devnull})


def make_repo(tmp: Path, allow: str | None = None) -> tuple[Path, Path]:
    """``proj`` (git: app.py, conf/settings.py) and ``outside`` (settings.py with the key)."""
    root, outside = tmp / "proj", tmp / "home_aws"
    (root / "conf").mkdir(parents=True)
    (root / "app.py").write_text(APP_PY)
    (root / "conf" / "settings.py").write_text(INSIDE_PY)
    if allow is not None:
        (root / ".codeseamallow").write_text(allow + "\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    outside.mkdir()
    (outside / "settings.py").write_text(OUTSIDE_PY)
    return root, outside


def swap(root: Path, outside: Path) -> None:
    """The tracked folder becomes a symlink to the outside folder (git still lists its file)."""
    shutil.rmtree(root / "conf")
    os.symlink(outside, root / "conf")
    assert "conf/settings.py" in git(root, "ls-files")


def data_bytes(data: Path) -> bytes:
    out = []
    for dirpath, _, names in os.walk(data):
        for name in names:
            full = os.path.join(dirpath, name)
            if os.path.isfile(full) and not os.path.islink(full):
                with open(full, "rb") as fh:
                    out.append(fh.read())
    return b"".join(out)


def index_or_refused(ix, root: Path):
    """Index ``root``; a repo allow file that the scrubber refuses (``.`` matches
    everything) is a ConfigError, and then nothing is indexed either."""
    try:
        return ix.index(root)
    except ConfigError as exc:
        assert ".codeseamallow" in exc.message
        return None


def assert_nothing_outside(ix, data: Path, fake_openai=None) -> None:
    """Nothing of the outside file comes back: not by search, refs or ask."""
    shown = str(search_json(ix.search(f"{MARKER} leaked_credentials aws_secret_access_key", k=10)))
    assert BODY not in shown and SECRET not in shown
    refs = str(refs_json(ix.refs("leaked_credentials")))
    assert BODY not in refs and SECRET not in refs and "conf/settings.py" not in refs
    if fake_openai is not None:
        fake_openai.script("It returns the key [1].")
        ix.ask(f"what does leaked_credentials return? {MARKER}", k=4)
        sent = str(fake_openai.chat_requests())
        assert BODY not in sent and SECRET not in sent


@pytest.mark.parametrize("allow", [None, "."], ids=["scrubbed", "allow-dot"])
def test_first_index_never_reads_through_a_folder_swapped_for_a_link(tmp_path, allow, fake_openai):
    root, outside = make_repo(tmp_path, allow)
    swap(root, outside)
    data = tmp_path / "data"
    settings = fake(data, llm_model="fake-model", llm_base_url=fake_openai.base_url)
    with api.Index(settings, create=True) as ix:
        report = index_or_refused(ix, root)
        if report is not None:
            assert_nothing_outside(ix, data, fake_openai)
            assert set(ix.inspect("proj")["files"]) == {"app.py"} | ({".codeseamallow"} if allow else set())
            assert "conf/settings.py" in {s.path for s in report.skips}
    stored = data_bytes(data)
    assert SECRET.encode() not in stored and BODY.encode() not in stored
    found = discover(root)
    assert "conf/settings.py" not in {f.path for f in found.files}
    skip = {s.path: s for s in found.skips}["conf/settings.py"]
    assert skip.reason == "symlink-escape" and str(outside) in skip.detail


@pytest.mark.parametrize("how", ["resync", "scan", "watch"])
@pytest.mark.parametrize("allow", [None, "."], ids=["scrubbed", "allow-dot"])
def test_a_sync_after_the_swap_drops_the_file_and_reads_nothing_outside(tmp_path, how, allow):
    """Indexed while ``conf/`` was a real folder; then swapped: a re-sync (``index`` again),
    the stat scan of the next search, or the watcher's sync must drop ``conf/settings.py``
    and must not read the outside file in its place."""
    root, outside = make_repo(tmp_path, allow)
    data = tmp_path / "data"
    with api.Index(fake(data), create=True) as ix:
        if index_or_refused(ix, root) is None:
            return
        assert "conf/settings.py" in ix.inspect("proj")["files"]
        if how == "watch":
            ix.refresher.enable_watching()
            assert ix.status().repos[0].freshness == "watch"
        swap(root, outside)
        if how == "resync":
            report = ix.index(root)
        else:
            ix.search("zqappmarker")  # the change is synced before this search answers
        assert_nothing_outside(ix, data)
        assert "conf/settings.py" not in ix.inspect("proj")["files"]
        if how == "resync":
            assert {s.path: s.reason for s in report.skips}["conf/settings.py"] == "symlink-escape"
    stored = data_bytes(data)
    assert SECRET.encode() not in stored and BODY.encode() not in stored


def test_freshness_check_and_refs_never_read_through_a_swapped_folder(tmp_path):
    """freshness=check: nothing is synced, each hit is checked against its file as it is now
    (``fresh.hits.current_text``) and refs read the files themselves; through the swapped
    folder both would read the outside file."""
    root, outside = make_repo(tmp_path)
    with api.Index(fake(tmp_path / "data", freshness="check"), create=True) as ix:
        ix.index(root)
        swap(root, outside)
        result = ix.search(INSIDE, k=5)
        hits = [h for h in result.hits if h.path == "conf/settings.py"]
        assert hits and all(h.stale and not h.lines_current for h in hits)
        assert all("no longer inside the repo" in (h.note or "") for h in hits), [h.note for h in hits]
        assert BODY not in str(search_json(result))
        refs = ix.refs("leaked_credentials")
        assert [r.path for r in refs.refs] == []
        assert BODY not in str(refs_json(ix.refs("load_settings")))


def test_a_file_swapped_for_a_link_after_listing_is_not_read(tmp_path):
    """The read itself checks what it opened: a file listed as a regular file and swapped for
    a link to an outside file before the read is refused (the last component, O_NOFOLLOW),
    and so is a path whose folder became a link (the real path of the open file)."""
    from codeseam.discover.contain import open_contained

    root, outside = make_repo(tmp_path)
    real_root = os.path.realpath(root)
    found = {f.path: f for f in discover(root).files}
    target = found["conf/settings.py"].abs_path
    swap(root, outside)
    with pytest.raises(FileSkipped) as caught:
        read_text(target, root=real_root)
    assert caught.value.reason == "symlink-escape" and os.path.realpath(outside) in caught.value.detail
    os.unlink(root / "app.py")
    os.symlink(outside / "settings.py", root / "app.py")
    with pytest.raises(FileSkipped) as caught:
        read_text(found["app.py"].abs_path, root=real_root)
    assert caught.value.reason == "not-a-file"
    fd, _ = open_contained(str(outside / "settings.py"), os.path.realpath(outside))
    os.close(fd)  # inside its own root it opens


def test_a_symlinked_folder_inside_the_root_is_not_followed_either(tmp_path):
    root, _ = make_repo(tmp_path)
    (root / "real").mkdir()
    (root / "real" / "settings.py").write_text(INSIDE_PY)
    shutil.rmtree(root / "conf")
    os.symlink("real", root / "conf")
    found = discover(root)
    skip = {s.path: s for s in found.skips}["conf/settings.py"]
    assert skip.reason == "not-a-file" and "symlink" in skip.detail
    assert {f.path for f in found.files} == {"app.py", "real/settings.py"}


def test_freshness_never_lists_a_folder_swapped_for_a_link(tmp_path):
    """The stat scan and the watcher's folder expansion list folders for new files; a folder
    swapped for a link is never listed (an outside folder's file names stay unseen), and its
    indexed files are reported changed, so the sync drops them."""
    from codeseam.fresh.repo import RepoFresh, expand
    from codeseam.fresh.scan import StatScan

    root, outside = make_repo(tmp_path)
    real_root = os.path.realpath(root)
    signatures = {}
    for rel in ("app.py", "conf/settings.py"):
        st = os.stat(root / rel)
        signatures[rel] = (st.st_size, st.st_mtime_ns)
    (outside / "id_rsa_zqoutsidename").write_text("not a key\n")
    swap(root, outside)
    result = StatScan(real_root, signatures, 0.0).run()
    assert result.changed == {"conf/settings.py"}
    assert not [p for p in result.added if "zqoutsidename" in p], result.added
    repo = RepoFresh("proj", real_root, sorted_paths=sorted(signatures))
    assert expand(repo, {"conf"}) == {"conf", "conf/settings.py"}


@pytest.mark.parametrize("use_git", [True, False], ids=["git", "folder"])
def test_ignore_files_behind_a_swapped_folder_are_never_read(tmp_path, use_git):
    """An outside folder's ``.codeseamignore`` / ``.gitignore`` are not the repo's rules: read
    through the link, they would silently drop the tracked path instead of reporting it."""
    root, outside = make_repo(tmp_path)
    if not use_git:
        shutil.rmtree(root / ".git")
    (outside / ".codeseamignore").write_text("settings.py\n")
    (outside / ".gitignore").write_text("settings.py\n")
    shutil.rmtree(root / "conf")
    os.symlink(outside, root / "conf")
    if use_git:
        found = discover(root)
    else:  # a plain folder's walk never enters the link; a manifest-driven sync names the path
        from codeseam.discover.subset import discover_paths

        found = discover_paths(os.path.realpath(root), ["conf/settings.py"], known={"conf/settings.py"},
                               is_git=False)
    skips = {s.path: s.reason for s in found.skips}
    assert skips["conf/settings.py"] == "symlink-escape"
    assert "conf/settings.py" not in {f.path for f in found.files}


def test_over_http_nothing_outside_is_served(tmp_path):
    """The same attack through a real server: POST /index, then /search and /refs."""
    import httpx

    from codeseam.service import Service
    from codeseam.surfaces.http import create_app
    from tests.test_http import running, wait_job

    root, outside = make_repo(tmp_path, allow=".")
    swap(root, outside)
    service = Service(fake(tmp_path / "data"), cwd=tmp_path).open()
    try:
        with running(create_app(service)) as url, httpx.Client(base_url=url, timeout=60) as client:
            job = client.post("/index", json={"path": str(root)})
            assert job.status_code == 202, job.text
            done = wait_job(client, job.json()["id"])
            if done["state"] == "failed":  # a scrubber that refuses an allow file of "." everywhere
                assert ".codeseamallow" in done["error"], done
                return
            assert done["state"] == "done", done
            search = client.get("/search", params={"q": f"{MARKER} leaked_credentials", "k": 10})
            refs = client.get("/refs", params={"name": "leaked_credentials"})
            assert search.status_code == 200 and refs.status_code == 200, (search.text, refs.text)
            for body in (search.text, refs.text):
                assert BODY not in body and SECRET not in body
            assert "conf/settings.py" not in client.get("/repos/proj").text
    finally:
        service.close()
