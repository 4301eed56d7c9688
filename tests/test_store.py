"""The store on real Milvus Lite in temp dirs (never mocked). Only the embedding is fake:
a deterministic bag-of-words hash, so similar texts get similar vectors."""

from __future__ import annotations

import hashlib
import math
import random
import time

import pytest

from codeseam.errors import ConfigError, IndexMismatchError, NotIndexedError, StoreError
from codeseam.records import Chunk, content_hash
from codeseam.settings import Settings
from codeseam.store import ChunkRow, FileEntry, Filters, IndexMeta, Store
from codeseam.store import schema as sch
from codeseam.store.client import MilvusCalls

DIM = 16
META = IndexMeta("fake-bow-16", DIM, "chunker-1", 1)
NASTY_REPOS = ["a", "ab", "a%", "a_", 'a"b', "a\\", 'a" or repo_id != "', "å/π 😀"]


def embed(text: str) -> list[float]:
    v = [0.0] * DIM
    for word in text.lower().split():
        h = hashlib.sha256(word.encode()).digest()
        v[h[0] % DIM] += 1.0 if h[1] % 2 else -1.0
    v[0] += 1e-3
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


def chunk(path: str, text: str, start: int = 1, symbol: str = "", language: str = "python") -> Chunk:
    end = start + text.count("\n")
    return Chunk(path, language, symbol, "", "function", start, end, text, f"{path} {symbol}\n{text}")


def rows_for(repo: str, path: str, texts: list[str], language: str = "python") -> list[ChunkRow]:
    out, line = [], 1
    for i, text in enumerate(texts):
        c = chunk(path, text, line, symbol=f"sym{i}", language=language)
        line = c.end_line + 1
        out.append(ChunkRow(content_hash(repo, path, str(i), c.hash), repo, "fh-" + path, c, embed(text)))
    return out


def settings_for(tmp_path, name: str = "data") -> Settings:
    return Settings(data_dir=str(tmp_path / name))


@pytest.fixture
def settings(tmp_path) -> Settings:
    return settings_for(tmp_path)


@pytest.fixture
def store(settings):
    with Store.open(settings, expect=META, create=True) as s:
        yield s


def count(store: Store, repo: str) -> int:
    return sum(store.chunk_paths(repo).values())


# -- meta, lifecycle --------------------------------------------------------------------------

def test_open_records_meta_and_reopens(settings):
    with Store.open(settings, expect=META, create=True) as s:
        assert s.meta == META
        assert s.location == str(settings.data_path.resolve() / "index.db")
    with Store.open(settings, expect=None, create=False) as s:
        assert s.meta == META
        assert s.stats() == {}


def test_missing_index_is_not_indexed(settings, tmp_path):
    with pytest.raises(NotIndexedError, match="nothing is indexed") as err:
        Store.open(settings, expect=META, create=False)
    assert "codeseam index" in str(err.value)
    with (Store.open(settings, expect=META, create=True) as s,
          pytest.raises(NotIndexedError, match="nothing is indexed")):
        s.bm25_search("anything", 5, Filters())
    Store.drop(settings)
    with pytest.raises(NotIndexedError):
        Store.open(settings, expect=META, create=False)


@pytest.mark.parametrize("change,label", [
    ({"embedder_id": "other-model"}, "embedder"),
    ({"dim": 32}, "dimension"),
    ({"chunker_version": "chunker-2"}, "chunker version"),
    ({"schema_version": 2}, "schema version"),
])
def test_meta_mismatch_names_what_differs_and_the_rebuild_command(settings, change, label):
    with Store.open(settings, expect=META, create=True) as s:
        s.put_repo_record("proj", {"root": "/src/proj"})
    other = IndexMeta(**{**META.__dict__, **change})
    for create in (False, True):
        with pytest.raises(IndexMismatchError) as err:
            Store.open(settings, expect=other, create=create)
        text = str(err.value)
        assert label in text and "codeseam index /src/proj --rebuild" in text
    with Store.open(settings, expect=other, create=True, reset=True) as s:  # what --rebuild does
        assert s.meta == other and s.repo_records() == {}


# -- ranking ----------------------------------------------------------------------------------

WORDS = ["parse", "token", "stream", "buffer", "socket", "retry", "delay", "json", "decode", "encode", "cache"]


