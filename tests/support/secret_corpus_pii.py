"""A labelled dev corpus for personal data with a check rule, credentials passed by position
and tokens inside URLs (issue 42, items 1 and 3), generated at run time from a seed.

Every value is drawn from a seeded ``random.Random``: card numbers get a real issuer prefix
and a computed Luhn digit, IBANs computed mod-97 check digits, SSNs and NINOs valid
area/group/serial and prefix letters, phone numbers an assigned country code. Nothing is a
real person's number or a real credential.

Per class (``CLASSES``): positives in several file types (Python, JS, Java, PHP, C#, Go,
shell, YAML, JSON, SQL, CSV, logs, .env, Markdown) and hard decoys: documented test values
(4242 4242 4242 4242, DE89 3704 0044 0532 0130 00, 078-05-1120 ...), invalid check digits,
order ids and timestamps, hashes, digit runs inside longer ones, phone-like numbers without
``+``, and for credentials variables, env reads, templates and placeholders.
"""

from __future__ import annotations

import re

from .corpus_pii_values import (IBAN_LENGTHS, ISSUERS, bad_luhn, card, e164, grouped, iban, labelled_ids, nino,
                                spaced, ssn)
from .corpus_tokens import B62, URLSAFE, Gen
from .secret_corpus import Doc

CLASSES = ("card-number", "iban", "national-id", "phone", "positional", "cli-flag", "url-token")
# the placeholder kinds a line of each class may be redacted as (a URL's token may be a
# provider's; a driver DSN's password is the URL or connection-string family's)
KINDS_OF = {"card-number": ("card-number",), "iban": ("iban",), "national-id": ("national-id",),
            "phone": ("phone",), "positional": ("cli-password", "url-credentials", "connection-string"),
            "cli-flag": ("cli-password",),
            "url-token": ("url-token", "telegram-token", "google-api-key", "facebook-token")}

# ------------------------------------------------------------------------------- files

Line = tuple[str, "str | None", bool]  # text, class (None: a negative), a hard decoy


def _doc(name: str, lines: list[Line]) -> Doc:
    labels = {i: cls for i, (_, cls, _) in enumerate(lines, 1) if cls}
    hard = sum(1 for _, cls, h in lines if h and not cls)
    return Doc(name.rsplit(".", 1)[-1], "\n".join(t for t, _, _ in lines) + "\n", labels, (), "pii", name, hard)


def _cards(g: Gen) -> list[Doc]:
    c = [card(g, i) for i in ISSUERS]
    v = [card(g) for _ in range(12)]
    pos: list[Line] = [
        (f'CARD_NUMBER = "{grouped(c[0])}"', "card-number", False),
        (f"    card_number: '{grouped(c[2], '-')}'", "card-number", False),
        (f'  "pan": "{c[3]}",', "card-number", False),
        (f"const amex = '{grouped(c[4])}';", "card-number", False),
        (f"String discover = \"{c[5]}\";", "card-number", False),
        (f"$jcb = '{grouped(c[6])}';", "card-number", False),
        (f"diners := \"{grouped(c[7])}\"", "card-number", False),
        (f"INSERT INTO payments (id, customer, card) VALUES (17, 'Jane Roe', '{c[8]}');", "card-number", False),
        (f"42,Jane Roe,{grouped(c[9])},12/27", "card-number", False),
        (f"2024-05-17T10:22:31Z INFO charge ok card={v[0]} amount=12.00", "card-number", False),
        (f"# customer paid with {grouped(v[1])} last week", "card-number", False),
        (f"cc = {v[2]}", "card-number", False),
        (f"| Jane Roe | {grouped(v[3], '-')} | gold |", "card-number", False),
        (f'card: "{grouped(v[4])}"', "card-number", False),
        (f"PAYMENT_CARD={v[5]}", "card-number", False),
    ]
    order = card(g)
    neg: list[Line] = [
        ('STRIPE_TEST = "4242 4242 4242 4242"', None, True),
        ("card = '4111 1111 1111 1111'", None, True),
        ("  number: 5555555555554444", None, True),
        ("amex_doc = '378282246310005'", None, True),
        ("card = '6011 1111 1111 1117'", None, True),
        (f"card_number = '{grouped(bad_luhn(v[6]))}'", None, True),  # check digit wrong
        (f"pan = {bad_luhn(v[7])}", None, True),
        (f"order_id = {order}", None, True),  # a Luhn-valid run named as an id
        (f"INSERT INTO orders VALUES ({card(g)}, 'shipped');", None, True),
        (f'  "orderNumber": "{card(g)}",', None, True),
        (f"userId = {card(g)}", None, True),
        (f'  "invoiceId": "{card(g)}",', None, True),
        (f"created_ms = {g.r.randint(1_600_000_000_000, 1_800_000_000_000)}", None, True),  # a timestamp
        (f"snowflake = {g.r.randint(10**17, 2 * 10**18)}", None, True),
        (f"digest = '{g.digits(40)}'", None, True),  # a longer run
        (f"sha = '{g.hexs(8)}{v[8]}{g.hexs(8)}'", None, True),  # inside a hex run
        (f"version = '{v[9][:1]}.{v[9][1:4]}.{v[9][4:8]}.{v[9][8:]}'", None, True),
        (f"phone_local = '{g.r.choice(['0', '00'])}{g.digits(14)}'", None, True),
        (f"ids = [{', '.join(g.digits(4) for _ in range(4))}]", None, True),
        (f"years = '{' '.join(str(g.r.randint(2000, 2030)) for _ in range(5))}'", None, True),
        (f"ratio = 0.{v[10]}", None, True),
        (f"offset = -{v[11]}", None, True),
        (f"uuid = '{g.uuid4()}'", None, True),
    ]
    return [_doc("pii/cards.txt", pos + neg)]


