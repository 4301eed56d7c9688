"""Chunk layouts read by primary key (``store/layouts.py``), on real Milvus Lite in temp dirs.

The oracle is the chunk rows themselves: for every file, ``chunk_spans`` (from the layout
rows) equals ``scan_spans`` (from the chunk collection) and ``iter_chunks``; a file whose
layout is missing or too large is read from its rows; deletes take the layouts with them;
an index written without layouts gets them on its next sync, embedding nothing."""

from __future__ import annotations

import textwrap

import pytest

from codeseam import api
from codeseam.settings import load_settings
from codeseam.store import FileEntry, Store
from codeseam.store import layouts as lay
from tests.support.fresh import git
from tests.test_store import META, rows_for, settings_for


@pytest.fixture
def store(tmp_path):
    with Store.open(settings_for(tmp_path), expect=META, create=True) as s:
        yield s


def spans(chunks) -> list[tuple]:
    return [(c.id, c.symbol, c.kind, c.start_line, c.end_line) for c in chunks]


def oracle(store: Store, repo: str, path: str) -> list[tuple]:
    return spans(c for c in store.iter_chunks(repo) if c.path == path)


def layout_rows(store: Store, repo: str) -> dict[str, str]:
    rows = store._m.query(store.names.meta, f'kind == "layout" and repo_id == "{repo}"', ["id", "value"])
    return {r["id"]: r["value"] for r in rows}


def write(store: Store, repo: str, files: dict[str, int]) -> dict[str, list]:
    """Chunk rows, manifest entries and layouts of ``files`` (path -> chunks), as the indexer writes them."""
    out = {p: rows_for(repo, p, [f"{repo} {p} {i}\nmore" for i in range(n)]) for p, n in files.items()}
    store.insert_chunks([r for rows in out.values() for r in rows])
    store.put_file_entries([FileEntry(repo, p, 1, 1, "fh-" + p, len(rows), 0.0) for p, rows in out.items()])
    store.put_layouts(repo, {p: ("fh-" + p, rows) for p, rows in out.items()})
    return out


def test_spans_come_from_the_layout_rows_and_equal_the_chunk_rows(store, monkeypatch):
    write(store, "r", {"a.py": 9, "b.py": 3, "it's.py": 4, "empty.py": 0})
    write(store, "other", {"a.py": 5})
    assert len(layout_rows(store, "r")) == 4 and len(layout_rows(store, "other")) == 1

    def no_scan(*a, **k):
        raise AssertionError("read from the chunk rows")

    monkeypatch.setattr(Store, "scan_spans", no_scan)  # every file here has a layout: no scan at all
    got = store.chunk_spans("r", ["b.py", "a.py", "it's.py", "empty.py", "a.py"])
    assert list(got) == ["b.py", "a.py", "it's.py", "empty.py"]
    for path in ("a.py", "b.py", "it's.py"):  # a quote in the name: no filter can say it, the key can
        assert spans(got[path]) == oracle(store, "r", path) and len(got[path]) > 2
        assert all(c.text == "" and c.repo_id == "r" and c.path == path for c in got[path])
    assert got["empty.py"] == []
    assert spans(store.chunk_spans("other", ["a.py"])["a.py"]) == oracle(store, "other", "a.py")


def test_a_file_without_a_layout_is_read_from_its_chunk_rows(store):
    write(store, "r", {"a.py": 4})
    store.insert_chunks(rows_for("r", "old.py", [f"old {i}\nx" for i in range(6)]))  # written before layouts
    got = store.chunk_spans("r", ["a.py", "old.py", "gone.py"])
    assert spans(got["old.py"]) == oracle(store, "r", "old.py") and len(got["old.py"]) == 6
    assert spans(got["a.py"]) == oracle(store, "r", "a.py")
    assert got["gone.py"] == []


