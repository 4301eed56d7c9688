"""Enrichment (optional, off by default): LLM-written descriptions per chunk, guarded and
cached, added to ``indexed_text`` only (contextual retrieval, DESIGN.md §5).

Switched on by ``RAG_ENRICH=1``; descriptions are written in ``RAG_ENRICH_LANGUAGE``
(default ``en``) by the chat model of ``RAG_LLM_*`` (OpenAI-compatible, Ollama by default).

- **Requests** (``prompt.py``): one per file, the file with line numbers plus the chunk list
  (ids ``c1``, ``c2``, ..., line spans, kind, symbol), asking for JSON ``{id: description}``
  (``response_format={"type": "json_object"}``; code fences around the JSON are tolerated).
  A file over ``max_file_chars`` is sent as views: its head plus consecutive chunks with
  ``around`` lines of context; every omission is marked in the text, a chunk is never cut.
- **Coverage check**: ids missing from the reply get one retry (a request listing only
  them), then the chunk goes on without a description (counted ``missing``).
- **Alphabet check** (``script.py``): a description whose letters are mostly outside the
  language's script (by Unicode ranges; code identifiers not counted) is rejected
  (``rejected_script``) and retried once like a missing id.
- **Failures**: timeouts, dropped connections, HTTP errors and replies that are not a
  JSON object are retried ``retries`` times (default 2) with exponential backoff, then the
  request's chunks go on without descriptions (``failed``). The chat client itself does not
  retry here (one policy, in one place). After ``max_consecutive_failures`` failed requests
  in a row the enricher stops asking for the rest of the run (``skipped``) and says so once,
  so a dead server costs minutes, not hours. Nothing here aborts indexing.
- **Unavailable LLM**: ``Enricher.from_settings`` probes the server once (``GET /models``)
  and raises ``LLMUnavailableError`` there when no model is configured, the server cannot be
  reached or refuses the key: enrichment was asked for but cannot run, so the run stops
  before any work, with the setting to fix.
- **Placement** (``place.py``): one ``description: ...`` line between the header and the
  code of ``indexed_text``; ``text`` (what citations and the LLM see) never changes.
  Descriptions are capped at ``max_description_chars``; with the embedder's
  ``count_tokens``/``max_tokens`` given (constructor or ``enrich_file``) they are trimmed,
  never the code, so ``indexed_text`` still fits the embedder.
- **Cache** (``cache.py``): SQLite ``<data dir>/enrich-cache.sqlite`` keyed by chunk hash +
  model + language + ``PROMPT_VERSION``; only cache misses are sent to the LLM.
- **Limits and progress**: at most ``enrich_concurrency`` requests in flight (threads);
  ``enrich_many`` runs that many files at once; ``progress("enrich", ...)`` after each file
  with counts, descriptions per minute and ``eta_s`` (after ``expect(files=..)`` or
  ``expect(chunks=..)``); ``estimate(chunks)`` for ``--dry-run``.
"""

from __future__ import annotations

from .cache import FILENAME as CACHE_FILENAME
from .cache import DescriptionCache
from .enricher import DEFAULT_SECONDS_PER_CHUNK, Enricher, eta_seconds
from .place import clean as clean_description
from .place import with_description
from .prompt import PROMPT_VERSION, parse_reply, plan_views
from .script import in_script, language, script_share

__all__ = [
    "CACHE_FILENAME", "DEFAULT_SECONDS_PER_CHUNK", "DescriptionCache", "Enricher", "PROMPT_VERSION",
    "clean_description", "eta_seconds", "in_script", "language", "parse_reply", "plan_views",
    "script_share", "with_description",
]
