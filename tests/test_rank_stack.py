"""The ranking stack's pure levers (codeseam.query.stack, issue 20) against brute-force
references and the cases that motivated them; query analysis (codeseam.query.analysis)."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, strategies as st

from codeseam.query import stack
from codeseam.query.analysis import analyze

_files = st.sampled_from(["a.py", "b.py", "c.py", "d.py"])
_ranked = st.lists(st.tuples(_files, st.floats(0.001, 1.0)), min_size=0, max_size=25).map(
    lambda xs: [((f, i), s) for i, (f, s) in enumerate(xs)])


@contextlib.contextmanager
def _real_index(base, files: dict, repo_id: str = "proj", **settings):
    """A real index (fake embedder, freshness off, ``settings`` on top) of ``files`` written
    under ``base / "proj"``, indexed as ``repo_id``."""
    from codeseam import api
    from codeseam.settings import load_settings

    for rel, text in files.items():
        (base / "proj" / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / "proj" / rel).write_text(text)
    s = load_settings({"embedding_backend": "fake", "data_dir": str(base / "data"), "freshness": "off", **settings},
                      env={})
    with api.Index(s, create=True) as ix:
        ix.index(base / "proj", repo_id=repo_id)
        yield ix


def _search(ix, query: str, repo_id: str, k: int, mode: str, **options):
    from codeseam.query.retrieve import RetrieveOptions, retrieve
    from codeseam.store import Filters

    return retrieve(ix.store, ix.embedder, ix.settings, query, Filters(repos=(repo_id,)), k, mode=mode,
                    options=RetrieveOptions(**options))


def _reference_saturate(ranked, decay, free):
    """Brute force: repeatedly take the candidate with the best effective score (its score
    times decay ** (taken from its file + 1 - free), when that exponent is positive); ties go
    to the earlier candidate."""
    left = list(enumerate(ranked))
    taken: dict[str, int] = {}
    out = []
    while left:
        def eff(pair):
            _, ((f, _), s) = pair
            extra = taken.get(f, 0) + 1 - free
            return s * (decay ** extra if extra > 0 else 1.0)
        best = max(left, key=lambda p: (eff(p), -p[0]))
        out.append((best[1][0], eff(best)))
        taken[best[1][0][0]] = taken.get(best[1][0][0], 0) + 1
        left.remove(best)
    return out


@given(_ranked.map(lambda r: sorted(r, key=lambda p: -p[1])), st.sampled_from([0.3, 0.5, 0.8]), st.integers(1, 3))
def test_saturate_matches_brute_force(ranked, decay, free):
    got = stack.saturate(ranked, lambda item: item[0], decay=decay, free=free)
    want = _reference_saturate(ranked, decay, free)
    assert [i for i, _ in got] == [i for i, _ in want]
    assert [s for _, s in got] == pytest.approx([s for _, s in want])
    assert sorted(map(repr, (i for i, _ in got))) == sorted(map(repr, (i for i, _ in ranked)))  # a permutation


def test_saturate_puts_the_best_chunk_of_each_strong_file_first():
    ranked = [(("sansio/blueprints.py", i), 1.0 - i * 0.01) for i in range(8)] + [(("blueprints.py", 0), 0.9)]
    got = stack.saturate(ranked, lambda item: item[0], decay=0.5, free=1)
    assert [f for (f, _), _ in got[:2]] == ["sansio/blueprints.py", "blueprints.py"]


@given(_ranked, st.floats(0.05, 1.0))
def test_file_coherence_lifts_only_each_files_best_candidate(ranked, frac):
    got = dict((item, s) for item, s in stack.boost_file_coherence(ranked, lambda item: item[0], frac=frac))
    if not ranked:
        return
    top = max(s for _, s in ranked)
    sums: dict[str, float] = {}
    for (f, _), s in ranked:
        sums[f] = sums.get(f, 0.0) + s
    best = {}
    for item, s in ranked:
        if item[0] not in best or s > best[item[0]][1]:
            best[item[0]] = (item, s)
    for item, s in ranked:
        lift = frac * top * sums[item[0]] / max(sums.values()) if best[item[0]][0] == item else 0.0
        assert got[item] == pytest.approx(s + lift)


def test_path_words_and_matches():
    assert {"blueprints", "flask"} <= stack.path_words("src/flask/blueprints.py")
    assert {"retrypolicy", "retry", "policy"} <= stack.path_words("Source/Features/RetryPolicy.swift")
    names = stack.path_words("src/flask/sessions.py")
    assert stack.word_matches("session", names) and stack.word_matches("sessions", names)
    assert not stack.word_matches("ses", names)  # too short to be a prefix match
    assert stack.word_matches("utility", stack.path_words("lib/utils.js"))  # utils -> util, a prefix of utility
    assert stack.word_matches("parameters", stack.path_words("src/params.dart"))
    assert not stack.word_matches("utility", stack.path_words("lib/utils.js", singular=False))
    assert "clas" not in stack.path_words("src/class.py") and "acces" not in stack.path_words("src/access.py")
    got = stack.boost_path_match([("src/flask/ctx.py", 1.0), ("src/flask/sessions.py", 0.6)], lambda p: p,
                                ["session", "management"], weight=1.0)
    assert got[0] == ("src/flask/sessions.py", pytest.approx(0.6 + 0.5))


@given(st.lists(st.sampled_from(["upload", "requests", "stream", "data", "server", "core"]), min_size=1, max_size=6),
       st.sampled_from([0.0, 0.5, 1.0, 3.0]))
def test_path_match_weighs_earlier_words_more(words, decay):
    """Brute force: the share is the sum of 1 / (1 + decay * i) over the query's words that
    name the file, over the same sum for every word; nothing else moves."""
    paths = ["Source/Core/UploadRequest.swift", "Source/Core/DataStreamRequest.swift", "Source/Core/Session.swift"]
    ranked = [(p, 1.0 - i * 0.1) for i, p in enumerate(paths)]
    got = dict(stack.boost_path_match(ranked, lambda p: p, words, weight=0.5, decay=decay))
    for p, s in ranked:
        names = stack.path_words(p)
        w = [1.0 / (1.0 + decay * i) for i in range(len(words))]
        share = sum(x for x, word in zip(w, words, strict=True) if stack.word_matches(word, names)) / sum(w)
        assert got[p] == pytest.approx(s + 0.5 * 1.0 * share)


def test_the_subject_of_a_question_names_the_file():
    """"how upload requests stream data to the server": both files' names hold two of the
    question's words; the one naming its subject comes first once later words weigh less."""
    words = ["upload", "requests", "stream", "data", "server"]
    ranked = [("Source/Core/DataStreamRequest.swift", 1.0), ("Source/Core/UploadRequest.swift", 0.99)]
    assert stack.boost_path_match(ranked, lambda p: p, words, weight=0.5)[0][0].endswith("DataStreamRequest.swift")
    assert stack.boost_path_match(ranked, lambda p: p, words, weight=0.5, decay=0.5)[0][0].endswith("/UploadRequest.swift")