def corpus(seed: int, n: int, tag: str) -> list[str]:
    rnd = random.Random(seed)
    return [" ".join(rnd.choice(WORDS) for _ in range(rnd.randint(3, 30))) + f" {tag}{i}" for i in range(n)]


def test_bm25_ranking_does_not_depend_on_insert_order_or_session(tmp_path):
    part_a = rows_for("r", "a.py", corpus(1, 30, "alpha"))
    part_b = rows_for("r", "b.py", corpus(2, 30, "beta"))
    queries = ["retry delay", "json decode cache", "socket", "alpha3 buffer"]

    one = settings_for(tmp_path, "one")
    with Store.open(one, expect=META, create=True) as s:
        s.insert_chunks(part_a + part_b)
        first = {q: [(c.id, c.score) for c in s.bm25_search(q, 20, Filters())] for q in queries}

    two = settings_for(tmp_path, "two")
    with Store.open(two, expect=META, create=True) as s:
        s.insert_chunks(part_b)
    with Store.open(two, expect=META, create=False) as s:  # a later session adds the rest
        s.insert_chunks(part_a)
        second = {q: [(c.id, c.score) for c in s.bm25_search(q, 20, Filters())] for q in queries}

    assert first == second  # same ids, same order, same scores (global IDF; ties broken by id)
    hit_ids = {i for q in queries for i, _ in first[q]}
    assert hit_ids & {r.id for r in part_a} and hit_ids & {r.id for r in part_b}
    assert all(first[q] for q in queries)


def plain_rows(texts: list[str]) -> list[ChunkRow]:
    """One chunk per text whose ``indexed_text`` is the text alone (BM25 sees exactly its words)."""
    out = []
    for i, t in enumerate(texts):
        c = Chunk(f"f{i}.py", "python", "", "", "function", 1, 1, t, t)
        out.append(ChunkRow(content_hash("r", c.path, "0", c.hash), "r", "fh", c, embed(t)))
    return out


def reference_bm25(texts: list[str], query: str, k1: float, b: float) -> dict[str, float]:
    """Okapi BM25 as the textbook (and Lucene) writes it: idf = ln(1 + (N - n + 0.5) / (n + 0.5)),
    tf part tf (k1 + 1) / (tf + k1 (1 - b + b dl / avgdl)); keys are the rows' paths."""
    docs = [t.split() for t in texts]
    avgdl = sum(map(len, docs)) / len(docs)
    out = {}
    for i, d in enumerate(docs):
        score = 0.0
        for w in query.split():
            n, tf = sum(w in x for x in docs), d.count(w)
            if tf:
                idf = math.log(1 + (len(docs) - n + 0.5) / (n + 0.5))
                score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(d) / avgdl))
        if score:
            out[f"f{i}.py"] = score
    return out


def bm25_scores(store: Store, query: str) -> dict[str, float]:
    return {c.path: c.score for c in store.bm25_search(query, 100, Filters())}


BM25_QUERIES = ["retry", "json decode cache", "socket buffer buffer", "stream token"]


def test_bm25_scores_equal_a_reference_implementation_with_the_index_parameters(store):
    from codeseam.store import setup

    assert setup.bm25_params(store._m, store.names) == sch.BM25_PARAMS  # what a new index is built with
    texts = [t.rsplit(" ", 1)[0] for t in corpus(7, 40, "x")]  # the vocabulary only, lengths 3..30
    store.insert_chunks(plain_rows(texts))
    k1, b = sch.BM25_PARAMS["bm25_k1"], sch.BM25_PARAMS["bm25_b"]
    for q in BM25_QUERIES:
        got, ref = bm25_scores(store, q), reference_bm25(texts, q, k1, b)
        assert got.keys() == ref.keys()
        assert all(math.isclose(got[p], ref[p], rel_tol=1e-4) for p in ref), q


