"""Nested JSON and YAML keys whose path names a secret though the key alone does not (issue 42).

``"Jwt": {"Key": "..."}``, ``database: {pass: ...}``, ``stripe: {api: {key: ...}}``,
``"ApiKey": {"value": "..."}``: the key (``key``, ``pass``, ``value``) is qualified by its
parent (``Jwt_Key``, ``database_pass``) and judged by the name rule's vocabulary
(``assign.secret_name``, ``assign.value_is_literal``). A key that names a secret alone is the
name rule's. Only ``.json`` / ``.yaml`` files up to ``MAX_PARSE`` characters are parsed (by
``formats.file_spans``); a YAML file only when its flow nesting is shallow; a walk visits
each node once (YAML aliases share nodes: no billion laughs) and at most ``MAX_NODES``.
A Kubernetes Secret written as JSON has its ``data`` values decoded and judged too.
"""

from __future__ import annotations

import bisect
import functools
import json
import re
from collections.abc import Iterable, Iterator

from .assign import secret_name, value_is_literal
from .multiline import judge, pieces
from .shapes import Span, mask
from .vocab import NON_VALUES, PLACEHOLDER_WORDS

MAX_PARSE = 1024 * 1024  # characters of a JSON or YAML file that is parsed
MAX_NODES = 200_000  # nodes of a parsed document that are visited
MAX_FLOW_DEPTH = 64  # deeper [ { nesting: the YAML file is not composed
_DOC_START = re.compile(r"^---[^\n]*\n", re.M)


_TEMPLATE = re.compile(r"\$\{|\$\(|\{\{|\{%|%\(|<%|^\$[A-Za-z_]|^%[A-Za-z_]\w*%$|^<[^>]*>$")


# the placeholder words that are words: a drawn password can hold "<", "***" or "..." by chance
_STAND_IN_WORDS = re.compile("|".join(re.escape(w) for w in PLACEHOLDER_WORDS if sum(c.isalpha() for c in w) >= 4))


def stand_in(value: str) -> bool:
    """A value in a credential's place that is not one: empty, a placeholder (``<password>``,
    ``your-token``, ``***``, ``[PASSWORD]``), a template, a well-known default. Judged on the
    value as a whole or by words, never by a symbol inside it (a password can hold ``<``)."""
    v = value.strip()
    low = v.lower()
    return (not v or low in NON_VALUES or _TEMPLATE.search(v) is not None or low.strip("*x.-_\u2022#") == ""
            or (low[:1], low[-1:]) in (("<", ">"), ("[", "]")) or _STAND_IN_WORDS.search(low) is not None)


def _span(start: int, end: int, label: str, value: str) -> Span:
    return Span(start, end, "secret-assignment", f"{label}={mask(value, 0)}", 10, "nested-key")


_JSONC_TOKEN = re.compile(r'"(?:\\.|[^"\\\n])*"|//[^\n]*|/\*[\s\S]*?\*/')
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def _strip_jsonc(text: str) -> str:
    """JSON with comments and trailing commas (appsettings.json, tsconfig.json) made JSON:
    comments become spaces, strings are kept as they are."""
    def blank(m: re.Match[str]) -> str:
        tok = m.group()
        return tok if tok.startswith('"') else re.sub(r"[^\n]", " ", tok)

    return _TRAILING_COMMA.sub(r"\1", _JSONC_TOKEN.sub(blank, text))


def load_json(text: str) -> object:
    """The parsed JSON (or JSON with comments); ValueError when it is neither, or too large."""
    if len(text) > MAX_PARSE:
        raise ValueError("too large to parse")
    try:
        return json.loads(text)
    except ValueError:
        if "//" not in text and "/*" not in text and "," not in text:
            raise
        return json.loads(_strip_jsonc(text))


def json_value_spans(text: str, key: str, value: str) -> Iterator[tuple[int, int]]:
    """Where ``"key": "value"`` stands in the JSON text (the value without its quotes)."""
    enc_key, enc_value = json.dumps(key)[1:-1], json.dumps(value)[1:-1]
    pattern = re.compile('"' + re.escape(enc_key) + r'"\s*:\s*"(' + re.escape(enc_value) + ')"')
    for m in pattern.finditer(text):
        yield m.span(1)


