"""What the servers (MCP, HTTP) accept: allowed roots, path checks and input limits.

A server indexes only folders under an *allowed root*. The allowed roots are:

- the configured roots, ``settings.allowed_roots`` (``RAG_ALLOWED_ROOTS``, comma-separated);
- the roots of the repositories already in the index;
- the server's working directory (an MCP client starts ``codeseam mcp`` in the project).

``check_index_path`` refuses, with :class:`~codeseam.errors.UnsafePathError`:

- an empty path or one holding a NUL byte;
- any ``..`` component (traversal is refused outright, even when it would land inside a root);
- a path that, once every symlink is resolved, is not inside an allowed root (a symlink
  inside a root that points outside is a *symlink escape*, and said so);
- a path that does not exist or is not a folder.

Roots are resolved too, so a root given through a symlink still matches its real path.
Relative paths are taken relative to the server's working directory.

Input limits shared by the skins: a query of at most ``MAX_QUERY_CHARS`` characters,
``1 <= k <= MAX_K``, a token budget within ``MIN_TOKENS..MAX_TOKENS``, an HTTP body of at most ``MAX_BODY_BYTES`` bytes, and repo ids of a
sane length and alphabet. Nothing in codeseam runs a shell: the few subprocesses (git,
Milvus Lite) take a list argv and never ``shell=True``.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePath

from .errors import ConfigError, UnsafePathError

MAX_QUERY_CHARS = 32_000  # api, the CLI and the servers all check through here: a pasted issue with its traceback
MAX_K = 100
MIN_TOKENS, MAX_TOKENS = 16, 1_000_000  # a token budget (--max-tokens): fit.py
MAX_BODY_BYTES = 256 * 1024  # a 32,000-character query in JSON, escaped
MAX_PATH_CHARS = 4096
MAX_REPO_ID_CHARS = 200
_REPO_ID = re.compile(r"^[^\x00-\x1f\x7f]+$")

ROOTS_HINT = ("add the folder (or a parent) to RAG_ALLOWED_ROOTS of the server (comma-separated), "
              "or start the server from that folder")


@dataclass(frozen=True)
class AllowedRoots:
    """The resolved allowed roots, with where each came from (for messages)."""

    roots: tuple[tuple[Path, str], ...]

    @classmethod
    def build(cls, configured: Iterable[str], indexed: Iterable[str], cwd: str | os.PathLike[str] | None
              ) -> AllowedRoots:
        seen: dict[Path, str] = {}
        sources = [(p, "RAG_ALLOWED_ROOTS") for p in configured]
        sources += [(p, "indexed repo") for p in indexed]
        if cwd is not None:
            sources.append((os.fspath(cwd), "server working directory"))
        for raw, origin in sources:
            if not raw or "\0" in str(raw):
                continue
            root = Path(os.path.realpath(os.path.expanduser(str(raw))))
            seen.setdefault(root, origin)
        return cls(tuple(seen.items()))

    @property
    def paths(self) -> tuple[Path, ...]:
        return tuple(p for p, _ in self.roots)

    def containing(self, path: Path) -> Path | None:
        """The allowed root that holds ``path`` (already resolved), or None."""
        for root, _ in self.roots:
            if path == root or root in path.parents:
                return root
        return None

    def describe(self) -> str:
        return ", ".join(f"{p} ({why})" for p, why in self.roots) or "none"


def check_index_path(path: str, allowed: AllowedRoots, *, cwd: str | os.PathLike[str] | None = None) -> Path:
    """The resolved folder ``path`` names, if a server may index it; else UnsafePathError."""
    raw = (path or "").strip() if isinstance(path, str) else path
    if not raw:
        raise UnsafePathError("no path given", hint="pass the absolute path of a repository folder")
    if "\0" in raw or len(raw) > MAX_PATH_CHARS:
        raise UnsafePathError("refused path: it holds a NUL byte or is too long")
    if ".." in PurePath(raw).parts:
        raise UnsafePathError(f"refused path {raw!r}: '..' traversal is not accepted",
                              hint="pass the folder's absolute path without '..'")
    base = Path(os.fspath(cwd)) if cwd is not None else Path.cwd()
    given = Path(os.path.expanduser(raw))
    absolute = given if given.is_absolute() else base / given
    resolved = Path(os.path.realpath(absolute))
    if allowed.containing(resolved) is None:
        lexical = Path(os.path.normpath(absolute))
        if allowed.containing(Path(os.path.realpath(lexical.parent)) / lexical.name) is not None \
                or _inside_lexically(lexical, allowed):
            raise UnsafePathError(
                f"refused path {raw!r}: a symlink resolves it to {resolved}, outside the allowed roots",
                hint="symlinks that leave the allowed roots are not followed; " + ROOTS_HINT)
        raise UnsafePathError(
            f"refused path {raw!r}: {resolved} is outside the allowed roots ({allowed.describe()})",
            hint=ROOTS_HINT)
    try:
        mode = resolved.stat().st_mode
    except FileNotFoundError:  # worded as the direct path (discover) words it
        raise UnsafePathError(f"cannot index {raw[:200]!r}: no such directory",
                              hint=f"check the path (a relative one is resolved from {base})") from None
    except OSError as exc:
        raise UnsafePathError(f"refused path {raw[:200]!r}: {exc.strerror or 'cannot stat it'}") from None
    if not stat.S_ISDIR(mode):
        raise UnsafePathError(f"refused path {raw!r}: {resolved} is not a folder")
    return resolved


def _inside_lexically(path: Path, allowed: AllowedRoots) -> bool:
    """True when ``path`` (not resolved) is under a root as written or as resolved."""
    return any(path == root or root in path.parents for root in allowed.paths)


def check_query(query: str) -> str:
    query = (query or "").strip()
    if not query:
        raise ConfigError("empty query", hint="pass some words to search for")
    if len(query) > MAX_QUERY_CHARS:
        raise ConfigError(f"query too long ({len(query)} characters, at most {MAX_QUERY_CHARS})",
                          hint="keep the issue's title, its error and traceback, and the code it is about")
    return query


def check_k(k: int | None) -> int | None:
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise ConfigError(f"k must be an integer within 1..{MAX_K}, not {k!r}")
    return k


def check_max_tokens(max_tokens: int | None) -> int | None:
    if max_tokens is None:
        return None
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or not MIN_TOKENS <= max_tokens <= MAX_TOKENS:
        raise ConfigError(f"max_tokens must be an integer within {MIN_TOKENS}..{MAX_TOKENS}, not {max_tokens!r}")
    return max_tokens


def check_roles(roles: str | Iterable[str] | None) -> tuple[str, ...]:
    """A role filter: a comma list (``"test,docs"``) or a sequence of role names, each one
    of ``records.ROLES``; ``()`` for none (no filter)."""
    from .records import ROLES

    if roles is None:
        return ()
    items = roles.split(",") if isinstance(roles, str) else [str(r) for r in roles]
    out = tuple(dict.fromkeys(r.strip().lower() for r in items if r and r.strip()))
    bad = [r for r in out if r not in ROLES]
    if bad:
        raise ConfigError(f"unknown role {bad[0][:40]!r}", hint="roles: " + ", ".join(ROLES))
    return out


def check_repo_id(repo_id: str | None, *, what: str = "repo id") -> str | None:
    if repo_id is None or repo_id == "":
        return None
    if len(repo_id) > MAX_REPO_ID_CHARS or not repo_id.strip() or not _REPO_ID.match(repo_id):
        raise ConfigError(f"invalid {what} {repo_id[:60]!r}: it must be a name of at most "
                          f"{MAX_REPO_ID_CHARS} characters, without control characters")
    return repo_id


def is_loopback(host: str) -> bool:
    import ipaddress

    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, *, allow_remote: bool, token: str) -> None:
    """A server binds to loopback unless asked otherwise; any other address needs both the
    explicit ``--allow-remote`` flag and a bearer token."""
    if is_loopback(host):
        return
    if not allow_remote:
        raise ConfigError(f"refusing to listen on {host}: only loopback (127.0.0.1, ::1, localhost) "
                          "is allowed by default",
                          hint="pass --allow-remote and a token (RAG_SERVER_TOKEN or --token) to serve "
                               "other machines")
    if len(token or "") < 16:
        raise ConfigError(f"listening on {host} needs a bearer token of at least 16 characters",
                          hint="set RAG_SERVER_TOKEN (e.g. `export RAG_SERVER_TOKEN=$(openssl rand -hex 24)`) "
                               "or pass --token")
