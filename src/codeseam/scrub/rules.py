"""The scrubber's rules, as data: one ``Rule`` per shape, plus the vocabularies they use.

A rule is a compiled pattern, the literals it is found by (``needs``), and a ``check`` that
looks at one match in context and returns the spans to redact (possibly none). The engine
finds every literal of every rule in one Aho-Corasick pass over the text. An ``anchored``
rule's pattern starts with one of its literals and is tried only where one is (``match`` at
each hit); any other rule runs its pattern over the whole text, and only when one of its
literals occurs (single characters are tested with ``in``). Boundaries are checked in
``check``, not with look-behinds.

Families (the ``<kind>`` in ``[REDACTED:<kind>]``; the rule id, finer, is in ``Redaction.rule``)::

    private-key        PEM blocks BEGIN to END (every line), base64-encoded PEM, PuTTY keys
    cloud              aws-access-key-id, aws-secret-key, google-api-key, google-oauth,
                       gcp-service-account (private_key_id), azure-storage-key, azure-sas,
                       azure-client-secret, digitalocean-token, alibaba-key, heroku-key,
                       databricks-token, vault-token, terraform-token, doppler-token,
                       pulumi-token, cloudflare-key, flyio-token, supabase-token, ...
    VCS and CI         github-token, gitlab-token, bitbucket-token, atlassian-token,
                       circleci-token, buildkite-token, sourcegraph-token, sonar-token, ...
    registries         npm-token, pypi-token, rubygems-token, nuget-key, dockerhub-token,
                       crates-token, jfrog-token, clojars-token, packagist-token, ...
    chat, webhooks     slack-token, slack-webhook, discord-webhook, teams-webhook,
                       telegram-token, zapier-webhook
    payment            stripe-key, square-token, braintree-token, shopify-token, ...
    email and SMS      sendgrid-key, mailgun-key, mailchimp-key, twilio-key, brevo-key, ...
    AI and SaaS        openai-key, anthropic-key, huggingface-token, groq-key, ...
    jwt                header.payload.signature, both JSON parts base64url ("eyJ")
    generic            secret-assignment (a literal under a secret name, any case style),
                       url-credentials (scheme://user:PASSWORD@host), cli-password
                       (--password X, mysql -pX, curl -u user:X, PASSWORD 'X'), auth-header
                       (Bearer/Basic literals), connection-string (;Password=X;),
                       k8s-secret (data of a kind: Secret, decoded and scanned), docker-auth
                       ("auth": base64), yaml-block-secret, multiline-string-secret,
                       hcl-variable-secret, wordpress-salt (name and value apart: multiline.py)
    credential files   (``formats.py``, with ``scrub_text(path=...)``) netrc, pgpass,
                       git-credentials, pypirc (kind credential-file), docker-config-file
                       (docker-auth), nested-key (secret-assignment: Jwt.Key in JSON/YAML)
    personal data      email, phone (separated, or E.164 without separators), card-number
                       (issuer range + Luhn), iban (country length + mod 97), national-id
                       (US SSN area/group/serial rules, UK NINO prefix rules): personal.py;
                       BSN, Steuer-ID, Aadhaar, SIN, personnummer, PESEL, NIR under their label
                       and with their check digit: nationalid.py

``providers.py`` holds the provider token table; ``generic.py`` and ``assign.py`` the
generic checks; ``shapes.py`` the core shape checks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import generic, inurl, k8s, multiline, nationalid, personal, positional, shapes
from .assign import assignment_check, name_literals
from .providers import PROVIDERS
from .shapes import Check, Span

__all__ = ["KINDS", "RULES", "RULES_VERSION", "Rule", "Span"]

# Bump when a change to the rules or vocabularies changes what gets redacted, so an index
# built with older rules can be told apart (and re-scrubbed) by its pipeline fingerprint.
RULES_VERSION = "5"  # 5: card numbers, IBANs, SSN/NINO, E.164 phones, positional credentials; name and value
# apart (block scalars, multi-line strings, HCL, WordPress salts), decoded Secret values scanned by the rules;
# with a path: credential files read by format


@dataclass(frozen=True)
class Rule:
    id: str  # reported per finding (``codeseam scrub --json``): "gitlab-pat", "url-credentials"
    kind: str
    pattern: re.Pattern[str]
    check: Check
    # the rule runs only when the text contains one of these; () = always
    needs: tuple[str, ...] = ()
    # the pattern starts with one of ``needs``: tried only where one occurs
    anchored: bool = False


_DOMAIN = r"(?P<domain>[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+)"
_META = set("[](){}.*+?|^$\\")


def literal_prefix(regex: str) -> str:
    """The literal characters a regex starts with (``hooks\\.slack\\.com/`` -> ``hooks.slack.com/``)."""
    out, i = [], 0
    while i < len(regex):
        c = regex[i]
        if c == "\\" and i + 1 < len(regex) and not regex[i + 1].isalnum():
            c, step = regex[i + 1], 2
        elif c in _META:
            break
        else:
            step = 1
        if i + step < len(regex) and regex[i + step] in "{*+?":
            break  # the character is quantified: not part of every match
        out.append(c)
        i += step
    return "".join(out)


def _provider_rules() -> list[Rule]:
    rules = []
    for p in PROVIDERS:
        anchors = p.anchors or (() if p.needs else (literal_prefix(p.regex),))
        assert p.needs or all(len(a) >= 2 for a in anchors), p.id
        body = p.body if p.body is not None else 0 if p.group else len(literal_prefix(p.regex))
        # a mixed-case alphabet drawn at random holds upper, lower and digits (P(no upper in
        # 20 base62 characters) = 3e-5): a body without all three was typed, not drawn
        mixed = all(r in p.regex for r in ("A-Z", "a-z", "0-9"))
        check = shapes.provider_check(
            p.kind, body, group=p.group, back=re.compile(p.back) if p.back else None, back_max=p.back_max,
            min_classes=p.classes or (3 if mixed else 2), right=p.right, b64_left=p.b64_left, left=p.left,
            back_fixed=p.back_fixed)
        rules.append(Rule(p.id, p.kind, re.compile(p.regex), check, p.needs or anchors, anchored=not p.needs))
    return rules


def _case_variants(*words: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v for w in words for v in (w, w.lower(), w.upper(), w.title())))


_CORE: tuple[Rule, ...] = (
    Rule("private-key", "private-key", re.compile(r"-----BEGIN ([A-Z0-9 ]{0,64})PRIVATE KEY(?: BLOCK)?-----"),
         shapes.pem_check, needs=("-----BEGIN",), anchored=True),
    Rule("private-key-base64", "private-key", re.compile(r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{0,65536}={0,2}"),
         generic.pem_b64_check,
         needs=("LS0tLS1CRUdJTi",), anchored=True),
    Rule("putty-private-key", "private-key", re.compile(r"Private-Lines:[ \t]*(?P<n>\d{1,4})"),
         generic.putty_check, needs=("Private-Lines:",), anchored=True),
    Rule("openai-key", "openai-key", re.compile(r"sk-[A-Za-z0-9_-]{20,1024}"),
         shapes.token_check("openai-key", 3), needs=("sk-",), anchored=True),
    Rule("slack-token", "slack-token", re.compile(r"xox[baprs]-[A-Za-z0-9-]{10,1024}"), shapes.slack_check,
         needs=("xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-"), anchored=True),
    Rule("aws-access-key-id", "aws-access-key-id", re.compile(r"A(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}"),
         shapes.aws_key_check, needs=("AKIA", "ASIA", "ABIA", "ACCA"), anchored=True),
    Rule("aws-secret-key", "aws-secret-key", re.compile(r"[A-Za-z0-9/+]{40}"), shapes.aws_secret_check,
         needs=("AKIA", "ASIA")),
    Rule("aws-secret-key-named", "aws-secret-key",
         re.compile(r"ccess_?[Kk]ey[\"']?[ \t]*(?:=|:|=>)[ \t]*[\"']?(?P<value>[A-Za-z0-9/+]{40})"),
         shapes.aws_named_secret_check, needs=("ccess_key", "ccessKey", "ccess_Key", "ccesskey"), anchored=True),
    Rule("jwt", "jwt", re.compile(r"\.eyJ[A-Za-z0-9_-]{8,8192}\.[A-Za-z0-9_-]{0,8192}"),
         shapes.jwt_check, needs=(".eyJ",), anchored=True),
    Rule("email", "email", re.compile("@" + _DOMAIN), shapes.email_check, needs=("@",)),
    Rule("phone", "phone", re.compile(r"\+[1-9]\d{0,2}(?:[ .-]\(?\d{1,5}\)?|[ ]?\(\d{1,4}\))(?:[ .-]\d{2,8}){1,4}"),
         shapes.phone_check, needs=("+",)),
    Rule("phone", "phone", re.compile(r"\([2-9]\d{2}\)[ ]?\d{3}[-.]\d{4}"), shapes.phone_check, needs=("(",)),
)

_PERSONAL: tuple[Rule, ...] = (
    # one match per text: cards_in_text finds the digit runs itself (fast on the digits' shape)
    Rule("card-number", "card-number", re.compile(r"\A"), personal.cards_in_text),
    Rule("iban", "iban", re.compile(r"[A-Z]{2}[0-9]{2}"), personal.iban_check, needs=personal.iban_literals(),
         anchored=True),
    Rule("us-ssn", "national-id", re.compile(r"-[0-9]{2}-[0-9]{4}"), personal.ssn_check, needs=("-",)),
    Rule("us-ssn-labelled", "national-id",
         re.compile(r"(?i:ssn|social[ _-]?security)[A-Za-z_ ]{0,16}[\"'\]]?[ \t]*(?:=>|:=|[:=,])?[ \t]*[\"'(]?"
                    r"(?P<v>[0-9]{3}(?P<s>[ -]?)[0-9]{2}(?P=s)[0-9]{4})"),
         personal.ssn_labelled_check, needs=personal.SSN_LABELS, anchored=True),
    Rule("uk-nino", "national-id", re.compile(r"[A-Z]{2}(?P<s> ?)[0-9]{2}(?P=s)[0-9]{2}(?P=s)[0-9]{2}(?P=s)[A-D]"),
         personal.nino_check, needs=personal.nino_prefixes(), anchored=True),
    Rule("national-id-labelled", "national-id", re.compile(nationalid.PATTERN), nationalid.labelled_check,
         needs=nationalid.LABELS, anchored=True),
    Rule("phone-e164", "phone", re.compile(r"\+[1-9][0-9]{7,14}"), personal.e164_check, needs=("+",)),
)

def _alternation(words) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


_POSITIONAL: tuple[Rule, ...] = (
    Rule("positional-password", "cli-password",
         re.compile(r"(?P<call>" + _alternation(positional.CALLS) + r"|auth[ \t]*[=:][ \t]*)[(\[]"),
         positional.call_check, needs=positional.call_literals(), anchored=True),
    Rule("cli-password-option", "cli-password",
         re.compile(r"(?P<tool>" + _alternation(positional.TOOL_NAMES) + r")(?![A-Za-z0-9_-])"),
         positional.tool_check, needs=tuple(positional.TOOL_NAMES), anchored=True),
    Rule("go-dsn-password", "url-credentials",
         re.compile(r"""(?P<u>[A-Za-z0-9_.-]{1,64}):(?P<v>[^@\s"'`:/]{1,128})@(?:tcp|unix)\("""),
         positional.go_dsn_check, needs=("@tcp(", "@unix(")),
    Rule("conninfo-password", "connection-string", re.compile(r"""[ \t]password=(?P<v>'[^'\n]*'|[^\s'"`;,()]+)"""),
         positional.conninfo_check, needs=(" password=", "\tpassword="), anchored=True),
    Rule("url-query-token", "url-token", re.compile(inurl.QUERY_PATTERN), inurl.query_check,
         needs=inurl.query_literals(), anchored=True),
)

