"""bench/mine_commits.py: commit queries mined from a real git history (a repo made here)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import mine_commits

SNAPSHOT = '''import os


class Client:
    def get(self, url):
        return self.send("GET", url)

    @staticmethod
    def send(method, url):
        return method, url


def helper(x):
    return x + 1
'''


def _git(d: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(d), *args], check=True, capture_output=True)


def _commit(d: Path, message: str, files: dict[str, str]) -> None:
    for path, text in files.items():
        (d / path).parent.mkdir(parents=True, exist_ok=True)
        (d / path).write_text(text)
    _git(d, "add", "-A")
    _git(d, "commit", "-q", "-m", message)


@pytest.fixture
def history(tmp_path: Path) -> Path:
    d = tmp_path / "repo"
    d.mkdir()
    _git(d, "init", "-q")
    _git(d, "config", "user.email", "t@example.com")
    _git(d, "config", "user.name", "t")
    _commit(d, "initial", {"pkg/client.py": SNAPSHOT, "tests/test_client.py": "def test_x():\n    pass\n"})
    _git(d, "tag", "v1")
    # one method changed (its decorator range is the gold), a test changed freely: kept
    _commit(d, "fix(client): Send the method in upper case (#12).", {
        "pkg/client.py": SNAPSHOT.replace("return method, url", "return method.upper(), url"),
        "tests/test_client.py": "def test_x():\n    assert True\n"})
    # a new function: not kept (adds a definition)
    text = SNAPSHOT.replace("return method, url", "return method.upper(), url")
    _commit(d, "Add a second helper for paths", {"pkg/client.py": text + "\n\ndef other(y):\n    return y\n"})
    # a comment and an import outside any definition, and one function body: kept
    text2 = text + "\n\ndef other(y):\n    return y\n"
    _commit(d, "Make helper add two instead of one", {
        "pkg/client.py": ("import sys\n# a note\n" + text2).replace("return x + 1", "return x + 2")})
    # a source file added: not kept
    _commit(d, "Add a module for retries", {"pkg/retry.py": "def retry():\n    return 1\n"})
    return d


def test_definitions_are_top_level_callables_with_dotted_symbols() -> None:
    defs = mine_commits.definitions("python", SNAPSHOT.encode())
    assert [(d.symbol, d.start, d.end) for d in defs] == [
        ("Client.get", 5, 6), ("Client.send", 8, 10), ("helper", 13, 14)]


def test_go_methods_are_named_by_their_receiver_type() -> None:
    src = b"package a\n\nfunc (c *Command) Run(x int) error {\n\treturn nil\n}\n\nfunc Helper() {}\n\nfunc (s Set[T]) Add(v T) {}\n"
    defs = mine_commits.definitions("go", src)
    assert [(d.symbol, d.start, d.end) for d in defs] == [("Command.Run", 3, 5), ("Helper", 7, 7), ("Set.Add", 9, 9)]


@pytest.mark.parametrize("language, src, expected", [
    ("rust", b"use std::fmt;\nimpl<T> Foo<T> {\n    pub fn new(x: T) -> Self {\n        Foo(x)\n    }\n}\n"
             b"fn top() {\n    fn inner() {}\n}\nmod m {\n    pub fn g() {}\n}\n",
     [("Foo.new", 3, 5), ("top", 7, 9), ("m.g", 11, 11)]),
    ("typescript", b"export class Ky {\n  async fetch() {\n    const inner = () => 2;\n  }\n}\n"
                   b"export const helper = async (a: string): Promise<void> => {};\nfunction plain() {}\n",
     [("Ky.fetch", 2, 4), ("helper", 6, 6), ("plain", 7, 7)]),
    ("javascript", b"const a = require('a');\nRunner.prototype.run = function (fn) {\n  return fn;\n};\n"
                   b"exports.main = () => {};\nclass A {\n  m() {}\n}\n",
     [("Runner.prototype.run", 2, 4), ("exports.main", 5, 5), ("A.m", 7, 7)]),
    ("ruby", b"module Faraday\n  class Connection\n    def initialize(url)\n      @url = url\n    end\n"
             b"    def self.build; end\n  end\nend\n",
     [("Faraday.Connection.initialize", 3, 5), ("Faraday.Connection.build", 6, 6)]),
    ("csharp", b"namespace RestSharp {\n  public class RestClient {\n    public RestClient(string url) { }\n"
               b"    public void Dispose() {\n    }\n  }\n}\n",
     [("RestClient.RestClient", 3, 3), ("RestClient.Dispose", 4, 5)]),
    ("kotlin", b"package a\nclass Foo(val x: Int) {\n  fun bar(y: Int): Int { return y }\n  companion object {\n"
               b"    fun create(): Foo = Foo(1)\n  }\n}\nfun top() {}\n",
     [("Foo.bar", 3, 3), ("Foo.Companion.create", 5, 5), ("top", 8, 8)]),
    ("swift", b"import Foundation\npublic final class Session {\n    public init(x: Int) { }\n"
              b"    func request(_ url: String) -> Int { return 1 }\n}\nextension Session { func more() {} }\n",
     [("Session.init", 3, 3), ("Session.request", 4, 4), ("Session.more", 6, 6)]),
    ("c", b"#include <stdio.h>\nstatic int *alloc(size_t n)\n{\n    return NULL;\n}\n"
          b"#ifdef HAVE_X\nvoid cJSON_Delete(cJSON *item) { }\n#endif\nint (*table[2])(void);\n",
     [("alloc", 2, 5), ("cJSON_Delete", 7, 7)]),
    ("cpp", b"#include <string>\nnamespace fmt {\nclass Writer {\n public:\n  void write(int x) { }\n  ~Writer() {}\n};\n"
            b"template <typename T> T Writer::get() const {\n  return T();\n}\n}\n",
     [("Writer.write", 5, 5), ("Writer.~Writer", 6, 6), ("Writer.get", 8, 10)]),
])
def test_definitions_in_other_languages(language: str, src: bytes, expected: list) -> None:
    """Nested callables are not gold; an impl block, class or module names its callables;
    a C# namespace does not."""
    defs = mine_commits.definitions(language, src)
    assert [(d.symbol, d.start, d.end) for d in defs] == expected


def test_mines_modifications_of_existing_definitions(history: Path) -> None:
    rows = mine_commits.mine(history, "v1", "python", re.compile(r"^pkg/"), re.compile(r"(^|/)tests?/"))
    got = [(r["query"], [(g["path"], g["symbol"], g["start"], g["end"]) for g in r["gold"]]) for r in rows]
    assert got == [
        ("Send the method in upper case", [("pkg/client.py", "Client.send", 8, 10)]),
        ("Make helper add two instead of one", [("pkg/client.py", "helper", 13, 14)]),
    ]
    assert all(r["diff"].startswith("diff --git") for r in rows)


@pytest.mark.parametrize("subject,query", [
    ("fix(zsh): escape quotes.", "escape quotes"), ("[core] Retry on reset (#1234)", "Retry on reset"),
    ("Handle empty bodies, closes #99", "Handle empty bodies"), ("assert: include the type", "include the type"),
    ("Keep upstream typos as writen", "Keep upstream typos as writen"),
])
def test_subjects_are_cleaned_like_repos_dev(subject: str, query: str) -> None:
    assert mine_commits.clean_subject(subject) == query
