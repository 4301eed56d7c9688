"""A labelled corpus of secret lines and hard negatives, generated at run time.

Nothing here is a literal token: every secret is built from a seeded ``random.Random`` with
the right shape (prefix, alphabet, length), so no committed file trips push protection, and
every run with the same seed builds the same corpus.

A corpus is a list of ``Doc``: a small file in one format (``env``, ``sh``, ``yaml``,
``json``, ``js``, ``ts``, ``py``, ``go``) whose secret lines are labelled with the expected
kind; every other line is a negative (the hard negatives are whole docs of lines that only
look like secrets). ``evaluate`` scores a scrubber per line: a line is flagged when the
scrubber changed it.
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid
from dataclasses import dataclass, field
from typing import Callable, Iterator

FORMATS = ("env", "sh", "yaml", "json", "js", "ts", "py", "go")
EXT = {"env": ".env", "sh": ".sh", "yaml": ".yaml", "json": ".json", "js": ".js",
       "ts": ".ts", "py": ".py", "go": ".go"}
B62 = string.ascii_letters + string.digits
B64 = B62 + "+/"
URLSAFE = B62 + "-_"
B32 = string.ascii_uppercase + "234567"


@dataclass(frozen=True)
class Doc:
    fmt: str
    text: str
    labels: dict[int, str] = field(default_factory=dict)  # 1-based line -> expected kind
    secrets: tuple[str, ...] = ()  # must not survive scrubbing
    note: str = ""


class Gen:
    """Random values with the shapes of real secrets (and of things that are not)."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def chars(self, alphabet: str, n: int) -> str:
        return "".join(self.r.choice(alphabet) for _ in range(n))

    def mixed(self, alphabet: str, n: int) -> str:
        """Like a real key: has upper, lower and digits (redrawn until it does)."""
        while True:
            s = self.chars(alphabet, n)
            if any(c.isupper() for c in s) and any(c.islower() for c in s) and any(c.isdigit() for c in s):
                return s

    def digits(self, n: int) -> str:
        return str(self.r.randint(1, 9)) + self.chars(string.digits, n - 1)

    def hexs(self, n: int) -> str:
        return self.chars("0123456789abcdef", n)

    def b64bytes(self, n: int, alt: bytes = b"+/") -> str:
        return base64.b64encode(self.r.randbytes(n), altchars=alt).decode()

    # -- secrets ---------------------------------------------------------------------------
    def openai(self) -> str:
        choice = self.r.randrange(3)
        if choice == 0:
            return "sk" + "-" + self.mixed(B62, 48)
        if choice == 1:
            return "sk-" + "proj-" + self.mixed(URLSAFE, 156)
        return "sk-" + "ant-api03-" + self.mixed(URLSAFE, 93) + "AA"

    def github(self) -> str:
        choice = self.r.randrange(4)
        if choice == 3:
            return "github" + "_pat_" + self.mixed(B62, 22) + "_" + self.mixed(B62, 59)
        return "gh" + "pos"[choice] + "_" + self.mixed(B62, 36)

    def slack(self) -> str:
        kind = self.r.choice("baprs")
        if kind == "p":
            return ("xox" + "p-" + self.digits(12) + "-" + self.digits(12) + "-" + self.digits(13)
                    + "-" + self.hexs(32))
        return "xox" + kind + "-" + self.digits(12) + "-" + self.digits(13) + "-" + self.mixed(B62, 24)

    def aws_id(self) -> str:
        return self.r.choice(["AK" + "IA", "AS" + "IA"]) + self.chars(B32, 16)

    def aws_secret(self) -> str:
        return self.mixed(B64, 40)

    def jwt(self) -> str:
        def enc(obj: object) -> str:
            return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")
        claims = {"sub": self.digits(10), "name": self.r.choice(["Ada", "Linus", "Grace"]),
                  "iat": self.r.randint(1_600_000_000, 1_800_000_000)}
        sig = base64.urlsafe_b64encode(self.r.randbytes(32)).decode().rstrip("=")
        return enc({"alg": self.r.choice(["HS256", "RS256"]), "typ": "JWT"}) + "." + enc(claims) + "." + sig

    def pem(self) -> list[str]:
        kind = self.r.choice(["RSA ", "EC ", "", "OPENSSH ", "ENCRYPTED "])
        body = self.b64bytes(self.r.randint(300, 900))
        width = 70 if kind == "OPENSSH " else 64
        lines = [body[i:i + width] for i in range(0, len(body), width)]
        return [f"-----BEGIN {kind}PRIVATE KEY-----", *lines, f"-----END {kind}PRIVATE KEY-----"]

    def email(self) -> str:
        first = self.r.choice(["jane", "omar", "li", "sofia", "mehmet", "anna", "raj", "zoe"])
        last = self.r.choice(["doe", "khan", "wei", "rossi", "yilmaz", "novak", "patel", "ng"])
        domain = self.r.choice(["acme-corp.com", "mailbox.org", "uni-heidelberg.de",
                                "startup.io", "example-bank.co.uk", "posteo.net", "fastmail.fm",
                                "agency.dev", "gmail.com"])
        sep = self.r.choice([".", "_", "", "+"])
        return f"{first}{sep}{last}{self.r.choice(['', str(self.r.randint(1, 99))])}@{domain}"

    def phone(self) -> str:
        d = self.digits
        area = str(self.r.randint(2, 9)) + self.chars(string.digits, 2)  # NANP: no leading 0/1
        return self.r.choice([
            f"+44 20 {d(4)} {d(4)}", f"+1 ({area}) 555-{d(4)}", f"+49 30 {d(7)}",
            f"+33 1 {d(2)} {d(2)} {d(2)} {d(2)}", f"({area}) 555-{d(4)}", f"+90 212 {d(3)} {d(2)} {d(2)}",
            f"+1-{area}-555-{d(4)}", f"+81 3-{d(4)}-{d(4)}", f"+91 98{d(3)} {d(5)}",
        ])

    def password(self) -> str:
        word = self.r.choice(["hunter", "Tr0ub4dor", "dragon", "Summer", "monkey", "P@ssw0rd"])
        return word + self.r.choice(["", "!", "#", "&", "_"]) + self.digits(self.r.randint(1, 4))

    def credential(self) -> str:
        return self.r.choice([self.password(), self.mixed(B62, 32), self.hexs(40),
                              "django-insecure-" + self.mixed(B62 + "!@#%^&*(-_=+)", 50)
                              .replace("'", "").replace('"', "")])


