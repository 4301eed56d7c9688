"""Credentials passed by position, where no name says "password": checks for ``rules.py``.

- ``call_check``: the password argument of the calls that take one by position, in the
  common languages: HTTP client auth (``auth=("svc", "X")``, ``HTTPBasicAuth("u", "X")``,
  ``SetBasicAuth``, ``Credentials.basic``), database drivers (``new PDO($dsn, 'u', 'X')``,
  ``mysqli_connect(h, u, 'X')``, ``DriverManager.getConnection(url, "u", "X")``,
  ``pymysql.connect(h, u, 'X')``, ``new Sequelize(db, u, 'X')``), ``new NetworkCredential("u",
  "X")``, ``PasswordAuthentication``, ``.login("u", "X")`` (smtplib, imaplib, ftplib);
- ``tool_check``: command-line clients whose option carries a password: ``redis-server
  --requirepass X``, ``mongosh -p X``, ``ldapsearch -w X``, ``keytool -storepass X``,
  ``rabbitmqctl add_user u X``, ``smbclient -U u%X``; ``requirepass X`` in redis.conf;
- ``dsn_check``: passwords in driver DSNs without a scheme: Go's ``user:X@tcp(host)/db`` and
  libpq's ``host=h user=u password=X``.

Only a quoted literal (or a bare shell word) counts: a variable, an env read, a template, a
placeholder or a test word ("password", "secret", "changeme") is not a secret
(``assign.value_is_literal``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .assign import value_is_literal
from .shapes import Span, mask

PRIORITY = 30
MAX_CALL = 600  # characters of a call's argument list read (a call over several lines too)

# call -> index of the password argument (0-based); matched right before the "("
CALLS: dict[str, int] = {
    # HTTP clients: (user, password)
    "HTTPBasicAuth": 1, "HTTPDigestAuth": 1, "HTTPProxyAuth": 1, "BasicAuth": 1, "DigestAuth": 1,
    "SetBasicAuth": 1, "setBasicAuth": 1, "basicAuth": 1, "basicAuthentication": 1, "withBasicAuth": 1,
    "Credentials.basic": 1, ".basic": 1, "UsernamePasswordCredentials": 1, "PasswordAuthentication": 1,
    "NetworkCredential": 1, ".login": 1, "simple_bind_s": 1, "simple_bind": 1,
    "cx_Oracle.connect": 1, "oracledb.connect": 1, "oci_connect": 1, "PlainCredentials": 1,
    "UsernamePasswordToken": 1, "UsernamePasswordAuthenticationToken": 1,
    "ssh.Password": 0, "smtp.PlainAuth": 2,
    # PHP: (connection, user, password)
    "ftp_login": 2, "ssh2_auth_password": 2, "imap_open": 2, "ldap_bind": 2,
    # database drivers: (dsn or host, user, password, ...)
    "PDO": 2, "mysqli_connect": 2, "mysqli": 2, "mysql_connect": 2, "mysql_pconnect": 2,
    "getConnection": 2, "pymysql.connect": 2, "MySQLdb.connect": 2, "Sequelize": 2, "ibm_db.connect": 2,
    "ftplib.FTP": 2, "FTP_TLS": 2, "FTP": 2, "mysqli_real_connect": 3, "Net::FTP.new": 2, "Net::FTP.open": 2,
}
# the tuple an HTTP client takes: auth=("user", "password")
AUTH_TUPLE = ("auth=(", "auth = (", "auth=[", "auth = [", "auth: (")


def call_literals() -> tuple[str, ...]:
    return (*(c + "(" for c in CALLS), *AUTH_TUPLE)


_STRING = re.compile(r"""[@rbuRBU]?(?P<q>["'`])(?P<v>(?:\\.|(?!(?P=q)).){0,256}?)(?P=q)""", re.S)
_QUOTED = re.compile(r"""(?P<q>["'`])(?:\\.|(?!(?P=q)).){0,512}?(?P=q)""", re.S)
_PLAIN = re.compile(r"""[^"'`()\[\]{},;]+""")
MAX_DEPTH = 6  # brackets inside one call's arguments
_AFTER_STRING = re.compile(r"""(?:\.(?:toCharArray|getBytes|encode|ToCharArray)\(\))?\s*\Z""")


def split_args(text: str, pos: int, limit: int) -> list[tuple[int, int]]:
    """The top-level arguments of a call whose "(" is right before ``pos``: (start, end)
    spans, stripped; stops at the closing bracket (or ``limit``: then the last is dropped)."""
    out, depth, start, i = [], 0, pos, pos
    while i < limit:
        plain = _PLAIN.match(text, i, limit)
        if plain is not None:
            i = plain.end()
            continue
        c = text[i]
        if c in "\"'`":
            s = _QUOTED.match(text, i, limit)
            if s is None:
                return []
            i = s.end()
            continue
        if c in "([{":
            depth += 1
            if depth > MAX_DEPTH:
                return []
        elif c in ")]}":
            if depth == 0:
                out.append((start, i))
                break
            depth -= 1
        elif c == "," and depth == 0:
            out.append((start, i))
            start = i + 1
        elif c == ";" and depth == 0:
            return []
        i += 1
    else:
        return []
    spans = []
    for a, b in out:
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        spans.append((a, b))
    return spans


def _literal_arg(text: str, a: int, b: int) -> tuple[int, int] | None:
    """The span of the string inside argument text[a:b] if the argument is one string literal
    (optionally ``.toCharArray()``), else None. An f-string or template is not a literal."""
    s = _STRING.match(text, a, b)
    if s is None or _AFTER_STRING.match(text, s.end(), b) is None:
        return None
    if text[a] in "fF" or (s.group("q") == "`" and "${" in s.group("v")):
        return None
    return s.start("v"), s.end("v")


def call_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    name = m.group("call")
    if m.start() > 0 and (text[m.start() - 1].isalnum() or text[m.start() - 1] == "_") and name[0] != ".":
        return ()
    index = 1 if name.startswith("auth") else CALLS.get(name, -1)
    if index < 0:
        return ()
    args = split_args(text, m.end(), min(len(text), m.end() + MAX_CALL))
    if len(args) <= index:
        return ()
    if index == 1 and name.startswith("auth") and len(args) != 2:
        return ()  # a (user, password) pair, not another tuple
    lit = _literal_arg(text, *args[index])
    if lit is None:
        return ()
    start, end = lit
    value = text[start:end]
    if "\n" in value or value.isalpha() or not value_is_literal(value, "password", screaming=False):
        return ()  # the strict test, and a digit or a symbol: a call's string argument may be
        # any word or label ("Passwort", "MotDePasse")
    return (Span(start, end, "cli-password", f"{name.strip('.=( ')}(…, {mask(value, 0)})", PRIORITY),)


# ------------------------------------------------------------------------------- command lines

_WORD_VALUE = r"""(?P<v>'[^'\n]+'|"[^"\n]+"|[^\s'"`;|&]+)"""
# client -> the option (or the position) that carries its password, on the client's own line
TOOLS: dict[str, re.Pattern[str]] = {
    "redis-flag": re.compile(r"[\"']?(?:[ \t]*[=,][ \t]*|[ \t]+)[\"']?" + _WORD_VALUE),
    "mongo": re.compile(r"[ \t]-p[ \t]+" + _WORD_VALUE),
    "rabbitmqadmin": re.compile(r"[ \t](?:-p|--password)[ \t=]+" + _WORD_VALUE),
    "ldap": re.compile(r"[ \t]-w[ \t]+" + _WORD_VALUE),
    "keytool": re.compile(r"[ \t]-(?:src|dest)?(?:storepass|keypass)[ \t]+" + _WORD_VALUE),
    "rabbitmqctl": re.compile(r"[ \t](?:add_user|change_password)[ \t]+[^\s'\"]+[ \t]+" + _WORD_VALUE),
    "smbclient": re.compile(r"[ \t](?:-U|--user)[ \t=]+[^\s%'\"]+%" + _WORD_VALUE),
    "login": re.compile(r"[ \t](?:-p|--password)[ \t=]+" + _WORD_VALUE),
    "influx": re.compile(r"[ \t]-password[ \t]+" + _WORD_VALUE),
    "redis.conf": re.compile(r"[ \t]+" + _WORD_VALUE),
}
TOOL_NAMES: dict[str, str] = {
    "--requirepass": "redis-flag", "--masterauth": "redis-flag",
    **{t: "mongo" for t in ("mongo", "mongosh", "mongodump", "mongorestore", "mongoexport", "mongoimport",
                            "mongostat", "mongotop", "mongofiles")},
    "rabbitmqadmin": "rabbitmqadmin",
    **{t: "ldap" for t in ("ldapsearch", "ldapadd", "ldapmodify", "ldapdelete", "ldapwhoami", "ldappasswd",
                           "ldapcompare", "ldapmodrdn")},
    "keytool": "keytool", "jarsigner": "keytool", "rabbitmqctl": "rabbitmqctl", "smbclient": "smbclient",
    "az login": "login", "oc login": "login", "influx": "influx",
    "requirepass": "redis.conf", "masterauth": "redis.conf",
}


LINE_REACH = 4096


def line_around(text: str, pos: int) -> tuple[int, int]:
    """The line around ``pos``, at most ``LINE_REACH`` characters either side (so that a
    rule stays linear on a megabyte-long line)."""
    floor = max(0, pos - LINE_REACH)
    nl = text.rfind("\n", floor, pos)
    hi = text.find("\n", pos, pos + LINE_REACH)
    return (nl + 1 if nl >= 0 else floor), (min(len(text), pos + LINE_REACH) if hi < 0 else hi)


def tool_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    tool = m.group("tool")
    if m.start() > 0 and (text[m.start() - 1].isalnum() or text[m.start() - 1] in "_.-"):
        return ()
    key = TOOL_NAMES.get(tool)
    if key is None:
        return ()
    lo, hi = line_around(text, m.start())
    if key == "redis.conf":  # a directive: first word of its line
        if text[lo:m.start()].strip():
            return ()
        f = TOOLS[key].match(text, m.end(), hi)
        found = [] if f is None or text[f.end():hi].strip() not in ("", "\r") else [f]
    elif key == "redis-flag":
        f = TOOLS[key].match(text, m.end(), hi)
        found = [] if f is None else [f]
    else:
        if text.find(tool, lo, m.start()) >= 0:
            return ()  # the line was read from the first mention of the client
        found = list(TOOLS[key].finditer(text, m.end(), hi))
    out = []
    for f in found:
        raw = f.group("v")
        skip = 1 if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'" else 0
        value = raw[skip:len(raw) - skip]
        if value.startswith(("-", "$", "{", "<", "%")) or "$(" in value or "${" in value:
            continue
        if not value_is_literal(value, "password", screaming=True):
            continue
        start = f.start("v") + skip
        out.append(Span(start, start + len(value), "cli-password", f"{tool} {mask(value, 0)}", PRIORITY))
    return out


# ------------------------------------------------------------------------------- DSNs

def go_dsn_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    """``user:password@tcp(host:3306)/db`` (go-sql-driver/mysql): no scheme, so the URL rule
    does not see it."""
    if m.start() > 0 and text[m.start() - 1] not in "\"'`= \t(":
        return ()
    value = m.group("v")
    if value.startswith(("$", "{", "%", "<")) or value == m.group("u") \
            or not value_is_literal(value, "password", screaming=True):
        return ()
    return (Span(m.start("v"), m.end("v"), "url-credentials", f"{m.group('u')}:{mask(value, 0)}@", 40),)


# the pairs before ``password=`` in the same string: ``host=db dbname=shop user=shop``
_CONNINFO_KEYS = re.compile(r"""(?:^|[\s"'`])(?:host|hostaddr|dbname|user|port|sslmode)=[^\s,()"'`]+"""
                            r"""(?:[ \t]+[a-z_]+=[^\s,()"'`]+)*\Z""")


def conninfo_check(text: str, m: re.Match[str]) -> Iterable[Span]:
    """libpq's ``host=h dbname=d user=u password=X`` (pg_connect, psycopg, lib/pq): the
    pairs are separated by spaces, so the connection-string rule (``;``) does not see it."""
    lo, _ = line_around(text, m.start())
    if _CONNINFO_KEYS.search(text, max(lo, m.start() - 300), m.start()) is None:
        return ()
    if m.end() < len(text) and text[m.end()] not in " \t\r\n\"'`;":
        return ()
    raw = m.group("v")
    skip = 1 if raw[:1] == "'" and raw.endswith("'") and len(raw) >= 2 else 0
    value = raw[skip:len(raw) - skip]
    if not value_is_literal(value, "password", screaming=True):
        return ()
    start = m.start("v") + skip
    return (Span(start, start + len(value), "connection-string", f"password={mask(value, 0)}", 30),)