def _ibans(g: Gen) -> list[Doc]:
    pos: list[Line] = []
    forms = [lambda v: f'IBAN = "{v}"', lambda v: f"  iban: {spaced(v)}", lambda v: f'  "iban": "{spaced(v)}",',
             lambda v: f"payee_account={v}", lambda v: f"Please transfer to {spaced(v)} by Friday.",
             lambda v: f"INSERT INTO payees VALUES (3, 'Max Muster', '{v}');", lambda v: f"String iban = \"{v}\";",
             lambda v: f"$konto = '{spaced(v)}';"]
    for i, cc in enumerate(sorted(IBAN_LENGTHS)):
        pos.append((forms[i % len(forms)](iban(g, cc)), "iban", False))
    good = iban(g, "DE")
    wrong_check = good[:2] + f"{(int(good[2:4]) + 7) % 97 + 2:02d}" + good[4:]
    neg: list[Line] = [
        ('IBAN_EXAMPLE = "DE89 3704 0044 0532 0130 00"', None, True),
        ("iban: GB82 WEST 1234 5698 7654 32", None, True),
        ("  iban = 'GB29NWBK60161331926819'", None, True),
        ("iban = 'FR1420041010050500013M02606'", None, True),
        (f"iban = '{wrong_check}'", None, True),
        (f"iban = '{good[:-1]}'", None, True),  # too short for DE
        (f"iban = '{good}{g.r.randint(0, 9)}'", None, True),  # too long
        (f"PART_NO = 'DE{g.digits(2)}ABCDEFGHKLMNPQRS'", None, True),
        (f"CODE = 'AB{g.digits(2)}{g.digits(14)}'", None, True),  # no such country
        (f"sku = 'X{good}'", None, True),  # inside a longer word
    ]
    return [_doc("pii/ibans.md", pos + neg)]


