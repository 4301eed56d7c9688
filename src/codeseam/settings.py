"""One frozen Settings object. Precedence: defaults < config file < ``RAG_*`` env < CLI flags.

The config file is TOML: ``$RAG_CONFIG`` if set, else ``<user config dir>/codeseam/config.toml``.
Keys are the field names below (``chunk_max_bytes = 1500``); the env name of a field is
``RAG_`` + its upper-cased name (``RAG_CHUNK_MAX_BYTES``). A bad value stops the run with a
``ConfigError`` that names the key and where it came from.

A child process that must serve with its parent's settings (the keep-alive server) gets them
whole as JSON in ``CODESEAM_SETTINGS`` (``child_env``), which stands for the config file and the
``RAG_*`` variables: values travel exactly, list items holding commas or spaces included.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path
from collections.abc import Mapping
from typing import Any

from .errors import ConfigError

APP = "codeseam"
CHILD_ENV = "CODESEAM_SETTINGS"  # a parent's settings, whole (child_env)


def _user_dir(kind: str) -> str:
    import platformdirs

    if kind == "data":
        return platformdirs.user_data_dir(APP, appauthor=False)
    return platformdirs.user_config_dir(APP, appauthor=False)


@dataclass(frozen=True)
class Settings:
    # where the index lives
    data_dir: str = ""  # "" -> user data dir
    milvus_uri: str = ""  # "" -> Milvus Lite file <data_dir>/index.db; http(s)://... -> server
    milvus_token: str = ""
    collection: str = "codeseam"
    # discovery
    max_file_bytes: int = 1 << 20
    # chunking
    chunker: str = "ast"  # ast | window
    chunk_max_bytes: int = 2000
    chunk_min_bytes: int = 200
    # scrubbing
    scrub: bool = True
    scrub_allow: tuple[str, ...] = ()  # regexes of known false positives
    # embedding
    embedding_backend: str = "bundled"  # bundled | e5 | sentence-transformers | openai | fake
    embedding_model: str = ""  # model name/path (sentence-transformers, openai), or preset
    embedding_base_url: str = ""
    embedding_api_key: str = ""
    embedding_batch: int = 0  # texts per model call or request; 0 -> the backend's own (bundled 8)
    embedding_dim: int = 0  # 0 -> known from the model / discovered from the first response
    embedding_threads: int = 0  # 0 -> the number of CPU cores this process may use
    embedding_timeout: float = 60.0  # seconds per HTTP request (openai backend)
    # bundled backend: int8 (the measured fast path, embed/quantize.py) or fp32 (the exact export)
    embedding_precision: str = "fp32"
    # search
    k: int = 8
    fusion: str = "rrf"  # rrf | weighted
    rrf_k: int = 60
    dense_weight: float = 0.5
    weak_threshold: float = -1.0  # < 0 -> the embedder's calibrated default
    # freshness (fresh/): before a search or ask, bring the repos in scope up to date with
    # their working trees: sync (write the changes, then search), check (search what is
    # indexed, flag every hit whose file changed; nothing is written), off (as indexed)
    freshness: str = "sync"
    freshness_budget: float = 2.0  # seconds a query may spend syncing; then hits are flagged
    # LLM (ask, enrich)
    llm_base_url: str = "http://localhost:11434/v1"
    llm_model: str = ""
    llm_api_key: str = ""
    llm_timeout: float = 60.0  # seconds per read
    # one LLM call in all (request, retries, the whole stream): a server that drip-feeds its
    # reply cannot hold an ask for longer; and the largest reply read (a 20 MB reply is refused)
    llm_deadline: float = 300.0
    llm_max_reply_bytes: int = 1_048_576
    # enrichment
    enrich: bool = False
    enrich_language: str = "en"
    enrich_concurrency: int = 2
    # servers
    allowed_roots: tuple[str, ...] = ()
    server_token: str = ""
    # the page's "open in editor" link (present.py): {path} absolute, {line}, {end_line},
    # {relpath}, {root}, {repo}; empty = no link
    editor_url: str = "vscode://file{path}:{line}"
    # the CLI's keep-alive owner of a Milvus Lite index (owner/keepalive.py): seconds of idle
    # time before the background server it starts exits; 0 = off (the CLI opens the file itself)
    keepalive: float = 600.0

    # -- derived -------------------------------------------------------------------
    @property
    def data_path(self) -> Path:
        return Path(self.data_dir or _user_dir("data")).expanduser()

    @property
    def resolved_milvus_uri(self) -> str:
        return self.milvus_uri or str(self.data_path / "index.db")

    @property
    def private_dirs(self) -> tuple[str, ...]:
        """The folders of the index's own data (the data dir, the Milvus Lite file's folder):
        never indexed, wherever they lie under a repo root."""
        dirs = [str(self.data_path)]
        if self.is_lite:
            dirs.append(str(Path(self.resolved_milvus_uri).expanduser().parent))
        return tuple(dict.fromkeys(dirs))

    @property
    def is_lite(self) -> bool:
        uri = self.resolved_milvus_uri
        return not uri.startswith(("http://", "https://", "tcp://", "unix:"))

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)


_FIELDS = {f.name: f for f in fields(Settings)}


def _coerce(name: str, value: Any, source: str) -> Any:
    f = _FIELDS[name]
    kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
    try:
        if kind == "bool":
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off", ""):
                return False
            raise ValueError(f"expected on/off, got {value!r}")
        if kind == "int":
            if isinstance(value, bool):
                raise ValueError("expected an integer")
            return int(value)
        if kind == "float":
            return float(value)
        if kind.startswith("tuple"):
            if isinstance(value, str):  # one per line when it has lines (items may hold commas), else comma-separated
                parts = value.splitlines() if "\n" in value else value.split(",")
                return tuple(p for p in (s.strip() for s in parts) if p)
            return tuple(str(v) for v in value)
        return str(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"invalid value for {name} from {source}: {exc}") from None


def _validate(s: Settings) -> Settings:
    checks = [
        (s.chunker in ("ast", "window"), "chunker must be 'ast' or 'window'"),
        (s.chunk_max_bytes >= 64, "chunk_max_bytes must be at least 64"),
        (0 <= s.chunk_min_bytes < s.chunk_max_bytes, "chunk_min_bytes must be below chunk_max_bytes"),
        (s.max_file_bytes > 0, "max_file_bytes must be positive"),
        (s.fusion in ("rrf", "weighted"), "fusion must be 'rrf' or 'weighted'"),
        (0.0 <= s.dense_weight <= 1.0, "dense_weight must be within 0..1"),
        (1 <= s.k <= 100, "k must be within 1..100"),
        (s.embedding_batch >= 0, "embedding_batch must be 0 (the backend's own) or positive"),
        (s.embedding_dim >= 0, "embedding_dim must be 0 (auto) or positive"),
        (s.embedding_threads >= 0, "embedding_threads must be 0 (auto) or positive"),
        (s.embedding_timeout > 0, "embedding_timeout must be positive"),
        (s.embedding_precision in ("int8", "fp32"), "embedding_precision must be int8 or fp32"),
        (s.enrich_concurrency >= 1, "enrich_concurrency must be positive"),
        (s.llm_timeout > 0, "llm_timeout must be positive"),
        (s.llm_deadline > 0, "llm_deadline must be positive"),
        (s.llm_max_reply_bytes >= 1024, "llm_max_reply_bytes must be at least 1024"),
        (s.keepalive >= 0, "keepalive must be 0 (off) or a positive number of seconds"),
        (s.freshness in ("sync", "check", "off"), "freshness must be sync, check or off"),
        (s.freshness_budget >= 0, "freshness_budget must be 0 or a positive number of seconds"),
        (
            s.embedding_backend in ("bundled", "e5", "sentence-transformers", "openai", "fake"),
            "embedding_backend must be bundled, e5, sentence-transformers, openai or fake",
        ),
    ]
    from .present import check_editor_pattern

    checks.append((check_editor_pattern(s.editor_url) is None, check_editor_pattern(s.editor_url) or ""))
    for ok, msg in checks:
        if not ok:
            raise ConfigError(f"invalid settings: {msg}")
    return s


def config_file_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    explicit = env.get("RAG_CONFIG")
    return Path(explicit).expanduser() if explicit else Path(_user_dir("config")) / "config.toml"


def _read_config(path: Path, required: bool) -> dict[str, Any]:
    if not path.exists():
        if required:
            raise ConfigError(f"config file not found: {path}", hint="unset RAG_CONFIG or create the file")
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from None
    unknown = sorted(set(data) - set(_FIELDS))
    if unknown:
        raise ConfigError(f"unknown key(s) in {path}: {', '.join(unknown)}")
    return data


def load_settings(
    overrides: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None
) -> Settings:
    """Build Settings from defaults < config file < RAG_* env < ``overrides`` (CLI flags).

    ``None`` values in ``overrides`` mean "flag not given" and are ignored.
    """
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    if CHILD_ENV in env:  # a parent's settings, whole: no config file, no RAG_* variable
        values = {key: _coerce(key, val, CHILD_ENV) for key, val in _child_values(env[CHILD_ENV]).items()}
    else:
        cfg_path = config_file_path(env)
        for key, val in _read_config(cfg_path, required="RAG_CONFIG" in env).items():
            values[key] = _coerce(key, val, str(cfg_path))
        for name in _FIELDS:
            env_name = "RAG_" + name.upper()
            if env_name in env:
                values[name] = _coerce(name, env[env_name], env_name)
    for key, val in (overrides or {}).items():
        if val is None:
            continue
        if key not in _FIELDS:
            raise ConfigError(f"unknown setting: {key}")
        values[key] = _coerce(key, val, "command line")
    return _validate(Settings(**values))


def child_env(settings: Settings, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a child process that must run with exactly ``settings``: ``base``
    (this process's environment) without its ``RAG_*`` variables, plus ``CODESEAM_SETTINGS``."""
    base = os.environ if base is None else base
    env = {k: v for k, v in base.items() if not k.startswith("RAG_")}
    env[CHILD_ENV] = json.dumps(dataclasses.asdict(settings))
    return env


def _child_values(text: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"invalid {CHILD_ENV}: {exc}") from None
    unknown = sorted(set(data) - set(_FIELDS)) if isinstance(data, dict) else ["(not an object)"]
    if unknown:
        raise ConfigError(f"invalid {CHILD_ENV}: unknown key(s) {', '.join(unknown)}")
    return data
