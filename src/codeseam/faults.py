"""Fault injection for reliability tests: kill or break a run at a named point.

Code that matters for crash safety calls ``faults.point("name")`` (one line). With no plan
set that is a call to a function that returns at once: no environment look-up, no lock.

A plan comes from the environment when this module is imported, or from :func:`configure`::

    CODESEAM_FAULTS="insert:3=kill,delete:1=enospc"

Each rule is ``POINT[:N]=ACTION``: the N-th time (default 1, counted per process) ``POINT``
is reached, ``ACTION`` happens:

- ``kill``        SIGKILL this process (no clean-up, no flush: a crash)
- ``raise``       raise ``StoreError`` (a Milvus error in the middle of a write)
- ``enospc``      raise ``OSError(ENOSPC)`` (a full disk)
- ``killchild``   SIGKILL this process's child processes (the Milvus Lite server), then go on:
                  the next store call meets a real dead server
- ``sleep:S``     sleep S seconds (hold the index, e.g. to test a second indexer)

``CODESEAM_FAULTS_LOG=/path`` appends ``POINT N`` to that file each time a point is reached
(so a test can tell where a kill landed). Points in codeseam: ``chunk`` (a file read and about
to be chunked), ``embed`` (a batch about to be embedded), ``write`` (a Milvus upsert
sub-batch: manifest entries, repo records), ``insert`` (a chunk-row upsert sub-batch),
``delete`` (a Milvus delete call).
"""

from __future__ import annotations

import errno
import os
import signal
import time
from dataclasses import dataclass

ENV = "CODESEAM_FAULTS"
LOG_ENV = "CODESEAM_FAULTS_LOG"
ACTIONS = ("kill", "raise", "enospc", "killchild", "sleep")


@dataclass(frozen=True)
class Rule:
    point: str
    n: int
    action: str
    arg: float = 0.0


def parse(spec: str) -> list[Rule]:
    """``"insert:3=kill,chunk=sleep:2"`` -> rules. A malformed spec raises ValueError."""
    rules = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        where, sep, action = part.partition("=")
        point, _, n = where.strip().partition(":")
        action, _, arg = action.strip().partition(":")
        if not sep or not point or action not in ACTIONS or (n and not n.isdigit()) or n == "0":
            raise ValueError(f"bad fault rule {part!r}: expected POINT[:N]=ACTION, ACTION in {ACTIONS}")
        if (action == "sleep") != bool(arg):
            raise ValueError(f"bad fault rule {part!r}: sleep takes seconds (sleep:S), other actions nothing")
        rules.append(Rule(point, int(n or 1), action, float(arg or 0)))
    return rules


_rules: dict[tuple[str, int], Rule] = {}
_counts: dict[str, int] = {}
_log: str = ""


def configure(spec: str | None, log_path: str | None = None) -> None:
    """Set (or with None/"" clear) the plan of this process and reset the counters."""
    global _log
    _rules.clear()
    _counts.clear()
    _rules.update({(r.point, r.n): r for r in parse(spec or "")})
    _log = log_path or ""
    globals()["point"] = _armed if (_rules or _log) else _off


def counts() -> dict[str, int]:
    """How often each point was reached since the plan was set (when a plan or log is set)."""
    return dict(_counts)


def _off(name: str) -> None:
    return None


def _armed(name: str) -> None:
    n = _counts[name] = _counts.get(name, 0) + 1
    if _log:
        fd = os.open(_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, f"{name} {n}\n".encode())
        finally:
            os.close(fd)
    rule = _rules.get((name, n))
    if rule is not None:
        _fire(rule)


def _fire(rule: Rule) -> None:
    what = f"injected fault at {rule.point} #{rule.n}"
    if rule.action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(60)  # pragma: no cover - the signal arrives first
    elif rule.action == "raise":
        from .errors import REPAIR_HINT, StoreError

        raise StoreError(f"Milvus failed to write ({what})", hint=REPAIR_HINT)
    elif rule.action == "enospc":
        raise OSError(errno.ENOSPC, f"{os.strerror(errno.ENOSPC)} ({what})")
    elif rule.action == "killchild":
        for pid in child_pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    elif rule.action == "sleep":
        time.sleep(rule.arg)


def child_pids(pid: int | None = None) -> list[int]:
    """Direct children of ``pid`` (default: this process), from /proc (Linux)."""
    pid = pid or os.getpid()
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                out += [int(x) for x in fh.read().split()]
        except OSError:
            continue
    return out


point = _off
configure(os.environ.get(ENV), os.environ.get(LOG_ENV))