def walk_json(node: object, keys: frozenset[str]) -> Iterator[tuple[str, str, str]]:
    """(parent key, key, string value) of every string in a parsed JSON value whose key,
    lower-cased, is one of ``keys``; at most MAX_NODES objects and arrays are visited (strings
    are never pushed: a large file of data costs one look per member)."""
    stack: list[tuple[object, str]] = [(node, "")]
    seen = 0
    while stack and seen < MAX_NODES:
        value, name = stack.pop()
        seen += 1
        if isinstance(value, dict):
            for k, v in value.items():
                if isinstance(v, str):
                    if k.lower() in keys:
                        yield name, k, v
                elif isinstance(v, (dict, list)):
                    stack.append((v, k))
        elif isinstance(value, list):
            stack.extend((v, name) for v in value if isinstance(v, (dict, list)))


# a child key too generic to name a secret alone, that names one under its parent
_CHILD_WORDS = frozenset({"key", "pass", "value"})


@functools.lru_cache(maxsize=4096)
def path_secret(parent: str, child: str) -> str | None:
    """The sort of secret the key path ``parent.child`` names when ``child`` alone does not
    (``Jwt.Key``, ``database.pass``, ``ApiKey.value``), else None."""
    if secret_name(child) is not None or not parent:
        return None  # the name rule's, or nothing to qualify it
    low = child.lower()
    if low not in _CHILD_WORDS:
        return None
    if low == "value":
        return secret_name(parent)
    return secret_name(f"{parent}_{child}")


def _nested_value(parent: str, child: str, value: str) -> str | None:
    sort = path_secret(parent, child)
    if sort is None or stand_in(value) or not value_is_literal(value, sort, screaming=False):
        return None
    return sort


# a member the walk looks at: "key" / "pass" / "value" with a string value, or a Secret's "kind"
# (case variants spelled out: an inline (?i) halves the search speed)
_JSON_GATE = re.compile(r'"(?:[Kk]ey|KEY|[Pp]ass|PASS|[Vv]alue|VALUE)"[ \t\r\n]*:[ \t\r\n]*"'
                        r'|"kind"[ \t\r\n]*:[ \t\r\n]*"Secret"')


def json_spans(text: str) -> Iterable[Span]:
    """Nested secret keys of a JSON file (a parse error raises ValueError). Parsed only when
    a member the walk looks at occurs (one regex search; most JSON files hold none)."""
    lead = text.lstrip()[:1]
    if lead not in ("{", "[") or _JSON_GATE.search(text) is None:
        return []
    doc = load_json(text)
    out = list(_json_secret_spans(text, doc))
    for parent, key, value in walk_json(doc, _CHILD_WORDS):
        if _nested_value(parent, key, value) is None:
            continue
        for start, end in json_value_spans(text, key, value):
            out.append(_span(start, end, f"{parent}.{key}", value))
    return out


def _json_secret_spans(text: str, doc: object) -> Iterator[Span]:
    """A Kubernetes Secret written as JSON (``kubectl get secret -o json``, a List's items):
    each ``data`` value decoded and judged as ``k8s.py`` judges the YAML form."""
    from .generic import _b64_text as b64_text
    from .k8s import secret_value

    items = doc.get("items") if isinstance(doc, dict) and doc.get("kind") == "List" else [doc]
    for item in items if isinstance(items, list) else ():
        if not isinstance(item, dict) or item.get("kind") != "Secret" or not isinstance(item.get("data"), dict):
            continue
        for key, value in item["data"].items():
            plain = b64_text(value) if isinstance(value, str) and value else None
            if plain is None or not secret_value(str(key), plain, encoded=True):
                continue
            for start, end in json_value_spans(text, str(key), value):
                yield Span(start, end, "k8s-secret", f"{key}={mask(value, 0)}", 35, "k8s-secret-json")


def _flow_depth(text: str) -> int:
    depth = deepest = 0
    for m in re.finditer(r"[\[\]{}]", text):
        depth = depth + 1 if m.group() in "[{" else max(0, depth - 1)
        deepest = max(deepest, depth)
        if deepest > MAX_FLOW_DEPTH:
            break
    return deepest


