"""A labelled corpus of secret lines and hard negatives, generated at run time.

Nothing here is a literal token: every secret is built from a seeded ``random.Random`` with
the shape its provider documents (``corpus_tokens.Gen``), so no committed file trips push
protection, and every run with the same seed builds the same corpus.

Two halves:

- a grid (this module): every core kind in every format (``env``, ``sh``, ``yaml``, ``json``,
  ``js``, ``ts``, ``py``, ``go``) under a neutral name, every provider token under a neutral
  name in two formats, the name rule's assignments, AWS pairs, PEM blocks, and whole docs of
  hard negatives;
- a small service repository (``corpus_repo``): .env files, CI workflows, Helm values,
  Kubernetes manifests, shell scripts, Python, Go, TypeScript, JSON, HTML, Dockerfiles, TOML,
  XML, properties, Terraform and Markdown, written as such files are, with the secrets and
  the look-alikes (placeholders, env lookups, hashes, digests, UUIDs, data: URIs, public
  keys, doc examples, test fixtures) that real repositories hold.

A ``Doc`` is one file whose secret lines are labelled with the expected kind; every other
line is a negative, and the lines marked hard are counted as hard negatives. ``evaluate``
scores a scanner per line: a line is flagged when the scanner changed (or reported) it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from .corpus_repo import ALL_FILES, expand
from .corpus_tokens import B32, B62, B64, URLSAFE, Gen  # noqa: F401  (re-exported for tests)

FORMATS = ("env", "sh", "yaml", "json", "js", "ts", "py", "go")
EXT = {"env": ".env", "sh": ".sh", "yaml": ".yaml", "json": ".json", "js": ".js",
       "ts": ".ts", "py": ".py", "go": ".go"}


@dataclass(frozen=True)
class Doc:
    fmt: str
    text: str
    labels: dict[int, str] = field(default_factory=dict)  # 1-based line -> expected kind
    secrets: tuple[str, ...] = ()  # must not survive scrubbing
    note: str = ""
    name: str = ""  # a file name for scanners that look at it (``repo/...`` for the repo half)
    hard: int = 0  # hard-negative lines in the doc (all of them in a "hard negatives" doc)


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


# provider tokens: kind -> generator; each goes under a neutral name in two formats, so the
# shape rule has to find it (the name rule cannot)
PROVIDER_SHAPES: dict[str, Callable[[Gen], str]] = {
    "gitlab-token": Gen.gitlab, "bitbucket-token": Gen.bitbucket_app_password, "atlassian-token": Gen.atlassian,
    "circleci-token": Gen.circleci, "buildkite-token": Gen.buildkite, "sourcegraph-token": Gen.sourcegraph,
    "sonar-token": Gen.sonar, "npm-token": Gen.npm, "pypi-token": Gen.pypi, "rubygems-token": Gen.rubygems,
    "nuget-key": Gen.nuget, "dockerhub-token": Gen.dockerhub, "crates-token": Gen.crates, "jfrog-token": Gen.jfrog,
    "clojars-token": Gen.clojars, "google-api-key": Gen.google_api_key, "google-oauth": Gen.gcp_oauth_secret,
    "azure-client-secret": Gen.azure_client_secret, "digitalocean-token": Gen.digitalocean,
    "alibaba-key": Gen.alibaba, "heroku-key": Gen.heroku, "databricks-token": Gen.databricks,
    "vault-token": Gen.vault, "terraform-token": Gen.terraform, "doppler-token": Gen.doppler,
    "pulumi-token": Gen.pulumi, "cloudflare-key": Gen.cloudflare_origin_ca, "flyio-token": Gen.flyio,
    "supabase-token": Gen.supabase, "netlify-token": Gen.netlify, "tailscale-key": Gen.tailscale,
    "openshift-token": Gen.openshift, "slack-webhook": Gen.slack_webhook, "discord-webhook": Gen.discord_webhook,
    "teams-webhook": Gen.teams_webhook, "telegram-token": Gen.telegram, "stripe-key": Gen.stripe,
    "square-token": Gen.square, "braintree-token": Gen.braintree, "shopify-token": Gen.shopify,
    "flutterwave-key": Gen.flutterwave, "plaid-token": Gen.plaid, "sendgrid-key": Gen.sendgrid,
    "mailgun-key": lambda g: "key-" + g.hexs(32), "mailchimp-key": Gen.mailchimp, "twilio-key": Gen.twilio_key,
    "brevo-key": Gen.brevo, "mailersend-token": Gen.mailersend, "anthropic-key": Gen.anthropic,
    "huggingface-token": Gen.huggingface, "groq-key": Gen.groq, "replicate-token": Gen.replicate,
    "perplexity-key": Gen.perplexity, "xai-key": Gen.xai, "grafana-token": Gen.grafana, "sentry-token": Gen.sentry,
    "newrelic-key": Gen.newrelic, "linear-key": Gen.linear, "postman-key": Gen.postman, "notion-token": Gen.notion,
"figma-token": Gen.figma, "hubspot-token": Gen.hubspot,
    "dynatrace-token": Gen.dynatrace, "easypost-key": Gen.easypost, "contentful-token": Gen.contentful,
    "mapbox-token": Gen.mapbox_secret, "facebook-token": Gen.facebook, "dropbox-token": Gen.dropbox,
    "firebase-key": Gen.fcm, "onepassword-token": Gen.onepassword, "age-key": Gen.age,
"adafruit-key": Gen.adafruit, "deno-token": Gen.deno,
    "docker-token": Gen.docker_swarm, "duffel-token": Gen.duffel, "elevenlabs-key": Gen.elevenlabs,
    "frameio-token": Gen.frameio, "gocardless-token": Gen.gocardless, "infracost-key": Gen.infracost,
    "langsmith-key": Gen.langsmith, "neon-key": Gen.neon, "nvidia-key": Gen.nvidia, "octopus-key": Gen.octopus,
    "packagist-token": Gen.packagist, "pinecone-key": Gen.pinecone, "planetscale-token": Gen.planetscale,
    "prefect-key": Gen.prefect, "readme-key": Gen.readme, "render-key": Gen.render, "shippo-token": Gen.shippo,
    "tavily-key": Gen.tavily, "typeform-token": Gen.typeform, "zapier-webhook": Gen.zapier,
}
_NEUTRAL = ("upstream_cfg", "conn_info", "remote_cfg", "integration", "vendor_cfg", "sink")


def _provider_docs(g: Gen) -> list[Doc]:
    docs = []
    for kind, make in PROVIDER_SHAPES.items():
        for fmt in g.r.sample(FORMATS, 2):
            value = make(g)
            docs.append(_doc(fmt, [(assign_line(fmt, g.r.choice(_NEUTRAL), value), kind)], (value,), kind))
    return docs


# file type of a repo document, from its name
_TYPES = (("Dockerfile", "dockerfile"), ("Jenkinsfile", "groovy"), (".env", "env"), (".yml", "yaml"),
          (".yaml", "yaml"), (".sh", "sh"), (".py", "py"), (".go", "go"), (".ts", "ts"), (".json", "json"),
          (".html", "html"), (".css", "css"), (".toml", "toml"), (".xml", "xml"), (".Config", "xml"),
          (".properties", "properties"), (".tf", "tf"), (".terraformrc", "tf"), (".md", "md"), (".rb", "rb"),
          (".lock", "lock"), (".php", "php"), (".npmrc", "ini"), (".pypirc", "ini"), (".netrc", "netrc"),
          (".git-credentials", "netrc"))


def file_type(name: str) -> str:
    base = name.rsplit("/", 1)[-1]
    for marker, fmt in _TYPES:
        if base == marker or base.endswith(marker) or (marker == ".env" and base.startswith(".env")):
            return fmt
    raise ValueError(f"no file type for {name}")


def _repo_docs(g: Gen) -> list[Doc]:
    docs = []
    for name, template in ALL_FILES.items():
        text, labels, secrets, hard = expand(template, g)
        docs.append(Doc(file_type(name), text, labels, secrets, "repo", "repo/" + name, hard))
    return docs


def build_corpus(seed: int = 20240611) -> list[Doc]:
    """The labelled corpus: the grid (every kind in every format, hard-negative docs) and
    the files of a small service repository."""
    g = Gen(seed)
    grid = [*_shape_docs(g), *_assignment_docs(g), *_aws_docs(g), *_pem_docs(g), *_provider_docs(g)]
    hard = [Doc(d.fmt, d.text, d.labels, d.secrets, d.note, hard=d.text.count("\n") - 2)
            for d in _hard_negative_docs(g)]
    docs = [*grid, *hard, *_repo_docs(g)]
    return [d if d.name else Doc(d.fmt, d.text, d.labels, d.secrets, d.note, f"grid/doc{i:03d}{EXT[d.fmt]}", d.hard)
            for i, d in enumerate(docs)]


def hard_negative_lines(corpus: list[Doc]) -> list[str]:
    """The hard-negative lines: every line of a hard-negatives doc (but its context lines),
    and the marked lines of the repo files."""
    out = [line for d in corpus if d.note == "hard negatives" for line in d.text.splitlines()[1:-1]]
    return out + [f"{d.name}:{i}" for d in corpus if d.note == "repo" for i in range(d.hard)]


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
