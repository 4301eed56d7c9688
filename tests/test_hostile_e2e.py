"""The hostile corpus of issue 8, indexed end to end with the real CLI and through the API:
0 crashes, every skip in the report with its reason, everything else indexed and found by a
search for its marker word.

As root, the CLI run drops the capabilities that let root read any file (``setpriv``), so the
chmod-000 file is unreadable as it is for a normal user and must be reported as such.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections import Counter


from codeseam import api
from codeseam.settings import load_settings
from tests.support.hostile import apply_races, make_hostile_corpus
from tests.test_crash import ROOT, cli_command, run_env
from tests.support.fixtures import isolated_git  # noqa: F401 (autouse fixture)

DROP_READ_ANY = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-all"]


def expect_unreadable(corpus: dict) -> None:
    """The run cannot read the chmod-000 file: it moves from 'index' to 'skip'."""
    if corpus["as_root_user"]:
        corpus["index"].pop("unreadable.py")
        corpus["skip"]["unreadable.py"] = "unreadable"


def found_by_marker(ix, marker: str, path: str) -> bool:
    hits = ix.search(marker, k=5).hits
    return any(h.path == path and marker in h.text for h in hits)


def check_index(ix, corpus: dict, repo: str, skips: dict[str, str]) -> None:
    assert skips == corpus["skip"]  # every skip reported, with exactly its reason
    files = ix.inspect(repo)["files"]
    assert set(files) == set(corpus["index"])  # everything else indexed (empty files too)
    missing = [p for p, want in corpus["index"].items()
               if want["marker"] and not found_by_marker(ix, want["marker"], p)]
    assert missing == []


def cli(args: list[str], env: dict[str, str], prefix: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([*prefix, *cli_command(), *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)


def test_cli_indexes_the_hostile_corpus(tmp_path):
    corpus = make_hostile_corpus(tmp_path / "hostile", git=True)
    data = tmp_path / "data"
    env = run_env(data)
    prefix: list[str] = []
    if corpus["as_root_user"] and shutil.which("setpriv"):
        prefix = DROP_READ_ANY
        expect_unreadable(corpus)
    run = cli(["index", corpus["root"], "--json"], env, prefix)
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr[-3000:]
    report = json.loads(run.stdout)
    skips = {s["path"]: s["reason"] for s in report["skips"]}
    assert len(skips) == len(report["skips"]) and all(s["detail"] for s in report["skips"])
    assert report["files_seen"] == report["files_indexed"] == len(corpus["index"])
    assert report["by_reason"] == dict(Counter(skips.values()))
    settings = load_settings({"embedding_backend": "fake", "data_dir": str(data)}, env={"RAG_CONFIG": os.devnull})
    with api.Index(settings) as ix:
        check_index(ix, corpus, "hostile", skips)
    # the human listing names every skip with its reason too (a no-op re-run)
    text = cli(["index", corpus["root"], "--verbose-skips"], env, prefix)
    assert text.returncode == 0 and "Traceback" not in text.stderr
    for path, reason in corpus["skip"].items():
        assert f"skip  {path}  {reason}" in text.stdout
    assert "0 files indexed" in text.stdout


def test_api_folder_with_races_between_listing_and_reading(tmp_path, isolated_env):
    """A plain folder (no git); one file deleted and one changed after discovery listed them
    and before the run read them: the first is skipped as vanished, the second is indexed in
    its new state only."""
    corpus = make_hostile_corpus(tmp_path / "hostile", git=False)
    settings = load_settings({"embedding_backend": "fake"})

    def progress(event: str, **fields) -> None:
        if event == "discover":
            apply_races(corpus)

    with api.Index(settings, create=True) as ix:
        report = ix.index(corpus["root"], progress=progress)
        skips = {s.path: s.reason for s in report.skips}
        gone = corpus["races"]["delete"]
        for path in gone:
            assert skips.pop(path) == "vanished"
            corpus["index"].pop(path)
        changed = corpus["races"]["change"]
        for path in changed:
            corpus["index"][path]["marker"] = corpus["new_markers"][path]
        check_index(ix, corpus, "hostile", skips)
        for path in changed:  # its new text only: the old marker ends with a quote, the new one does not
            hits = ix.search("zqhostileracechange", path_glob=path, k=10).hits
            assert hits and all(corpus["new_markers"][path] in h.text for h in hits)
            assert not any("zqhostileracechange'" in h.text for h in hits)
        rows = ix.inspect("hostile")["chunks"]
        assert not {r["path"] for r in rows} & set(gone)
        # a second run: the deleted file is simply gone, nothing else changes
        again = ix.index(corpus["root"])
        assert (again.files_indexed, again.chunks_written) == (0, 0)
        assert "vanished" not in {s.reason for s in again.skips}