def test_an_index_built_with_older_bm25_parameters_is_upgraded_by_the_next_writer(settings, caplog):
    from codeseam.store import setup

    texts = [t.rsplit(" ", 1)[0] for t in corpus(8, 30, "x")]
    with Store.open(settings, expect=META, create=True) as s:  # as an older codeseam built it
        s.insert_chunks(plain_rows(texts))
        s._m.call("release", "release_collection", s.names.chunks)
        s._m.call("drop", "drop_index", s.names.chunks, "sparse")
        old = s._m.client.prepare_index_params()
        old.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")  # Milvus' defaults
        setup._build_index(s._m, s.names.chunks, old, 60)
    with Store.open(settings, expect=None, create=False) as s:  # a reader searches the index as it is
        assert setup.bm25_params(s._m, s.names) == setup.MILVUS_BM25_DEFAULTS
        before = bm25_scores(s, "retry")
        assert before == pytest.approx(reference_bm25(texts, "retry", 1.2, 0.75), rel=1e-4)
    with caplog.at_level("WARNING", logger="codeseam.store.setup"), \
            Store.open(settings, expect=META, create=True) as s:  # the next indexing run upgrades it, and says so
        assert [r.getMessage() for r in caplog.records if "rebuilding the BM25 index" in r.getMessage()] == [
            f"rebuilding the BM25 index of {s.names.chunks} once with k1 {sch.BM25_PARAMS['bm25_k1']}, b "
            f"{sch.BM25_PARAMS['bm25_b']} (an older codeseam built it with k1 1.2, b 0.75); nothing is re-embedded"]
        assert setup.bm25_params(s._m, s.names) == sch.BM25_PARAMS
        assert count(s, "r") == len(texts)
        k1, b = sch.BM25_PARAMS["bm25_k1"], sch.BM25_PARAMS["bm25_b"]
        for q in BM25_QUERIES:
            assert bm25_scores(s, q) == pytest.approx(reference_bm25(texts, q, k1, b), rel=1e-4)
        assert s.dense_search(embed(texts[3]), 1, Filters())[0].path == "f3.py"  # the rest as it was
    caplog.clear()
    with Store.open(settings, expect=META, create=True) as s:  # once: nothing left to upgrade
        assert not setup.ensure_bm25(s._m, s.names)
    assert not [r for r in caplog.records if "rebuilding" in r.getMessage()]


def test_ties_are_broken_by_id_whatever_the_insert_order(tmp_path):
    same = [ChunkRow(f"id{i:02d}", "r", "fh", chunk(f"f{i}.py", "retry delay"), embed("retry delay"))
            for i in range(12)]
    noise = rows_for("r", "n.py", corpus(4, 20, "n"))
    for name, order in (("fwd", same), ("rev", same[::-1])):
        with Store.open(settings_for(tmp_path, name), expect=META, create=True) as s:
            s.insert_chunks(noise[:10])
            s.insert_chunks(order[:6])
            s.flush()  # a sealed segment and a growing one
            s.insert_chunks(order[6:] + noise[10:])
            bm25 = s.bm25_search("retry delay", 3, Filters(path_glob="f*.py"))
            dense = s.dense_search(embed("retry delay"), 3, Filters())
            assert [c.id for c in bm25] == [c.id for c in dense] == ["id00", "id01", "id02"]


# -- filters ----------------------------------------------------------------------------------

def test_repo_filters_are_exact_even_with_quotes_and_wildcards(store):
    texts = ["def retry_delay(n): return 2 ** n", "class Cache: pass", "json decode cache buffer"]
    for i, repo in enumerate(NASTY_REPOS):
        store.insert_chunks(rows_for(repo, "src/x.py", texts) + rows_for(repo, f"only{i}.py", ["unique text"]))
        store.put_file_entries([FileEntry(repo, "src/x.py", 1, 1, "h", 3, 0.0)])
    qvec = embed("retry delay cache")
    for repo in NASTY_REPOS:
        f = Filters(repos=(repo,))
        for hits in (store.dense_search(qvec, 50, f), store.bm25_search("cache retry unique", 50, f),
                     store.hybrid_search(qvec, "cache", 50, f)):
            assert hits and {h.repo_id for h in hits} == {repo}
        assert len(store.dense_search(qvec, 50, f)) == 4
        assert count(store, repo) == 4 and list(store.file_entries(repo)) == ["src/x.py"]
    both = store.dense_search(qvec, 50, Filters(repos=("a", "a%")))
    assert {h.repo_id for h in both} == {"a", "a%"} and len(both) == 8
    assert len(store.dense_search(qvec, 50, Filters())) == 4 * len(NASTY_REPOS)