# -------------------------------------------------------------------------------- lines

def _camel(snake: str) -> str:
    head, *rest = snake.lower().split("_")
    return head + "".join(p.title() for p in rest)


def assign_line(fmt: str, name: str, value: str) -> str:
    """``name = value`` as it is written in ``fmt``; ``name`` is snake_case or SCREAMING."""
    screaming = name.isupper()
    if fmt == "env":
        return f"{name.upper()}={value}"
    if fmt == "sh":
        return f'export {name.upper()}="{value}"'
    if fmt == "yaml":
        return f"{name}: {value}" if screaming else f'  {name}: "{value}"'
    if fmt == "json":
        return f'  "{name}": "{value}",'
    if fmt == "js":
        return f"const {name if screaming else _camel(name)} = '{value}';"
    if fmt == "ts":
        return f'export const {name if screaming else _camel(name)}: string = "{value}";'
    if fmt == "py":
        return f'{name} = "{value}"'
    if fmt == "go":
        return f'\t{name if screaming else _camel(name)} := "{value}"' if not screaming else f'const {name} = "{value}"'
    raise ValueError(fmt)


_CONTEXT = {
    "env": ("# local settings", "DEBUG=true"),
    "sh": ("#!/usr/bin/env bash", "set -euo pipefail"),
    "yaml": ("config:", "  retries: 3"),
    "json": ("{", '  "retries": 3'),
    "js": ("'use strict';", "module.exports = {};"),
    "ts": ("import { z } from 'zod';", "export default {};"),
    "py": ("import os", "TIMEOUT = 30"),
    "go": ("package config", "var Retries = 3"),
}


def _doc(fmt: str, body: list[tuple[str, str | None]], secrets: tuple[str, ...], note: str) -> Doc:
    head, tail = _CONTEXT[fmt]
    lines = [head, *[line for line, _ in body], tail]
    labels = {i + 2: kind for i, (_, kind) in enumerate(body) if kind}
    return Doc(fmt, "\n".join(lines) + "\n", labels, secrets, note)