def _national_ids(g: Gen) -> list[Doc]:
    s = [ssn(g) for _ in range(10)]
    n = [nino(g) for _ in range(5)]
    pos: list[Line] = [
        (f'ssn = "{s[0]}"', "national-id", False),
        (f"  ssn: {s[1]}", "national-id", False),
        (f'  "socialSecurityNumber": "{s[2]}",', "national-id", False),
        (f"INSERT INTO employees VALUES (7, 'John Roe', '{s[3]}', '1980-04-02');", "national-id", False),
        (f"7,John Roe,{s[4]},Sales", "national-id", False),
        (f"SSN: {s[5].replace('-', '')}", "national-id", False),
        (f"customer.ssn = '{s[6].replace('-', ' ')}'", "national-id", False),
        (f"String taxId = \"{s[7]}\";", "national-id", False),
        (f"2024-05-17 WARN verify failed for applicant {s[8]}", "national-id", False),
        (f"NI_NUMBER = '{n[0]}'", "national-id", False),
        (f"  national_insurance: {n[1][:2]} {n[1][2:4]} {n[1][4:6]} {n[1][6:8]} {n[1][8]}", "national-id", False),
        (f'  "nino": "{n[2]}",', "national-id", False),
        (f"employee.ni = \"{n[3]}\";", "national-id", False),
    ]
    forms = ("{label}: {v}", '  "{label}": "{v}",', "{label} = '{v}'", "| Jan de Vries | {label} {v} |")
    for i, (label, value) in enumerate(labelled_ids(g)):
        pos.append((forms[i % len(forms)].format(label=label, v=value), "national-id", False))
    area = g.r.randint(100, 665)
    neg: list[Line] = [
        ("ssn = '078-05-1120'", None, True),
        ("SSN_EXAMPLE = '219-09-9999'", None, True),
        ("ssn = '123-45-6789'", None, True),
        (f"ssn = '666-{g.r.randint(10, 99)}-{g.r.randint(1000, 9999)}'", None, True),
        (f"ssn = '9{g.digits(2)}-{g.r.randint(10, 99)}-{g.r.randint(1000, 9999)}'", None, True),
        (f"ssn = '000-{g.r.randint(10, 99)}-{g.r.randint(1000, 9999)}'", None, True),
        (f"ssn = '{area}-00-{g.r.randint(1000, 9999)}'", None, True),
        (f"ssn = '{area}-{g.r.randint(10, 99)}-0000'", None, True),
        (f"order = 'ORD-{s[9]}'", None, True),  # part of a longer dashed id
        (f"zip_plus4 = '{g.digits(9)}'", None, True),  # 9 digits, no SSN label
        (f"phone = '{g.r.randint(200, 899)}-{g.r.randint(200, 899)}-{g.r.randint(1000, 9999)}'", None, True),
        (f"date = '{g.r.randint(2000, 2030)}-{g.r.randint(1, 12):02d}-{g.r.randint(1000, 9999)}'", None, True),
        (f"build = '{g.r.randint(100, 999)}-{g.r.randint(10, 99)}-{g.r.randint(1000, 9999)}-{g.digits(3)}'",
         None, True),
        ("nino = 'QQ123456C'", None, True),  # HMRC's example
        (f"ni = 'BG{g.digits(6)}A'", None, True),  # not allocated
        (f"ni = 'DA{g.digits(6)}A'", None, True),  # D is never a first letter
        (f"ni = '{n[4][:8]}E'", None, True),  # suffix E
        (f"CLASS = 'X{n[4]}'", None, True),
        ("BSN: 111222333", None, True),  # the usual test BSN
        ("Steuer-ID: 86095742719", None, True),  # BZSt's example
    ]
    for label, value in labelled_ids(g):
        digits = value.replace(" ", "").replace("-", "")
        wrong = digits[:-1] + str((int(digits[-1]) + 1) % 10)
        neg.append((f"{label}: {wrong}", None, True))  # check digit wrong
        neg.append((f"record_no = {digits}", None, True))  # a valid number, no label
    return [_doc("pii/people.sql", pos + neg)]


