"""Issue-sized questions: a pasted bug report, a stack trace, an error with a code block.

A pure analysis of the text (``parse_issue``) into what each part is evidence of:

- **frames** of tracebacks (Python ``File "x.py", line 151, in clean``; JavaScript
  ``at fn (src/a.js:10:5)``; Java ``at pkg.Cls.fn(Cls.java:42)``; ``path.go:12``-style
  locations): a file and a routine the failure went through, the most direct evidence there is,
  resolved against the index's own paths by ``resolve_frames`` (a frame in a file the index does
  not hold, the standard library or another package, says nothing about this repository);
- **code**: fenced and indented blocks, ``>>>`` sessions and inline code, whose identifiers name
  the API the issue is about;
- **messages**: error lines (``ValueError: ...``), exact phrases;
- **files** the text names with their extension (``fitsrec.py``);
- the **prose**, and its first line (the title).

From these, ``bm25_text`` writes the keyword query (the title twice, identifiers and their
splits, file names, the error lines, every other content word once: an issue's common words do
not count once per use) and ``passages`` the texts the dense signal embeds, each within the
model's window (title and opening prose; the error and its innermost frames; the first code).
A question is issue-sized (``is_issue``) when it is longer than ``ISSUE_CHARS`` or holds more
than ``ISSUE_LINES`` non-empty lines or a traceback frame; a shorter one is searched exactly as
before.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

ISSUE_CHARS = 400  # every query of the dev sets is under 200 characters and one line
ISSUE_LINES = 2
PASSAGE_CHARS = 900  # about 256 word pieces of English prose: the bundled model's window
MAX_PASSAGES = 3
MAX_IDENTIFIERS = 40
MAX_PROSE_WORDS = 120


@dataclass(frozen=True)
class Frame:
    path: str  # as written: absolute, relative, or a bare file name
    line: int | None
    function: str  # the routine's last name part ("clean"), "" when the frame names none


@dataclass(frozen=True)
class IssueText:
    title: str
    prose: str  # the text outside code blocks and tracebacks
    code: tuple[str, ...]
    frames: tuple[Frame, ...]  # in the order written (Python: outermost first)
    messages: tuple[str, ...]
    identifiers: tuple[str, ...]  # most mentioned first
    files: tuple[str, ...]  # file names with their extension, lower case


_FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n(.*?)(?:^[ \t]*\1[ \t]*$|\Z)", re.S | re.M)
_PY_FRAME = re.compile(r'File "(?P<path>[^"\n]{1,400})", line (?P<line>\d{1,7})(?:, in (?P<func>[\w<>.$-]{1,200}))?')
_JS_FRAME = re.compile(r"\bat (?:(?P<func>[\w$.<>\[\] ]{1,200}?) \()?(?:file://)?(?P<path>[^\s():]{1,400}\.[A-Za-z]{1,6})"
                       r":(?P<line>\d{1,7})(?::\d{1,7})?\)?")
_JAVA_FRAME = re.compile(r"\bat (?P<func>[\w$.<>]{1,300})\((?P<path>[\w$-]{1,200}\.(?:java|kt|scala|groovy)):(?P<line>\d{1,7})\)")
# IPython: "File ~/x/seaborn/axisgrid.py:1490, in PairGrid.map(...)" and the older
# "~/x/seaborn/axisgrid.py in map(self, func, **kwargs)"
_IPY_FRAME = re.compile(r"(?:File )?(?P<path>[^\s,:\"'()]{1,400}\.py)(?::(?P<line>\d{1,7}))?,? in (?P<func>[\w.<>]{1,200})\(")
_LOCATION = re.compile(r"(?<![\w/.-])(?P<path>(?:[\w.-]+/){1,30}[\w.-]+\.[A-Za-z]{1,6}):(?P<line>\d{1,7})\b")
_MESSAGE = re.compile(r"^[ \t]*(?:[\w.]+\.)?(?P<name>[A-Z]\w*(?:Error|Exception|Warning|Exit|Interrupt|Fault))"
                      r"(?::[ \t]*(?P<text>[^\n]{0,300}))?[ \t]*$", re.M)
_INLINE = re.compile(r"``?([^`\n]{1,200})``?")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_FILE = re.compile(r"(?<![\w.-])(?:[\w.-]+/)*([A-Za-z0-9_][\w-]*\.(?:py|pyx|pyi|js|jsx|ts|tsx|mjs|go|rs|java|kt|rb|php|"
                   r"c|cc|cpp|h|hpp|cs|swift|scala|lua|dart|ex|exs|hs|ml|r|jl|sh|toml|cfg|ini|yaml|yml|json))(?![\w.-])")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{2,}")
# identifiers that say nothing about where: Python keywords and builtins an issue's code is full of
_COMMON = frozenset("""
import from as def class return self none true false print len str int float list dict set tuple range
object type isinstance if else elif for while try except finally with lambda yield pass raise assert
not and or in is np pd plt os sys re the this that http https www com org
""".split())  # noqa: SIM905 - a word list reads better as words
_PROSE_STOP = frozenset("""
the and for that this with from have has had not but are was were will would should could can cannot
when what which where who how why there their them they then than into onto about after before also
just like some any all more most such only very your you our out get got use used using does did done
been being here its it's i'm don't doesn't isn't expected actual behavior behaviour output result
following example issue bug problem error works working work seems seem think thanks please way
same one two new make made see saw try tried trying still even now well want need needs case cases
""".split())  # noqa: SIM905


def is_issue(query: str) -> bool:
    """Is ``query`` issue-sized (a pasted report or trace), not a one-line question?"""
    if len(query) > ISSUE_CHARS:
        return True
    if sum(1 for line in query.splitlines() if line.strip()) > ISSUE_LINES:
        return True
    return bool(_PY_FRAME.search(query) or _JAVA_FRAME.search(query))


def parse_issue(text: str) -> IssueText:
    """What each part of an issue's text is (see the module's doc); pure, linear in the text."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    code = [m.group(2) for m in _FENCE.finditer(text)]
    rest = _FENCE.sub("\n", text)
    lines = rest.split("\n")
    prose_lines: list[str] = []
    block: list[str] = []
    for line in lines:  # indented blocks and >>> sessions are code too
        if line.startswith(("    ", "\t", ">>> ", "... ", "In [", "Out[")) and line.strip():
            block.append(line)
            continue
        if block:
            code.append("\n".join(block))
            block = []
        prose_lines.append(line)
    if block:
        code.append("\n".join(block))
    frames = tuple(_frames(text))
    messages = tuple(dict.fromkeys(
        f"{m.group('name')}: {m.group('text').strip()}" if m.group("text") else m.group("name")
        for m in _MESSAGE.finditer(text)))
    prose = "\n".join(line for line in prose_lines if not _PY_FRAME.search(line) and not _MESSAGE.match(line))
    title = next((line.strip() for line in text.split("\n") if line.strip()), "")
    inline = [m.group(1) for m in _INLINE.finditer(prose)]
    files = tuple(dict.fromkeys(m.lower() for m in _FILE.findall(text)))
    return IssueText(title, prose.strip(), tuple(c for c in code if c.strip()), frames, messages,
                     _identifiers(code, inline, prose, frames), files)