@pytest.mark.parametrize("text,name,tier", [
    ("pub struct Router<S = ()> {", "Router", 2), ("impl<S> Clone for Router<S> {", "Router", 0),
    ("extension Request {", "Request", 0), ("open class Request {", "Request", 2),
    ("defmodule Ecto.Schema do", "Schema", 2), ("class Session:", "Session", 2),
    ("def session():", "Session", 0), ("def session():", "session", 1),
    ("export interface ParseContext<T> {", "ParseContext", 2), ("public sealed class Job : X", "Job", 2),
    ("module Sinatra\n  class Base", "Base", 2), ("type Engine struct {", "Engine", 2),
    ("func (engine *Engine) Run()", "Engine", 0), ("# see class Session", "Sessions", 0),
])
def test_declaration_tier(text, name, tier):
    assert stack.declaration_tier(text, name) == tier


def test_legacy_paths_need_a_newer_sibling_or_a_legacy_folder():
    paths = ["packages/zod/src/v3/types.ts", "packages/zod/src/v4/core/schemas.ts",
             "exposed-core/src/main/kotlin/org/jetbrains/exposed/v1/core/Table.kt", "src/compat/py2.py",
             "src/app.py"]
    assert stack.legacy_paths(paths) == {"packages/zod/src/v3/types.ts", "src/compat/py2.py"}
    got = stack.apply_legacy_prior([(p, 1.0) for p in paths], lambda p: p, weight=0.5)
    assert [p for p, s in got if s == 0.5] == ["packages/zod/src/v3/types.ts", "src/compat/py2.py"]


