"""Unit tests for each scrub rule and for the engine's invariants.

Tokens are built at run time (seeded ``Gen`` or concatenation): no real-looking token is
committed. Each rule has positives (the secret is gone, the placeholder names the kind)
and negatives (the text comes back unchanged).
"""

from __future__ import annotations

import re
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codeseam.errors import ConfigError
from codeseam.scrub import ALLOW_FILE, KINDS, load_allow, mask, placeholder, scrub_text
from tests.support.secret_corpus import B62, Gen

G = Gen(7)
PH = re.compile(r"\[REDACTED:([a-z-]+)\]")


def redacted_kinds(text: str, **kw) -> list[str]:
    return [r.kind for r in scrub_text(text, **kw).redactions]


def assert_redacted(line: str, secret: str, kind: str) -> None:
    res = scrub_text(line)
    assert secret not in res.text, res.text
    assert placeholder(kind) in res.text, (line, res.text)
    assert kind in [r.kind for r in res.redactions]
    assert all(secret not in r.preview for r in res.redactions)


def assert_clean(line: str) -> None:
    res = scrub_text(line)
    assert res.text == line and res.redactions == (), (line, res.redactions)


# ------------------------------------------------------------------------ shape rules

@pytest.mark.parametrize("make", [Gen.openai] * 6)
def test_openai_keys(make):
    key = make(G)
    assert_redacted(f'client = OpenAI(api_key="{key}")', key, "openai-key")
    assert_redacted(f"key: {key}", key, "openai-key")


@pytest.mark.parametrize("line", [
    'disk_name = "disk-0123456789abcdefghijkl"',  # "sk-" inside a word
    '<li class="task-list-item-checkbox-container">',
    "OPENAI_API_KEY=sk-" + "x" * 48,  # placeholder
    "key = 'sk-your-api-key-goes-here-please'",
    "name = 'sk-learn-pipeline-and-more-stuff'",  # no digits, no upper case: not random
])
def test_openai_negatives(line):
    assert_clean(line)


def test_github_tokens_every_prefix():
    for prefix in ("gh" + "p_", "gh" + "o_", "gh" + "u_", "gh" + "s_", "gh" + "r_"):
        tok = prefix + G.mixed(B62, 36)
        assert_redacted(f'token = "{tok}"', tok, "github-token")
    pat = "github" + "_pat_" + G.mixed(B62, 22) + "_" + G.mixed(B62, 59)
    assert_redacted(f"GH_PAT={pat}", pat, "github-token")
    tok = "gh" + "p_" + G.mixed(B62, 36)
    assert_redacted(f"git remote add origin https://{tok}@github.com/acme/app.git", tok, "github-token")


@pytest.mark.parametrize("line", [
    "GITHUB_TOKEN=gh" + "p_" + "X" * 36,
    "ref = 'gh" + "p_" + "0123456789" * 3 + "abcdef'",  # no upper case: not random
    "sha = ghp_short123",
])
def test_github_negatives(line):
    assert_clean(line)


def test_slack_tokens():
    for _ in range(5):
        tok = G.slack()
        assert_redacted(f"SLACK_HOOK_CFG = '{tok}'", tok, "slack-token")
    assert_clean("SLACK_BOT_TOKEN=xox" + "b-your-bot-token")
    assert_clean("prefix = 'xox" + "b-'")