# shape rules: a neutral variable name, so the name rule cannot do the shape rule's work
_SHAPES: dict[str, tuple[str, Callable[[Gen], str]]] = {
    "openai-key": ("llm_client_cfg", Gen.openai),
    "github-token": ("gh_auth", Gen.github),
    "slack-token": ("slack_bot", Gen.slack),
    "jwt": ("session_cookie", Gen.jwt),
    "email": ("maintainer", Gen.email),
    "phone": ("support_line", Gen.phone),
}
_ASSIGN_NAMES = ("DB_PASSWORD", "API_TOKEN", "CLIENT_SECRET", "SECRET_KEY", "JWT_SECRET",
                 "MYSQL_ROOT_PASSWORD", "SESSION_SECRET", "WEBHOOK_SECRET", "ENCRYPTION_KEY",
                 "REDIS_PASS", "AUTH_TOKEN", "STRIPE_API_KEY")


def _shape_docs(g: Gen) -> list[Doc]:
    docs = []
    for kind, (name, make) in _SHAPES.items():
        for fmt in FORMATS:
            value = make(g)
            docs.append(_doc(fmt, [(assign_line(fmt, name, value), kind)], (value,), kind))
    # the same shapes in prose and headers, not assignments
    mail, tel, tok, gh = g.email(), g.phone(), g.jwt(), g.github()
    docs.append(_doc("py", [(f"# Maintainer: Jane Doe <{mail}>", "email")], (mail,), "email in a comment"))
    docs.append(_doc("yaml", [(f"  # call {tel} for the on-call engineer", "phone")], (tel,), "phone in a comment"))
    docs.append(_doc("sh", [(f'curl -H "Authorization: Bearer {tok}" https://api.acme.dev/v1/me', "jwt")],
                     (tok,), "bearer token in a curl line"))
    docs.append(_doc("sh", [(f"git remote add origin https://{gh}@github.com/acme/app.git", "github-token")],
                     (gh,), "token in a remote URL"))
    return docs


def _assignment_docs(g: Gen) -> list[Doc]:
    docs = []
    for i, fmt in enumerate(FORMATS):
        for name in (_ASSIGN_NAMES[i % len(_ASSIGN_NAMES)], _ASSIGN_NAMES[(i + 5) % len(_ASSIGN_NAMES)]):
            value = g.credential()
            docs.append(_doc(fmt, [(assign_line(fmt, name, value), "secret-assignment")], (value,),
                             "name rule"))
    pw, tok = g.password(), g.mixed(B62, 40)
    docs.append(_doc("yaml", [("services:", None), ("  db:", None), ("    environment:", None),
                              (f"      - POSTGRES_PASSWORD={pw}", "secret-assignment")], (pw,),
                     "docker-compose list item"))
    docs.append(_doc("py", [(f'SECRET_KEY: str = "{tok}"', "secret-assignment")], (tok,),
                     "annotated constant"))
    return docs


def _aws_docs(g: Gen) -> list[Doc]:
    docs = []
    layouts = {
        "env": ("AWS_ACCESS_KEY_ID={id}", "AWS_SECRET_ACCESS_KEY={secret}"),
        "sh": ("export AWS_ACCESS_KEY_ID={id}", "export AWS_SECRET_ACCESS_KEY={secret}"),
        "yaml": ("  aws_access_key_id: {id}", "  aws_secret_access_key: {secret}"),
        "json": ('    "AccessKeyId": "{id}",', '    "SecretAccessKey": "{secret}",'),
        "js": ('  accessKeyId: "{id}",', '  secretAccessKey: "{secret}",'),
        "ts": ("  accessKeyId: '{id}',", "  secretAccessKey: '{secret}',"),
        "py": ('    aws_access_key_id="{id}",', '    aws_secret_access_key="{secret}",'),
    }
    for fmt, (id_line, secret_line) in layouts.items():
        key, secret = g.aws_id(), g.aws_secret()
        body = [(id_line.format(id=key), "aws-access-key-id"), ("  region: eu-west-1" if fmt == "yaml"
                else "    region = 'eu-west-1'" if fmt == "py" else f"  # region eu-west-{g.r.randint(1, 3)}", None),
                (secret_line.format(secret=secret), "aws-secret-key")]
        docs.append(_doc(fmt, body, (key, secret), "aws key pair"))
    key, secret = g.aws_id(), g.aws_secret()
    docs.append(_doc("go", [(f'\tcreds := credentials.NewStaticCredentials("{key}", "{secret}", "")',
                             "aws-access-key-id")], (key, secret), "aws pair on one line"))
    secret = g.aws_secret()
    docs.append(_doc("py", [(f'aws_secret_access_key = "{secret}"', "aws-secret-key")], (secret,),
                     "aws secret by name, no key id nearby"))
    return docs


