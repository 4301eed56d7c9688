"""Enrichment through the whole pipeline: index (real Milvus Lite, fake embedder) with the
descriptions written by the loopback LLM, then search and ask.

The oracle: each function is described with an invented word that appears nowhere in the
code. With enrichment that word finds the function by BM25 and by dense retrieval; without
it, it finds nothing of the kind; and the word never shows in a hit's text, in the sources
sent to the answering LLM, or in the answer's citations.
"""

from __future__ import annotations

import json
import re
import textwrap

import pytest

from codeseam import api
from codeseam.settings import Settings

LISTING = re.compile(r"^(c\d+): lines (\d+)-(\d+)(?:, \w+ (\S+))?", re.M)

# symbol -> an invented word that appears in its description only
WORDS = {"compute_backoff": "zorbaflex", "load_manifest": "quillotine", "Ledger": "vantablume"}

FILES = {
    "net/retry.py": '''
        """Retry helpers."""
        import random


        def compute_backoff(attempt, base=0.5, cap=30.0):
            delay = min(cap, base * 2 ** attempt)
            return delay * (0.5 + random.random() / 2)


        def should_retry(status):
            return status == 429 or status >= 500
        ''',
    "store/manifest.py": '''
        import json
        from pathlib import Path


        def load_manifest(path):
            data = json.loads(Path(path).read_text())
            return {row["name"]: row for row in data["rows"]}


        class Ledger:
            def __init__(self):
                self.entries = []

            def settle(self, account, amount):
                self.entries.append((account, -amount))
                return sum(a for _, a in self.entries)
        ''',
}


def describe(body) -> str:
    user = body["messages"][-1]["content"]
    out = {}
    for m in LISTING.finditer(user):
        symbol = m[4] or ""
        word = WORDS.get(symbol, "")
        out[m[1]] = f"This code {('is the ' + word + ' routine') if word else 'is a helper'} of the project."
    return json.dumps(out)


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "proj"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return root


def _settings(tmp_path, server, name: str, enrich: bool) -> Settings:
    # a wide fake embedder: its hashed bag of words then rarely collides, so a shared word
    # is what makes two texts similar
    return Settings(data_dir=str(tmp_path / name), embedding_backend="fake", embedding_dim=1024,
                    enrich=enrich, llm_base_url=server.base_url, llm_model="fake-model",
                    chunk_min_bytes=0)


def test_descriptions_are_searchable_but_absent_from_text_and_citations(fake_openai, tmp_path, repo):
    fake_openai.responder = describe
    rich = _settings(tmp_path, fake_openai, "rich", True)
    plain = _settings(tmp_path, fake_openai, "plain", False)
    api.index(repo, repo_id="proj", settings=rich)
    assert fake_openai.chat_requests(), "enrichment asked the LLM"
    api.index(repo, repo_id="proj", settings=plain)

    for symbol, word in WORDS.items():
        for mode in ("bm25", "dense"):
            hits = api.search(word, settings=rich, mode=mode, k=3).hits
            assert hits and hits[0].symbol == symbol, (word, mode, [h.symbol for h in hits])
            assert all(word not in h.text and "description:" not in h.text for h in hits)
        plain_hits = api.search(word, settings=plain, mode="bm25", k=3).hits
        assert all(h.symbol != symbol for h in plain_hits)  # the description made the difference

    # ask: the sources sent to the LLM and the citations carry the code, not the description
    n_before = len(fake_openai.chat_requests())
    fake_openai.script("compute_backoff doubles the delay per attempt [1].")
    answer = api.ask("zorbaflex", settings=rich)
    sent = fake_openai.chat_requests()[n_before:]
    assert len(sent) == 1
    sources = json.dumps(sent[0]["messages"][1:])
    assert "description:" not in sources and "routine of the project" not in sources
    assert "compute_backoff" in sources
    assert answer.citations and answer.citations[0].symbol == "compute_backoff"
    assert "routine of the project" not in answer.answer


def test_reindex_asks_only_for_changed_chunks(fake_openai, tmp_path, repo):
    fake_openai.responder = describe
    rich = _settings(tmp_path, fake_openai, "rich", True)
    api.index(repo, repo_id="proj", settings=rich)
    first = len(fake_openai.chat_requests())
    api.index(repo, repo_id="proj", settings=rich)
    assert len(fake_openai.chat_requests()) == first  # nothing changed: no request

    path = repo / "net/retry.py"
    path.write_text(path.read_text().replace("status >= 500", "status >= 500 or status == 408"))
    api.index(repo, repo_id="proj", settings=rich)
    new = fake_openai.chat_requests()[first:]
    assert len(new) == 1
    listed = [m[4] for m in LISTING.finditer(new[0]["messages"][-1]["content"])]
    assert listed == ["should_retry"]  # compute_backoff came from the cache
    hits = api.search("zorbaflex", settings=rich, mode="bm25", k=1).hits
    assert hits[0].symbol == "compute_backoff"


def test_a_language_change_re_enriches_the_repo(fake_openai, tmp_path, repo):
    fake_openai.responder = describe
    rich = _settings(tmp_path, fake_openai, "rich", True)
    api.index(repo, repo_id="proj", settings=rich)
    first = len(fake_openai.chat_requests())
    # German descriptions are Latin too, so the English scripted ones pass the alphabet check
    api.index(repo, repo_id="proj", settings=rich.replace(enrich_language="de"))
    again = fake_openai.chat_requests()[first:]
    assert len(again) == len(FILES) and all("German" in b["messages"][-1]["content"] for b in again)