def test_a_layout_too_large_for_a_meta_row_is_a_marker_and_the_file_is_read_from_its_rows(store, monkeypatch):
    monkeypatch.setattr(lay, "MAX_VALUE_BYTES", 300)  # a few chunks' worth
    write(store, "r", {"big.py": 12, "small.py": 1})
    values = layout_rows(store, "r")
    assert values[lay.layout_id("r", "big.py")] == '{"h": "fh-big.py", "c": null}'
    got = store.chunk_spans("r", ["big.py", "small.py"])
    assert spans(got["big.py"]) == oracle(store, "r", "big.py") and len(got["big.py"]) == 12
    assert store.ensure_layouts("r") == 0  # the marker counts: no rescan on every sync


def test_deletes_take_the_layouts_with_them(store):
    write(store, "r", {"a.py": 3, "b.py": 3})
    write(store, "s", {"a.py": 3})
    store.delete_paths("r", ["a.py"])
    store.delete_file_entries("r", ["a.py"])
    assert set(layout_rows(store, "r")) == {lay.layout_id("r", "b.py")}
    assert store.chunk_spans("r", ["a.py"]) == {"a.py": []}
    store.remove_repo("r")
    assert layout_rows(store, "r") == {} and len(layout_rows(store, "s")) == 1
    assert store.repo_records() == {}  # only layouts and records live in meta: the index meta row stays
    assert store._m.exists(store.names.meta, 'id != ""')


def test_ensure_layouts_writes_the_missing_ones_once(store, monkeypatch):
    written = write(store, "r", {"a.py": 5, "b.py": 2, "empty.py": 0})
    store._m.delete_where(store.names.meta, f'kind == "{lay.KIND}"')  # an index from before layouts
    assert store.ensure_layouts("r") == 3
    assert store.ensure_layouts("r") == 0  # counts match: nothing read, nothing written
    monkeypatch.setattr(Store, "scan_spans", lambda *a, **k: pytest.fail("read from the chunk rows"))
    got = store.chunk_spans("r", list(written))
    for path in written:
        assert spans(got[path]) == oracle(store, "r", path)


LONG_PY = "class Long:\n" + "".join(
    textwrap.indent(f"def m{i}(self, x):\n    y = x * {i}\n    return y + {i}\n\n", "    ") for i in range(120))


def test_the_indexer_keeps_every_files_layout_equal_to_its_chunk_rows(tmp_path, isolated_env, monkeypatch):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "long.py").write_text(LONG_PY)
    (root / "short.py").write_text("def f():\n    return 1\n")
    (root / "empty.py").write_text("")
    git(root, "init", "-q")
    settings = load_settings({"embedding_backend": "fake"})

    def check(paths: list[str]) -> None:
        with api.open_index(settings) as ix:
            store = ix.store
            with monkeypatch.context() as m:
                m.setattr(Store, "scan_spans", lambda *a, **k: pytest.fail("read from the chunk rows"))
                got = store.chunk_spans("proj", paths)
            assert len(got["long.py"]) > 3  # split: a layout worth reading
            for p in paths:
                assert spans(got[p]) == oracle(store, "proj", p)
            assert set(layout_rows(store, "proj")) == {lay.layout_id("proj", p) for p in paths}

    api.index(root, settings=settings)
    check(["long.py", "short.py", "empty.py"])
    (root / "long.py").write_text(LONG_PY.replace("def m3(", "def m3_renamed(") + "\ndef tail():\n    pass\n")
    (root / "short.py").unlink()
    api.index(root, settings=settings)
    check(["long.py", "empty.py"])
    with api.open_index(settings) as ix:  # as if written by a codeseam from before layouts
        ix.store._m.delete_where(ix.store.names.meta, f'kind == "{lay.KIND}"')
    report = api.index(root, settings=settings)
    assert report.chunks_embedded == 0 and report.files_indexed == 0
    check(["long.py", "empty.py"])


def test_a_layout_round_trips_in_line_order():
    value = lay.encode_layout("h", [("id1", "A.run", "method", 3, 9), ("id0", "A", "class", 1, 2)])
    got = lay.decode_layout("r", "a.py", value)
    assert got is not None
    assert spans(got) == [("id0", "A", "class", 1, 2), ("id1", "A.run", "method", 3, 9)]
    assert lay.decode_layout("r", "a.py", lay.encode_layout("h", [("x" * 32, "s" * 2000, "f", i, i)
                                                                   for i in range(40)])) is None