def _frames(text: str) -> Iterable[Frame]:
    seen: set[tuple[str, int | None, str]] = set()
    for rx in (_PY_FRAME, _IPY_FRAME, _JAVA_FRAME, _JS_FRAME, _LOCATION):
        for m in rx.finditer(text):
            d = m.groupdict()
            func = (d.get("func") or "").strip()
            func = re.split(r"[.:]", func)[-1] if func else ""
            frame = (d["path"].strip(), int(d["line"]) if d.get("line") else None, func if func.isidentifier() else "")
            if frame not in seen:
                seen.add(frame)
                yield Frame(*frame)


def _identifiers(code: Sequence[str], inline: Sequence[str], prose: str, frames: Sequence[Frame]) -> tuple[str, ...]:
    """Code names, most mentioned first: every identifier of code blocks and inline code, the
    identifier-shaped words of the prose (``snake_case``, ``camelCase``, ``a.b``), frame routines."""
    counts: Counter[str] = Counter()
    for src in (*code, *inline):
        for ident in _IDENT.findall(_NOT_CODE.sub(" ", src)):
            for part in ident.split("."):
                if len(part) > 2 and part.lower() not in _COMMON:
                    counts[part] += 1
    for tok in _IDENT.findall(prose):
        for part in tok.split("."):
            if len(part) > 2 and part.lower() not in _COMMON and _code_shaped(part):
                counts[part] += 1
    for f in frames:
        if f.function and f.function.lower() not in _COMMON and not f.function.startswith("<"):
            counts[f.function] += 2
    return tuple(name for name, _ in counts.most_common(MAX_IDENTIFIERS))


