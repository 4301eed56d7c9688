"""README.md and docs/*.md quote the tool; the quotes must be the tool's.

- Every ``codeseam <command>`` in a shell code block or in inline code names a real command of
  the CLI's click group, and every ``--flag`` (or ``-k``) quoted after it on that line is one of
  that command's options (a ``codeseam --flag`` one of the group's).
- Every ``RAG_*`` variable is a real setting: ``RAG_`` + a ``Settings`` field upper-cased, or
  ``RAG_CONFIG`` (``RAG_LLM_*`` stands for the settings that start so).
- docs/configuration.md names every setting.
- Every relative link points to an existing file, and its ``#anchor`` to a heading there.
- The README stays a user's README: at most 400 lines, no paths into a checkout's ``../shared``.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from pathlib import Path

import click
import pytest

from codeseam.settings import Settings
from codeseam.surfaces.cli import COMMANDS, cli

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)  # blocks pair in order
ANY_BLOCK = BLOCK
SHELL = {"", "sh", "bash", "shell", "console", "text"}
INLINE = re.compile(r"(?<!`)`([^`]+)`(?!`)")  # a span may go on over a line break
ENV = re.compile(r"\bRAG_[A-Z0-9_]+\*?")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
STOP = {"#", "|", "||", "&&", ";", ">", "2>", "<-", "&"}


def rel(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:  # a page of a test's own
        return str(path)


def command_lines(text: str) -> list[str]:
    """The lines of shell code blocks, and every inline code span outside blocks."""
    lines = [ln for m in BLOCK.finditer(text) if m.group(1) in SHELL for ln in m.group(2).splitlines()]
    prose = ANY_BLOCK.sub("", text)
    return lines + [" ".join(m.group(1).split()) for m in INLINE.finditer(prose)]


def tokens(line: str) -> list[str]:
    line = line.strip().removeprefix("$ ")
    try:
        parts = shlex.split(line, comments=False)
    except ValueError:  # an unbalanced quote in an example: words are enough
        parts = line.split()
    return [p.strip("[]") for p in parts]


def options_of(command: click.Command) -> set[str]:
    names = {"--help", "-h"}
    for param in command.params:
        if isinstance(param, click.Option):
            names.update(param.opts)
            names.update(param.secondary_opts)
    return names


def command_starts(parts: list[str]) -> set[int]:
    """Where a command may start: first on the line (after ``VAR=value`` words), or after
    ``--``, ``|``, ``&&`` or ``;``."""
    starts, i = set(), 0
    while i < len(parts) and re.fullmatch(r"[A-Za-z_]\w*=\S*", parts[i]):
        i += 1
    starts.add(i)
    for j, word in enumerate(parts):
        if word in STOP or word == "--":
            starts.add(j + 1)
    return starts


def command_errors(line: str) -> tuple[list[str], int]:
    """What is stale in one quoted line, and how many commands it quotes."""
    errors, seen = [], 0
    parts = tokens(line)
    ctx = click.Context(cli)
    starts = command_starts(parts)
    for i, word in enumerate(parts):
        if i not in starts or (word != "codeseam" and not word.endswith("/bin/codeseam")):
            continue  # a word of prose, a name (`claude mcp add codeseam -- ...`)
        rest = parts[i + 1:]
        if not rest or rest[0] in STOP:
            continue
        if rest[0].startswith("-"):
            command, name, flags = cli, "codeseam", rest
        else:
            name = rest[0]
            if name not in COMMANDS:
                errors.append(f"`codeseam {name}` is not a command (quoted: {line.strip()})")
                continue
            command, flags = cli.get_command(ctx, name), rest[1:]
            assert command is not None
        seen += 1
        known = options_of(command) | ({"--version", "-v", "--verbose"} if command is cli else set())
        for flag in flags:
            if flag in STOP or flag == "codeseam":
                break
            if flag.startswith("-") and flag != "-" and not flag.startswith("---"):
                bare = flag.split("=", 1)[0]
                if re.fullmatch(r"--?[A-Za-z][\w-]*", bare) and bare not in known:
                    errors.append(f"`codeseam {name}` has no option {bare} (quoted: {line.strip()})")
    return errors, seen


def settings_names() -> set[str]:
    return {"RAG_" + f.name.upper() for f in dataclasses.fields(Settings)} | {"RAG_CONFIG"}


def env_errors(text: str) -> list[str]:
    names = settings_names()
    bad = []
    for m in ENV.finditer(text):
        quoted = m.group(0)
        if quoted.endswith("*"):
            if not any(n.startswith(quoted[:-1]) for n in names):
                bad.append(f"no setting matches {quoted}")
        elif quoted.rstrip("_") not in names:
            bad.append(f"{quoted} is not a setting")
    return bad


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = ANY_BLOCK.sub("", path.read_text(encoding="utf-8"))
    return {slug(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", text, re.M)}


def link_errors(path: Path, text: str) -> list[str]:
    bad = []
    for m in LINK.finditer(ANY_BLOCK.sub("", text)):
        target = m.group(1)
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue  # http:, https:, mailto:
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.is_file():
            bad.append(f"{rel(path)} links to {target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            bad.append(f"{rel(path)} links to {target}: no such heading in {rel(dest)}")
    return bad


@pytest.mark.parametrize("path", DOCS, ids=rel)
def test_quoted_commands_and_flags_exist(path):
    errors, seen = [], 0
    for line in command_lines(path.read_text(encoding="utf-8")):
        found, n = command_errors(line)
        errors += found
        seen += n
    assert not errors, "\n".join(errors)
    if path.name in ("README.md", "agents.md"):
        assert seen > 10, f"{rel(path)} quotes only {seen} commands: is the parser blind?"


@pytest.mark.parametrize("path", DOCS, ids=rel)
def test_quoted_settings_exist(path):
    errors = env_errors(path.read_text(encoding="utf-8"))
    assert not errors, f"{rel(path)}:\n" + "\n".join(errors)


@pytest.mark.parametrize("path", DOCS, ids=rel)
def test_relative_links_resolve(path):
    errors = link_errors(path, path.read_text(encoding="utf-8"))
    assert not errors, "\n".join(errors)


def test_the_configuration_page_names_every_setting():
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert sorted(n for n in settings_names() if n not in page) == []


def test_the_checks_see_what_the_docs_quote():
    """Every command is quoted somewhere, and every doc page is linked from the README."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in DOCS)
    quoted = {t[1] for ln in command_lines(text) if len(t := tokens(ln)) > 1 and t[0] == "codeseam"}
    assert set(COMMANDS) - quoted == set(), "commands no doc quotes"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    linked = {m.group(1).partition("#")[0] for m in LINK.finditer(readme)}
    assert {f"docs/{p.name}" for p in DOCS[1:]} - linked == set(), "doc pages the README does not link"


