"""Generic credential shapes, each with its precision guards: checks for ``rules.py``.

- ``url_check``: ``scheme://user:password@host`` (the password is redacted);
- ``tool_check``: passwords handed to clients: ``mysql -pX``, ``sshpass -p X``,
  ``redis-cli -a X``, ``docker login -p X``, ``curl -u user:X``;
- ``sql_check``: ``PASSWORD 'X'`` / ``IDENTIFIED BY 'X'``;
- ``header_check``: ``Authorization: Bearer X`` / ``Basic X`` / ``token X``;
- ``connection_check``: ``;Password=X;`` / ``&password=X`` in connection strings and URLs;
- ``attribute_check``: ``<add key="ClearTextPassword" value="X"/>``, ``name="api_key" value="X"``;
- ``env_pair_check``: ``- name: DB_PASSWORD`` then ``value: X`` (Kubernetes, ECS);
- ``docker_auth_check``: ``"auth": "<base64 user:pass>"`` and base64 docker configs;
- ``pem_b64_check``: a whole PEM private key in base64 (kubeconfig ``client-key-data``);
- ``putty_check``: the private lines of a PuTTY key file.

A value is a literal secret only when it is not code, a template, a reference or a stand-in
(``assign.value_is_literal``).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable

from .assign import _FORMAT, secret_name, value_is_literal
from .shapes import Span, is_placeholder, mask
from .vocab import NON_VALUES

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{1,30}\Z")
_TEMPLATE_START = ("$", "{", "<", "@", "`")
# what documentation writes in a URL's password place (user:pass@host)
_DOC_PASSWORDS = frozenset({"pass", "pw", "pwd", "mypassword", "yourpassword", "userpass", "foo", "bar",
                            "baz", "qux", "passwd", "password", "secret"})


def _line_bounds(text: str, pos: int) -> tuple[int, int]:
    lo = text.rfind("\n", max(0, pos - 4096), pos) + 1
    hi = text.find("\n", pos, pos + 4096)
    return lo, (min(len(text), pos + 4096) if hi < 0 else hi)


def _unquote(value: str) -> tuple[str, int]:
    """``value`` without surrounding quotes, and how many leading characters were dropped."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1], 1
    return value, 0


def url_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    if _SCHEME.search(text, max(0, m.start() - 31), m.start()) is None:
        return ()
    user, pw = m.group("user"), m.group("pw")
    low = pw.lower()
    if pw.startswith(_TEMPLATE_START) or "${" in pw or "{{" in pw or _FORMAT.match(pw):
        return ()
    if low in NON_VALUES or pw == user or is_placeholder(pw) or low.strip("*x.") == "":
        return ()
    if low in _DOC_PASSWORDS:
        return ()
    if not value_is_literal(pw, "password", screaming=True):
        return ()
    return (Span(m.start("pw"), m.end("pw"), "url-credentials", f"{user}:{mask(pw, 0)}@", 40),)


def _cli_value(value: str, sort: str, *, positional: bool = False) -> bool:
    """A literal on a command line. ``positional``: the option is a password by position
    (``mysql -pX``, ``sshpass -p X``), so a short one counts too."""
    value, _ = _unquote(value)
    if not value or value.startswith(_TEMPLATE_START) or "$(" in value or "${" in value:
        return False
    if value.startswith("-") and not positional:
        return False  # the next option
    return value_is_literal(value, sort, screaming=positional)


# per client: the option that carries the password (on the client's own line)
_TOOL_FLAGS = {
    "mysql": re.compile(r"""[ \t]-p(?P<v>'[^'\n]+'|"[^"\n]+"|[^\s'"`]+)"""),
    "sshpass": re.compile(r"""[ \t]-p[ \t]*(?P<v>'[^'\n]+'|"[^"\n]+"|[^\s'"`]+)"""),
    "redis-cli": re.compile(r"""[ \t]-a[ \t]+(?P<v>'[^'\n]+'|"[^"\n]+"|[^\s'"`]+)"""),
    "login": re.compile(r"""[ \t]-p[ \t]+(?P<v>'[^'\n]+'|"[^"\n]+"|[^\s'"`]+)"""),
    "curl": re.compile(r"""[ \t](?:-u|--user)[ \t=]*(?P<v>'[^'\n]+'|"[^"\n]+"|[^\s'"`]+)"""),
    # htpasswd -b[c] FILE USER PASSWORD
    "htpasswd": re.compile(r"""[ \t]-[a-zA-Z]*b[a-zA-Z]*[ \t]+\S+[ \t]+\S+[ \t]+(?P<v>'[^'\n]+'|"[^"\n]+"|[^\s'"`]+)"""),
    # openssl ... -passout pass:SECRET (env:VAR and file:PATH are references)
    "openssl": re.compile(r"""[ \t]-pass(?:in|out|word)?[ \t]+["']?pass:(?P<v>[^\s'"`]+)"""),
}


def tool_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    tool = m.group("tool")
    if m.start() > 0 and (text[m.start() - 1].isalnum() or text[m.start() - 1] in "_."):
        return ()
    key = "login" if tool.endswith("login") else "mysql" if tool.startswith(("mysql", "mariadb")) else tool
    lo, hi = _line_bounds(text, m.end())
    if text.rfind(tool, lo, m.start()) >= 0:
        return ()  # the line was read from the first mention of the client
    out = []
    for f in _TOOL_FLAGS[key].finditer(text, m.end(), hi):
        value, skip = _unquote(f.group("v"))
        start = f.start("v") + skip
        if key == "curl":
            user, sep, pw = value.partition(":")
            if not sep or not pw or user.startswith(_TEMPLATE_START) or not _cli_value(pw, "password"):
                continue
            start += len(user) + 1
            value = pw
        elif value.startswith("-") or not _cli_value(value, "password", positional=True):
            continue
        out.append(Span(start, start + len(value), "cli-password", f"{tool} {mask(value, 0)}", 30))
    return out


