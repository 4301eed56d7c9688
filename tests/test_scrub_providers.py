"""Issue 14's rules one by one: provider token formats, the generic credential shapes, the
name rule in any case style, and the engine's one-pass literal search (against an oracle).

Positives are drawn at run time in each provider's documented shape (corpus_tokens.Gen);
every negative is a look-alike that real repositories hold next to them.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codeseam.scrub import KINDS, placeholder, scrub_text
from codeseam.scrub import engine
from codeseam.scrub.assign import secret_name
from codeseam.scrub.rules import RULES, literal_prefix
from tests.support.corpus_tokens import Gen
from tests.support.secret_corpus import PROVIDER_SHAPES


def redacted(line: str) -> list[tuple[str, str]]:
    return [(r.kind, r.rule) for r in scrub_text(line).redactions]


def clean(line: str) -> bool:
    res = scrub_text(line)
    return res.text == line and not res.redactions


@pytest.mark.parametrize("kind", sorted(PROVIDER_SHAPES))
@pytest.mark.parametrize("seed", [1, 2])
def test_every_provider_format_is_found_under_a_neutral_name(kind, seed):
    value = PROVIDER_SHAPES[kind](Gen(seed))
    for line in (f'upstream = "{value}"', f"sink: {value}", f"conn_info={value}", f"  - '{value}'"):
        out = scrub_text(line).text
        assert value not in out and placeholder(kind) in out, (line, out)


@pytest.mark.parametrize("kind", sorted(PROVIDER_SHAPES))
def test_a_provider_shape_filled_with_x_or_marked_fake_is_not_a_token(kind):
    value = PROVIDER_SHAPES[kind](Gen(3))
    literal = re.match(r"[^A-Za-z0-9]*[A-Za-z]*[^A-Za-z0-9]?", value).group()
    filled = literal + re.sub(r"[A-Za-z0-9]", "x", value[len(literal):])
    assert clean(f'sink = "{filled}"'), filled
    assert clean(f'FAKE_SINK = "{value}"') or kind.endswith("webhook"), value  # a webhook URL says nothing


@pytest.mark.parametrize("line", [
    "DATABASE_URL=postgres://billing:Zq8-Lm2.Xw9v@db.internal:5432/billing",
    "REDIS_URL=rediss://:T7c.Hq2~Lw9z@cache:6380/0",
    'dsn = "mongodb+srv://backup:Pq4n-Wz7x.Kd2@cluster0.x1y2.mongodb.net/app"',
    "ENV PIP_INDEX_URL=https://deploy:G8rQNlz6iZm8i4t@pypi.acme-corp.com/simple/",
])
def test_credentials_in_urls(line):
    assert redacted(line) == [("url-credentials", "url-credentials")]
    assert "@" in scrub_text(line).text


@pytest.mark.parametrize("line", [
    "DATABASE_URL=postgres://user:password@localhost:5432/app",
    "DATABASE_URL: postgresql://billing:${POSTGRES_PASSWORD}@db:5432/billing",
    "url: postgres://postgres:postgres@localhost:5432/test",
    "psql postgresql://USER:PASSWORD@localhost:5432/billing",
    'git remote add origin git@github.com:acme/app.git',
    "ftp://anonymous:@ftp.example.org/pub",
    'uri = "mongodb://backup:%(password)s@mongo:27017"',
])
def test_urls_without_a_real_password(line):
    assert clean(line), line


@pytest.mark.parametrize("line, kind", [
    ("mysql -h db.staging -u root -pKx9vQ!42 app < seed.sql", "cli-password"),
    ("mysqldump -u backup -p'Hq7#mZp2Lw' billing > dump.sql", "cli-password"),
    ("sshpass -p 'Zx81!kq2Wq' ssh deploy@10.0.4.12", "cli-password"),
    ("redis-cli -h cache -a Zx81kq2WqPm ping", "cli-password"),
    ("docker login registry.acme-corp.com -u ci -p Wq7mZ2xLp9", "cli-password"),
    ("curl -fsS -u admin:Wq7mZ2xLp9 https://nexus.acme-corp.com/status", "cli-password"),
    ("wget --user=admin --password=Adm1n-Pw.77 https://files.acme.dev/dump.tgz", "cli-password"),
    ('subprocess.run(["docker", "login", "--password", "Wq7mZ2xLp9"])', "cli-password"),
    ("psql -c \"ALTER USER billing PASSWORD 'Wq7mZ2xLp9'\"", "cli-password"),
    ("PGPASSWORD=Winter_21 psql -h db -U billing", "secret-assignment"),
])
def test_passwords_on_command_lines(line, kind):
    assert [k for k, _ in redacted(line)] == [kind], line


@pytest.mark.parametrize("line", [
    'mysql -h "$DB_HOST" -u root -p"$MYSQL_ROOT_PASSWORD" app < schema.sql',
    "mysql -u root -p -e 'SHOW DATABASES'",
    'redis-cli -h cache -a "$REDIS_PASSWORD" ping',
    'docker login -u ci --password-stdin <<< "$TOKEN"',
    'curl -u "$USER:$TOKEN" https://api.acme-corp.com/v1/me',
    'parser.add_argument("--password", help="admin password")',
    'parser.add_argument("--token", default=None)',
    "Use --password to set the option.",
    "mkdir -p build && cp -p a b",
])
def test_command_lines_without_a_password(line):
    assert clean(line), line


@pytest.mark.parametrize("line, kind", [
    ('curl -H "Authorization: Bearer Tn3BsUXa7wqWnli17s2p8BjQhly" https://x', "auth-header"),
    ("Authorization: Basic " + "Y2ktYm90Oldp" + "bnRlcl8yMQ==", "auth-header"),
    ('"ConnectionString": "Server=tcp:db,1433;User ID=app;Password=Wq7mZ2xLp9;Encrypt=True;"', "connection-string"),
    ("spring.datasource.url=jdbc:postgresql://db/app?user=app&password=Wq7mZ2xLp9", "connection-string"),
    ('<add key="ClearTextPassword" value="Wq7mZ2xLp9!" />', "secret-assignment"),
    ('<input type="hidden" name="api_key" value="Wq7mZ2xLp9Kd2Rt5Yb8Nc3Vf6Gh1Jk4L">', "secret-assignment"),
    ('{"name": "DB_PASSWORD", "value": "Wq7mZ2xLp9!"}', "secret-assignment"),
])
def test_headers_connection_strings_and_attributes(line, kind):
    assert [k for k, _ in redacted(line)] == [kind], line


@pytest.mark.parametrize("line", [
    'headers = {"Authorization": "Bearer " + token}',
    'curl -H "Authorization: Bearer ${DEPLOY_TOKEN}" https://x',
    "The API expects `Authorization: Bearer <token>`.",
    '"Local": "Server=(localdb)\\\\mssqllocaldb;Database=app;Trusted_Connection=True;"',
    "connect(host='db', user='admin', password=password)",
    '<add key="Username" value="ci" />',
    '<input type="password" name="password" placeholder="Password">',
])
def test_look_alikes_of_headers_and_connection_strings(line):
    assert clean(line), line


def test_env_pairs_and_kubernetes_secrets():
    g = Gen(5)
    pw = g.strong_password()
    manifest = (f"env:\n  - name: DB_PASSWORD\n    value: \"{pw}\"\n  - name: LOG_LEVEL\n    value: debug\n"
                "---\napiVersion: v1\nkind: Secret\ndata:\n"
                f"  username: {g.b64_of('admin')}\n  password: {g.b64_of(pw)}\nstringData:\n  API_TOKEN: {pw}x\n")
    res = scrub_text(manifest)
    lines = res.text.split("\n")
    assert pw not in res.text and g.b64_of(pw) not in res.text
    assert "debug" in lines[4] and g.b64_of("admin") in res.text
    assert res.text.count("\n") == manifest.count("\n")


def test_docker_auth_base64_pem_and_putty_keys():
    g = Gen(6)
    auth = g.docker_auth()
    pem = g.pem_b64()
    putty = "PuTTY-User-Key-File-3: ssh-rsa\nPrivate-Lines: 2\n" + g.b64bytes(48) + "\n" + g.b64bytes(48) + "\nPrivate-MAC: ab\n"
    text = f'{{"auths": {{"ghcr.io": {{"auth": "{auth}"}}}}}}\nclient-key-data: {pem}\n' + putty
    out = scrub_text(text).text
    assert auth not in out and pem not in out and "Private-MAC: ab" in out
    assert out.count("[REDACTED:private-key]") == 3 and "[REDACTED:docker-auth]" in out


@pytest.mark.parametrize("name, sort", [
    ("db_password", "password"), ("dbPassword", "password"), ("DB_PASSWORD", "password"),
    ("spring.datasource.password", "password"), ("key-store-password", "password"), ("PGPASSWORD", "password"),
    ("RABBITMQ_DEFAULT_PASS", "password"), ("webhookSecret", "secret"), ("api_key", "secret"),
    ("APIKey", "secret"), ("X-Api-Key", "secret"), ("SECRET_KEY_BASE", "secret"), ("authtoken", "secret"),
    ("signing-key", "secret"), ("_auth", "secret"), ("--db-password", "password"),
    ("secret_name", None), ("existingSecret", None), ("primary_key", None), ("token_url", None),
    ("max_tokens", None), ("public_key", None), ("password_hash", None), ("FAKE_TOKEN", None),
    ("sort_key", None), ("passwordPattern", None), ("tokenizer", None),
])
def test_secret_names_in_any_case_style(name, sort):
    assert secret_name(name) == sort


@pytest.mark.parametrize("line", [
    'password = "Hunter2!x"', "  webhookSecret: 9f3c21ab07d4e5f60718293a4b5c6d7e",
    '  "apiKey": "Wq7mZ2xLp9Kd2Rt5Yb8Nc3Vf6Gh1Jk4L",', "spring.datasource.password=Wq7mZ2xLp9",
    "<password>Wq7mZ2xLp9!</password>", "const clientSecret = 'Wq7mZ2xLp9Kd2Rt5Yb8Nc3V';",
    'ds.setPassword("Wq7mZ2xLp9!")', "define( 'DB_PASSWORD', 'Wq7mZ2xLp9!' );",
    'os.environ.setdefault("API_TOKEN", "Wq7mZ2xLp9Kd2Rt5Yb8Nc3Vf6")', "password = vcOsFfjBFmzqjUF6GgG118",
    'var sessionKey = []byte("kOgdPxGrB/ipwuyaghmQpWqWPExuHHzT")', "_auth=" + "Y2ktYm90Oldp" + "bnRlcl8yMQ==",
    'os.environ["SERVICE_TOKEN"] = "Wq7mZ2xLp9Kd2Rt5Yb8Nc3Vf6"', 'headers["X-Api-Key"] = "a983694d1b428f3e50e86c2c5f2ca963"',
    '<meta name="api-key" content="Wq7mZ2xLp9Kd2Rt5Yb8Nc3Vf6">', "  pass: 3qdXWPJx^#d8ut8pdq",
])
def test_name_rule_in_any_case_style(line):
    assert [k for k, _ in redacted(line)] == ["secret-assignment"], line


@pytest.mark.parametrize("line", [
    "  existingSecret: billing-redis", "  secretName: billing-tls", "token = tokenizer.next()",
    "password = getpass.getpass()", 'token: ${{ secrets.GITHUB_TOKEN }}', "apiKey: process.env.API_KEY,",
    'const tokenStorageKey = "billing.auth.token";', "  password: \"\"", 'password_hash = "$2b$12$abc"',
    'SPECIAL_TOKENS = {"bos_token": "<s>", "eos_token": "</s>"}', 'FAKE_TOKEN = "test-token"',
    'client.login(username="alice", password="wrong-password")', "def read(self, name, pwd=None):",
    '"stripeKey": "pk_live_' + "Wq7mZ2xLp9Kd2Rt5Yb8Nc3Vf6Gh1Jk4L" + '"', "    POSTGRES_PASSWORD: postgres",
    'apiToken = "abcdefgh123"', 'x = os.environ.get("API_TOKEN", "")', "  apiKey: \"{{ .Values.apiKey }}\"",
    "SECRET = os.environ['SECRET']", "password: <%= ENV['DB_PASSWORD'] %>", 'header = "X-API-Key"',
    'x = config["password"]', 'if d["password"] == pw:', '<meta name="csrf-token" content="Wq7mZ2xLp9Kd2Rt5Yb8Nc3Vf6">',
    'api_key = "REPLACE_WITH_YOUR_KEY"', 'password: "[PASSWORD]"', "    pass",
])
def test_name_rule_leaves_code_and_stand_ins_alone(line):
    assert clean(line), line


def test_literal_prefix():
    assert literal_prefix(r"hooks\.slack\.com/(?:services)") == "hooks.slack.com/"
    assert literal_prefix(r"glpat-[\w-]{20}") == "glpat-"
    assert literal_prefix(r"A{20,24}x") == ""
    assert literal_prefix(r"sk_(?:live)") == "sk_"


def _oracle_candidates(text: str) -> set[tuple]:
    """Every rule tried everywhere its literals occur, found with str.find (no automaton)."""
    out = set()
    for rule in RULES:
        if rule.needs and not any(lit in text for lit in rule.needs):
            continue
        if not rule.anchored:
            out |= {(s.start, s.end, s.kind) for m in rule.pattern.finditer(text) for s in rule.check(text, m)}
            continue
        starts = sorted({i for lit in rule.needs for i in _find_all(text, lit)})
        done = -1
        for pos in starts:
            if pos < done:
                continue
            m = rule.pattern.match(text, pos)
            if m is None:
                continue
            done = m.end()
            spans = list(rule.check(text, m))
            out |= {(s.start, s.end, s.kind) for s in spans}
            done = max(done, *(s.end for s in spans)) if spans else done
    return out


def _find_all(text: str, lit: str):
    i = text.find(lit)
    while i >= 0:
        yield i
        i = text.find(lit, i + 1)


_pieces = st.sampled_from(["password", "=", ": ", '"', "glpat-", "sk-", "://", "@", "é", "\n", " ", "AKIA",
                           "Wq7mZ2xLp9Kd2Rt5Yb8N", "npm_", "--token ", "kind: Secret\ndata:\n  a: ", "-us1"])


@settings(max_examples=200, deadline=None)
@given(st.lists(_pieces, max_size=30), st.integers(0, 2**32 - 1))
def test_the_one_pass_literal_search_finds_what_the_rules_would(pieces, seed):
    g = Gen(seed)
    text = "".join(pieces) + " " + g.github() + " " + g.slack_webhook()
    got = {(s.start, s.end, s.kind) for s in engine._candidates(text)}
    assert got == _oracle_candidates(text)
    assert all(k in KINDS for _, _, k in got)


@pytest.mark.parametrize("line", ["command: mariadbd --user=mysql", "apt install mariadbclient -y",
                                  "sudo systemctl restart mariadb-server"])
def test_a_mariadb_program_name_is_no_crash_and_no_finding(line):
    assert clean(line)  # every mariadb* name reads its password flag as mysql's


def test_a_mariadb_password_flag_is_found_like_mysqls():
    for tool in ("mariadb", "mariadb-dump", "mysql"):
        assert [k for k, _ in redacted(f"{tool} -uroot -pS3cr3tPassw0rd9 shop")] == ["cli-password"], tool


@pytest.mark.parametrize("digits", [8, 9, 10])
def test_telegram_bot_ids_of_eight_to_ten_digits_are_found(digits):
    bot_id = "1234567890"[:digits]
    line = f'bot = "{bot_id}:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1"'
    assert [k for k, _ in redacted(line)] == ["telegram-token"], line


def test_a_telegram_like_token_after_a_longer_number_is_left_alone():
    assert clean('ref = "123456789012:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1"')