def _reference_legacy_paths(paths):
    """The rule read plainly: every folder of every path looked at (no pre-filter)."""
    newest: dict[str, int] = {}
    versioned, out = [], set()
    for p in paths:
        parts = p.split("/")[:-1]
        if any(d.lower() in stack.LEGACY_DIRS for d in parts):
            out.add(p)
        for i, d in enumerate(parts):
            if d.lower().startswith("v") and d[1:].isdigit() and d[1:].isascii():
                prefix = "/".join(parts[:i])
                newest[prefix] = max(newest.get(prefix, int(d[1:])), int(d[1:]))
                versioned.append((p, prefix, int(d[1:])))
    out.update(p for p, prefix, n in versioned if n < newest[prefix])
    return frozenset(out)


_segment = st.sampled_from(["src", "v1", "V3", "v4", "v10", "compat", "Deprecated", "old", "older", "vx", "lib",
                            "_compat", "legacy", "v2a", "backports"])


@given(st.lists(st.lists(_segment, max_size=4).map(lambda ds: "/".join([*ds, "f.py"])), max_size=8))
def test_legacy_paths_match_the_plain_rule(paths):
    assert stack.legacy_paths(paths) == _reference_legacy_paths(paths)


@pytest.mark.parametrize("query,symbol,names", [
    ("Session", True, ("Session",)), ("Rails::Engine", True, ("Engine",)), ("basic_format_args", True,
                                                                            ("basic_format_args",)),
    ("HTTPHeaders", True, ("HTTPHeaders",)), ("session management", False, ()), ("formatter", False, ()),
    ("how does StateManager track state", False, ("StateManager",)), ("self->field", True, ("field",)),
])
def test_analyze(query, symbol, names):
    info = analyze(query)
    assert info.symbol is symbol and info.names == names


@pytest.mark.parametrize("query,files", [
    ("how the framework.dart entry point wires all riverpod components", ("framework.dart",)),
    ("harden error handling in `lib/cli/run.js`", ("run.js",)),
    ("Fix zsh.rs subcommand deduplication", ("zsh.rs",)),
    ("made ImportError verbose in cli.py", ("cli.py",)),
    ("how nvm installs a specific Node.js version", ("node.js",)),  # only a file of that name would match
    ("os.path.join and fmt.Println", ()), ("how are routes registered", ()), ("version 1.2.3", ()),
])
def test_analyze_finds_file_names(query, files):
    assert analyze(query).files == files


def test_a_file_named_with_its_extension_lifts_that_files_best_candidate():
    ranked = [("lib/src/providers/provider.dart", 1.0), ("lib/src/core/ref.dart", 0.9),
              ("lib/src/framework.dart", 0.5), ("lib/src/framework.dart", 0.4), ("lib/framework.dart.bak", 0.45)]
    got = stack.boost_named_files(ranked, lambda p: p, lambda p: 1.0, frozenset({"framework.dart"}), weight=0.6,
                                 key=stack.file_name_key)
    assert got[0] == ("lib/src/framework.dart", pytest.approx(1.1))
    assert dict(got[1:]) == dict(ranked[:2] + ranked[3:])  # its second candidate and the rest: unchanged


