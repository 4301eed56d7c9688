"""The realistic half of the labelled corpus: the files of a small service repository.

Each template is one file as people write them (.env files, CI workflows, Helm values,
Kubernetes manifests, shell scripts, Python, Go, TypeScript, JSON, HTML, Dockerfiles, TOML,
XML, properties, Terraform, Markdown), with credentials where real repositories leak them and
with the look-alikes that sit next to them (placeholders, env lookups, templates, hashes,
digests, UUIDs, public keys, base64 assets, doc examples, test fixtures).

Template syntax (expanded by ``expand``):

- ``«kind:method»`` a secret drawn by ``Gen.method``; the line is labelled ``kind``. A method
  that returns a list (a PEM block) fills several lines, each labelled, indented like the first.
- ``«-:method»`` a drawn look-alike; the line is not labelled.
- a line ending in `` ⟪hn⟫`` is a hard negative (the marker is removed).
"""

from __future__ import annotations

import re

from .corpus_billing import FILES as BILLING
from .corpus_orders import FILES as ORDERS
from .corpus_repo_files import FILES as BILLING_MORE
from .corpus_tokens import Gen

HN = " ⟪hn⟫"
_SLOT = re.compile(r"«([\w-]+):(\w+)»")

def _b64_user(g: Gen) -> str:
    return g.b64_of(g.pick("billing", "admin", "app"))


def _b64_password(g: Gen) -> str:
    return g.b64_of(g.strong_password())


def _b64_token(g: Gen) -> str:
    return g.b64_of(g.mixed("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 40))


def _dockerconfigjson_b64(g: Gen) -> str:
    import json
    auth = g.docker_auth()
    return g.b64_of(json.dumps({"auths": {"registry.acme-corp.com": {"auth": auth}}}))


def _pem_escaped(g: Gen) -> str:
    return "\\n".join(g.pem("")) + "\\n"


EXTRA_METHODS = {
    "b64_user": _b64_user, "b64_password": _b64_password, "b64_token": _b64_token,
    "dockerconfigjson_b64": _dockerconfigjson_b64, "pem_escaped": _pem_escaped,
    "hex40": lambda g: g.hexs(40), "hex24": lambda g: g.hexs(24), "lower32": lambda g: g.chars("abcdefghijklmnopqrstuvwxyz0123456789", 32),
    "digits12": lambda g: g.digits(12), "digits21": lambda g: g.digits(21),
    "mixed32": lambda g: g.mixed("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 32),
    "mixed40": lambda g: g.mixed("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 40),
    "django_key": lambda g: g.chars("abcdefghijklmnopqrstuvwxyz0123456789!@#%^&*(-_=+)", 50),
    "datadog_key": lambda g: g.hexs(32),
    "uuid_token": lambda g: g.uuid4(), "hex16": lambda g: g.hexs(16), "hex6": lambda g: g.hexs(6),
    "b64_32": lambda g: g.b64bytes(32),
    "opaque_token": lambda g: g.mixed("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 40),
}


def draw(g: Gen, method: str):
    fn = EXTRA_METHODS.get(method)
    return fn(g) if fn is not None else getattr(g, method)()


def expand(template: str, g: Gen) -> tuple[str, dict[int, str], tuple[str, ...], int]:
    """(text, {line: kind}, secrets, hard-negative line count) of one template."""
    out: list[str] = []
    labels: dict[int, str] = {}
    secrets: list[str] = []
    hard = 0
    for raw in template.split("\n"):
        is_hard = raw.endswith(HN)
        line = raw[: -len(HN)] if is_hard else raw
        hard += is_hard
        kinds: list[str] = []
        multi: list[str] | None = None

        def fill(m: re.Match[str], kinds: list[str] = kinds) -> str:
            nonlocal multi
            kind, method = m.group(1), m.group(2)
            value = draw(g, method)
            if kind != "-":
                kinds.append(kind)
            if isinstance(value, list):
                multi = value
                if kind != "-":
                    secrets.extend(value[1:-1])
                return "\0"
            if kind != "-":
                secrets.append(value)
            return value

        line = _SLOT.sub(fill, line)
        if multi is not None:  # a PEM block: one line per block line, same indent
            head, tail = line.split("\0", 1)
            indent = head[: len(head) - len(head.lstrip())]
            block = [head + multi[0], *[indent + m for m in multi[1:-1]], indent + multi[-1] + tail]
        else:
            block = [line]
        for b in block:
            out.append(b)
            if kinds:
                labels[len(out)] = kinds[0]
    return "\n".join(out), labels, tuple(secrets), hard


ALL_FILES = {**BILLING, **BILLING_MORE, **ORDERS}
