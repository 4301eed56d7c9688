"""Text edits that keep everything they do not own, byte for byte (the pure core of setup).

- the instruction block: a marked block appended to a Markdown file (``AGENTS.md``, ...),
  replaced in place when it is there, taken out with the separator it added;
- a JSON config: our server entry inserted as text into the right object (found by a span
  scan of the text the ``json`` module has parsed), after its last member, in the file's own
  indentation; taken out by its span, with the container when it is left empty;
- a TOML config: our ``[table]`` appended as text when ``tomlkit`` (a real TOML parser that
  keeps formatting) says the result is valid and means what we want; else tomlkit's own edit.

A file that does not parse is an error (``ConfigError``), never overwritten.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Sequence

from ..errors import ConfigError

BEGIN = "<!-- codeseam:begin (managed by `codeseam setup`; `codeseam setup AGENT --remove` takes it out) -->"
BEGIN_EOL = BEGIN.replace(" (managed", " +eol (managed")  # we also ended the line above
END = "<!-- codeseam:end -->"
_BLOCK = re.compile(r"(?P<sep>\n?)(?P<begin><!-- codeseam:begin(?P<eol> \+eol)?[^\n]*-->)\n.*?<!-- codeseam:end -->\n?",
                    re.S)


# -- the instruction block ------------------------------------------------------------------------

def with_block(text: str, body: str) -> str:
    """``text`` with our block holding ``body``: replaced where it is, else appended after a
    blank line (a missing final line end is added, and the marker says so for removal)."""
    m = _BLOCK.search(text)
    if m is not None:
        begin = m.group("begin")
        return text[:m.start("begin")] + f"{begin}\n{body.rstrip()}\n{END}\n" + text[m.end():]
    if not text:
        return f"{BEGIN}\n{body.rstrip()}\n{END}\n"
    if text.endswith("\n"):
        return f"{text}\n{BEGIN}\n{body.rstrip()}\n{END}\n"
    return f"{text}\n\n{BEGIN_EOL}\n{body.rstrip()}\n{END}\n"


def without_block(text: str) -> str:
    """``text`` with our block (and the separator it added) taken out."""
    m = _BLOCK.search(text)
    if m is None:
        return text
    start = m.start("begin")
    if start > 0 and text[start - 1] == "\n":
        start -= 1  # the blank line we put before it
        if m.group("eol") and start > 0 and text[start - 1] == "\n":
            start -= 1  # and the line end we added to the last line
    return text[:start] + text[m.end():]


def has_block(text: str) -> bool:
    return _BLOCK.search(text) is not None


# -- JSON ---------------------------------------------------------------------------------------------

@dataclass
class _Obj:
    start: int  # the "{"
    end: int  # after the "}"
    members: list[_Member] = field(default_factory=list)


@dataclass
class _Member:
    key: str
    key_start: int
    value_start: int
    value_end: int
    obj: _Obj | None  # the value, when it is an object


_TOKEN = re.compile(r'\s*(?:("(?:[^"\\]|\\.)*")|([{}\[\],:])|([^\s{}\[\],:"]+))', re.S)


def _scan(text: str) -> _Obj:
    """The spans of a JSON document the ``json`` module has accepted (its root must be an object)."""
    pos = 0

    def token() -> tuple[str, int, int]:
        nonlocal pos
        m = _TOKEN.match(text, pos)
        assert m is not None and m.lastindex is not None, "valid JSON"
        pos, i = m.end(), m.lastindex
        return m.group(i), m.start(i), m.end(i)

    def value(tok: str, start: int) -> tuple[int, _Obj | None]:
        if tok == "{":
            obj = _Obj(start, 0)
            tok, s, _e = token()
            while tok != "}":
                if tok == ",":
                    tok, s, _e = token()
                key = json.loads(tok)
                token()  # :
                vtok, vs, ve = token()
                vend, child = value(vtok, vs)
                obj.members.append(_Member(key, s, vs, vend if vtok in "{[" else ve, child))
                tok, s, _e = token()
            obj.end = pos
            return pos, obj
        if tok == "[":
            tok, _s, _e = token()
            while tok != "]":
                if tok != ",":
                    value(tok, _s)
                tok, _s, _e = token()
            return pos, None
        return pos, None

    tok, s, _e = token()
    if tok != "{":
        raise ValueError("the document is not a JSON object")
    return value(tok, s)[1]  # type: ignore[return-value]


def parse_json(text: str, where: str) -> dict:
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{where} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); "
                          "left as it is", hint="fix the file (comments and trailing commas are not JSON), or add "
                          "the entry by hand (`codeseam setup AGENT --dry-run` shows it)") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{where} does not hold a JSON object; left as it is", hint="fix the file")
    return data


def _indent_unit(text: str) -> str:
    m = re.search(r"\n([ \t]+)\"", text)
    return m.group(1) if m else "  "


def _line_indent(text: str, pos: int) -> str:
    line = text[text.rfind("\n", 0, pos) + 1:pos]
    return line[:len(line) - len(line.lstrip())]


def _render(key: str, value: Any, indent: str, unit: str) -> str:
    body = json.dumps(value, indent=len(unit) if unit.strip(" ") == "" else unit, ensure_ascii=False)
    body = body.replace("\n", "\n" + indent)
    return f"{json.dumps(key, ensure_ascii=False)}: {body}"


def json_get(data: dict, path: Sequence[str]) -> Any:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


def json_with(text: str, path: Sequence[str], name: str, entry: dict, where: str) -> str:
    """``text`` with ``entry`` under ``path + [name]`` (replaced when it differs)."""
    data = parse_json(text, where)
    if json_get(data, [*path, name]) == entry:
        return text
    if json_get(data, [*path, name]) is not None:
        text = json_without(text, path, name, where, prune=False)
    if not text.strip():
        text = "{}\n"
    root = _scan(text)
    unit = _indent_unit(text)
    obj, value = root, entry
    missing: list[str] = []
    for i, key in enumerate(path):
        member = next((m for m in obj.members if m.key == key), None)
        if member is None:
            missing = list(path[i:])
            break
        if member.obj is None:
            raise ConfigError(f"{where}: {'.'.join(path[:i + 1])} is not an object; left as it is", hint="fix the file")
        obj = member.obj
    for key in reversed(missing + [name]):
        value = {key: value}
    (key, value), = value.items()
    base = _line_indent(text, obj.start)
    if obj.members:
        last = obj.members[-1]
        indent = _line_indent(text, last.key_start)
        return text[:last.value_end] + ",\n" + indent + _render(key, value, indent, unit) + text[last.value_end:]
    indent = base + unit
    close = obj.end - 1
    return text[:obj.start + 1] + "\n" + indent + _render(key, value, indent, unit) + "\n" + base + text[close:]


def json_without(text: str, path: Sequence[str], name: str, where: str, *, prune: bool = True) -> str:
    """``text`` without ``path + [name]``; with ``prune``, containers it leaves empty go too."""
    data = parse_json(text, where)
    if json_get(data, [*path, name]) is None:
        return text
    keys = [*path, name]
    while True:
        root = _scan(text)
        chain: list[tuple[_Obj, _Member]] = []
        obj = root
        for key in keys:
            member = next(m for m in obj.members if m.key == key)
            chain.append((obj, member))
            obj = member.obj  # type: ignore[assignment]
        parent, member = chain[-1]
        text = _cut(text, parent, member)
        if not prune or len(keys) == 1 or len(parent.members) > 1:
            return text
        keys = keys[:-1]  # the container is empty now: take it out too


def _cut(text: str, parent: _Obj, member: _Member) -> str:
    i = parent.members.index(member)
    if i > 0:
        return text[:parent.members[i - 1].value_end] + text[member.value_end:]
    if len(parent.members) > 1:
        return text[:member.key_start] + text[parent.members[1].key_start:]
    return text[:parent.start + 1] + text[parent.end - 1:]


# -- TOML -----------------------------------------------------------------------------------------------

def parse_toml(text: str, where: str):
    import tomlkit
    from tomlkit.exceptions import ParseError

    try:
        return tomlkit.parse(text)
    except ParseError as exc:
        raise ConfigError(f"{where} is not valid TOML ({exc}); left as it is",
                          hint="fix the file, or add the entry by hand (`codeseam setup AGENT --dry-run` shows it)") from None


def _toml_table(path: Sequence[str], name: str, entry: dict) -> str:
    import tomlkit

    doc = tomlkit.document()
    inner = tomlkit.table()
    for k, v in entry.items():
        inner[k] = v
    node: Any = inner
    for key in reversed([*path, name][1:]):
        outer = tomlkit.table(is_super_table=True)
        outer[key] = node
        node = outer
    doc[path[0] if path else name] = node
    return tomlkit.dumps(doc)


def toml_with(text: str, path: Sequence[str], name: str, entry: dict, where: str) -> str:
    doc = parse_toml(text, where)
    current = _toml_get(doc, [*path, name])
    if current is not None and _plain(current) == entry:
        return text
    if current is not None:
        text = toml_without(text, path, name, where)
    block = _toml_table(path, name, entry)
    sep = "" if not text else ("\n" if text.endswith("\n") else "\n\n")
    candidate = text + sep + block
    try:
        ok = _plain(_toml_get(parse_toml(candidate, where), [*path, name])) == entry
    except ConfigError:
        ok = False
    if ok:
        return candidate
    import tomlkit  # e.g. an inline table `mcp_servers = {...}` cannot take a [mcp_servers.x] header

    doc = parse_toml(text, where)
    node: Any = doc
    for key in path:
        if key not in node:
            node[key] = tomlkit.table()
        node = node[key]
    node[name] = entry
    return tomlkit.dumps(doc)


def toml_without(text: str, path: Sequence[str], name: str, where: str) -> str:
    import tomlkit

    doc = parse_toml(text, where)
    current = _toml_get(doc, [*path, name])
    if current is None:
        return text
    block = _toml_table(path, name, _plain(current))
    for sep in ("\n", "\n\n", ""):  # our own block, as we wrote it: cut exactly that
        if text.endswith(sep + block) and (sep or text == block):
            rest = text[:len(text) - len(sep + block)]
            if _toml_get(parse_toml(rest, where), [*path, name]) is None:
                return rest
    node: Any = doc
    for key in path:
        node = node[key]
    del node[name]
    return tomlkit.dumps(doc)


def _toml_get(doc: Any, keys: Sequence[str]) -> Any:
    node = doc
    for key in keys:
        if not hasattr(node, "get") or key not in node:
            return None
        node = node[key]
    return node


def _plain(value: Any) -> Any:
    unwrap = getattr(value, "unwrap", None)
    return unwrap() if unwrap is not None else value