# what a code block holds that is not code: traceback frame lines, file paths, version banners
_NOT_CODE = re.compile(r'^[ \t]*File "[^\n]*$|^[^\n]*\b(?:INSTALLED VERSIONS|commit|python-bits|OS-release|machine|'
                       r'processor|byteorder|LC_ALL|LANG|LOCALE|libhdf5|libnetcdf)\b[^\n]*$|\S*[/\\]\S*', re.M)


def _code_shaped(token: str) -> bool:
    return "_" in token or bool(re.search(r"[a-z][A-Z]", token)) or (token[:1].isupper() and token[1:2].isupper()
                                                                     and any(c.islower() for c in token))


def bm25_text(issue: IssueText) -> str:
    """The keyword query of an issue (see the module's doc)."""
    from .analysis import bm25_query

    ids = list(issue.identifiers)
    parts = [issue.title, issue.title, *ids, *ids[:10]]
    parts += [f.rsplit(".", 1)[0] for f in issue.files] * 2
    parts += list(issue.messages)
    seen = {w.lower() for p in parts for w in _WORD.findall(p)}
    words = []
    for w in _WORD.findall(issue.prose):
        low = w.lower()
        if low not in seen and low not in _PROSE_STOP:
            seen.add(low)
            words.append(w)
        if len(words) >= MAX_PROSE_WORDS:
            break
    return bm25_query(" ".join([*parts, *words]))


def passages(issue: IssueText, limit: int = MAX_PASSAGES) -> tuple[str, ...]:
    """Texts for the dense signal, each within ``PASSAGE_CHARS``: the title and opening prose,
    the error and the innermost frames, the first code block; at most ``limit``."""
    out: list[str] = []
    opening = issue.title + "\n" + issue.prose[len(issue.title):].strip() if issue.prose.startswith(issue.title) \
        else issue.title + "\n" + issue.prose
    out.append(_cut(opening))
    if issue.messages or issue.frames:
        inner = [f"{f.path} {f.function}".strip() for f in issue.frames[-4:]]
        out.append(_cut("\n".join([issue.title, *issue.messages[-2:], *inner])))
    if issue.code:
        out.append(_cut(issue.title + "\n" + issue.code[0]))
    return tuple(dict.fromkeys(p for p in out if p.strip()))[:limit]


def _cut(text: str) -> str:
    text = text.strip()
    if len(text) <= PASSAGE_CHARS:
        return text
    cut = text.rfind(" ", 0, PASSAGE_CHARS)
    return text[:cut if cut > PASSAGE_CHARS // 2 else PASSAGE_CHARS]


def resolve_frames(frames: Sequence[Frame], paths: Iterable[str]) -> list[tuple[str, Frame]]:
    """The frames whose file is one the index holds, with its indexed path, innermost first.

    A frame's path matches the indexed path that shares its longest tail of components
    (``/usr/lib/python3/site-packages/requests/models.py`` -> ``requests/models.py``); a bare
    file name, or a tail that several indexed files share, matches only when one file has it; a
    frame with folders must share at least one folder with its file, unless the file lies at the
    top of the repository."""
    by_name: dict[str, list[str]] = {}
    for p in paths:
        by_name.setdefault(p.rsplit("/", 1)[-1], []).append(p)
    out: list[tuple[str, Frame]] = []
    for f in reversed(frames):
        parts = [x for x in f.path.replace("\\", "/").split("/") if x and x != "."]
        if not parts:
            continue
        cands = by_name.get(parts[-1], [])
        best, best_len, tie = None, 0, False
        for c in cands:
            cp = c.split("/")
            n = 0
            while n < min(len(cp), len(parts)) and cp[-1 - n] == parts[-1 - n]:
                n += 1
            if n > best_len:
                best, best_len, tie = c, n, False
            elif n == best_len:
                tie = True
        # one shared component (the file name) says little when both sides have folders:
        # site-packages/matplotlib/axes/_base.py is not seaborn/_base.py
        enough = best_len >= 2 or len(parts) == 1 or (best is not None and best_len == best.count("/") + 1)
        if best is not None and not tie and enough:
            out.append((best, f))
    return out
