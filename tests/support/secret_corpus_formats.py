"""A labelled dev corpus of credential files and of names apart from their values (issue 42).

Classes (``CLASSES``): ``.netrc``, ``.pgpass``, ``.git-credentials``, ``.pypirc``, docker
``config.json``, Kubernetes Secrets (base64 ``data:`` whose decoded value is a URL with a
password, a password, a token, an INI blob ...; YAML and JSON), and, built in
``secret_corpus_apart``, YAML block scalars, TOML multi-line strings, Terraform variables,
nested JSON/YAML keys (``Jwt.Key``, ``database.pass``), WordPress keys and salts. Each class has positives in several layouts and hard decoys written the way real
files hold them: placeholders, env references, templates (``${DB_PASS}``, ``{{ .Values.x }}``),
a ``.netrc`` entry without a password, a Secret whose data decodes to a host name, a port or
a user name, a ConfigMap, prose under a secret name, docs keys.

Every value is drawn from a seeded ``random.Random`` (``corpus_tokens.Gen``): nothing here is
a real secret, and a seed always builds the same corpus. A ``FormatDoc`` is one file (its
``name`` is the path handed to ``scrub_text``); its lines are labelled ``+`` (holds a secret),
``-`` (a hard decoy) or unlabelled (context, also a negative).
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass, field

from .corpus_tokens import B62, Gen

CLASSES = ("netrc", "pgpass", "git-credentials", "pypirc", "docker-config", "k8s-secret", "yaml-block",
           "toml-multiline", "hcl-variable", "nested-key", "wordpress")

Row = tuple[str, str]  # (line, "+" | "-" | "")


@dataclass(frozen=True)
class FormatDoc:
    cls: str
    name: str  # the file's path in its repository
    text: str
    positives: frozenset[int]  # 1-based lines that hold a secret
    decoys: frozenset[int]  # 1-based lines that are hard negatives
    secrets: tuple[str, ...] = field(default=())  # must not survive scrubbing


def _doc(cls: str, name: str, rows: list[Row], secrets: list[str]) -> FormatDoc:
    return FormatDoc(cls, name, "\n".join(line for line, _ in rows) + "\n",
                     frozenset(i for i, (_, lab) in enumerate(rows, 1) if lab == "+"),
                     frozenset(i for i, (_, lab) in enumerate(rows, 1) if lab == "-"), tuple(secrets))


def _b64(value: str) -> str:
    return base64.b64encode(value.encode()).decode()


def _user(g: Gen) -> str:
    return g.pick("deploy", "ci-bot", "svc_orders", "release", "backup", "jenkins", "ops")


def _host(g: Gen) -> str:
    return g.pick("db.acme-corp.internal", f"pg-{g.r.randint(0, 9)}.orders.svc.cluster.local",
                  "10.12.0.7", "registry.acme-corp.com", f"db{g.r.randint(1, 20)}.eu-west-1.rds.amazonaws.com")


# ------------------------------------------------------------------------------ credential files

def netrc_docs(g: Gen) -> list[FormatDoc]:
    pw, uuid_key, quoted, split, macro, default = (g.strong_password(), g.uuid4(), g.url_password(),
                                                   g.password(), g.mixed(B62, 40), g.strong_password())
    rows: list[Row] = [
        ("# machines the release scripts talk to", ""),
        (f"machine api.github.com login {_user(g)} password {pw}", "+"),
        ("machine api.heroku.com", ""),
        (f"  login {_user(g)}", ""),
        (f"  password {uuid_key}", "+"),  # a Heroku API key shaped like a UUID is still the password
        (f"machine ftp.acme-corp.com login {_user(g)} password", ""),
        (f"  {split}", "+"),  # tokens may span lines
        (f'machine nexus.acme-corp.com login ci password "{quoted}"', "+"),
        ("machine files.acme-corp.com login reader", "-"),  # no password
        ("machine cache.acme-corp.com login ci password ${NETRC_PASSWORD}", "-"),
        ("machine localhost login test password <password>", "-"),
        ("# password: ask in #ops, never commit it", "-"),
        ("macdef init", ""),
        ("put password.txt", "-"),  # a macro body, not a token stream
        ("quit", ""),
        ("", ""),
        (f"machine git.acme-corp.com login {_user(g)} account billing password {macro}", "+"),
        (f"default login anonymous password {default}", "+"),
    ]
    name = g.pick(".netrc", "_netrc", "ci/.netrc")
    other = g.strong_password()
    unnamed: list[Row] = [  # a name that says nothing: found by its content
        (f"machine build.acme-corp.com login {_user(g)} password {other}", "+"),
        ("machine mirror.acme-corp.com login reader", "-"),
    ]
    return [_doc("netrc", name, rows, [pw, uuid_key, quoted, split, macro, default]),
            _doc("netrc", g.pick("ops/credentials", "backup/creds.txt"), unnamed, [other])]


def _pg_escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace(":", "\\:")


def pgpass_docs(g: Gen) -> list[FormatDoc]:
    a, b, c = g.strong_password(), g.password() + ":" + g.digits(3), g.url_password()
    rows: list[Row] = [
        ("# hostname:port:database:username:password", "-"),
        (f"{_host(g)}:5432:orders:{_user(g)}:{_pg_escape(a)}", "+"),
        (f"*:*:*:replicator:{_pg_escape(b)}", "+"),  # an escaped colon inside the password
        (f"localhost:5433:*:postgres:{c}", "+"),
        ("", ""),
        (f"{_host(g)}:5432:analytics:{_user(g)}:*", "-"),
        ("db:5432:app:app:${PGPASSWORD}", "-"),
    ]
    d = g.strong_password()
    unnamed: list[Row] = [("# replicas", "-"), (f"{_host(g)}:6432:orders:{_user(g)}:{_pg_escape(d)}", "+")]
    return [_doc("pgpass", g.pick(".pgpass", "pgpass.conf", "ops/.pgpass"), rows, [a, b.split(":")[0], c]),
            _doc("pgpass", g.pick("ops/pg-replicas", "db/passfile"), unnamed, [d])]


def git_credentials_docs(g: Gen) -> list[FormatDoc]:
    tok, pw, hexed, alone, oauth = (g.mixed(B62, 40), g.url_password(), g.hexs(40), g.mixed(B62, 40),
                                    g.mixed(B62 + "-_", 20) + g.digits(3))
    rows: list[Row] = [
        (f"https://{_user(g)}:{tok}@github.com", "+"),
        (f"https://deploy:{pw}@git.acme-corp.com", "+"),
        (f"http://jenkins:{hexed}@git.internal:8080", "+"),
        (f"https://{alone}@github.com", "+"),  # a token given as the user
        (f"https://oauth2:{oauth}@gitlab.acme-corp.com", "+"),
        ("https://github.com", "-"),
        ("https://jane@git.acme-corp.com", "-"),
        ("https://x-access-token:${GITHUB_TOKEN}@github.com", "-"),
        ("https://user:password@localhost", "-"),
    ]
    return [_doc("git-credentials", g.pick(".git-credentials", "home/ci/.git-credentials"), rows,
                 [tok, pw, hexed, alone, oauth])]


def pypirc_docs(g: Gen) -> list[FormatDoc]:
    a, b, tok, c = g.strong_password(), g.password(), g.pypi(), g.strong_password()
    rows: list[Row] = [
        ("[distutils]", ""),
        ("index-servers =", ""),
        ("    testpypi", ""),
        ("    internal", ""),
        ("", ""),
        ("[testpypi]", ""),
        ("repository = https://test.pypi.org/legacy/", "-"),
        ("username = alice", ""),
        (f"password = {a}", "+"),
        ("", ""),
        ("[internal]", ""),
        ("repository = https://pypi.acme-corp.com/simple", ""),
        ("username = ci", ""),
        (f"password: {b}", "+"),
        ("", ""),
        ("[staging]", ""),
        ("username = __token__", "-"),
        ("password = ${PYPI_PASSWORD}", "-"),
        ("# password = <your token>", "-"),
        ("[mirror]", ""),
        ("password =", "-"),
        ("password = %(MIRROR_PASSWORD)s", "-"),
        ("[pypi]", ""),
        ("username = __token__", ""),
        (f"password = {tok}", "+"),
        ("[private]", ""),
        ("username=bob", ""),
        (f"password={c}", "+"),
    ]
    return [_doc("pypirc", g.pick(".pypirc", "pypirc"), rows, [a, b, tok, c])]


def docker_config_docs(g: Gen) -> list[FormatDoc]:
    auth, ident, reg = _b64(f"{_user(g)}:{g.strong_password()}"), g.mixed(B62, 64), g.mixed(B62 + "-_", 48)
    rows: list[Row] = [
        ("{", ""),
        ('  "auths": {', ""),
        ('    "registry.acme-corp.com": {', ""),
        (f'      "auth": "{auth}"', "+"),
        ("    },", ""),
        ('    "https://index.docker.io/v1/": {},', "-"),
        ('    "acme.azurecr.io": {', ""),
        (f'      "identitytoken": "{ident}"', "+"),
        ("    },", ""),
        ('    "ghcr.io": {', ""),
        (f'      "registrytoken": "{reg}",', "+"),
        ('      "auth": ""', "-"),
        ("    }", ""),
        ("  },", ""),
        ('  "credsStore": "desktop",', "-"),
        ('  "credHelpers": {"gcr.io": "gcloud", "public.ecr.aws": "ecr-login"},', "-"),
        ('  "HttpHeaders": {"User-Agent": "Docker-Client/24.0.7 (linux)"},', "-"),
        ('  "currentContext": "desktop-linux"', "-"),
        ("}", ""),
    ]
    return [_doc("docker-config", g.pick(".docker/config.json", "ci/docker/config.json"), rows,
                 [auth, ident, reg])]


def k8s_secret_docs(g: Gen) -> list[FormatDoc]:
    url_pw, db_pw, tok, redis_pw, ini_pw, smtp = (g.url_password(), g.strong_password(), g.mixed(B62, 40),
                                                  g.url_password(), g.strong_password(), g.strong_password())
    db_url = f"postgres://{_user(g)}:{url_pw}@{_host(g)}:5432/orders"
    redis_url = f"redis://:{redis_pw}@redis-master:6379/0"
    ini = f"[database]\nhost = db\npassword = {ini_pw}\n"
    keystore = g.b64bytes(720)
    body = g.b64bytes(420)
    cert = "-----BEGIN CERTIFICATE-----\n" + "\n".join(body[i:i + 64] for i in range(0, len(body), 64)) \
        + "\n-----END CERTIFICATE-----\n"
    rows: list[Row] = [
        ("apiVersion: v1", ""),
        ("kind: ConfigMap", ""),
        ("metadata:", ""),
        ("  name: orders-config", ""),
        ("data:", ""),
        ("  API_BASE_URL: https://api.acme-corp.com", "-"),
        (f"  DATABASE_URL: postgres://{_host(g)}:5432/orders", "-"),
        ('  TIMEOUT: "30"', ""),
        (f"  CACHE_KEY: {_b64('orders-v2')}", "-"),
        ("---", ""),
        ("apiVersion: v1", ""),
        ("kind: Secret", ""),
        ("metadata:", ""),
        ("  name: orders-secrets", ""),
        ("type: Opaque", ""),
        ("data:", ""),
        (f"  DATABASE_URL: {_b64(db_url)}", "+"),
        (f"  DB_PASSWORD: {_b64(db_pw)}", "+"),
        (f"  api-token: {_b64(tok)}", "+"),
        (f"  REDIS_URL: {_b64(redis_url)}", "+"),
        (f"  settings.ini: {_b64(ini)}", "+"),
        (f"  DB_HOST: {_b64(_host(g))}", "-"),
        (f"  DB_PORT: {_b64(str(g.pick(5432, 5433, 6432)))}", "-"),
        (f"  DB_USER: {_b64(_user(g))}", "-"),
        (f"  DB_NAME: {_b64(g.pick('orders', 'billing', 'analytics_v2'))}", "-"),
        (f"  READONLY_URL: {_b64('postgres://' + _host(g) + ':5432/orders')}", "-"),
        (f"  username: {_b64('admin')}", "-"),
        (f"  keystore.jks: {keystore}", "+"),  # binary key material
        (f"  ca.der: {g.b64bytes(480)}", "-"),  # a binary certificate: public
        (f"  tls.crt: {_b64(cert)}", "-"),  # a PEM certificate: public
        ("stringData:", ""),
        (f"  SMTP_PASSWORD: {smtp}", "+"),
        ("  SMTP_HOST: smtp.acme-corp.com", "-"),
        ("---", ""),
        ("apiVersion: v1", ""),
        ("kind: Secret", ""),
        ("metadata:", ""),
        ("  name: from-chart", ""),
        ("data:", ""),
        ("  password: {{ .Values.db.password | b64enc }}", "-"),
        ("  token: ${API_TOKEN_B64}", "-"),
    ]
    json_pw, json_url = g.strong_password(), f"mysql://app:{g.url_password()}@{_host(g)}/shop"
    as_json: list[Row] = [  # kubectl get secret -o json
        ("{", ""),
        ('  "apiVersion": "v1",', ""),
        ('  "kind": "Secret",', ""),
        ('  "metadata": { "name": "shop" },', ""),
        ('  "data": {', ""),
        (f'    "MYSQL_PASSWORD": "{_b64(json_pw)}",', "+"),
        (f'    "SHOP_DB_URL": "{_b64(json_url)}",', "+"),
        (f'    "MYSQL_HOST": "{_b64(_host(g))}",', "-"),
        (f'    "MYSQL_PORT": "{_b64("3306")}"', "-"),
        ("  }", ""),
        ("}", ""),
    ]
    return [_doc("k8s-secret", g.pick("deploy/secrets.yaml", "k8s/orders.yml", "manifests/app.yaml"), rows,
                 [_b64(db_url), _b64(db_pw), _b64(tok), _b64(redis_url), _b64(ini), smtp, keystore]),
            _doc("k8s-secret", g.pick("deploy/shop-secret.json", "k8s/secret.json"), as_json,
                 [_b64(json_pw), _b64(json_url)])]


from .secret_corpus_apart import (hcl_variable_docs, nested_key_docs, toml_multiline_docs,  # noqa: E402
                                  wordpress_docs, yaml_block_docs)

BUILDERS: dict[str, Callable[[Gen], list[FormatDoc]]] = {
    "netrc": netrc_docs, "pgpass": pgpass_docs, "git-credentials": git_credentials_docs, "pypirc": pypirc_docs,
    "docker-config": docker_config_docs, "k8s-secret": k8s_secret_docs, "yaml-block": yaml_block_docs,
    "toml-multiline": toml_multiline_docs, "hcl-variable": hcl_variable_docs, "nested-key": nested_key_docs,
    "wordpress": wordpress_docs,
}


def build_format_corpus(seed: int) -> list[FormatDoc]:
    """Every class's files for one seed (two draws per class)."""
    g = Gen(seed)
    return [d for _ in range(2) for cls in CLASSES for d in BUILDERS[cls](g)]


@dataclass
class ClassScore:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    decoys: int = 0
    misses: list[str] = field(default_factory=list)
    false_alarms: list[str] = field(default_factory=list)

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0


def score_by_class(corpus: list[FormatDoc], flagged: Callable[[FormatDoc], set[int]]) -> dict[str, ClassScore]:
    """Per-class line scores: a line is flagged when the scrubber changed it."""
    out = {cls: ClassScore() for cls in CLASSES}
    for d in corpus:
        s, hits = out[d.cls], flagged(d)
        s.decoys += len(d.decoys)
        for n, line in enumerate(d.text.split("\n")[:-1], 1):
            if n in d.positives:
                if n in hits:
                    s.tp += 1
                else:
                    s.fn += 1
                    s.misses.append(f"{d.name}:{n}: {line}")
            elif n in hits:
                s.fp += 1
                s.false_alarms.append(f"{d.name}:{n}: {line}")
    return out