# A candidate line holds one of these words (lower-cased); the line is then matched as a child
# (key/pass: no "value", every Kubernetes env entry has one, and a secret under "value" in YAML
# is rare; the walk still reads it when the document is composed for another candidate), as a
# key with nothing after its colon, or as a line with a flow mapping.
_SECRET_WORD = re.compile(r"pass|pwd|secret|token|key|cred|auth")
_Y_CHILD = re.compile(r"""(?P<ind>[ \t]*(?:-[ \t]+)?)["']?(?P<k>[Kk]ey|KEY|[Pp]ass|PASS)["']?[ \t]*:""")
_Y_APART = re.compile(r"""[ \t]*(?:-[ \t]+)?["']?(?P<k>[A-Za-z_][\w.-]{0,127})["']?[ \t]*:[ \t]*(?:#.*)?\r?""")
_FLOW_KEY = re.compile(r"""(?P<open>[{,])[ \t]*["']?(?P<k>[A-Za-z_][\w.-]{0,127})["']?[ \t]*:""")
_FLOW_PARENT = re.compile(r"""["']?(?P<p>[A-Za-z_][\w.-]{0,127})["']?[ \t]*:[ \t]*\{""")
_Y_KEY = re.compile(r"""[ \t]*(?:-[ \t]+)?["']?(?P<k>[A-Za-z_][\w.-]{0,127})["']?[ \t]*:""")
MAX_PARENT_LINES = 100  # lines looked back for a key's parent
MAX_LINE_LOOKED = 4096  # a longer line is no candidate
# a name can be a secret's only if it holds one of these (secret_name is much dearer)
_SECRETISH = re.compile(r"[Pp]ass|PASS|[Pp]wd|PWD|[Ss]ecret|SECRET|[Tt]oken|TOKEN|[Kk]ey|KEY|[Cc]red|CRED|[Aa]uth|AUTH")


@functools.lru_cache(maxsize=4096)  # a file repeats its keys: a name is judged once
def _secret_named(name: str) -> bool:
    return _SECRETISH.search(name) is not None and secret_name(name) is not None


def _parent_key(text: str, line_start: int, column: int) -> str:
    """The key of the nearest line above ``line_start`` whose key column is left of ``column``."""
    pos = line_start - 1
    for _ in range(MAX_PARENT_LINES):
        if pos <= 0:
            return ""
        ls = text.rfind("\n", 0, pos) + 1
        k = _Y_KEY.match(text, ls, pos)
        if k is not None and k.start("k") - ls < column:
            return k.group("k")
        line = text[ls:pos]
        if k is None and line.strip() and not line.lstrip().startswith("#") \
                and len(line) - len(line.lstrip()) < column:
            return ""  # a less indented line that is no key: a sequence, a scalar
        pos = ls - 1
    return ""


def _flow_candidate(segment: str) -> bool:
    """Does a line with a flow mapping hold a secret-named key in it,
    or a key/pass/value under a parent that qualifies it (``jwt: {key: ...}``)?"""
    parents = [p.group("p") for p in _FLOW_PARENT.finditer(segment)]
    for f in _FLOW_KEY.finditer(segment):
        k = f.group("k")
        if _secret_named(k) or (k.lower() in _CHILD_WORDS and any(path_secret(p, k) is not None for p in parents)):
            return True
    return False


def _candidate_line(text: str, ls: int, line: str) -> bool:
    c = _Y_CHILD.match(line)
    if c is not None and path_secret(_parent_key(text, ls, len(c.group("ind").expandtabs(1))), c.group("k")):
        return True
    a = _Y_APART.fullmatch(line)
    if a is not None and _secret_named(a.group("k")):
        return True
    return "{" in line and _flow_candidate(line)