def test_aws_key_id_and_secret_next_to_it():
    key, secret = "AK" + "IA" + G.chars("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16), G.aws_secret()
    text = f"[default]\naws_access_key_id = {key}\nregion = eu-west-1\naws_secret_access_key = {secret}\n"
    res = scrub_text(text)
    assert key not in res.text and secret not in res.text
    assert sorted(r.kind for r in res.redactions) == ["aws-access-key-id", "aws-secret-key"]
    assert [r.line for r in res.redactions] == [2, 4]
    # same 40-char shape far from any key id, under a neutral name: left alone
    far = "\n" * 20 + f"blob = '{secret}'\n"
    assert secret in scrub_text(text + far).text
    # on the same line (Go static credentials)
    assert_redacted(f'creds := credentials.NewStaticCredentials("{key}", "{secret}", "")', secret, "aws-secret-key")


def test_aws_secret_by_name_alone():
    secret = G.aws_secret()
    for line in (f'aws_secret_access_key = "{secret}"', f"secretAccessKey: '{secret}'",
                 f'"SecretAccessKey": "{secret}"'):
        assert_redacted(line, secret, "aws-secret-key")


@pytest.mark.parametrize("line", [
    "AWS_ACCESS_KEY_ID=AK" + "IA" + "X" * 16,
    "AWS_ACCESS_KEY_ID=AK" + "IA" + "IOSFODNN7" + "EXAMPLE",  # AWS's documentation key
    "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY",
    "id = 'XAK" + "IA" + "ABCDEFGHIJKLMNOP'",  # inside a longer word
])
def test_aws_negatives(line):
    assert_clean(line)


def test_aws_git_sha_near_key_id_is_not_a_secret():
    key = "AK" + "IA" + G.chars("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)
    sha = G.hexs(40)
    res = scrub_text(f"key = '{key}'\ncommit = '{sha}'\n")
    assert sha in res.text and [r.kind for r in res.redactions] == ["aws-access-key-id"]


def test_jwt():
    for _ in range(3):
        tok = G.jwt()
        assert_redacted(f'curl -H "Authorization: Bearer {tok}" https://api.acme.dev', tok, "jwt")
    assert_clean('header = "eyJhbGciOiJIUzI1NiJ9"')  # one segment only
    assert_clean("// a JWT is header.payload.signature")


def test_private_key_block_keeps_its_lines():
    block = G.pem()
    text = "import os\nKEY = '''" + "\n".join(block) + "'''\nprint(KEY)\n"
    res = scrub_text(text)
    assert res.text.count("\n") == text.count("\n")
    out = res.text.split("\n")
    assert out[0] == "import os" and out[-2] == "print(KEY)"
    # every line of the block, BEGIN and END included, is a placeholder (plus what was around it)
    assert out[1] == "KEY = '''" + placeholder("private-key")
    assert all(line == placeholder("private-key") for line in out[2:len(block)])
    assert out[len(block)] == placeholder("private-key") + "'''"
    assert [(r.line, r.kind) for r in res.redactions] == [(2, "private-key")]
    assert "PRIVATE KEY" in res.redactions[0].preview and f"{len(block)} lines" in res.redactions[0].preview
    assert not any(body in res.text for body in block[1:-1])


def test_private_key_one_line_escaped_and_crlf():
    block = G.pem()
    one = '{"private_key": "' + "\\n".join(block) + '\\n", "type": "service_account"}'
    res = scrub_text(one)
    assert res.text == '{"private_key": "' + placeholder("private-key") + '\\n", "type": "service_account"}'
    crlf = "a\r\n" + "\r\n".join(block) + "\r\nb\r\n"
    res = scrub_text(crlf)
    assert res.text == "a\r\n" + "\r\n".join([placeholder("private-key")] * len(block)) + "\r\nb\r\n"


def test_private_key_truncated_block_and_markers():
    block = G.pem()[:-1]  # no END line
    res = scrub_text("\n".join(block) + "\nnext = 1\n")
    assert res.text.split("\n")[-2] == "next = 1"
    assert not any(body in res.text for body in block[1:])
    assert_clean('PEM_HEADER = "-----BEGIN PRIVATE KEY-----"\nPEM_FOOTER = "-----END PRIVATE KEY-----"\n')
    assert_clean("-----BEGIN PUBLIC KEY-----\n" + G.b64bytes(90) + "\n-----END PUBLIC KEY-----\n")


def test_emails():
    for _ in range(5):
        addr = G.email()
        assert_redacted(f"# Maintainer: Jane <{addr}>", addr, "email")
    assert_redacted("mailto:omar.khan@startup.io", "omar.khan@startup.io", "email")
    assert_redacted("contact = 'Müller.Jörg@acme-gmbh.de'", "Müller.Jörg@acme-gmbh.de", "email")


@pytest.mark.parametrize("line", [
    "jane.doe@example.com", "bob@example.org", "x@sub.example.net", "dev@foo.test",
    "user@corp.example", "a@b.invalid", "root@localhost", "admin@box.localhost",
    "@app.route('/login')", "y = x@W.T + b", "git clone git@github.com:acme/widgets.git",
    "scp build.tar deploy@build.acme-corp.com:/srv/", "import x from '@scope/pkg@1.2.3'",
    "see user@module.py", "Message-ID: <CAFoo.bar.baz@mail.gmail.com>",
    "<4FD05F05-F98B-44DC-8111-C6009C925F0C@gmail.com>",  # a generated id, not a person
    "https://user@host.acme-corp.com/path",
])
def test_email_negatives(line):
    assert_clean(line)


@pytest.mark.parametrize("number", [
    "+44 20 7946 0958", "+1 (415) 555-0132", "+49 30 1234567", "+33 1 23 45 67 89",
    "(415) 555-0132", "+90 212 555 12 34", "+1-202-555-0143", "+81 3-1234-5678", "+91 98765 43210",
])
def test_phone_numbers(number):
    assert_redacted(f"support: {number}", number, "phone")
    assert_redacted(f'PHONE="{number}"', number, "phone")


@pytest.mark.parametrize("line", [
    "415-555-0132",  # no +CC and no (area code): not a recognisable format on its own
    "tz = '+05:30'", "ts = '2024-01-15T10:30:00+01:00'", "build = '1.4.2+20240115.1234'",
    "ids = [+1, -2, +3]", "total = a +44 * b", "f(415) 555-0132", "isbn = '978-3-16-148410-0'",
    "x = y+12 345 678 90", "(123) 456-7890",  # area codes do not start with 0 or 1
    "+1 234", "version = '+0.5 1234 5678'",
])
def test_phone_negatives(line):
    assert_clean(line)


# ------------------------------------------------------------------------ the name rule

@pytest.mark.parametrize("template", [
    "DB_PASSWORD={v}", "export API_TOKEN={v}", 'export API_TOKEN="{v}"', "CLIENT_SECRET: {v}",
    '  "JWT_SECRET": "{v}",', "const SESSION_SECRET = '{v}';", 'export const WEBHOOK_SECRET: string = "{v}";',
    'SECRET_KEY = "{v}"', 'SECRET_KEY: str = "{v}"', 'const API_TOKEN = "{v}"', "API_TOKEN := `{v}`",
    "      - POSTGRES_PASSWORD={v}", "ENV STRIPE_API_KEY={v}", "REDIS_PASS={v}  # local only",
    "SECRET_KEY_BASE={v}", 'settings(DB_PASSWORD="{v}")', "MYSQL_ROOT_PASSWORD: '{v}'",
    "$env:API_TOKEN = '{v}'", "_PRIVATE_KEY = b'{v}'",
])
def test_name_rule_redacts_the_value_and_keeps_the_name(template):
    value = G.password() + G.chars(string.digits, 2)
    line = template.format(v=value)
    res = scrub_text(line)
    assert value not in res.text and [r.kind for r in res.redactions] == ["secret-assignment"]
    name = re.search(r"[A-Z][A-Z0-9_]*(?=[\"']?\s*[:=])", line).group()
    assert name in res.text and res.redactions[0].preview.startswith(name + "=")
    assert res.text == line.replace(value, placeholder("secret-assignment"))


@pytest.mark.parametrize("line", [
    "API_KEY = process.env.API_KEY", "  API_KEY: process.env.API_KEY,", 'API_KEY = os.environ["API_KEY"]',
    'SECRET_KEY = os.getenv("SECRET_KEY", "")', "  DB_PASSWORD: ${DB_PASSWORD}", 'export API_TOKEN="${API_TOKEN:-}"',
    "AUTH_TOKEN = get_token()", "AUTH_TOKEN=get_token()", "DB_PASSWORD: str", "SECRET: string;", "TOKEN: Token",
    "API_KEY = this.apiKey", "API_KEY: apiKey", "DB_PASSWORD = settings.DB_PASSWORD", "API_KEY = None",
    "PASSWORD_FIELD = 'password'", 'TOKEN_PARAM = "access_token"', 'API_KEY_HEADER = "X-API-Key"',
    'API_TOKEN = "https://auth.acme.dev/token"', "GOOGLE_APPLICATION_CREDENTIALS=/var/secrets/key.json",
    "OPENAI_API_KEY=your-api-key", "SECRET_KEY=change-me", "JWT_SECRET=xxx", "API_TOKEN=<token>",
    "DB_PASSWORD=***", 'API_KEY = "OPENAI_API_KEY"', 'USER_PASSWD = "%s:%s" % (user, passwd)',
    "PASSWORD_MIN_LENGTH = 12", "MAX_TOKENS = 4096", "if TOKEN == 'abcdefgh1':", "PRIMARY KEY (id)",
    "FOREIGN_KEY = 'user_id_fk1'", "FIRST_PASS = 'first_pass'", 'SEP_TOKEN = "[SEP]"', 'PAD_TOKEN = "<pad>"',
    "API_TOKEN: |", "apiToken = 'abcdefgh123'",  # not SCREAMING_SNAKE
    'DB_PASSWORD = ""', "  PASSWORD=password,", 'TOKEN = "abc"', 'API_KEY = f"{prefix}-{suffix}"',
    "API_TOKEN=[REDACTED:secret-assignment]",
])
def test_name_rule_negatives(line):
    assert_clean(line)


# ------------------------------------------------------------------------ the engine

def test_shape_wins_over_the_name_rule_on_the_same_value():
    tok = G.github()
    res = scrub_text(f"GITHUB_TOKEN={tok}")
    assert [r.kind for r in res.redactions] == ["github-token"]


def test_line_numbers_and_order():
    a, b = G.email(), G.openai()
    res = scrub_text(f"x\n\ny = '{a}'\n\nz = '{b}' and '{G.email()}'\n")
    assert [(r.line, r.kind) for r in res.redactions] == [(3, "email"), (5, "openai-key"), (5, "email")]


def test_allow_matches_the_secret_or_its_line():
    addr, key = G.email(), G.openai()
    text = f"owner = '{addr}'\nkey = '{key}'  # test fixture\n"
    assert redacted_kinds(text, allow=[re.escape(addr)]) == ["openai-key"]  # the matched text
    assert redacted_kinds(text, allow=[r"# test fixture$"]) == ["email"]  # the whole line
    assert redacted_kinds(text, allow=["^owner"]) == ["openai-key"]
    assert redacted_kinds(text, allow=["nothing-matches-this"]) == ["email", "openai-key"]
    with pytest.raises(ConfigError, match="invalid allow pattern"):
        scrub_text(text, allow=["(unclosed"])


def test_load_allow_reads_file_values_then_settings_regexes(tmp_path):
    (tmp_path / ALLOW_FILE).write_text("# comment\n\n  jane@acme.io  \nfixture-[0-9]+\nshort\n.*.*.*.*.*\n")
    allow = load_allow(tmp_path, ["from-config", "fixture-[0-9]+"])
    assert allow.literals == {"jane@acme.io", "fixture-[0-9]+"}  # values, never regexes
    assert allow.patterns == ("from-config", "fixture-[0-9]+")
    assert [w.split(": ", 1)[0] for w in allow.ignored] == [f"{ALLOW_FILE}:4", f"{ALLOW_FILE}:5", f"{ALLOW_FILE}:6"]
    assert "regex" in allow.ignored[0] and "shorter than 8" in allow.ignored[1] and "no letter" in allow.ignored[2]
    assert load_allow(tmp_path / "missing") == ()
    (tmp_path / ALLOW_FILE).write_text("ok\n[bad-but-a-value\n")
    assert load_allow(tmp_path).literals == {"[bad-but-a-value"}  # a repo line is never compiled
    with pytest.raises(ConfigError, match="settings"):
        load_allow(tmp_path / "missing", ["(bad"])
    with pytest.raises(ConfigError, match="RE2"):
        load_allow(tmp_path / "missing", ["(?<=x)y"])  # look-behind needs backtracking


def test_an_allow_file_value_leaves_only_that_exact_match(tmp_path):
    addr, other, key = G.email(), G.email(), G.openai()
    (tmp_path / ALLOW_FILE).write_text(f"{addr}\nkey = \n# test fixture\n")
    text = f"owner = '{addr}' or '{other}'\nkey = '{key}'  # test fixture\n"
    assert redacted_kinds(text, allow=load_allow(tmp_path)) == ["email", "openai-key"]


@pytest.mark.parametrize("secret", ["hunter2", "x", "", "a" * 11, "sk-" + "A1b2" * 12, "line\nbreak" * 3])
def test_mask_reveals_at_most_four_leading_chars(secret):
    m = mask(secret)
    shown = m.split("\u2026")[0]
    assert len(shown) <= 4 and len(shown) <= len(secret) // 6
    assert secret[:len(shown)] == shown and "\n" not in m and f"({len(secret)} chars)" in m


def test_every_rule_has_an_id_and_a_kind_and_reports_it():
    from codeseam.scrub.rules import RULES

    assert all(r.id and r.kind in KINDS for r in RULES)
    assert {"private-key", "openai-key", "github-token", "slack-token", "aws-access-key-id", "aws-secret-key",
            "jwt", "email", "phone", "secret-assignment"} <= set(KINDS)  # the kinds of issue 4 stay
    res = scrub_text("GITLAB=" + "glpat-" + "xK9mQ2vL7pR4tN8wZ3bY" + "\n")
    assert [(r.kind, r.rule) for r in res.redactions] == [("gitlab-token", "gitlab-pat")]


# ------------------------------------------------------------------------ properties

code_text = st.text(alphabet=st.sampled_from(list(string.printable) + ["é", "\u2028", "ß"]), max_size=400)


@settings(max_examples=150, deadline=None)
@given(code_text)
def test_line_count_kept_and_idempotent(text):
    res = scrub_text(text)
    assert res.text.count("\n") == text.count("\n")
    again = scrub_text(res.text)
    assert again.text == res.text and again.redactions == ()
    for r in res.redactions:
        assert 1 <= r.line <= text.count("\n") + 1 and r.kind in KINDS


@settings(max_examples=60, deadline=None)
@given(st.lists(code_text, min_size=2, max_size=4), st.integers(0, 2**32 - 1), st.sampled_from(
    ["openai", "github", "slack", "jwt", "email", "aws"]))
def test_planted_secret_never_survives(chunks, seed, kind):
    g = Gen(seed)
    secret = {"openai": g.openai, "github": g.github, "slack": g.slack, "jwt": g.jwt, "email": g.email,
              "aws": g.aws_id}[kind]()
    text = "\n".join(chunks[:1]) + f"\nvalue = '{secret}'\n" + "\n".join(chunks[1:])
    res = scrub_text(text)
    assert secret not in res.text
    assert res.text.count("\n") == text.count("\n")