# -- the first page does not depend on k (issue 20) ----------------------------------------------

STDLIB_FILES = ("argparse.py", "difflib.py", "configparser.py", "gzip.py", "shutil.py", "calendar.py", "bisect.py",
                "heapq.py", "email/utils.py", "fnmatch.py", "csv.py")


@pytest.fixture(scope="module")
def stdlib_index(tmp_path_factory):
    import shutil
    import sysconfig
    from pathlib import Path

    from codeseam import api
    from codeseam.settings import load_settings

    base = tmp_path_factory.mktemp("pages")
    src = Path(sysconfig.get_paths()["stdlib"])
    for rel in STDLIB_FILES:
        (base / "lib" / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src / rel, base / "lib" / rel)
    settings = load_settings({"embedding_backend": "fake", "data_dir": str(base / "data"), "freshness": "off"}, env={})
    ix = api.Index(settings, create=True)
    ix.index(base / "lib", repo_id="lib")
    yield ix
    ix.close()


def test_the_first_page_does_not_depend_on_k(stdlib_index):
    """The top 10 of ``k=10`` are the first 10 of ``k=40`` (and the top 3 of ``k=3`` the first
    3 of ``k=10``), in every mode, for questions, lookups and change descriptions."""
    import json
    from pathlib import Path

    golden = Path(__file__).resolve().parents[2] / "shared" / "golden" / "stdlib-dev.jsonl"
    queries = [json.loads(x)["query"] for x in golden.read_text().splitlines()] if golden.exists() else []
    queries += ["how are arguments parsed", "SequenceMatcher", "fix gzip header parsing when the name is missing",
                "configuration file interpolation", "where is bisect_left defined", "copy a directory tree"]
    def page(q: str, mode: str, k: int) -> list:
        return [(h.path, h.start_line, h.end_line) for h in stdlib_index.search(q, k=k, mode=mode).hits]

    for q in queries:
        for mode in ("hybrid", "bm25", "dense"):
            assert page(q, mode, 40)[:10] == page(q, mode, 10), (q, mode)
            assert page(q, mode, 10)[:3] == page(q, mode, 3), (q, mode)


# -- the searched repository's name (issue 20) ------------------------------------------------------

@pytest.mark.parametrize("scope,words", [
    (("dio",), {"dio"}), (("lazy.nvim",), {"lazy.nvim", "lazynvim", "lazy", "nvim"}),
    (("http-dart",), {"http-dart", "httpdart", "http", "dart"}), (("dio", "flask"), set()), ((), set()),
])
def test_project_words(scope, words):
    from codeseam.query.analysis import project_words

    assert project_words(scope) == words


DIO_FILES = {
    "lib/dio_client.py": '"""The dio client: dio sends requests, dio modify hooks run first."""\n\n\n'
                         'def dio_send(dio, url, requests):\n    """dio requests, dio modify, dio dio."""\n'
                         '    return dio.fetch(url, requests)\n',
    "lib/interceptors.py": '"""Hooks."""\n\n\nclass Interceptor:\n'
                           '    """Runs before a request is sent."""\n\n'
                           '    def on_send(self, r):\n        return r\n',
    "lib/cancel.py": '"""Cancel tokens."""\n\n\ndef cancel(token):\n    return token.cancel()\n',
}


@pytest.fixture(scope="module")
def dio_index(tmp_path_factory):
    from codeseam import api
    from codeseam.settings import load_settings

    base = tmp_path_factory.mktemp("proj")
    for name, files in (("dio", DIO_FILES), ("other", {"lib/dio_notes.py": DIO_FILES["lib/dio_client.py"]})):
        for rel, text in files.items():
            (base / name / rel).parent.mkdir(parents=True, exist_ok=True)
            (base / name / rel).write_text(text)
    settings = load_settings({"embedding_backend": "fake", "data_dir": str(base / "data"), "freshness": "off"}, env={})
    ix = api.Index(settings, create=True)
    ix.index(base / "dio", repo_id="dio")
    yield ix, base
    ix.close()