_GENERIC: tuple[Rule, ...] = (
    Rule("url-credentials", "url-credentials",
         re.compile(r"""://(?P<user>[^\s:/@'"`<>{}\[\]\\]{0,128}):(?P<pw>[^\s/@'"`<>\\]{1,256})@"""
                    r"""[A-Za-z0-9\[]"""),
         generic.url_check, needs=("://",), anchored=True),
    Rule("cli-password-tool", "cli-password",
         re.compile(r"(?P<tool>mysql[a-z]{0,16}|mariadb[a-z]{0,16}|sshpass|redis-cli|curl|htpasswd|openssl"
                    r"|(?:docker|podman|nerdctl|registry) login)"),
         generic.tool_check, needs=("mysql", "mariadb", "sshpass", "redis-cli", "curl", "htpasswd", "openssl",
                                    "docker login", "podman login", "nerdctl login", "registry login"),
         anchored=True),
    Rule("sql-password", "cli-password",
         re.compile(r"(?:PASSWORD|[Pp]assword|IDENTIFIED BY|identified by)[ \t]+'(?P<v>[^'\n]{1,128})'"),
         generic.sql_check, needs=("PASSWORD '", "password '", "Password '", "IDENTIFIED BY '",
                                   "identified by '"), anchored=True),
    Rule("auth-header", "auth-header",
         re.compile(r"(?P<scheme>[Bb]earer|[Bb]asic|[Tt]oken)[ \t]+(?P<v>[A-Za-z0-9+/=._~-]{16,1024})"),
         generic.header_check, needs=_case_variants("Bearer ", "Basic ", "Token "), anchored=True),
    Rule("connection-string-password", "connection-string",
         re.compile(r"(?:[Pp]assword|PASSWORD|[Pp]wd|PWD)=(?P<v>[^;,&\"'\s<>()]{1,256})"),
         generic.connection_check, needs=_case_variants("Password=", "Pwd="), anchored=True),
    Rule("attribute-secret", "secret-assignment",
         re.compile(r"""(?:value|content)=(?P<q>["'])(?P<v>[^"'\n<>]{1,512})(?P=q)"""),
         generic.attribute_check, needs=('value="', "value='", 'content="', "content='"), anchored=True),
    Rule("env-pair-secret", "secret-assignment",
         re.compile(r"""name:[ \t]*["']?(?P<n>[A-Za-z_][A-Za-z0-9_.-]{0,127})["']?[ \t]*\r?\n[ \t]*(?:-[ \t]+)?"""
                    r"""value:(?P<v>[^\n]{0,4096})"""),
         generic.env_pair_check, needs=("name:",), anchored=True),
    Rule("env-pair-secret", "secret-assignment",
         re.compile(r""""name"[ \t]*:[ \t]*"(?P<n>[A-Za-z_][A-Za-z0-9_.-]{0,127})"[ \t]*,[ \t\r\n]{0,64}"value"[ \t]*:[ \t]*"""
                    r"""(?P<v>"[^"\n]{0,4096}")"""),
         generic.env_pair_check, needs=('"name"',), anchored=True),
    Rule("k8s-secret", "k8s-secret", re.compile(r"kind:[ \t]*[\"']?Secret\b"), k8s.k8s_secret_check,
         needs=("kind: Secret", "kind: \"Secret", "kind: 'Secret", "kind:Secret"), anchored=True),
    Rule("docker-auth", "docker-auth", re.compile(r"\"auth\"[ \t]*:[ \t]*\""),
         generic.docker_auth_check, needs=('"auth"',), anchored=True),
    Rule("docker-config", "docker-auth", re.compile(r"eyJhdXRocyI6[A-Za-z0-9+/]{0,65536}={0,2}"),
         generic.docker_config_check,
         needs=("eyJhdXRocyI6",), anchored=True),
    Rule("yaml-block-secret", "secret-assignment", re.compile(r":[ \t]*[|>][-+1-9]{0,2}[ \t]*(?:#[^\n]*)?\r?\n"),
         multiline.yaml_block_check, needs=(": |", ": >"), anchored=True),
    Rule("multiline-string-secret", "secret-assignment", re.compile(r"""=[ \t]*(?P<q>"{3}|'{3})"""),
         multiline.triple_quoted_check, needs=('= """', "= '''", '="""', "='''"), anchored=True),
    Rule("hcl-variable-secret", "secret-assignment", re.compile(r'variable[ \t]+"(?P<n>[A-Za-z_][\w-]{0,127})"[ \t]*\{'),
         multiline.hcl_variable_check, needs=('variable "',), anchored=True),
    Rule("wordpress-salt", "secret-assignment",
         re.compile(r"""define\([ \t]*(?P<q>["'])(?P<n>""" + "|".join(multiline.WORDPRESS_KEYS) + r""")(?P=q)[ \t]*,[ \t]*"""
                    r"""(?P<vq>["'])(?P<v>(?:\\.|(?!(?P=vq))[^\\\n]){1,512})(?P=vq)"""),
         multiline.wordpress_salt_check, needs=("define(",), anchored=True),
    Rule("secret-assignment", "secret-assignment",
         re.compile(r"""(?P<word>[A-Za-z_][A-Za-z_-]{0,63})(?P<q>["'`]?)(?P<br>\]?)(?P<sp>[ \t]*)(?P<op>:=|\?=|=>|=|:|>|,|\(|)(?![=:>])"""),
         assignment_check, needs=name_literals(), anchored=True),
)


RULES: tuple[Rule, ...] = (*_CORE, *_provider_rules(), *_PERSONAL, *_POSITIONAL, *_GENERIC)

KINDS: tuple[str, ...] = tuple(dict.fromkeys(rule.kind for rule in RULES))