def test_unknown_repo_filter_is_an_error_not_an_empty_list(store):
    store.insert_chunks(rows_for("a", "x.py", ["hello world"]))
    for repo in ("b", "a%", "A"):
        with pytest.raises(NotIndexedError, match=repr(repo).replace("%", "%")):
            store.dense_search(embed("hello"), 5, Filters(repos=(repo,)))
    with pytest.raises(NotIndexedError):
        store.bm25_search("", 5, Filters(repos=("b",)))
    with pytest.raises(NotIndexedError):
        store.iter_chunks("b")
    with pytest.raises(ConfigError):
        store.dense_search(embed("x"), 5, Filters(repos=("bad\nid",)))


def test_path_glob_and_language_filters_over_fetch_to_fill_k(store):
    rows = []
    for i in range(60):
        rows += rows_for("r", f"lib/mod{i}.py", [f"cache retry {i}"])
    for i in range(6):
        rows += rows_for("r", f"src/deep/k{i}.go", [f"cache retry go {i}"], language="go")
        rows += rows_for("r", f"tests/t{i}.py", [f"cache retry test {i}"])
    store.insert_chunks(rows)
    everything = store.bm25_search("cache retry", 200, Filters())
    assert len(everything) == len(rows)
    for glob in ("*.go", "src/**/*.go", "tests/*", "tests/t1.py", "**/k[0-2].go"):
        from codeseam.store.expr import compile_glob

        oracle = [c.id for c in everything if compile_glob(glob).match(c.path)][:5]
        got = [c.id for c in store.bm25_search("cache retry", 5, Filters(path_glob=glob))]
        assert got == oracle and got
    go = store.dense_search(embed("cache retry"), 50, Filters(language="go"))
    assert len(go) == 6 and {c.language for c in go} == {"go"}
    with pytest.raises(ConfigError):
        store.bm25_search("x", 5, Filters(path_glob="!src"))


def test_dense_scores_are_cosine_similarities(store):
    rows = rows_for("r", "a.py", ["parse token stream", "socket retry delay", "json cache"])
    store.insert_chunks(rows)
    q = embed("retry delay socket cache")
    hits = store.dense_search(q, 3, Filters())
    by_id = {r.id: r.dense for r in rows}
    for h in hits:
        assert h.score == pytest.approx(sum(a * b for a, b in zip(q, by_id[h.id], strict=True)), abs=1e-5)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_hybrid_search_fuses_both_signals(store):
    store.insert_chunks(rows_for("r", "a.py", corpus(3, 40, "w")))
    hits = store.hybrid_search(embed("retry delay"), "retry delay", 10, Filters())
    assert len(hits) == 10 and all(0 < h.score <= 2 / 61 + 1e-6 for h in hits)


def test_lite_has_no_partition_key_but_a_server_schema_does(store):
    def partition_key(schema_dict) -> list[str]:
        return [f["name"] for f in schema_dict["fields"] if f.get("is_partition_key")]

    assert partition_key(sch.chunk_schema(DIM, server=True).to_dict()) == ["repo_id"]
    assert partition_key(sch.files_schema(server=True).to_dict()) == ["repo_id"]
    assert partition_key(sch.chunk_schema(DIM, server=False).to_dict()) == []
    described = store._m.call("describe", "describe_collection", store.names.chunks)
    assert partition_key(described) == [] and not store.server
    assert [sch.uses_partition_key(u) for u in ("http://h:19530", "https://x", "tcp://h:1", "/tmp/x.db",
                                               "unix:/tmp/s.sock")] == [True, True, True, False, False]


# -- writes -----------------------------------------------------------------------------------

def test_upserts_are_idempotent(store):
    rows = rows_for("r", "a.py", ["one two", "three four", "five six"])
    store.insert_chunks(rows)
    store.insert_chunks(rows)
    assert count(store, "r") == 3
    assert len(store.bm25_search("one three five", 10, Filters())) == 3
    changed = ChunkRow(rows[0].id, "r", "fh2", chunk("a.py", "seven eight"), embed("seven eight"))
    store.insert_chunks([changed])
    assert count(store, "r") == 3
    assert [c.text for c in store.bm25_search("seven", 10, Filters())] == ["seven eight"]
    assert store.bm25_search("one", 10, Filters()) == []