def test_the_checks_catch_stale_quotes(tmp_path):
    """A renamed command, a dropped flag, an unknown setting and a dead link are each caught."""
    assert command_errors("codeseam frobnicate .")[0]
    assert command_errors("RAG_K=3 codeseam search 'retry delay' --no-such-flag -k 3")[0] == [
        "`codeseam search` has no option --no-such-flag (quoted: RAG_K=3 codeseam search 'retry delay' "
        "--no-such-flag -k 3)"]
    assert command_errors("codeseam refs NAME [--repo ID] [--kind def] [--json]") == ([], 1)
    assert command_errors("claude mcp add codeseam -- codeseam mcp") == ([], 1)
    assert env_errors("set RAG_NO_SUCH_SETTING or RAG_NOPE_*; RAG_K and RAG_LLM_* are fine") == [
        "RAG_NO_SUCH_SETTING is not a setting", "no setting matches RAG_NOPE_*"]
    page = tmp_path / "page.md"
    page.write_text("# Top\n\n## Two words\n")
    assert link_errors(page, "[a](page.md#two-words) [b](page.md#nope) [c](gone.md) [d](https://x.invalid/)") == [
        f"{rel(page)} links to page.md#nope: no such heading in {rel(page)}",
        f"{rel(page)} links to gone.md: no such file"]


def test_readme_is_a_users_readme():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 400
    assert "../shared" not in text, "a clone has no ../shared"
    assert "pip install codeseam" not in text, "codeseam is not published on PyPI"
    assert not re.search(r"\bissue \d+|#\d{2,}\b|\bast-\d\b|\b[0-9a-f]{7,40}\b", text), \
        "no issue numbers, internal version names or commit hashes in the README"