def test_the_repository_name_does_not_pick_the_file(dio_index):
    """In a search of one repository, its name in the question ("how dio interceptors ...")
    says nothing about where the answer is: the file named after the project no longer wins."""
    from codeseam.query.retrieve import RetrieveOptions, retrieve
    from codeseam.store import Filters

    ix, _ = dio_index
    q = "how dio interceptors modify requests"
    for mode in ("bm25", "hybrid"):
        assert ix.search(q, repo="dio", mode=mode, k=3).hits[0].path == "lib/interceptors.py", mode
        assert ix.search(q, mode=mode, k=3).hits[0].path == "lib/interceptors.py", mode  # one repo indexed

    def top(**kw) -> str:
        return retrieve(ix.store, ix.embedder, ix.settings, q, Filters(repos=("dio",)), 3, mode="bm25",
                        **kw).hits[0].path

    assert top() == "lib/interceptors.py"
    assert top(options=RetrieveOptions(project_words=False)) == "lib/dio_client.py"  # what the lever changes


def test_the_repository_name_still_tells_repositories_apart(dio_index):
    """Across several repositories, the name keeps its weight: it is how a question says which."""
    from codeseam.query.retrieve import retrieve
    from codeseam.store import Filters

    ix, base = dio_index
    ix.index(base / "other", repo_id="other")
    try:
        res = retrieve(ix.store, ix.embedder, ix.settings, "how dio interceptors modify requests", Filters(), 3,
                       mode="bm25", scope=("dio", "other"))
        assert res.hits[0].path == "lib/dio_client.py"
        assert ix.search("how dio interceptors modify requests", repo="dio", mode="bm25").hits[0].path \
            == "lib/interceptors.py"
    finally:
        ix.remove("other")


# -- a code name in a question that is a file's name (issue 20) ----------------------------------

@pytest.mark.parametrize("name,key", [
    ("ManageHook", "managehook"), ("Rack::Response", "response"), ("show_exceptions", "showexceptions"),
    ("Plug.Conn", "conn"), ("notifier-provider", "notifierprovider"), ("Array#flatten", "flatten"),
])
def test_name_key(name, key):
    assert stack.name_key(name) == key


_named_paths = st.sampled_from(["src/ManageHook.hs", "src/manage_hook.py", "lib/Core.hs", "lib/core.test.ts",
                                "docs/ManageHook.md"])


@given(st.lists(st.tuples(_named_paths, st.floats(0.001, 1.0)), max_size=20).map(
    lambda xs: sorted([((f, i), s) for i, (f, s) in enumerate(xs)], key=lambda p: -p[1])),
    st.floats(0.05, 1.0))
def test_named_files_lift_only_each_named_files_best_candidate(ranked, weight):
    """Brute force: the first (best) candidate of each file whose name is a key gains
    weight x top x its role weight; nothing else moves; the result is sorted by score."""
    roles = {"docs/ManageHook.md": 0.5}
    got = stack.boost_named_files(ranked, lambda item: item[0], lambda item: roles.get(item[0], 1.0),
                                 frozenset({"managehook"}), weight=weight)
    top = max((s for _, s in ranked), default=0.0)
    first: dict[str, tuple] = {}
    for item, _ in ranked:
        first.setdefault(item[0], item)
    named = {"src/ManageHook.hs", "src/manage_hook.py", "docs/ManageHook.md"}
    want = {item: s + (weight * top * roles.get(item[0], 1.0) if item[0] in named and first[item[0]] == item else 0.0)
            for item, s in ranked}
    assert dict(got) == pytest.approx(want)
    assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)


NAMED_FILES = {
    "lib/retry.py": '"""Retrying: send a failed request again."""\n\n\n'
                    'def send(request, policy):\n'
                    '    """Send the request; retry the failed request while the RetryPolicy says to retry."""\n'
                    '    while policy.decide(request):  # the RetryPolicy decides: retry the request\n'
                    '        request = request.retry()\n'
                    '    return request\n',
    "lib/retry_policy.py": '"""What a RetryPolicy is made of."""\n\n\n'
                           'def backoff(attempt):\n    return 2 ** attempt\n\n\n'
                           'def decide(attempt, limit=3):\n    return attempt < limit\n',
}