def test_delete_paths_is_exact_per_repo_and_path(store):
    paths = ["src/a.py", 'q"uote.py', "back\\slash.py", "new\nline.py", "per%cent_.py", "ünï/cødé.py", "src/a.pyc"]
    for repo in ("a", "ab"):
        for p in paths:
            store.insert_chunks(rows_for(repo, p, ["alpha beta", "gamma delta"]))
    gone = paths[:5]
    assert store.delete_paths("a", gone + ["missing.py"]) == 2 * len(gone)
    assert store.chunk_paths("a") == {p: 2 for p in paths[5:]}
    assert store.chunk_paths("ab") == {p: 2 for p in paths}
    assert store.delete_paths("a", gone) == 0
    assert sorted(c.path for c in store.iter_chunks("a")) == sorted(paths[5:] * 2)


def test_remove_repo_removes_chunks_manifest_and_record_only_of_that_repo(store):
    for repo in ("a", "ab", "a%"):
        store.insert_chunks(rows_for(repo, "x.py", ["one", "two", "three"]))
        store.put_file_entries([FileEntry(repo, "x.py", 3, 4, "h", 3, 1.0)])
        store.put_repo_record(repo, {"root": f"/r/{repo}"})
    assert store.remove_repo("a") == 3
    assert store.stats() == {"a%": {"files": 1, "chunks": 3}, "ab": {"files": 1, "chunks": 3}}
    assert set(store.repo_records()) == {"ab", "a%"} and store.file_entries("a") == {}
    with pytest.raises(NotIndexedError):
        store.dense_search(embed("one"), 5, Filters(repos=("a",)))
    assert store.remove_repo("a") == 0


def test_vectors_by_hash_returns_stored_embeddings(store):
    rows = rows_for("r", "a.py", ["one two", "three four"]) + rows_for("s", "b.py", ["one two"])
    store.insert_chunks(rows)
    got = store.vectors_by_hash([r.chunk.hash for r in rows] + ["nope", ""])
    assert set(got) == {r.chunk.hash for r in rows}
    for r in rows:
        assert got[r.chunk.hash] == pytest.approx(r.dense, abs=1e-6)


def test_iter_chunks_is_sorted_by_path_then_line(store):
    rows = []
    for p in ("b.py", "a/z.py", "a.py", "A.py", "a/b.py"):
        rows += rows_for("r", p, [f"line {i}\nmore" for i in range(12)])
    random.Random(7).shuffle(rows)
    store.insert_chunks(rows)
    got = [(c.path, c.start_line) for c in store.iter_chunks("r")]
    assert got == sorted((r.chunk.path, r.chunk.start_line) for r in rows)
    first = next(iter(store.iter_chunks("r")))
    assert first.text and first.chunk_hash and first.file_hash == "fh-" + first.path and first.score == 0


def test_chunk_spans_gives_each_asked_file_its_chunks_in_line_order_without_text(store):
    rows = []
    for repo, p in (("r", "a.py"), ("r", "b.py"), ("r", "c.py"), ("other", "a.py")):
        rows += rows_for(repo, p, [f"{repo} {p} {i}\nmore" for i in range(9)])
    random.Random(3).shuffle(rows)
    store.insert_chunks(rows)
    got = store.chunk_spans("r", ["b.py", "a.py", "gone.py", "it's.py"])
    assert sorted(got) == ["a.py", "b.py", "gone.py", "it's.py"]  # every asked path, none other
    assert got["gone.py"] == [] and got["it's.py"] == []
    for path in ("a.py", "b.py"):
        want = [(c.id, c.symbol, c.kind, c.start_line, c.end_line) for c in store.iter_chunks("r") if c.path == path]
        assert [(c.id, c.symbol, c.kind, c.start_line, c.end_line) for c in got[path]] == want
        assert all(c.text == "" and c.repo_id == "r" and c.path == path for c in got[path])