def _pem_docs(g: Gen) -> list[Doc]:
    docs = []
    for fmt in FORMATS:
        block = g.pem()
        secrets = tuple(block[1:-1])
        if fmt in ("env", "json"):  # one line, newlines escaped (service-account JSON, .env)
            one = "\\n".join(block) + "\\n"
            line = f'PRIVATE_KEY="{one}"' if fmt == "env" else f'  "private_key": "{one}",'
            docs.append(_doc(fmt, [(line, "private-key")], secrets, "pem on one line"))
            continue
        opener, closer, indent = {
            "sh": ("cat > deploy_key <<'EOF'", "EOF", ""),
            "yaml": ("tls_key: |", None, "  "),
            "js": ("const signingKey = `", "`;", ""),
            "ts": ("export const signingKey = `", "`;", ""),
            "py": ('SIGNING_KEY = """', '"""', ""),
            "go": ("var signingKey = []byte(`", "`)", ""),
        }[fmt]
        body: list[tuple[str, str | None]] = []
        if fmt in ("js", "ts", "py", "go"):  # the opener shares a line with BEGIN
            body.append((opener + block[0], "private-key"))
            body += [(line, "private-key") for line in block[1:-1]]
            body.append((block[-1] + closer, "private-key"))
        else:
            body.append((opener, None))
            body += [(indent + line, "private-key") for line in block]
            if closer:
                body.append((closer, None))
        docs.append(_doc(fmt, body, secrets, "pem block"))
    return docs


def _hard_negative_docs(g: Gen) -> list[Doc]:
    sha, uid = g.hexs(40), str(uuid.UUID(int=g.r.getrandbits(128), version=4))
    x36, x16 = "X" * 36, "X" * 16
    lines: dict[str, list[str]] = {
        "ts": ['  token: text("token").notNull(),', "  secret: string;",
               "  constructor(private readonly secret: string) {}",
               "export type Secret = { key: string; value: string };",
               'const SECRET_KEY = config.get("secretKey");',
               f'<script src="/app.js" integrity="sha384-{g.b64bytes(48)}"></script>'],
        "js": ["this.accessToken = accessToken;", "const apiKey = process.env.API_KEY;",
               "  API_KEY: process.env.API_KEY,", "  headers: { Authorization: `Bearer ${token}` },",
               f'const accountSid = "AC{g.hexs(32)}";', 'const prefix = "eyJhbGciOiJIUzI1NiJ9";',
               '<li className="task-list-item-checkbox-container">',
               "// mail bob@test.example or dev@foo.test for access",
               f'  "sri": "sha512-{g.b64bytes(64)}",'],
        "yaml": ["  DB_PASSWORD: ${DB_PASSWORD}", '  password: "${SECRET}"', "maintainer: nobody@nowhere.invalid",
                 f"  sha: {g.hexs(40)}", "token_url: https://auth.acme-corp.com/oauth/token",
                 "GOOGLE_APPLICATION_CREDENTIALS: /var/secrets/google/key.json",
                 "OPENAI_API_KEY: sk-" + "x" * 48, "API_TOKEN: <paste your token>"],
        "sh": ['export API_TOKEN="${API_TOKEN:-}"',
               'curl -H "Authorization: Bearer $API_TOKEN" https://api.github.com/user',
               "git clone git@github.com:acme/widgets.git", 'read -s -p "Password: " DB_PASSWORD',
               "export DATABASE_URL=postgres://app:${DB_PASSWORD}@db:5432/app"],
        "env": ["OPENAI_API_KEY=your-api-key", "SECRET_KEY=change-me", "GITHUB_TOKEN=gh" + "p_" + x36,
                "AWS_ACCESS_KEY_ID=AK" + "IA" + x16, "AWS_ACCESS_KEY_ID=AK" + "IA" + "IOSFODNN7" + "EXAMPLE",
                "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY",
                "SLACK_BOT_TOKEN=xox" + "b-your-bot-token", "API_TOKEN=<token>", "DB_PASSWORD=***",
                "JWT_SECRET=xxx", "SMTP_PASSWORD=", "ADMIN_EMAIL=admin@example.com"],
        "py": ["PASSWORD_FIELD = 'password'", 'TOKEN_PARAM = "access_token"', 'API_KEY = os.environ["API_KEY"]',
               'SECRET_KEY = os.getenv("SECRET_KEY", "")', "AUTH_TOKEN = get_token()", "DB_PASSWORD: str",
               "API_KEY = None", "PASSWORD_MIN_LENGTH = 12", "MAX_TOKENS = 4096", 'TOKEN_TYPE = "Bearer"',
               'API_KEY = "OPENAI_API_KEY"', "DB_PASSWORD = settings.DB_PASSWORD",
               'password = getpass.getpass("Password: ")', 'api_key_header = "X-API-Key"',
               'SECRET_NAME = "prod/db/password"', 'USER_PASSWD = "%s:%s" % (user, passwd)',
               f'commit = "{sha}"', f'request_id = "{uid}"', f'expected = b"{g.b64bytes(30)}"',
               f'digest = "{g.hexs(64)}"', f'TWILIO_ACCOUNT_SID = "AC{g.hexs(32)}"', f'nonce = "{g.hexs(32)}"',
               '@app.route("/login", methods=["POST"])', "y = x@W.T + b", 'tz_offset = "+05:30"',
               'disk_name = "disk-0123456789abcdefghijkl"', 'PEM_HEADER = "-----BEGIN PRIVATE KEY-----"',
               'PEM_FOOTER = "-----END PRIVATE KEY-----"', "# Contact: support@example.org",
               'phone_re = re.compile(r"\\(\\d{3}\\) \\d{3}-\\d{4}")', 'isbn = "978-3-16-148410-0"',
               "ids = [+1, -2, +3]", "total = a +44 * b", 'zip_code = "90210-1234"',
               'msg_id = "<20240115101500.GC4701@mail.acme-corp.com>"'],
        "json": ['  "email": "jane.doe@example.com",', f'  "id": "{uid}",',
                 '  "build": "1.4.2+20240115.1234",', '  "timestamp": "2024-01-15T10:30:00+01:00",',
                 f'  "etag": "{g.hexs(32)}",', '  "password": "",', '  "API_KEY": "${API_KEY}",'],
        "go": [f'rev := "{sha}"', 'const admin = "root@localhost"', 'const TokenHeader = "Authorization"',
               "// See RFC 7519: a JWT is header.payload.signature", 'fmt.Printf("(%d) %d-%d\\n", a, b, c)'],
    }
    return [_doc(fmt, [(line, None) for line in items], (), "hard negatives") for fmt, items in lines.items()]