@pytest.fixture
def named_top(tmp_path):
    """``top(query, options)``: the first BM25 hit's path on a real index of ``NAMED_FILES``."""
    from codeseam.query.retrieve import retrieve
    from codeseam.store import Filters

    with _real_index(tmp_path, NAMED_FILES) as ix:

        def top(query: str, **kw) -> str:
            return retrieve(ix.store, ix.embedder, ix.settings, query, Filters(repos=("proj",)), 3, mode="bm25",
                            **kw).hits[0].path

        yield top


def test_a_question_naming_a_class_finds_the_file_named_after_it(named_top):
    """"how does RetryPolicy decide to retry a failed request": ``retry.py``, which uses a
    policy, says every word more often and its name matches as many of the question's words;
    the file named after the name the question says is the answer (nothing declares it)."""
    from codeseam.query.retrieve import RetrieveOptions

    q = "how does RetryPolicy decide to retry a failed request"
    assert named_top(q) == "lib/retry_policy.py"
    assert named_top(q, options=RetrieveOptions(named_file=0.0)) == "lib/retry.py"  # what the lever changes


def test_a_query_naming_a_file_with_its_extension_finds_that_file(named_top):
    """"how does retry_policy.py decide to retry a failed request": ``retry.py`` says every word
    more often; the file the query names with its extension is the one meant."""
    from codeseam.query.retrieve import RetrieveOptions

    q = "how does retry_policy.py decide to retry a failed request"

    def top(**kw) -> str:
        return named_top(q, options=RetrieveOptions(path_weight=0.0, named_file=0.0, **kw))

    assert top() == "lib/retry_policy.py"
    assert top(file_names=0.0) == "lib/retry.py"  # what the lever changes


CACHE_PY = '''"""An HTTP cache."""


class ResponseCache:
    """Keeps cached responses and revalidated responses. A revalidated response replaces
    the cached response; a cached response that never revalidates would hang its readers,
    so revalidated cached responses time out.
    """

    entries: dict
    limit: int = 128
    revalidated: dict
    hang_timeout: float = 30.0

    def __init__(self, store, clock):
        self.store = store
        self.clock = clock
        self.entries = {}
        self.revalidated = {}

    def lookup(self, key):
        entry = self.entries.get(key)
        if entry is None:
            return None
        if entry.expires < self.clock():
            return None
        return entry.value

    def on_revalidated(self, key, response):
        """Read a revalidated response's body, with a timeout so it cannot hang."""
        body = response.read_body(timeout=self.hang_timeout)
        self.entries[key] = self.store.entry(body, self.clock() + response.ttl)
        return body
'''


@pytest.fixture(scope="module")
def cache_hits(tmp_path_factory):
    """``hits(query, mode, **options)``: ``{(kind, symbol): score}`` of the first 8 hits on a real
    index of ``CACHE_PY`` cut small (its class header piece apart from each method)."""
    with _real_index(tmp_path_factory.mktemp("cache"), {"lib/cache.py": CACHE_PY}, chunk_max_bytes=700) as ix:

        def hits(query: str, mode: str, **kw) -> dict:
            return {(h.kind, h.symbol): h.score for h in _search(ix, query, "proj", 8, mode, **kw).hits}

        hits.store = ix.store
        yield hits