def test_manifest_and_repo_records_round_trip(store):
    entries = [FileEntry("r", f"d/f{i}.py", i, 10**18 + i, f"h{i}", i % 3, 1.5 + i) for i in range(40)]
    store.put_file_entries(entries)
    store.put_file_entries(entries[:5])  # idempotent
    assert store.file_entries("r") == {e.path: e for e in entries}
    store.delete_file_entries("r", [e.path for e in entries[:10]] + ["nope"])
    assert sorted(store.file_entries("r")) == sorted(e.path for e in entries[10:])
    store.put_repo_record("r", {"root": "/x", "state": "clean", "n": [1, 2]})
    store.put_repo_record("r", {"root": "/y"})
    assert store.repo_records() == {"r": {"root": "/y"}}


def test_paging_by_primary_key(store, monkeypatch):
    monkeypatch.setattr(MilvusCalls, "page", 7)
    rows = []
    for i in range(9):
        rows += rows_for("r", f"f{i}.py", [f"text {j}" for j in range(5)])
    store.insert_chunks(rows)
    store.put_file_entries([FileEntry("r", f"f{i}.py", 1, 1, "h", 5, 0.0) for i in range(30)])
    assert store.chunk_paths("r") == {f"f{i}.py": 5 for i in range(9)}
    assert len(store.file_entries("r")) == 30
    assert len(list(store.iter_chunks("r"))) == 45
    assert store.delete_paths("r", [f"f{i}.py" for i in range(4)]) == 20
    assert count(store, "r") == 25


def test_rows_are_validated_before_anything_is_written(store):
    good = rows_for("r", "a.py", ["keep me"])
    store.insert_chunks(good)
    wrong_dim = ChunkRow(good[0].id, "r", "fh", good[0].chunk, [0.1] * (DIM + 1))
    huge = rows_for("r", "b.py", ["x" * 70_000])
    bad_id = [ChunkRow('id"with quote', "r", "fh", good[0].chunk, good[0].dense)]
    not_unit = [ChunkRow(good[0].id, "r", "fh", good[0].chunk, [2 * x for x in good[0].dense])]
    for batch in ([wrong_dim], huge, bad_id, not_unit, good + [wrong_dim]):
        with pytest.raises(StoreError):
            store.insert_chunks(batch)
    assert [c.text for c in store.iter_chunks("r")] == ["keep me"]  # Lite's failed upsert would delete it
    with pytest.raises(StoreError, match="dimensions"):
        store.dense_search([1.0, 0.0], 3, Filters())
    with pytest.raises(StoreError, match="normalised"):
        store.dense_search([1.0] * DIM, 3, Filters())


def test_a_milvus_failure_mid_write_is_a_store_error(store):
    store.insert_chunks(rows_for("r", "a.py", ["before"]))
    server = store._m._alive.__self__  # the LiteServer of this store
    server.proc.kill()
    server.proc.wait()
    t = time.monotonic()
    with pytest.raises(StoreError, match="stopped") as err:
        store.insert_chunks(rows_for("r", "b.py", ["after"]))
    assert time.monotonic() - t < 10  # bounded retries, not pymilvus' 75
    assert "codeseam index" in str(err.value)
    with pytest.raises(StoreError):
        store.bm25_search("before", 3, Filters())


def test_definitions_finds_chunks_by_symbol_name_exactly(store):
    """The declarations a symbol query looks up: symbol == name or ends with '.name', exact case,
    in the filters' scope; a name holding a quote or a wildcard cannot change the filter."""
    def rows(repo, path, symbols):
        out = []
        for i, sym in enumerate(symbols):
            c = Chunk(path, "python", sym, "", "class", i * 3 + 1, i * 3 + 2, f"class {sym}:\n    pass\n",
                      f"{path} {sym}\nclass {sym}:\n    pass\n")
            out.append(ChunkRow(content_hash(repo, path, str(i), c.hash), repo, "fh-" + path, c, embed(c.text)))
        return out
    store.insert_chunks(rows("r1", "a.py", ["Session", "Session.request", "session", "MySession", "Outer.Session"]))
    store.insert_chunks(rows("r2", "b.py", ["Session"]))
    got = {(c.repo_id, c.symbol) for c in store.definitions(["Session"], Filters(repos=("r1",)))}
    assert got == {("r1", "Session"), ("r1", "Outer.Session")}
    assert {c.repo_id for c in store.definitions(["Session"], Filters())} == {"r1", "r2"}
    assert store.definitions(['Session" or symbol != "', "Sess%"], Filters()) == []
    assert store.definitions([], Filters()) == []