def _phones(g: Gen) -> list[Doc]:
    p = [e164(g) for _ in range(12)]
    pos: list[Line] = [
        (f'SUPPORT_PHONE = "{p[0]}"', "phone", False),
        (f"  phone: '{p[1]}'", "phone", False),
        (f'  "mobile": "{p[2]}",', "phone", False),
        (f"<a href=\"tel:{p[3]}\">call us</a>", "phone", False),
        (f"contact = {p[4]}", "phone", False),
        (f"INSERT INTO contacts VALUES (9, 'Eva', '{p[5]}');", "phone", False),
        (f"9,Eva,{p[6]},Berlin", "phone", False),
        (f"2024-05-17 INFO sms sent to {p[7]}", "phone", False),
        (f"String hotline = \"{p[8]}\";", "phone", False),
        (f"# on call: {p[9]}", "phone", False),
        (f"twilio.messages.create(to='{p[10]}', body='hi')", "phone", False),
        (f"PHONE={p[11]}", "phone", False),
    ]
    neg: list[Line] = [
        (f"phone = '{p[0][1:]}'", None, True),  # phone-like, no +
        (f"local = '0{p[1][3:]}'", None, True),
        ("phone = '+1234567890'", None, True),  # typed
        ("phone = '+15555550123'", None, True),  # fiction (555-01XX)
        ("phone = '+447700900123'", None, True),  # Ofcom's drama range
        (f"x = '+214{g.digits(7)}'", None, True),  # no such country code
        (f"n = '+{g.digits(17)}'", None, True),  # too long
        (f"n = '+49{g.digits(3)}'", None, True),  # too short
        ("limit = 1e+10", None, True),
        (f"total = count+{g.digits(9)}", None, True),
        ("MAX = +2147483647", None, True),
        (f"v = '1.2.3+{g.digits(9)}'", None, True),
        (f"tz = '+0{g.r.randint(1, 9)}00'", None, True),
    ]
    return [_doc("pii/contacts.csv", pos + neg)]


_FIXTURE_LIKE = re.compile(r"(?i)test|fake|mock|demo|dummy|sample|example|invalid|wrong|bogus")


def _key(g: Gen, n: int, alphabet: str = B62) -> str:
    """A random key that does not happen to spell a fixture word (``...tEst...``)."""
    while True:
        v = g.mixed(alphabet, n)
        if not _FIXTURE_LIKE.search(v):
            return v


def _pw(g: Gen) -> str:
    return g.pick(g.password(), g.strong_password().replace("'", "").replace('"', ""), _key(g, 20))


