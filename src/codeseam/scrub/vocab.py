"""Vocabularies the scrub rules use: data, kept apart from the code that reads it.

Change these to tune precision; every change is measured by the labelled corpus test
(tests/test_scrub_corpus.py) and the stdlib sweep (bench/bench_scrub.py).
"""

from __future__ import annotations

# Placeholder vocabulary: a value containing one of these is a stand-in, not a secret.
PLACEHOLDER_WORDS = (
    "your-", "your_", "yourapi", "yoursecret", "yourtoken", "yourpassword", "change-me",
    "change_me", "changeme", "changeit", "replace-me", "replace_me", "replaceme",
    "example", "placeholder", "dummy", "redacted", "xxxx", "***", "...", "\u2026",
    "<", ">", "{{", "}}", "-here", "_here", "replace", "insert-", "insert_", "enter-your", "enter_your",
    "put-your", "put_your", "fill-in", "fill_in", "not-set", "not_set", "notset",
)
# Whole values that carry no secret (compared lower-cased).
NON_VALUES = frozenset({
    "", "none", "null", "nil", "true", "false", "yes", "no", "on", "off", "undefined",
    "xxx", "secret", "password", "token", "changeme", "todo", "tbd", "fixme", "n/a", "test",
    "pass", "passwd", "pwd", "key", "apikey", "api_key", "admin", "root", "user", "default", "empty",
    "required", "optional", "string", "str", "hidden", "masked", "unset", "none provided",
    # well-known defaults of local services (a CI database, a dev broker): not secrets
    "postgres", "mysql", "mariadb", "guest", "redis", "rabbitmq", "mongo", "mongodb", "sa", "changeit",
    "letmein", "example", "sample", "demo", "local", "localdev", "dev", "development",
})
# A value made only of these words (split on _ - . space) names a field, it is not one:
# PASSWORD_FIELD = 'password', TOKEN_PARAM = "access_token", HEADER = "x-api-key".
FIELD_WORDS = frozenset({
    "password", "passwd", "pass", "pwd", "passphrase", "secret", "secrets", "token",
    "tokens", "key", "keys", "api", "apikey", "access", "auth", "authorization", "private",
    "client", "id", "refresh", "bearer", "session", "x", "header", "field", "name",
    "credential", "credentials", "user", "username", "login", "new", "old", "confirm",
    "current", "value", "input", "param", "env", "var", "my", "db", "app", "pw",
})
# Bare values after ``NAME:`` that are type names (``SECRET: string``), not literals.
TYPE_WORDS = frozenset({
    "str", "string", "bytes", "int", "integer", "number", "float", "bool", "boolean",
    "any", "unknown", "object", "text", "char", "varchar", "secretstr", "optional",
})

# ``KEY`` and ``PASS`` are too generic alone (PRIMARY KEY, FIRST_PASS, a dict key, a first
# pass): they count only with one of their qualifiers right before (api_key, signingKey,
# DB_PASS, RABBITMQ_DEFAULT_PASS).
KEY_QUALIFIERS = frozenset({
    "API", "ACCESS", "SECRET", "PRIVATE", "ENCRYPTION", "MASTER", "SIGNING", "SESSION",
    "AUTH", "CLIENT", "APP", "HMAC", "JWT", "WEBHOOK", "LICENSE", "SERVICE", "ACCOUNT",
    "CRYPT", "CIPHER", "AES", "SSH", "GPG", "PGP", "STRIPE", "SENDGRID", "MAILGUN",
    "ADMIN", "ROUTING", "INTEGRATION", "DEPLOY", "SERVER", "WRITE", "INGEST", "INSERT", "SDK",
    "SHARED", "PRESHARED", "LICENCE", "CONSUMER", "SUBSCRIPTION", "PRODUCT", "MAPS", "BROWSER",
    "TOKEN", "SIGNATURE", "VERIFY", "VERIFICATION", "ENCRYPT", "DECRYPT", "ENC", "MAC", "HASH",
    "SALT", "USER", "ORG", "PROJECT", "STORAGE_ACCOUNT", "ACCOUNT_ACCESS", "MASTER_ACCESS",
})
PASS_QUALIFIERS = frozenset({
    "DB", "DATABASE", "SMTP", "MAIL", "EMAIL", "REDIS", "MYSQL", "POSTGRES", "PG", "FTP",
    "SFTP", "LDAP", "ADMIN", "ROOT", "USER", "PROXY", "SSH", "SQL", "MONGO", "RABBITMQ",
    "AMQP", "KEYSTORE", "TRUSTSTORE", "BASIC", "HTTP", "AUTH", "APP", "API",
    "DEFAULT", "RABBIT", "REDISCLI", "BIND", "SMB", "VNC",
})

