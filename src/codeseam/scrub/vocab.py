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

# Personal data (personal.py). IBAN length per country (ISO 13616, the SWIFT IBAN registry).
IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BI": 27,
    "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27, "DK": 18, "DO": 28,
    "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
    "GL": 18, "GR": 27, "GT": 28, "HN": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
    "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21,
    "LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28,
    "NL": 18, "NO": 15, "OM": 23, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22,
    "RU": 33, "SA": 24, "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25,
    "SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}
# ITU-T E.164 country calling codes in use (a leading + and one of these).
PHONE_COUNTRY_CODES = frozenset(str(n) for n in (
    1, 7, 20, 27, 30, 31, 32, 33, 34, 36, 39, 40, 41, 43, 44, 45, 46, 47, 48, 49, 51, 52, 53, 54, 55, 56, 57, 58,
    60, 61, 62, 63, 64, 65, 66, 81, 82, 84, 86, 90, 91, 92, 93, 94, 95, 98, 211, 212, 213, 216, 218, 290, 291,
    297, 298, 299, 420, 421, 423, 670, 850, 852, 853, 855, 856, 870, 880, 886, 998,
    *range(220, 259), *range(260, 270), *range(350, 360), *range(370, 384), 385, 386, 387, 389,
    *range(500, 510), *range(590, 600), *range(672, 684), *range(685, 693), *range(960, 969),
    *range(970, 978), *range(992, 997)))
# Documented test values: card networks' and payment providers' test numbers, the ECB and
# Wikipedia example IBANs, famous published SSNs, HMRC's example NINOs (digits only, no spaces).
PII_EXAMPLES = frozenset({
    # cards (Stripe, Adyen, Braintree, PayPal, the networks' docs)
    "4242424242424242", "4111111111111111", "4000056655665556", "4012888888881881", "4222222222222",
    "4917610000000000", "4988438843884305", "4462030000000000", "4444333322221111", "4035501000000008",
    "4005519200000004", "4009348888881881", "4012000033330026", "4012000077777777", "4217651111111119",
    "4500600000000061", "4000000000000002", "4000000000009995", "4000002500003155", "4000000000003220",
    "5555555555554444", "2223003122003222", "5200828282828210", "5105105105105100", "5454545454545454",
    "2222400070000005", "5577000055770004", "5431111111111111", "5500000000000004", "5425233430109903",
    "2223000048410010", "5019717010103742", "6759649826438453", "6304000000000000",
    "378282246310005", "371449635398431", "378734493671000", "340000000000009", "370000000000002",
    "6011111111111117", "6011000990139424", "6011601160116611", "6445644564456445", "6011000000000004",
    "3056930009020004", "36227206271667", "30569309025904", "38520000023237", "36006666333344",
    "3566002020360505", "3530111333300000", "3566111111111113", "3528000700000000",
    "6200000000000005", "6205500000000000004", "6250941006528599", "6221260000000000",
    "6331101999990016", "5610591081018250", "2200000000000004",
    # IBANs (ECB, Wikipedia, the banks' own examples)
    "DE89370400440532013000", "GB82WEST12345698765432", "GB29NWBK60161331926819", "GB33BUKB20201555555555",
    "FR1420041010050500013M02606", "FR7630006000011234567890189", "NL91ABNA0417164300",
    "NL02ABNA0123456789", "BE68539007547034", "BE71096123456769", "CH9300762011623852957",
    "CH5604835012345678009", "ES9121000418450200051332", "ES7921000813610123456789",
    "IT60X0542811101000000123456", "AT611904300234573201", "AT483200000012345864",
    "PL61109010140000071219812874", "SE4550000000058398257466", "NO9386011117947", "DK5000400440116243",
    "FI2112345600000785", "IE29AIBK93115212345678", "PT50000201231234567890154", "LU280019400644750000",
    "GR1601101250000000012300695", "DE02120300000000202051", "DE75512108001245126199",
    "DE12500105170648489890", "CZ6508000000192000145399", "HU42117730161111101800000000",
    "SK3112000000198742637541", "SI56263300012039086", "HR1210010051863000160", "LT121000011101001000",
    "LV80BANK0000435195001", "EE382200221020145685", "IS140159260076545510730339",
    # SSNs: Woolworth's wallet card, the 1940s ad card, LifeLock's, the usual stand-ins
    "078-05-1120", "219-09-9999", "457-55-5462", "123-45-6789", "111-22-3333", "001-01-0001",
    # national IDs' published examples: Steuer-ID (BZSt), SIN (canada.ca), PESEL, NIR, personnummer
    "86095742719", "046454286", "111222333", "44051401359", "255081416802538", "8112189876", "4405140135",
    # UK NINOs in HMRC's and others' docs
    "QQ123456C", "AB123456C", "AB123456A", "AA123456A", "AA123456C", "JG103759A", "SR000000A",
    # phones: ITU's and the UK's and Germany's ranges for drama and docs
    "447700900000", "447700900123", "4930901820", "15555550100",
})