def _positional(g: Gen) -> list[Doc]:
    pos: list[Line] = [
        (f'client = httpx.Client(auth=("svc", "{_pw(g)}"))', "positional", False),
        (f"r = requests.get(url, auth=('deploy', '{_pw(g)}'), timeout=5)", "positional", False),
        (f'session.auth = HTTPBasicAuth("admin", "{_pw(g)}")', "positional", False),
        (f"auth = aiohttp.BasicAuth('bot', '{_pw(g)}')", "positional", False),
        (f"$db = new PDO($dsn, 'shop', '{_pw(g)}');", "positional", False),
        (f'$link = mysqli_connect("db.internal", "shop", "{_pw(g)}", "shop");', "positional", False),
        (f"$m = new mysqli('localhost', 'app', '{_pw(g)}', 'app');", "positional", False),
        (f'Connection c = DriverManager.getConnection(url, "report", "{_pw(g)}");', "positional", False),
        (f'conn = pymysql.connect("db", "etl", "{_pw(g)}", "warehouse")', "positional", False),
        (f'var cred = new NetworkCredential("svc-build", "{_pw(g)}");', "positional", False),
        (f'client.Credentials = new NetworkCredential("mailer", "{_pw(g)}", "CORP");', "positional", False),
        (f'req.SetBasicAuth("metrics", "{_pw(g)}")', "positional", False),
        (f"const sequelize = new Sequelize('shop', 'shop', '{_pw(g)}', {{ dialect: 'mysql' }});", "positional",
         False),
        (f"server.login('alerts', '{_pw(g)}')", "positional", False),
        (f'String cred = Credentials.basic("ci", "{_pw(g)}");', "positional", False),
        (f'new PasswordAuthentication("proxy", "{_pw(g)}".toCharArray())', "positional", False),
        (f'db, err := sql.Open("mysql", "shop:{_key(g, 16)}@tcp(db:3306)/shop")', "positional", False),
        (f'pg_connect("host=db dbname=shop user=shop password={_key(g, 16)}");', "positional", False),
        (f"creds = pika.PlainCredentials('worker', '{_pw(g)}')", "positional", False),
        (f'auth := smtp.PlainAuth("", "alerts", "{_pw(g)}", "smtp.acme.io")', "positional", False),
        (f'    Auth: []ssh.AuthMethod{{ssh.Password("{_pw(g)}")}},', "positional", False),
        (f"ftp_login($conn, 'deploy', '{_pw(g)}');", "positional", False),
        (f"ftp = FTP('files.acme.io', 'deploy', '{_pw(g)}')", "positional", False),
    ]
    neg: list[Line] = [
        ('client = httpx.Client(auth=(user, password))', None, True),
        ('r = requests.get(url, auth=(USER, os.environ["API_PASSWORD"]))', None, True),
        ("session.auth = HTTPBasicAuth(settings.USER, settings.PASSWORD)", None, True),
        ("auth = HTTPBasicAuth('admin', 'password')", None, True),
        ("auth = HTTPBasicAuth('admin', 'changeme')", None, True),
        ("auth = HTTPBasicAuth('user', '<password>')", None, True),
        ("auth = HTTPBasicAuth('user', 'test')", None, True),
        ('auth = HTTPBasicAuth(user, f"{prefix}-{suffix}")', None, True),
        ("$db = new PDO($dsn, $user, $pass);", None, True),
        ("$db = new PDO($dsn, 'shop', getenv('DB_PASSWORD'));", None, True),
        ("$db = new PDO('sqlite:/tmp/app.db');", None, True),
        ('$link = mysqli_connect($host, $user, $password, $db);', None, True),
        ("Connection c = DriverManager.getConnection(url, user, System.getenv(\"DB_PASS\"));", None, True),
        ("Connection c = pool.getConnection();", None, True),
        ('var cred = new NetworkCredential(user, Environment.GetEnvironmentVariable("SMTP_PW"));', None, True),
        ('var cred = new NetworkCredential("svc", "${SMTP_PASSWORD}");', None, True),
        ("server.login(user, password)", None, True),
        ("page.login('Sign in', 'Welcome back')", None, True),
        ('db, err := sql.Open("mysql", os.Getenv("DSN"))', None, True),
        ('db, err := sql.Open("mysql", fmt.Sprintf("%s:%s@tcp(%s)/shop", u, p, h))', None, True),
        ("connect(host='db', user='admin', password=password)", None, True),
        ('pg_connect("host=db dbname=shop user=shop password=$PGPASS");', None, True),
        ("auth = ('GET', 'POST')", None, True),
        ("creds = pika.PlainCredentials(cfg.user, cfg.password)", None, True),
        ('Auth: []ssh.AuthMethod{ssh.Password(os.Getenv("SSH_PASSWORD"))},', None, True),
        ("ftp = FTP('files.acme.io')", None, True),
        ("ftp_login($conn, $user, $pass);", None, True),
        ('auth = HTTPBasicAuth("Benutzer", "Passwort")', None, True),  # i18n labels
        ('x.login("Utilisateur", "MotDePasse")', None, True),
    ]
    return [_doc("pii/clients.txt", pos + neg)]