def _candidate_docs(text: str) -> list[tuple[int, int]]:
    """The ``---`` documents of a YAML text that hold something the walk would read: a
    ``key``/``pass`` under a parent that qualifies it, a secret-named key whose value is not on
    its line, or a flow mapping with a secret-named or qualified key. A cheap line scan (only
    the lines holding a secret word are looked at), so that the YAML composer (slow: ~0.5 MB/s)
    runs only where it can find something."""
    hits: list[int] = []
    done = -1  # the end of the last line looked at
    for m in _SECRET_WORD.finditer(text.lower()):
        if m.start() <= done:
            continue
        ls = text.rfind("\n", 0, m.start()) + 1
        le = text.find("\n", m.start())
        done = len(text) if le < 0 else le
        if done - ls <= MAX_LINE_LOOKED and _candidate_line(text, ls, text[ls:done]):
            hits.append(ls)
    if not hits:
        return []
    starts = [0] + [m.end() for m in _DOC_START.finditer(text)]
    ends = [*starts[1:], len(text)]
    docs = {bisect.bisect_right(starts, h) - 1 for h in hits}
    return [(starts[i], ends[i]) for i in sorted(docs)]


def yaml_spans(text: str) -> Iterable[Span]:
    """Nested secret keys of a YAML file: each ``---`` document that holds a candidate
    (``_candidate_docs``) is composed and walked; a document that does not parse is left to
    the line rules."""
    if len(text) > MAX_PARSE or ":" not in text:
        return []
    candidates = _candidate_docs(text)
    if not candidates:
        return []
    import yaml  # only for YAML files with a candidate: not imported with codeseam

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    docs: list[tuple[int, object]] = []  # (offset of the text it was parsed from, node)
    for a, b in candidates:
        if _flow_depth(text[a:b]) > MAX_FLOW_DEPTH:
            continue
        try:
            docs += [(a, d) for d in yaml.compose_all(text[a:b], Loader=loader)]
        except yaml.YAMLError:
            continue
    out: list[Span] = []
    seen: set[int] = set()
    stack: list[tuple[object, str, int]] = [(d, "", off) for off, d in docs if d is not None]
    while stack and len(seen) < MAX_NODES:
        node, parent, off = stack.pop()
        if id(node) in seen:
            continue  # an alias: its node was visited already
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                key = k.value if isinstance(k, yaml.ScalarNode) else ""
                if isinstance(v, yaml.ScalarNode) and key:
                    apart = v.start_mark.line > k.start_mark.line  # the value on a later line
                    out.extend(_yaml_scalar(text, parent, key, v, bool(node.flow_style), off, apart))
                else:
                    stack.append((v, key, off))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((v, parent, off) for v in node.value)
    return out


def _yaml_scalar(text: str, parent: str, key: str, node: object, in_flow: bool, off: int,
                 apart: bool) -> list[Span]:
    """The spans of one scalar: a nested secret key's value (``Jwt.Key``; a block scalar
    line by line), or a secret-named key's value where the line rule does not read it: inside
    a flow mapping (``auth: {user: bob, password: X}``) or as a plain scalar on the lines
    after its key (``api_secret:`` then the value, indented, on the next line)."""
    value, style = node.value, node.style  # type: ignore[attr-defined]
    start, end = off + node.start_mark.index, off + node.end_mark.index  # type: ignore[attr-defined]
    if apart and not style and not in_flow and secret_name(key) is not None:
        return list(judge(text, pieces(text, start, end), key, "nested-key"))
    if style in ("|", ">"):
        qualified = parent if key.lower() == "value" else f"{parent}_{key}"
        if path_secret(parent, key) is None:
            return []  # a block scalar under a secret name alone: multiline.py's rule
        first = text.find("\n", start, end)
        return list(judge(text, pieces(text, first + 1, end), qualified, "nested-key")) if first >= 0 else []
    if style not in (None, "", '"', "'") or "\n" in value:
        return []
    if _nested_value(parent, key, value) is None:
        sort = secret_name(key) if in_flow else None
        if sort is None or stand_in(value) or not value_is_literal(value, sort, screaming=key.isupper()):
            return []
    if style in ('"', "'"):
        start, end = start + 1, end - 1
    if text[start:end] != value:
        return []  # escapes in the quoted form: leave it to the line rules
    return [_span(start, end, f"{parent}.{key}" if parent else key, value)]
