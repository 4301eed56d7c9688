"""Tokens in a URL's query string: ``?access_token=X``, ``&api_key=X``, ``?key=X``: a check
for ``rules.py``. (Provider tokens in a URL path, such as a Telegram bot token or a Slack
webhook, are provider rows; a Google API key after ``?key=`` is found by its ``AIza`` prefix.)

A parameter named for a credential counts only inside a URL (``://`` earlier on the line)
whose host is not a documentation one (example.com, localhost, .test), and only when its value
looks drawn at random: mixed case and digits, or 32+ hex digits.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .assign import value_is_literal
from .shapes import Span, is_placeholder, looks_random, mask
from .vocab import RESERVED_DOMAINS, RESERVED_TLDS

PARAMS = ("access_token", "api_key", "apikey", "api-key", "key", "token", "auth_token", "client_secret",
          "private_token", "refresh_token", "secret", "app_secret", "appsecret", "auth", "apiToken",
          "accessToken", "apiKey", "x-api-key", "sig", "signature", "code")
_SIGNED_ONLY = frozenset({"sig", "signature", "code", "auth"})  # need a long random value
QUERY_PATTERN = (r"[?&](?P<n>" + "|".join(re.escape(p) for p in sorted(PARAMS, key=len, reverse=True))
                 + r")=(?P<v>[A-Za-z0-9._~%+/-]{16,1024})")
_HEX = re.compile(r"[0-9a-f]{32,}|[0-9A-F]{32,}")


_HOST = re.compile(r"(?:[^@/?#\s]*@)?(?P<h>[A-Za-z0-9.-]+)")


def _documentation_host(host: str) -> bool:
    host = host.rsplit("@", 1)[-1]
    return host.endswith(RESERVED_DOMAINS) or host.rsplit(".", 1)[-1] in RESERVED_TLDS or host == "127.0.0.1"


def query_literals() -> tuple[str, ...]:
    return tuple(f"{sep}{p}=" for p in PARAMS for sep in "?&")


def query_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    floor = max(0, m.start() - 2048)  # a URL is shorter than 2 KB (linear on a huge line)
    nl = text.rfind("\n", floor, m.start())
    scheme = text.rfind("://", nl + 1 if nl >= 0 else floor, m.start())
    if scheme < 0:
        return ()  # not in a URL
    host = _HOST.match(text, scheme + 3, m.start())
    if host is not None and _documentation_host(host.group().lower()):
        return ()  # https://example.com/?key=...: a documentation or test URL
    end = m.end()
    if end < len(text) and (text[end].isalnum() or text[end] in "{$<"):
        return ()
    name, value = m.group("n"), m.group("v")
    value = value.rstrip(".")
    if "%" in value and not re.fullmatch(r"(?:[^%]|%[0-9A-Fa-f]{2})*", value):
        return ()
    if is_placeholder(value) or not value_is_literal(value, "secret", screaming=False):
        return ()
    random_enough = looks_random(value, min_distinct=10) or _HEX.fullmatch(value) is not None
    if not random_enough or (name in _SIGNED_ONLY and len(value) < 24):
        return ()
    start = m.start("v")
    return (Span(start, start + len(value), "url-token", f"{name}={mask(value, 0)}", 35),)