def test_a_behaviour_query_weighs_a_class_header_less(cache_hits):
    """Where the class's header piece (its docstring and fields) is the best BM25 match: for a
    change description its score is ``BEHAVIOUR_KIND_WEIGHT`` of what it is with the lever off,
    every method's is unchanged; a question's scores do not move."""
    from codeseam.query import rank
    from codeseam.store import Filters

    top = cache_hits.store.bm25_search("hang revalidated cached responses", 1, Filters(repos=("proj",)))[0]
    assert top.kind == "header"
    change = "fix hang on revalidated cached responses"
    for mode in ("bm25", "hybrid"):
        on, off = cache_hits(change, mode), cache_hits(change, mode, behaviour_kinds=1.0)
        assert on.keys() == off.keys() and ("header", "ResponseCache") in on
        for key, score in on.items():
            want = off[key] * (rank.BEHAVIOUR_KIND_WEIGHT if key[0] == "header" else 1.0)
            assert score == pytest.approx(want), (mode, key)
        question = "how are revalidated cached responses kept"
        assert cache_hits(question, mode) == cache_hits(question, mode, behaviour_kinds=1.0)


def test_a_type_named_in_a_behaviour_is_not_its_answer(cache_hits):
    """A question about a named type ("how does ResponseCache time out ...") is answered by its
    declaration first; a behaviour that happens in it ("fix hang when ResponseCache revalidates
    ...") by the routine that does it: the declaration boost is for questions and lookups."""
    header = ("header", "ResponseCache")
    for mode in ("bm25", "hybrid"):
        question = "how does ResponseCache time out revalidated responses"
        got = cache_hits(question, mode)
        assert next(iter(got)) == header
        assert got == cache_hits(question, mode, decl_levers="all")
        change = "fix hang when ResponseCache revalidates a response"
        got, every = cache_hits(change, mode), cache_hits(change, mode, decl_levers="all")
        assert next(iter(got)) == ("method", "ResponseCache.on_revalidated")
        assert next(iter(every)) == header  # what the lever changes
        assert {k: v for k, v in got.items() if k != header} == {k: v for k, v in every.items() if k != header}


@pytest.mark.parametrize("query,scope", [
    ("Fix path completion in bash", "bash"), ("Emit value terminators on zsh", "zsh"),
    ("require a non-empty name for blueprints", "blueprints"), ("Fix `git diff git <TAB>` for Bash", "bash"),
    ("Add file location when SyntaxError happens in ESM.", "esm"), ("retry once in the client", "client"),
    ("fix it for all", ""), ("make it work for them", ""), ("fix a typo in it", ""),
    ("insert an item into a sorted list", ""), ("fix hang on revalidated cached responses", ""),  # one word closes it, not a phrase
    ("how are routes registered in flask", ""),  # a question: the path match reads all its words
    ("Session", ""),
])
def test_the_place_a_behaviour_names_last(query, scope):
    from codeseam.query.analysis import analyze

    assert analyze(query).scope == scope


SHELLS = {
    "shells/bash.py": '"""Bash completion script."""\n\n\ndef option_details(cmd):\n'
                      '    """Options of one command for the bash script."""\n'
                      '    return [f"--{o}" for o in cmd.options]\n',
    "shells/zsh.py": '"""Zsh completion script."""\n\n\ndef path_completion(arg):\n'
                     '    """Path completion: complete a file path for a path argument (path completion hint)."""\n'
                     '    return "_files" if arg.path else ""\n',
}


def test_a_behaviour_in_a_named_place_finds_that_file(tmp_path):
    """"fix path completion in bash": zsh's script says "path completion" more often, but the
    change is said to happen in bash, and a file named so is where; a question keeps the path
    match over all its words, and the project's own name is no place."""
    with _real_index(tmp_path, SHELLS, repo_id="bash") as ix:

        def top(query: str, mode: str, **kw) -> str:
            return _search(ix, query, "bash", 3, mode, **kw).hits[0].path

        for mode in ("bm25", "hybrid"):
            assert top("fix path completion in bash", mode, project_words=False) == "shells/bash.py"
            assert top("fix path completion in bash", mode, project_words=False, scope_weight=0.0) == "shells/zsh.py"
            # searched alone, the repository "bash" is not a place in it
            assert top("fix path completion in bash", mode) == "shells/zsh.py"