# Email: generic TLDs accepted as-is; any other two-letter TLD is a country code, except
# source-file extensions that no one uses for mail (``user@module.py``).
EMAIL_GTLDS = frozenset({
    "com", "org", "net", "edu", "gov", "mil", "int", "info", "biz", "name", "pro", "io",
    "ai", "app", "dev", "co", "me", "tech", "cloud", "xyz", "online", "site", "email",
    "museum", "aero", "coop", "jobs", "mobi", "travel", "asia", "cat", "tel", "post",
    "company", "systems", "solutions", "services", "network", "digital", "agency",
    "studio", "software", "global", "group", "team", "works", "zone", "tools", "ltd",
    "inc", "llc", "gmbh", "shop", "store", "live", "blog", "news", "berlin", "london",
    "nyc", "paris", "tokyo", "ist", "istanbul", "amsterdam", "consulting", "engineering",
})
NOT_CC_TLDS = frozenset({"py", "js", "ts", "go", "rb", "sh", "cs", "hs", "kt", "rs", "md"})
# RFC 2606 / 6761: documentation and test domains, left alone.
RESERVED_DOMAINS = ("example.com", "example.org", "example.net", "localhost",
                    # machine identities, not people: GCP service accounts
                    "gserviceaccount.com")
RESERVED_TLDS = frozenset({"test", "invalid", "example", "localhost"})
# Local parts that are service logins rather than a person (git@github.com:org/repo).
SERVICE_LOCALS = frozenset({"git", "hg", "svn"})
# Local parts that stand for "your address here" in forms and docs (you@company.com).
PLACEHOLDER_LOCALS = frozenset({"you", "your", "yourname", "your.name", "your-name", "your_name",
                                "youremail", "your.email", "your-email", "your_email", "someone",
                                "somebody", "firstname.lastname", "first.last", "name.surname",
                                "username", "user.name"})

# Name rule in any case style (assign.py). Secret words a name may end with; each is looked
# for as a literal in lower, Title and UPPER case (dbPassword, db_password, DB_PASSWORD ...).
PASSWORD_WORDS = ("password", "passwd", "passphrase", "pwd")
SECRET_WORDS = ("secret", "token", "apikey", "credentials", "credential")
# Names that end with a secret word but name a reference to a secret, not the secret:
# existingSecret, external_secret, secret_ref ... (checked on the words before the last).
REFERENCE_WORDS = frozenset({"existing", "external", "ref", "reference", "arn", "hashed", "hash",
                             "encrypted", "public", "publishable", "min", "max", "policy", "regex",
                             "pattern", "prompt", "placeholder", "label", "reset",
                             "forgot", "confirm", "show", "hide", "toggle", "input", "csrf", "xsrf",
                             "next", "page", "continuation", "cancel", "cancellation", "sync"})
# Names with no separator before the secret word that are still secret names.
COMPOUND_NAMES = frozenset({"PGPASSWORD", "PGPASS", "MYSQL_PWD", "REDISCLI_AUTH"})
# Values that mark a test fixture or a stand-in when a word of the value starts with them
# (only for the name-based rules; a provider-shaped token is a token wherever it is).
FIXTURE_WORDS = ("test", "fake", "dummy", "mock", "sample", "example", "invalid", "wrong", "bogus",
                 "notreal", "placeholder", "fixture", "redacted", "changeme")
# Values that are public by design though they sit under a key name (publishable keys).
PUBLIC_PREFIXES = ("pk_live_", "pk_test_", "pk.eyJ", "FLWPUBK", "pubkey-", "rzp_test_", "NRJS-",
                   "sb_publishable_", "ssh-rsa ", "ssh-ed25519 ", "ecdsa-sha2-")
# Tokens published in providers' documentation (and so known to everyone): never secrets.
DOC_EXAMPLES = frozenset({
    "AKIA" + "IOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY",
    "sk_test_" + "4eC39HqLyjWDarjtT1zdp7dc", "sk_test_" + "BQokikJOvBiI2HlWgH4olfQ2",
    "sk_test_" + "26PHem9AhJZvU623DfE1x4sd", "pk_test_" + "TYooMQauvdEDq54NiTphI7jx",
    "ghp_" + "16C7e42F292c6912E7710c838347Ae178B4a",  # GitHub docs
    "AIza" + "SyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe",  # Google Maps docs
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",  # the signature of jwt.io's example token
    "xoxb-" + "17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy",  # Slack docs
})
