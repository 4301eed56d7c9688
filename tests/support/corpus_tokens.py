"""Random values in the documented shapes of provider credentials (and of things that only
look like them), for the labelled corpus. Seeded: the same seed gives the same values.

Every value is drawn at run time from ``random.Random``: no committed file holds a token.
Prefixes are the providers' documented ones (GitHub ``ghp_``, GitLab ``glpat-``, npm
``npm_``, PyPI ``pypi-AgEIcHlwaS5vcmc``, Stripe ``sk_live_``, SendGrid ``SG.``, Slack
webhook URLs ...); lengths and alphabets follow the providers' docs and the public rule
sets of gitleaks/betterleaks and kingfisher.
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid

B62 = string.ascii_letters + string.digits
B64 = B62 + "+/"
URLSAFE = B62 + "-_"
B32 = string.ascii_uppercase + "234567"
HEX = "0123456789abcdef"
LOWER_ALNUM = string.ascii_lowercase + string.digits
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


class Gen:
    """Random values with the shapes of real secrets (and of things that are not)."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    # -- primitives -------------------------------------------------------------------------
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
        while True:
            s = self.chars(HEX, n)
            if n < 8 or (any(c.isdigit() for c in s) and any(c.isalpha() for c in s)):
                return s

    def b64bytes(self, n: int, alt: bytes = b"+/") -> str:
        return base64.b64encode(self.r.randbytes(n), altchars=alt).decode()

    def uuid4(self) -> str:
        return str(uuid.UUID(int=self.r.getrandbits(128), version=4))

    def pick(self, *options):
        return self.r.choice(options)

    # -- passwords and generic secrets -------------------------------------------------------
    def password(self) -> str:
        word = self.r.choice(["hunter", "Tr0ub4dor", "dragon", "Summer", "monkey", "P@ssw0rd", "Winter",
                              "Kx9vQ", "qwerty", "Sunshine", "Zebra", "Orion"])
        return word + self.r.choice(["", "!", "#", "&", "_", "$", "."]) + self.digits(self.r.randint(1, 4))

    def strong_password(self) -> str:
        while True:
            s = self.chars(B62, 1) + self.chars(B62 + "!#%^*-_=+.", self.r.randint(13, 23))
            if any(c.isupper() for c in s) and any(c.isdigit() for c in s) and any(c.islower() for c in s):
                return s

    def url_password(self) -> str:
        """A password as it stands in a URL: unreserved characters (others are percent-encoded)."""
        while True:
            s = self.chars(B62 + "-_.~!*", self.r.randint(12, 24))
            if any(c.isupper() for c in s) and any(c.isdigit() for c in s) and any(c.islower() for c in s):
                return s

    def credential(self) -> str:
        return self.r.choice([self.password(), self.mixed(B62, 32), self.hexs(40),
                              "django-insecure-" + self.mixed(B62 + "!@#%^&*(-_=+)", 50)])

    def hex_secret(self) -> str:
        return self.hexs(self.r.choice([32, 40, 64]))

    def b64_secret(self) -> str:
        return self.b64bytes(self.r.choice([24, 32, 48]))

    # -- VCS and CI --------------------------------------------------------------------------
    def github(self) -> str:
        choice = self.r.randrange(6)
        if choice == 5:
            return "github" + "_pat_" + self.mixed(B62, 22) + "_" + self.mixed(B62, 59)
        return "gh" + "pousr"[choice] + "_" + self.mixed(B62, 36)

    def gitlab(self) -> str:
        kind = self.r.randrange(8)
        if kind == 0:  # routable PAT (GitLab 17.x+): <random>.<version><base36 crc>
            return "glpat-" + self.mixed(URLSAFE, 27) + "." + "01" + "." + self.chars(LOWER_ALNUM, 9)
        if kind == 1:
            return "gldt-" + self.mixed(URLSAFE, 20)
        if kind == 2:
            return "glrt-" + self.mixed(URLSAFE, 20)
        if kind == 3:
            return "glptt-" + self.hexs(40)
        if kind == 4:
            return "GR1348941" + self.mixed(URLSAFE, 20)
        return "glpat-" + self.mixed(URLSAFE, 20)

    def gitlab_pat(self) -> str:
        return "glpat-" + self.mixed(URLSAFE, 20)

    def bitbucket_app_password(self) -> str:
        return "ATBB" + self.mixed(B62, 28) + self.hexs(8).upper()

    def atlassian(self) -> str:
        return "ATATT3xFfGF0" + self.mixed(URLSAFE, 180) + "=" + self.hexs(8).upper()

    def circleci(self) -> str:
        return self.pick("CCIPAT_", "CCIPRJ_") + self.mixed(B62, 22) + "_" + self.hexs(40)

    def buildkite(self) -> str:
        return "bkua_" + self.hexs(40)

    def sourcegraph(self) -> str:
        return "sgp_" + self.hexs(16) + "_" + self.hexs(40)

    def sonar(self) -> str:
        return self.pick("squ_", "sqp_", "sqa_") + self.hexs(40)

    # -- package registries ------------------------------------------------------------------
    def npm(self) -> str:
        return "npm_" + self.mixed(B62, 36)

    def pypi(self) -> str:
        return "pypi-AgEIcHlwaS5vcmc" + self.mixed(URLSAFE, self.r.randint(120, 170))

    def rubygems(self) -> str:
        return "rubygems_" + self.hexs(48)

    def nuget(self) -> str:
        return "oy2" + self.chars(LOWER_ALNUM, 43)

    def dockerhub(self) -> str:
        return "dckr_pat_" + self.mixed(URLSAFE, 27)

    def crates(self) -> str:
        return "cio" + self.mixed(B62, 32)

    def jfrog(self) -> str:
        return "AKCp" + self.mixed(B62, 69)

    def clojars(self) -> str:
        return "CLOJARS_" + self.chars(LOWER_ALNUM, 60)

    # -- cloud -------------------------------------------------------------------------------
    def aws_id(self) -> str:
        return self.r.choice(["AK" + "IA", "AS" + "IA"]) + self.chars(B32, 16)

    def aws_secret(self) -> str:
        return self.mixed(B64, 40)

    def google_api_key(self) -> str:
        return "AI" + "za" + self.mixed(URLSAFE, 35)

    def gcp_oauth_secret(self) -> str:
        return "GOCSPX-" + self.mixed(URLSAFE, 28)

    def google_refresh(self) -> str:
        return "1//0" + self.mixed(URLSAFE, 99)

    def google_access(self) -> str:
        return "ya29." + self.mixed(URLSAFE, 150)

    def azure_storage_key(self) -> str:
        return self.b64bytes(64)  # 88 chars, "==" at the end

    def azure_client_secret(self) -> str:
        return self.mixed(B62, 3) + str(self.r.randint(0, 9)) + "Q~" + self.mixed(B62 + "_~.-", 34)

    def azure_sas_sig(self) -> str:
        return self.b64bytes(32).replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")

    def digitalocean(self) -> str:
        return self.pick("dop_v1_", "doo_v1_", "dor_v1_") + self.hexs(64)

    def alibaba(self) -> str:
        return "LTAI" + self.mixed(B62, 20)

    def heroku(self) -> str:
        return "HRKU-AA" + self.mixed(URLSAFE, 58)

    def databricks(self) -> str:
        return "dapi" + self.hexs(32)

    def vault(self) -> str:
        return self.pick("hvs.", "hvs.", "hvb.") + "CAESI" + self.mixed(URLSAFE, 86)

    def terraform(self) -> str:
        return self.chars(LOWER_ALNUM, 14) + ".atlasv1." + self.mixed(URLSAFE, 67)

    def doppler(self) -> str:
        return self.pick("dp.pt.", "dp.st.", "dp.sa.") + self.mixed(B62, 43)

    def pulumi(self) -> str:
        return "pul-" + self.hexs(40)

    def cloudflare_origin_ca(self) -> str:
        return "v1.0-" + self.hexs(24) + "-" + self.hexs(146)

    def flyio(self) -> str:
        return "fo1_" + self.mixed(URLSAFE, 43)

    def supabase(self) -> str:
        return "sbp_" + self.hexs(40)

    def netlify(self) -> str:
        return "nfp_" + self.mixed(B62, 36)

    def tailscale(self) -> str:
        return "tskey-" + self.pick("auth", "api", "client") + "-k" + self.mixed(B62, 11) + "CNTRL-" + self.mixed(B62, 32)

    def openshift(self) -> str:
        return "sha256~" + self.mixed(URLSAFE, 43)

    # -- chat and webhooks -------------------------------------------------------------------
    def slack(self) -> str:
        kind = self.r.choice("baprs")
        if kind == "p":
            return ("xox" + "p-" + self.digits(12) + "-" + self.digits(12) + "-" + self.digits(13)
                    + "-" + self.hexs(32))
        return "xox" + kind + "-" + self.digits(12) + "-" + self.digits(13) + "-" + self.mixed(B62, 24)

    def slack_app(self) -> str:
        return "xapp-1-A" + self.chars(B32, 10) + "-" + self.digits(13) + "-" + self.hexs(64)

    def slack_webhook(self) -> str:
        return ("https://hooks.slack.com/services/T" + self.chars(B32[:26] + "0123456789", 8) + "/B"
                + self.chars(B32[:26] + "0123456789", 10) + "/" + self.mixed(B62, 24))

    def discord_webhook(self) -> str:
        host = self.pick("discord.com", "discordapp.com", "ptb.discord.com")
        return f"https://{host}/api/webhooks/{self.digits(19)}/{self.mixed(URLSAFE, 68)}"

    def teams_webhook(self) -> str:
        tenant = self.pick("acmecorp", "contoso", "northwind")
        return (f"https://{tenant}.webhook.office.com/webhookb2/{self.uuid4()}@{self.uuid4()}"
                f"/IncomingWebhook/{self.hexs(32)}/{self.uuid4()}")

    def telegram(self) -> str:
        return self.digits(10) + ":AA" + self.mixed(URLSAFE, 33)

    def discord_bot(self) -> str:
        return "M" + self.mixed(B62, 25) + "." + self.mixed(URLSAFE, 6) + "." + self.mixed(URLSAFE, 38)

    # -- payment -----------------------------------------------------------------------------
    def stripe(self) -> str:
        return self.pick("sk_live_", "rk_live_", "sk_live_") + self.mixed(B62, self.r.choice([24, 99]))

    def stripe_webhook(self) -> str:
        return "whsec_" + self.mixed(B62, 32)

    def square(self) -> str:
        return self.pick("sq0atp-" + self.mixed(URLSAFE, 22), "sq0csp-" + self.mixed(URLSAFE, 43),
                         "EAAA" + self.mixed(URLSAFE, 60))

    def braintree(self) -> str:
        return "access_token$production$" + self.chars(LOWER_ALNUM, 16) + "$" + self.hexs(32)

    def paypal_secret(self) -> str:
        return "E" + self.mixed(URLSAFE, 79)

    def shopify(self) -> str:
        return self.pick("shpat_", "shpss_", "shpca_", "shppa_") + self.hexs(32)

    def flutterwave(self) -> str:
        return "FLWSECK-" + self.hexs(32) + "-X"

    def plaid(self) -> str:
        return "access-production-" + self.uuid4()

    # -- email and SMS -----------------------------------------------------------------------
    def sendgrid(self) -> str:
        return "SG." + self.mixed(URLSAFE, 22) + "." + self.mixed(URLSAFE, 43)

    def mailgun(self) -> str:
        return self.pick("key-" + self.hexs(32), self.hexs(32) + "-" + self.hexs(8) + "-" + self.hexs(8))

    def mailchimp(self) -> str:
        return self.hexs(32) + "-us" + str(self.r.randint(1, 21))

    def twilio_key(self) -> str:
        return "SK" + self.hexs(32)

    def brevo(self) -> str:
        return "xkeysib-" + self.hexs(64) + "-" + self.mixed(B62, 16)

    def mailersend(self) -> str:
        return "mlsn." + self.hexs(64)

    # -- AI and SaaS APIs --------------------------------------------------------------------
    def openai(self) -> str:
        choice = self.r.randrange(3)
        if choice == 0:
            return "sk" + "-" + self.mixed(B62, 48)
        if choice == 1:
            return "sk-" + "proj-" + self.mixed(URLSAFE, 74) + "T3BlbkFJ" + self.mixed(URLSAFE, 74)
        return "sk-" + "svcacct-" + self.mixed(URLSAFE, 58) + "T3BlbkFJ" + self.mixed(URLSAFE, 58)

    def anthropic(self) -> str:
        return "sk-" + "ant-api03-" + self.mixed(URLSAFE, 93) + "AA"

    def huggingface(self) -> str:
        return "hf_" + self.chars(string.ascii_letters, 34)

    def groq(self) -> str:
        return "gsk_" + self.mixed(B62, 52)

    def replicate(self) -> str:
        return "r8_" + self.mixed(B62, 37)

    def perplexity(self) -> str:
        return "pplx-" + self.mixed(B62, 48)

    def xai(self) -> str:
        return "xai-" + self.mixed(B62, 80)

    def grafana(self) -> str:
        if self.r.random() < 0.5:
            return "glsa_" + self.mixed(B62, 32) + "_" + self.hexs(8)
        blob = json.dumps({"o": self.digits(6), "n": "deploy", "k": self.mixed(B62, 24), "m": {"r": "eu"}},
                          separators=(",", ":"))
        return "glc_" + base64.b64encode(blob.encode()).decode().rstrip("=")

    def sentry(self) -> str:
        return "sntryu_" + self.hexs(64)

    def newrelic(self) -> str:
        return self.pick("NRAK-" + self.chars(string.ascii_uppercase + string.digits, 27),
                         "NRII-" + self.mixed(URLSAFE, 32))

    def linear(self) -> str:
        return "lin_api_" + self.mixed(B62, 40)

    def postman(self) -> str:
        return "PMAK-" + self.hexs(24) + "-" + self.hexs(34)

    def notion(self) -> str:
        return self.pick("ntn_" + self.digits(11) + self.mixed(B62, 35), "secret_" + self.mixed(B62, 43))

    def airtable(self) -> str:
        return "pat" + self.mixed(B62, 14) + "." + self.hexs(64)

    def figma(self) -> str:
        return "figd_" + self.mixed(URLSAFE, 40)

    def hubspot(self) -> str:
        return "pat-" + self.pick("na1", "eu1") + "-" + self.uuid4()

    def dynatrace(self) -> str:
        up = string.ascii_uppercase + string.digits
        return "dt0c01." + self.chars(up, 24) + "." + self.chars(up, 64)

    def easypost(self) -> str:
        return "EZAK" + self.hexs(54)

    def contentful(self) -> str:
        return "CFPAT-" + self.mixed(URLSAFE, 43)

    def mapbox_secret(self) -> str:
        return "sk.eyJ1Ijoi" + self.mixed(B62, 30) + "." + self.mixed(URLSAFE, 22)

    def facebook(self) -> str:
        return "EAA" + self.pick("B", "G", "J") + self.mixed(B62, 160)

    def dropbox(self) -> str:
        return "sl." + self.pick("u.", "B") + self.mixed(URLSAFE, 138)

    def fcm(self) -> str:
        return "AAAA" + self.mixed(URLSAFE, 7) + ":APA91b" + self.mixed(URLSAFE, 134)

    def onepassword(self) -> str:
        return "ops_eyJ" + self.mixed(B64, 260)

    def age(self) -> str:
        return "AGE-SECRET-KEY-1" + self.chars(BECH32, 58)

    def twitter_bearer(self) -> str:
        return "A" * 22 + self.mixed(B62, 22) + "%3D" + self.mixed(B62, 52)

    # -- the long tail (one format each) ----------------------------------------------------
    def adafruit(self) -> str:
        return "aio_" + self.mixed(B62, 28)

    def deno(self) -> str:
        return self.pick("ddp_", "ddo_") + self.mixed(B62, 36)

    def docker_swarm(self) -> str:
        return "SWMTKN-1-" + self.chars(LOWER_ALNUM, 50) + "-" + self.chars(LOWER_ALNUM, 25)

    def duffel(self) -> str:
        return "duffel_live_" + self.mixed(URLSAFE, 43)

    def elevenlabs(self) -> str:
        return "sk_" + self.hexs(48)

    def frameio(self) -> str:
        return "fio-u-" + self.mixed(URLSAFE, 64)

    def gocardless(self) -> str:
        return "live_" + self.mixed(URLSAFE, 40)

    def infracost(self) -> str:
        return "ico-" + self.mixed(B62, 32)

    def langsmith(self) -> str:
        return "lsv2_" + self.pick("pt", "sk") + "_" + self.hexs(32) + "_" + self.hexs(10)

    def neon(self) -> str:
        return "napi_" + self.chars(LOWER_ALNUM, 64)

    def nvidia(self) -> str:
        return "nvapi-" + self.mixed(URLSAFE, 64)

    def octopus(self) -> str:
        return "API-" + self.chars(string.ascii_uppercase + string.digits, 26)

    def packagist(self) -> str:
        return "packagist_" + self.pick("ort", "out") + "_" + self.hexs(68)

    def pinecone(self) -> str:
        return "pcsk_" + self.mixed(B62, 6) + "_" + self.mixed(B62 + "_", 60)

    def planetscale(self) -> str:
        return "pscale_" + self.pick("tkn", "pw") + "_" + self.mixed(URLSAFE, 43)

    def prefect(self) -> str:
        return "pnu_" + self.mixed(B62, 36)

    def readme(self) -> str:
        return "rdme_" + self.chars(LOWER_ALNUM, 70)

    def render(self) -> str:
        return "rnd_" + self.mixed(B62, 32)

    def shippo(self) -> str:
        return "shippo_live_" + self.hexs(40)

    def tavily(self) -> str:
        return "tvly-" + self.pick("", "dev-") + self.mixed(B62, 32)

    def typeform(self) -> str:
        return "tfp_" + self.mixed(B62, 44) + "_" + self.mixed(B62, 14)

    def zapier(self) -> str:
        return f"https://hooks.zapier.com/hooks/catch/{self.digits(7)}/{self.chars(LOWER_ALNUM, 7)}/"

    def jwt(self, alg: str | None = None) -> str:
        def enc(obj: object) -> str:
            return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")
        claims = {"sub": self.digits(10), "name": self.r.choice(["Ada", "Linus", "Grace"]),
                  "iat": self.r.randint(1_600_000_000, 1_800_000_000)}
        sig = base64.urlsafe_b64encode(self.r.randbytes(32)).decode().rstrip("=")
        return (enc({"alg": alg or self.r.choice(["HS256", "RS256"]), "typ": "JWT"}) + "." + enc(claims)
                + "." + sig)

    def k8s_sa_token(self) -> str:
        def enc(obj: object) -> str:
            return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).decode().rstrip("=")
        head = {"alg": "RS256", "kid": self.mixed(URLSAFE, 43)}
        body = {"iss": "kubernetes/serviceaccount", "kubernetes.io/serviceaccount/namespace": "ci",
                "sub": "system:serviceaccount:ci:deployer"}
        return enc(head) + "." + enc(body) + "." + base64.urlsafe_b64encode(self.r.randbytes(256)).decode().rstrip("=")

    def pem(self, kind: str | None = None) -> list[str]:
        kind = kind if kind is not None else self.r.choice(["RSA ", "EC ", "", "OPENSSH ", "ENCRYPTED "])
        body = self.b64bytes(self.r.randint(300, 900))
        width = 70 if kind == "OPENSSH " else 64
        lines = [body[i:i + width] for i in range(0, len(body), width)]
        return [f"-----BEGIN {kind}PRIVATE KEY-----", *lines, f"-----END {kind}PRIVATE KEY-----"]

    def pem_b64(self) -> str:
        """A PEM private key, base64-encoded whole (kubeconfig client-key-data, k8s tls.key)."""
        return base64.b64encode("\n".join(self.pem("RSA ")).encode()).decode()

    def cert_b64(self) -> str:
        body = self.b64bytes(600)
        pem = "-----BEGIN CERTIFICATE-----\n" + "\n".join(body[i:i + 64] for i in range(0, len(body), 64)) \
              + "\n-----END CERTIFICATE-----\n"
        return base64.b64encode(pem.encode()).decode()

    def docker_auth(self) -> str:
        return base64.b64encode(f"ci-bot:{self.strong_password()}".encode()).decode()

    def b64_of(self, value: str) -> str:
        return base64.b64encode(value.encode()).decode()

    # -- personal data -----------------------------------------------------------------------
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

    # -- look-alikes (hard negatives) --------------------------------------------------------
    def sha1(self) -> str:
        return self.chars(HEX, 40)

    def sha256(self) -> str:
        return self.chars(HEX, 64)

    def sri(self) -> str:
        return self.pick("sha384-" + self.b64bytes(48), "sha512-" + self.b64bytes(64), "sha256-" + self.b64bytes(32))

    def png_data_uri(self) -> str:
        return "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA" + self.b64bytes(self.r.randint(60, 160))

    def woff_data_uri(self) -> str:
        return "data:font/woff2;base64,d09GMgABAAAAA" + self.b64bytes(self.r.randint(120, 240))

    def stripe_publishable(self) -> str:
        return "pk_live_" + self.mixed(B62, 99)

    def mapbox_public(self) -> str:
        return "pk.eyJ1Ijoi" + self.mixed(B62, 30) + "." + self.mixed(URLSAFE, 22)

    def twilio_sid(self) -> str:
        return "AC" + self.hexs(32)

    def sentry_dsn(self) -> str:
        return f"https://{self.hexs(32)}@o{self.digits(6)}.ingest.sentry.io/{self.digits(7)}"

    def ga_id(self) -> str:
        return "G-" + self.chars(string.ascii_uppercase + string.digits, 10)

    def bcrypt(self) -> str:
        return "$2b$12$" + self.chars(B62 + "./", 53)

    def ssh_public(self) -> str:
        return "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + self.b64bytes(32)[:43] + " deploy@ci"

    def docker_digest(self) -> str:
        return "sha256:" + self.sha256()

    def semver_build(self) -> str:
        return f"{self.r.randint(0, 9)}.{self.r.randint(0, 30)}.{self.r.randint(0, 99)}+{self.hexs(7)}"
