"""The names-apart half of the format corpus (``secret_corpus_formats``): YAML block scalars,
TOML multi-line strings, Terraform variables, nested JSON/YAML keys, WordPress keys and salts,
each with positives in several layouts and hard decoys. Values drawn from a seeded ``Gen``.
"""

from __future__ import annotations

import string

from .corpus_tokens import B62, Gen
from .secret_corpus_formats import FormatDoc, Row, _doc, _host


def _salt(g: Gen) -> str:
    """A WordPress key or salt as its generator draws them: 64 printable characters."""
    alphabet = string.ascii_letters + string.digits + "!@#$%^&*()-_ []{}<>~`+=,.;:/?|"
    while True:
        s = g.chars(alphabet, 64)
        if s[0] != " " and s[-1] != " ":
            return s


def yaml_block_docs(g: Gen) -> list[FormatDoc]:
    a, b, c, plain = g.mixed(B62, 32), g.hexs(40), g.strong_password(), g.mixed(B62, 40)
    wrapped = g.b64bytes(72)
    half = len(wrapped) // 2
    rows: list[Row] = [
        ("slack:", ""),
        ("  api_secret: >-", ""),
        (f"    {a}", "+"),
        ('  channel: "#ops"', ""),
        ("gitlab:", ""),
        ("  private_token: |", ""),
        (f"    {b}", "+"),
        ("database:", ""),
        ("  DB_PASSWORD: >", ""),
        (f"      {c}", "+"),
        ("  signing_key: |-", ""),
        (f"    {wrapped[:half]}", "+"),
        (f"    {wrapped[half:]}", "+"),
        ("jobs:", ""),
        ("  deploy:", ""),
        ("    steps:", ""),
        ("      - run: |", ""),
        ('          echo "$API_SECRET" | docker login --password-stdin', "-"),
        ("  notify:", ""),
        ("    api_secret: >-", ""),
        ("      ${{ secrets.API_SECRET }}", "-"),
        ("    password_hint: |", ""),
        ("      Ask the on-call engineer for it.", "-"),
        ("    client_secret: |", ""),
        ("      your-client-secret-here", "-"),
        ("    token: >-", ""),
        ("      Use the deploy token from the vault", "-"),
        ("sentry:", ""),
        ("  auth_token:", ""),  # a plain scalar on the next line
        (f"    {plain}", "+"),
        ("  dsn_password:", ""),
        ("    ${SENTRY_DSN_PASSWORD}", "-"),
        ("  password:", "-"),  # null
        ("  org: acme", ""),
    ]
    return [_doc("yaml-block", g.pick("config/app.yaml", "helm/values.yml", "settings.yaml"), rows,
                 [a, b, c, wrapped[:half], wrapped[half:], plain])]


def toml_multiline_docs(g: Gen) -> list[FormatDoc]:
    a, b, c = g.mixed(B62, 40), g.hexs(40), g.strong_password()
    rows: list[Row] = [
        ("[oauth]", ""),
        ("client_secret = '''", ""),
        (f"{a}'''", "+"),
        ("[service]", ""),
        ('api_token = """', ""),
        (f"{b}", "+"),
        ('"""', ""),
        (f'db_password = """{c}"""', "+"),
        ('description = """', ""),
        ("Syncs orders from the shop", "-"),
        ('into the warehouse."""', "-"),
        ('token_help = """Paste your token here"""', "-"),
        ('api_key = """${API_KEY}"""', "-"),
        ("password_policy = '''", ""),
        ("at least 12 characters'''", "-"),
    ]
    return [_doc("toml-multiline", g.pick("config.toml", "settings/prod.toml"), rows, [a, b, c])]


def hcl_variable_docs(g: Gen) -> list[FormatDoc]:
    a, b, c, d = g.strong_password(), g.hexs(32), g.strong_password(), g.strong_password()
    rows: list[Row] = [
        (f'variable "db_password" {{ default = "{a}" }}', "+"),
        ('variable "datadog_api_key" {', ""),
        ("  type        = string", ""),
        ('  description = "Datadog API key"', "-"),
        (f'  default     = "{b}"', "+"),
        ("}", ""),
        ('variable "admin_creds" {', ""),
        ("  sensitive = true", ""),
        (f'  default   = "{c}"', "+"),
        ("}", ""),
        ('resource "aws_db_instance" "main" {', ""),
        ('  engine   = "postgres"', ""),
        (f'  password = "{d}"', "+"),
        ("}", ""),
        ('variable "db_password_rotated" {', ""),
        ("  type      = string", ""),
        ("  sensitive = true", "-"),
        ("}", ""),
        ('variable "smtp_password" { default = "" }', "-"),
        ('variable "region" { default = "eu-west-1" }', "-"),
        ('variable "api_key" { default = "changeme" }', "-"),
        ('variable "token_ttl" { default = "3600" }', "-"),
        ("variable \"password_length\" { default = 24 }", "-"),
        ('module "db" {', ""),
        ("  password = var.db_password", "-"),
        ("}", ""),
    ]
    return [_doc("hcl-variable", g.pick("terraform/variables.tf", "infra/main.tf"), rows, [a, b, c, d])]


