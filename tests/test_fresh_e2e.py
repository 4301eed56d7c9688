"""Freshness through the library (``api.Index``): real git repos, real Milvus Lite, real file
events, the fake embedder. The scenario (tests/support/fresh.py) runs with the stat scan (a
one-shot session) and with the watcher (a long-lived owner); then the index must equal a clean
build of the tree as it ends."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codeseam import api
from codeseam.codec import search_json
from codeseam.settings import load_settings
from tests.support.fixtures import isolated_git  # noqa: F401 - autouse
from tests.support.fresh import Scenario, git, make_repo, true_to_disk
from tests.test_crash import compare


def fake(tmp: Path, **extra) -> api.Settings:
    return load_settings({"embedding_backend": "fake", "data_dir": str(tmp), "keepalive": 0, **extra},
                         env={"RAG_CONFIG": os.devnull})


def clean_inspect(root: Path, tmp: Path, repo: str) -> dict:
    with api.Index(fake(tmp), create=True) as ix:
        ix.index(root, repo_id=repo)
        return ix.inspect(repo)


@pytest.mark.parametrize("mode", ["scan", "watch"])
def test_every_change_is_seen_by_the_next_search(tmp_path, mode):
    root = make_repo(tmp_path / "proj")
    with api.Index(fake(tmp_path / "data"), create=True) as ix:
        ix.index(root)
        if mode == "watch":
            ix.refresher.enable_watching()
            assert ix.status().repos[0].freshness == "watch"
        # no pause after a change: a watcher's query waits for the changes made before it (fence)
        Scenario(root, lambda q: search_json(ix.search(q, k=8))).run_all()
        ix.search("anything")  # the last changes synced
        got = ix.inspect("proj")
    assert compare(got, clean_inspect(root, tmp_path / "clean", "proj")) == {}


def test_check_mode_flags_and_writes_nothing(tmp_path):
    root = make_repo(tmp_path / "proj")
    with api.Index(fake(tmp_path / "data", freshness="check"), create=True) as ix:
        ix.index(root)
        before = ix.inspect("proj")
        path = root / "pkg" / "vocab.py"
        path.write_text("# one\n# two\n" + path.read_text().replace('"xxx"', '"yyy"'))
        (root / "pkg" / "other.py").unlink()
        result = search_json(ix.search("placeholder_vocabulary unrelated_helper", k=8))
        true_to_disk(result, root, allow_stale=True)
        by_path = {h["path"]: h for h in result["hits"]}
        assert by_path["pkg/other.py"]["stale"] and "deleted" in by_path["pkg/other.py"]["note"]
        assert by_path["pkg/vocab.py"]["stale"]
        # the note names the changed paths (it said "2 changed paths" and no more)
        assert any("not in the index yet: pkg/other.py, pkg/vocab.py (freshness is check" in n
                   for n in result["notes"]), result["notes"]
        assert ix.inspect("proj") == before  # nothing written


def test_off_mode_answers_from_the_index_as_it_is(tmp_path):
    root = make_repo(tmp_path / "proj")
    with api.Index(fake(tmp_path / "data", freshness="off"), create=True) as ix:
        ix.index(root)
        (root / "pkg" / "other.py").unlink()
        result = ix.search("unrelated_helper", k=3)
        assert result.hits[0].path == "pkg/other.py" and not result.hits[0].stale  # pinned: not checked
        assert ix.status().repos[0].freshness == "off"


def test_a_rename_moves_without_embedding(tmp_path):
    root = make_repo(tmp_path / "proj")
    with api.Index(fake(tmp_path / "data"), create=True) as ix:
        ix.index(root)
        (root / "pkg").rename(root / "lib")  # a whole folder moves
        ix.search("placeholder_vocabulary")
        last = ix.refresher._repos["proj"].last_sync
        assert last["chunks_embedded"] == 0 and last["files"] == 6, last
        assert {h.path for h in ix.search("unrelated_helper", k=8).hits} <= {"lib/vocab.py", "lib/other.py",
                                                                             "lib/target.py"}
        got = ix.inspect("proj")
    assert compare(got, clean_inspect(root, tmp_path / "clean", "proj")) == {}


def test_a_branch_switch_is_one_sync_that_embeds_only_new_content(tmp_path):
    root = make_repo(tmp_path / "proj")
    for i in range(30):  # enough unchanged files to see that they cost nothing
        (root / "pkg" / f"same_{i}.py").write_text(f"def same_{i}():\n    return {i}\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "more")
    with api.Index(fake(tmp_path / "data"), create=True) as ix:
        ix.index(root)
        known = {r["chunk_hash"] for r in ix.inspect("proj")["chunks"]}
        git(root, "checkout", "-q", "feature")
        git(root, "merge", "-q", "main", "-m", "merge")  # feature + the 30 files
        ix.search("feature_branch_vocabulary")
        last = ix.refresher._repos["proj"].last_sync
        rows = ix.inspect("proj")["chunks"]
        new = {r["chunk_hash"] for r in rows} - known
        assert last["chunks_embedded"] == len(new) and 0 < len(new) < len(rows) // 4, (last, len(new), len(rows))
        got = ix.inspect("proj")
    assert compare(got, clean_inspect(root, tmp_path / "clean", "proj")) == {}


def test_a_sync_out_of_time_stops_between_batches_and_the_next_one_finishes(tmp_path, monkeypatch):
    from codeseam.indexing import run as indexer

    monkeypatch.setattr(indexer, "BATCH_CHUNKS", 4)
    root = make_repo(tmp_path / "proj")
    with api.Index(fake(tmp_path / "data", freshness_budget=0.0), create=True) as ix:
        ix.index(root)
        for i in range(12):
            (root / "pkg" / f"new_{i}.py").write_text("".join(f"def new_{i}_{j}():\n    return {j}\n\n\n"
                                                              for j in range(6)))
        result = ix.search("new_11_5")  # budget 0: one batch, then the rest is left
        st = ix.refresher._repos["proj"]
        assert st.last_sync["left"] > 0 and st.pending
        assert any("not in the index yet" in n for n in result.notes)
        half = ix.inspect("proj")
        assert set(half["files"]) < {str(p.relative_to(root)) for p in root.rglob("*.py")}
        ix.settings = ix.settings.replace(freshness_budget=60.0)
        ix.search("new_11_5")
        got = ix.inspect("proj")
    assert compare(got, clean_inspect(root, tmp_path / "clean", "proj")) == {}


def test_bad_input_gives_notes_never_a_crash(tmp_path):
    root = make_repo(tmp_path / "proj")
    with api.Index(fake(tmp_path / "data", freshness="check"), create=True) as ix:
        ix.index(root)
        (root / "pkg" / "vocab.py").write_bytes(b"\x00\x01binary now\n")
        by_path = {h.path: h for h in ix.search("placeholder_vocabulary unrelated_helper", k=8).hits}
        assert by_path["pkg/vocab.py"].stale and "binary" in by_path["pkg/vocab.py"].note
        (root / "pkg" / "vocab.py").unlink()
        (root / "pkg" / "vocab.py").mkdir()  # a folder where the file was
        hit = next(h for h in ix.search("placeholder_vocabulary", k=8).hits if h.path == "pkg/vocab.py")
        assert hit.stale and not hit.lines_current and hit.note
        moved = tmp_path / "elsewhere"
        root.rename(moved)  # the whole repo folder disappears
        result = ix.search("unrelated_helper", k=3)
        assert result.hits and all(h.stale and "no longer exists" in h.note for h in result.hits)
        assert any("no longer exists" in n for n in result.notes)
        st = ix.status().repos[0]
        assert st.freshness == "missing" and "no longer exists" in st.freshness_note
        ix.settings = ix.settings.replace(freshness="sync")
        ix.search("unrelated_helper")  # a missing folder is not a deleted repo: nothing is removed
        assert ix.status().repos[0].chunks > 0
        moved.rename(root)
        assert ix.status().repos[0].freshness == "scan"
        hit = next(h for h in ix.search("unrelated_helper", k=3).hits if h.path == "pkg/other.py")
        assert not hit.stale


def test_ask_never_sends_stale_text_to_the_model_unsaid(tmp_path, fake_openai):
    """check mode: a source whose text left its file is not sent, and the answer says so; a
    source whose text moved is sent at its current lines, and the answer says so too."""
    root = make_repo(tmp_path / "proj")
    settings = fake(tmp_path / "data", freshness="check", llm_model="fake-model",
                    llm_base_url=fake_openai.base_url)
    with api.Index(settings, create=True) as ix:
        ix.index(root)
        (root / "pkg" / "other.py").write_text(OTHER_CHANGED)
        vocab = root / "pkg" / "vocab.py"
        vocab.write_text("# moved down\n" + vocab.read_text())
        fake_openai.script("It scales the value [1].")
        answer = ix.ask("how does unrelated_helper scale a value and what is placeholder_vocabulary?", k=4)
    sent = "\n".join(m["content"] for m in fake_openai.chat_requests()[-1]["messages"])
    assert "value * 3" not in sent  # the old text of other.py never reached the model
    assert "def placeholder_vocabulary" in sent and "pkg/vocab.py:2-" in sent  # sent at its current lines
    assert any(n.startswith("left out pkg/other.py") for n in answer.notes), answer.notes
    assert any("cited at their current lines" in n for n in answer.notes), answer.notes


OTHER_CHANGED = 'def unrelated_helper(value):\n    """Scale a value."""\n    return value * 7\n'