def build_corpus(seed: int = 20240611) -> list[Doc]:
    """The labelled corpus: secrets of every kind in every format, then hard negatives."""
    g = Gen(seed)
    return [*_shape_docs(g), *_assignment_docs(g), *_aws_docs(g), *_pem_docs(g), *_hard_negative_docs(g)]


def hard_negative_lines(corpus: list[Doc]) -> list[str]:
    return [line for d in corpus if d.note == "hard negatives" for line in d.text.splitlines()[1:-1]]


def labelled_lines(corpus: list[Doc]) -> Iterator[tuple[Doc, int, str, str | None]]:
    """Every line of the corpus: (doc, 1-based line, text, expected kind or None)."""
    for d in corpus:
        for n, line in enumerate(d.text.split("\n")[:-1], 1):
            yield d, n, line, d.labels.get(n)


@dataclass
class Score:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    misses: list[str] = field(default_factory=list)  # "fmt:line: text" (secret lines missed)
    false_alarms: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


def evaluate(corpus: list[Doc], flagged_lines: Callable[[Doc], set[int]]) -> Score:
    """Per-line precision and recall of a scanner. ``flagged_lines(doc)`` returns the
    1-based lines it flags (for a scrubber: the lines it changed)."""
    score = Score()
    for d in corpus:
        flagged = flagged_lines(d)
        for n, line in enumerate(d.text.split("\n")[:-1], 1):
            positive, hit = n in d.labels, n in flagged
            if positive and hit:
                score.tp += 1
            elif positive:
                score.fn += 1
                score.misses.append(f"{d.fmt}:{n}: {line}")
            elif hit:
                score.fp += 1
                score.false_alarms.append(f"{d.fmt}:{n}: {line}")
            else:
                score.tn += 1
    return score