def nested_key_docs(g: Gen) -> list[FormatDoc]:
    jwt_key, api_val, conn_pw = g.mixed(B62, 48), g.mixed(B62, 32), g.strong_password()
    json_rows: list[Row] = [
        ("{", ""),
        ('  "Logging": { "LogLevel": { "Default": "Information" } },', "-"),
        ("  // .NET reads JSON with comments and trailing commas: so does the scrubber", ""),
        ('  "Jwt": {', ""),
        (f'    "Key": "{jwt_key}",', "+"),
        ('    "Issuer": "https://auth.acme-corp.com",', "-"),
        ('    "Audience": "orders-api",', "-"),
        ('    "ExpiryMinutes": 60, /* minutes */', ""),
        ("  },", ""),
        ('  "ApiKey": {', ""),
        (f'    "value": "{api_val}",', "+"),
        ('    "header": "X-Api-Key"', "-"),
        ("  },", ""),
        ('  "Cache": { "Key": "orders-v2" },', "-"),
        ('  "Signing": { "Key": "your-256-bit-secret" },', "-"),
        ('  "ConnectionStrings": {', ""),
        (f'    "Orders": "Server=db;Database=orders;User Id=svc;Password={conn_pw};",', "+"),
        ('    "Local": "Server=(localdb)\\\\mssqllocaldb;Database=app;Trusted_Connection=True;"', "-"),
        ("  }", ""),
        ("}", ""),
    ]
    auth_pw, db_pass, stripe_key = g.strong_password(), g.strong_password(), g.mixed(B62, 32)
    flow_pw, block_key, compose_pw = g.mixed(B62, 20), g.mixed(B62, 44), g.password()
    yaml_rows: list[Row] = [
        ("auth:", ""),
        (f"  password: {auth_pw}", "+"),
        ("database:", ""),
        (f"  host: {_host(g)}", "-"),
        (f"  pass: {db_pass}", "+"),
        ("stripe:", ""),
        ("  api:", ""),
        (f"    key: {stripe_key}", "+"),
        ("cache:", ""),
        ("  key: orders-v2", "-"),
        ("primary:", ""),
        ("  key: id", "-"),
        ("backup:", ""),
        ("  auth:", ""),
        ("    password: ${BACKUP_PASSWORD}", "-"),
        ("signing:", ""),
        ("  key: /etc/keys/signing.pem", "-"),
        ("jwt: {key: '{{ .Values.jwt.key }}'}", "-"),
        (f"smtp: {{user: mailer, password: {flow_pw}, port: 587}}", "+"),  # a flow mapping
        ("ldap: {bind_dn: 'cn=svc', password: '${LDAP_PASSWORD}'}", "-"),
        ("Jwt:", ""),
        ("  Key: |", ""),
        (f"    {block_key}", "+"),
        ("  Issuer: https://auth.acme-corp.com", "-"),
        ("Webhook:", ""),
        ("  Key: >-", ""),
        ("    Read it from the vault, never commit it", "-"),
        ("steps:", ""),
        ("  - uses: docker/login-action@v3", ""),
        ("    with: {username: ci, password: '${{ secrets.REGISTRY_PASSWORD }}'}", "-"),
        ("  - uses: actions/cache@v4", ""),
        ("    with: {key: \"deps-${{ hashFiles('**/lockfile') }}\", path: ~/.cache}", "-"),
        ("services:", ""),
        ("  db:", ""),
        (f"    environment: {{POSTGRES_USER: orders, POSTGRES_PASSWORD: {compose_pw}}}", "+"),
        ("    healthcheck: {test: [CMD, pg_isready], interval: 5s}", "-"),
    ]
    return [_doc("nested-key", g.pick("appsettings.json", "src/Orders.Api/appsettings.Production.json"), json_rows,
                 [jwt_key, api_val, conn_pw]),
            _doc("nested-key", g.pick("config/settings.yaml", "app.yml"), yaml_rows,
                 [auth_pw, db_pass, stripe_key, flow_pw, block_key, compose_pw])]


_WP_KEYS = ("AUTH_KEY", "SECURE_AUTH_KEY", "LOGGED_IN_KEY", "NONCE_KEY", "AUTH_SALT", "SECURE_AUTH_SALT",
            "LOGGED_IN_SALT", "NONCE_SALT")


def wordpress_docs(g: Gen) -> list[FormatDoc]:
    salts = [_salt(g) for _ in _WP_KEYS]
    db_pw = g.strong_password()
    rows: list[Row] = [
        ("<?php", ""),
        ("define( 'DB_NAME', 'wordpress' );", "-"),
        ("define( 'DB_USER', 'wp' );", "-"),
        (f"define( 'DB_PASSWORD', '{db_pw}' );", "+"),
        ("define( 'DB_HOST', 'localhost' );", "-"),
        *((f"define( '{k}', {g.pick(' ', '')}'{s}' );", "+") for k, s in zip(_WP_KEYS, salts, strict=True)),
        ("define( 'AUTH_KEY', 'put your unique phrase here' );", "-"),
        ("define( 'SECURE_AUTH_SALT', 'replace-me-with-64-random-chars' );", "-"),
        ("define( 'NONCE_SALT', getenv( 'WP_NONCE_SALT' ) );", "-"),
        ("define( 'WP_DEBUG', false );", "-"),
        ("$table_prefix = 'wp_';", "-"),
    ]
    return [_doc("wordpress", "wp-config.php", rows, [db_pw, *salts])]


