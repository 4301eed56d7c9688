"""The scrubber's rules, as data: one ``Rule`` per shape, plus the vocabularies they use.

A rule is a compiled pattern that starts with a literal (so ``re`` can jump to candidates
instead of trying every position), an optional set of literals the text must contain for
the rule to run at all, and a ``check`` that looks at one match in context and returns the
spans to redact (possibly none). Boundaries are checked in ``check``, not with look-behinds,
because a leading look-behind disables ``re``'s literal-prefix search.

Kinds (the ``<kind>`` in ``[REDACTED:<kind>]``)::

    private-key        a PEM private-key block, BEGIN to END (every line of it)
    openai-key         sk-... (OpenAI legacy/project/service keys, Anthropic sk-ant-...)
    github-token       ghp_/gho_/ghu_/ghs_/ghr_ tokens, github_pat_ fine-grained tokens
    slack-token        xoxb-/xoxa-/xoxp-/xoxr-/xoxs- tokens
    aws-access-key-id  AKIA... / ASIA...
    aws-secret-key     a 40-char AWS secret next to a key id, or after an aws secret name
    jwt                header.payload.signature, both JSON parts base64url ("eyJ")
    email              an address at a non-reserved domain with a known TLD
    phone              +CC with separators, or (ddd) ddd-dddd
    secret-assignment  the literal assigned to a SCREAMING_SNAKE secret name (DB_PASSWORD=...)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import shapes
from .assign import assignment_check
from .shapes import Check, Span
from .vocab import NAME_WORDS

__all__ = ["KINDS", "RULES", "RULES_VERSION", "Rule", "Span"]

# Bump when a change to the rules or vocabularies changes what gets redacted, so an index
# built with older rules can be told apart (and re-scrubbed) by its pipeline fingerprint.
RULES_VERSION = "1"


@dataclass(frozen=True)
class Rule:
    kind: str
    pattern: re.Pattern[str]
    check: Check
    # the rule runs only when the text contains one of these (cheap ``in`` test); () = always
    needs: tuple[str, ...] = ()


_DOMAIN = r"(?P<domain>[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+)"

# the name rule runs only on texts holding one of these (each name word contains one)
_MINIMAL_WORDS = tuple(w for w in NAME_WORDS if not any(o != w and o in w for o in NAME_WORDS))

RULES: tuple[Rule, ...] = (
    Rule("private-key", re.compile(r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY(?: BLOCK)?-----"),
         shapes.pem_check, needs=("-----BEGIN",)),
    Rule("openai-key", re.compile(r"sk-[A-Za-z0-9_-]{20,}"),
         shapes.token_check("openai-key", 3), needs=("sk-",)),
    Rule("github-token", re.compile(r"gh[pousr]_[A-Za-z0-9]{36,}"),
         shapes.token_check("github-token", 4), needs=("gh",)),
    Rule("github-token", re.compile(r"github_pat_[A-Za-z0-9_]{50,}"),
         shapes.token_check("github-token", 11), needs=("github_pat_",)),
    Rule("slack-token", re.compile(r"xox[baprs]-[A-Za-z0-9-]{10,}"), shapes.slack_check, needs=("xox",)),
    Rule("aws-access-key-id", re.compile(r"AKIA[A-Z0-9]{16}"), shapes.aws_key_check, needs=("AKIA",)),
    Rule("aws-access-key-id", re.compile(r"ASIA[A-Z0-9]{16}"), shapes.aws_key_check, needs=("ASIA",)),
    Rule("aws-secret-key", re.compile(r"[A-Za-z0-9/+]{40}"), shapes.aws_secret_check,
         needs=("AKIA", "ASIA")),
    Rule("aws-secret-key",
         re.compile(r"ccess_?[Kk]ey[\"']?[ \t]*(?:=|:|=>)[ \t]*[\"']?(?P<value>[A-Za-z0-9/+]{40})"),
         shapes.aws_named_secret_check, needs=("ccess",)),
    Rule("jwt", re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
         shapes.jwt_check, needs=("eyJ",)),
    Rule("email", re.compile("@" + _DOMAIN), shapes.email_check, needs=("@",)),
    Rule("phone", re.compile(r"\+[1-9]\d{0,2}(?:[ .-]\(?\d{1,5}\)?|[ ]?\(\d{1,4}\))(?:[ .-]\d{2,8}){1,4}"),
         shapes.phone_check, needs=("+",)),
    Rule("phone", re.compile(r"\([2-9]\d{2}\)[ ]?\d{3}[-.]\d{4}"), shapes.phone_check, needs=("(",)),
    Rule("secret-assignment",
         re.compile("(?P<word>" + "|".join(sorted(NAME_WORDS, key=len, reverse=True)) + ")"
                    r"[\"'`]?(?P<sp>[ \t]*)(?P<op>:=|\?=|=>|=|:)(?![=:>])"),
         assignment_check, needs=_MINIMAL_WORDS),
)

KINDS: tuple[str, ...] = tuple(dict.fromkeys(rule.kind for rule in RULES))
