"""Kubernetes Secret manifests: the values under ``data:`` (base64) and ``stringData:``.

Found by content, in any file (``kind: Secret`` starts the rule, one document of a
multi-document YAML is read). A ``data:`` value is decoded and judged three ways: under a
secret-named key (``DB_PASSWORD``) any value that is not a stand-in; under any key a value
that looks like a literal secret; and the decoded text scanned by every scrub rule, so a
``DATABASE_URL`` whose value is ``postgres://u:pw@host/db`` or a PEM block is caught too. The
encoded text is what gets redacted. A value that decodes to a host name, a port, a user name
or a database name is left alone; one that decodes to binary data is redacted only under a
keystore's name (``keystore.jks``, ``client.p12``). ``stringData:`` values are plain text (the
line rules see them too); they are judged by the first two tests.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterable

from .assign import secret_name, value_is_literal
from .generic import _b64_text as b64_text
from .shapes import Span, is_placeholder, mask
from .vocab import NON_VALUES

_DOC_SEP = re.compile(r"^---", re.M)
_BLOCK = re.compile(r"^(?P<ind>[ \t]*)(?P<which>data|stringData):[ \t]*\r?$", re.M)
_ENTRY = re.compile(r"^(?P<ind>[ \t]*)(?P<key>[A-Za-z0-9_.-]+):[ \t]*(?P<v>[^\s#]\S*)[ \t]*\r?$", re.M)
MAX_SECRET_DOC = 16 * 1024
MAX_DECODED_SCAN = 16 * 1024  # longest decoded value scanned by the rules
# binary data under these names holds private keys (Java keystores, PKCS#12, KeePass)
_KEYSTORES = (".jks", ".p12", ".pfx", ".keystore", "keystore", ".bcfks", ".kdbx")
# a host name or an address (with a port or not): configuration, not a secret
_HOST = re.compile(r"(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,62}(?::\d{1,5})?"
                   r"|\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?")
_NAME = re.compile(r"[a-z0-9]+(?:[-_.][a-z0-9]+)*")  # a lower-case name: analytics_v2, orders-db-1


def _is_b64(value: str) -> bool:
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return len(value) >= 32


# The engine's ``candidates`` (every rule over a text), registered by the engine when it is
# imported (``use_finder``): the rules hold this module's check, so importing the engine from
# here would make an import cycle (engine -> rules -> k8s -> engine).
_finder: Callable[[str], list] | None = None


def use_finder(find: Callable[[str], list]) -> None:
    global _finder
    _finder = find


def _rules_find(plain: str) -> bool:
    """Does any scrub rule find something in ``plain`` (a decoded value)?"""
    assert _finder is not None, "codeseam.scrub's engine registers its finder when the package is imported"
    return bool(plain) and len(plain) <= MAX_DECODED_SCAN and bool(_finder(plain))


def secret_value(key: str, plain: str, encoded: bool) -> bool:
    """Is ``plain`` (the value of ``key`` in a Secret) a secret?"""
    plain = plain.strip()
    if not plain:
        return False
    sort = secret_name(key.replace(".", "_"))
    if sort is not None:
        if not (plain.lower() in NON_VALUES or is_placeholder(plain)):
            return True
    elif _HOST.fullmatch(plain) or (_NAME.fullmatch(plain) and len(plain) < 24):
        return False
    elif value_is_literal(plain, "password", screaming=False):
        return True
    return encoded and _rules_find(plain)


def k8s_secret_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    lo = max(0, m.start() - MAX_SECRET_DOC)
    sep = text.rfind("\n---", lo, m.start())
    doc_start = lo if sep < 0 else sep + 4
    if text.rfind("kind:", doc_start, m.start()) >= 0:
        return ()  # one document, one kind: a repeated marker is read once
    nxt = _DOC_SEP.search(text, m.end(), m.end() + MAX_SECRET_DOC)
    doc_end = nxt.start() if nxt else min(len(text), m.end() + MAX_SECRET_DOC)
    out = []
    for block in _BLOCK.finditer(text, doc_start, doc_end):
        ind = len(block.group("ind"))
        pos = block.end() + 1
        encoded = block.group("which") == "data"
        for e in _ENTRY.finditer(text, pos, doc_end):
            if e.start() != pos or len(e.group("ind")) <= ind:
                break
            pos = e.end() + 1
            key, value = e.group("key"), e.group("v").strip("\"'")
            if not value or value.startswith(("{{", "$", "<")) or value in ('""', "''"):
                continue
            plain = b64_text(value) if encoded else value
            if plain is None:  # not text: a keystore is key material, other binary data is not judged
                if not (encoded and key.lower().endswith(_KEYSTORES) and _is_b64(value)):
                    continue
            elif not secret_value(key, plain, encoded):
                continue
            start = e.start("v") + (1 if e.group("v")[0] in "\"'" else 0)
            out.append(Span(start, start + len(value), "k8s-secret", f"{key}={mask(value, 0)}", 35))
    return out