def _cli(g: Gen) -> list[Doc]:
    pos: list[Line] = [
        (f"redis-server --requirepass {_key(g, 18)} --appendonly yes", "cli-flag", False),
        (f'    command: ["redis-server", "--requirepass", "{_key(g, 18)}"]', "cli-flag", False),
        (f"requirepass {_key(g, 20)}", "cli-flag", False),
        (f"masterauth {_key(g, 20)}", "cli-flag", False),
        (f"redis-cli -h cache -a {_key(g, 16)} ping", "cli-flag", False),
        (f"mongosh \"mongodb://db:27017/app\" -u admin -p {_key(g, 16)}", "cli-flag", False),
        (f"mongodump --host db -u backup -p '{_key(g, 16)}' --out /backup", "cli-flag", False),
        (f"ldapsearch -x -D 'cn=admin,dc=acme,dc=io' -w {_key(g, 14)} -b dc=acme,dc=io", "cli-flag", False),
        (f"keytool -importkeystore -srckeystore a.p12 -srcstorepass {_key(g, 14)} -destkeystore b.jks",
         "cli-flag", False),
        (f"rabbitmqctl add_user deploy {_key(g, 16)}", "cli-flag", False),
        (f"smbclient //files/share -U backup%{_key(g, 14)}", "cli-flag", False),
        (f"mysql -h db -u root -p{_key(g, 14)} shop < dump.sql", "cli-flag", False),
        (f"az login --service-principal -u http://ci -p {_key(g, 20)} --tenant acme", "cli-flag", False),
    ]
    neg: list[Line] = [
        ('redis-server --requirepass "$REDIS_PASSWORD"', None, True),
        ("redis-server --requirepass ${REDIS_PASSWORD:?}", None, True),
        ("# requirepass <your-password>", None, True),
        ("redis-cli -p 6379 ping", None, True),
        ("psql -h db -p 5432 -U app", None, True),
        ("ssh -p 2222 deploy@bastion", None, True),
        ("mongosh -u admin -p", None, True),
        ('mongosh -u "$MONGO_USER" -p "$MONGO_PASSWORD"', None, True),
        ("ldapsearch -x -W -b dc=acme,dc=io", None, True),
        ("keytool -list -storepass:env STOREPASS -keystore a.jks", None, True),
        ("rabbitmqctl add_user deploy \"$(cat /run/secrets/rmq)\"", None, True),
        ("tar -czf backup.tgz -p /data", None, True),
        ("./configure --prefix=/usr -p", None, True),
    ]
    return [_doc("pii/ops.sh", pos + neg)]


def _urls(g: Gen) -> list[Doc]:
    tg = g.telegram()
    pos: list[Line] = [
        (f'URL = "https://api.telegram.org/bot{tg}/sendMessage"', "url-token", False),
        (f"curl -s https://api.telegram.org/bot{g.telegram()}/getUpdates", "url-token", False),
        (f"fetch(`https://graph.facebook.com/v19.0/me?fields=id&access_token={g.facebook()}`)", "url-token",
         False),
        (f'requests.get("https://maps.googleapis.com/maps/api/geocode/json?address=x&key={g.google_api_key()}")',
         "url-token", False),
        (f'  "endpoint": "https://api.weather.io/v1/now?city=berlin&api_key={_key(g, 32)}",', "url-token",
         False),
        (f"GET https://gitlab.acme.io/api/v4/projects?private_token={_key(g, 20, URLSAFE)}", "url-token", False),
        (f"webhook: https://hooks.acme.io/ingest?token={g.hexs(40)}", "url-token", False),
        (f"const u = 'https://api.maps.io/tiles/{{z}}/{{x}}/{{y}}.png?key={_key(g, 24)}';", "url-token", False),
    ]
    neg: list[Line] = [
        ('URL = "https://api.telegram.org/bot${TELEGRAM_TOKEN}/sendMessage"', None, True),
        ('URL = f"https://api.telegram.org/bot{token}/sendMessage"', None, True),
        ("https://api.telegram.org/bot<token>/getMe", None, True),
        ("fetch(`https://graph.facebook.com/me?access_token=${accessToken}`)", None, True),
        ('url = "https://api.weather.io/v1/now?api_key=YOUR_API_KEY"', None, True),
        ('url = "https://api.weather.io/v1/now?key={api_key}"', None, True),
        ('url = "https://example.io/search?key=value&token=abc"', None, True),
        (f'url = "https://example.io/list?page_token={_key(g, 24)}"', None, True),
        ('redirect = "https://app.acme.io/cb?code=abc123&state=xyz"', None, True),
        (f"key = '?key={_key(g, 24)}'", None, True),  # not in a URL
        ('url = "https://cdn.acme.io/app.js?v=3f2a9c1b7e4d8a6f5c3b"', None, True),
        ("https://api.telegram.org/bot123/sendMessage", None, True),
        (f'const input = "https://example.com?key={_key(g, 40, URLSAFE)}";', None, True),  # a docs/test host
        (f"curl 'http://localhost:8080/v1/items?api_key={_key(g, 32)}'", None, True),
    ]
    return [_doc("pii/urls.js", pos + neg)]


def build_pii_corpus(seed: int) -> list[Doc]:
    g = Gen(seed)
    return [*_cards(g), *_ibans(g), *_national_ids(g), *_phones(g), *_positional(g), *_cli(g), *_urls(g)]