def sql_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    value = m.group("v")
    if not _cli_value(value, "password", positional=True):
        return ()
    return (Span(m.start("v"), m.end("v"), "cli-password", f"PASSWORD {mask(value, 0)}", 30),)


def header_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    scheme, value = m.group("scheme").lower(), m.group("v")
    if m.start() > 0 and text[m.start() - 1].isalnum():
        return ()
    if scheme == "token" and "uthorization" not in text[max(0, m.start() - 40):m.start()]:
        return ()
    if value.lower().startswith(("your", "token", "<", "xxx")) or is_placeholder(value):
        return ()
    if scheme == "basic":
        decoded = _b64_text(value + "=" * (-len(value) % 4))
        if decoded is None:
            return ()
        user, sep, pw = decoded.partition(":")
        if not sep or not pw or not decoded.isprintable():
            return ()
    elif not value_is_literal(value, "secret", screaming=False):
        return ()
    return (Span(m.start("v"), m.end("v"), "auth-header", f"{m.group('scheme')} {mask(value, 0)}", 30),)


def connection_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    i = m.start() - 1
    while i >= 0 and text[i] in " \t":
        i -= 1
    if i < 0 or text[i] not in ";&?," or (text[i] == "," and i != m.start() - 1):
        return ()  # not a pair of a connection string or query (", password=x" is a call argument)
    value = m.group("v")
    if not value_is_literal(value, "password", screaming=True):
        return ()
    return (Span(m.start("v"), m.end("v"), "connection-string", f"Password={mask(value, 0)}", 30),)


_ATTR_NAME = re.compile(r"""\b(?:key|name|id)=["'](?P<n>[^"'<>\n]{1,80})["'][^<>\n]{0,80}\Z""")


def attribute_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    tag_start = text.rfind("<", max(0, m.start() - 300), m.start())
    if tag_start < 0 or ">" in text[tag_start:m.start()]:
        return ()
    a = _ATTR_NAME.search(text, tag_start, m.start())
    if a is None:
        return ()
    sort = secret_name(a.group("n"))
    value = m.group("v")
    if sort is None or not value_is_literal(value, sort, screaming=False):
        return ()
    return (Span(m.start("v"), m.end("v"), "secret-assignment", f"{a.group('n')}={mask(value, 0)}", 12),)


def env_pair_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    name = m.group("n")
    sort = secret_name(name)
    if sort is None:
        return ()
    value, skip = _unquote(m.group("v").strip())
    if not value or (value[0] in "\"'" and not skip):
        return ()
    start = m.start("v") + (len(m.group("v")) - len(m.group("v").lstrip())) + skip
    if not value_is_literal(value, sort, screaming=name.isupper()):
        return ()
    return (Span(start, start + len(value), "secret-assignment", f"{name}={mask(value, 0)}", 12),)


def _b64_text(value: str) -> str | None:
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


_B64_RUN = re.compile(r"[A-Za-z0-9+/]+={0,2}")


def _docker_auth(text: str, start: int, config: bool) -> Iterable[Span]:
    run = _B64_RUN.match(text, start, start + 65536)
    if run is None or len(run.group()) < 12:
        return ()
    value = run.group()
    decoded = _b64_text(value + "=" * (-len(value) % 4))
    if decoded is None:
        return ()
    if config:
        if '"auth' not in decoded:
            return ()
    else:
        user, sep, pw = decoded.partition(":")
        if not sep or not pw or not decoded.isprintable() or pw.lower() in NON_VALUES:
            return ()
    return (Span(run.start(), run.end(), "docker-auth", mask(value, 0), 45),)


def docker_auth_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    """``"auth": "<base64 of user:password>"`` (a docker config.json entry)."""
    return _docker_auth(text, m.end(), config=False)


def docker_config_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    """A whole docker config.json in base64 (``.dockerconfigjson``): ``eyJhdXRocyI6...``."""
    if m.start() > 0 and text[m.start() - 1].isalnum():
        return ()
    return _docker_auth(text, m.start(), config=True)


def pem_b64_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    run = m  # the pattern holds the whole base64 run
    if m.start() > 0 and text[m.start() - 1].isalnum():
        return ()
    head = run.group()[:88]
    decoded = _b64_text(head[: len(head) // 4 * 4]) or ""
    if "PRIVATE KEY" not in decoded or len(run.group()) < 200:
        return ()
    return (Span(run.start(), run.end(), "private-key", "-----BEGIN ... PRIVATE KEY----- (base64)", 100),)


def putty_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    n = int(m.group("n"))
    start = end = text.find("\n", m.end()) + 1
    if start == 0:
        return ()
    for _ in range(min(n, 400)):
        nl = text.find("\n", end)
        end = len(text) if nl < 0 else nl + 1
    end = end - 1 if end > start and text[end - 1] == "\n" else end
    if end <= start:
        return ()
    return (Span(start, end, "private-key", f"PuTTY private key ({n} lines)", 100),)
