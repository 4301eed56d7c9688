"""A streamed answer as it may be shown: the citation rule of ``answer.py`` (its point 7)
applied to the deltas of a reply while they arrive, so that no skin (the CLI, the NDJSON
stream of ``POST /ask``, the page) ever shows a citation the final check removes, or the
model's own source list."""

from __future__ import annotations

import re

from .citation_groups import FENCE, OPEN_THINK, OWN_LIST, THINK, rewrite_line


class CheckedStream:
    """The deltas of a streamed reply, as they may be shown: settled words, citations checked.

    ``feed`` takes a raw delta and returns the text to show now (prose up to its last settled
    word, code a whole line at a time); ``finish`` takes the checked
    answer's body and returns what is left to show (held-back lines the check kept, the last
    line). What is shown is never a citation outside the sources sent, nor the model's own
    source list; the ``Sources:`` list of the checked answer follows it (the skins add it)."""

    def __init__(self, n_sources: int) -> None:
        self.n = n_sources
        self.pending = ""  # the current, unfinished line
        self.fence: re.Pattern[str] | None = None  # the closer of the code block we are in
        self.thinking = False
        self.held: list[str] = []  # from a source-list heading on, until the reply ends
        self.midline = False  # the start of the current line is already shown

    def feed(self, delta: str) -> str:
        self.pending += delta
        out = ""
        if "\n" in self.pending:
            *lines, self.pending = self.pending.split("\n")
            out = "".join(self._line(line) for line in lines)
        return out + self._partial()

    def _partial(self) -> str:
        """The settled words of the unfinished prose line: up to its last space, when nothing
        before that can still change (no open ``[``, code span or ``<think>``), and the line
        cannot turn out to be a fence, a source-list heading or reasoning."""
        text = self.pending
        if self.fence is not None or self.held or self.thinking or not text:
            return ""
        if not self.midline and _could_open(text):
            return ""
        cut = max(text.rfind(" "), text.rfind("\t"))
        if cut <= 0:
            return ""
        head = text[:cut]
        if "<" in head or head.count("`") % 2 or head.rfind("[") > head.rfind("]"):
            return ""
        shown = self._rewrite(head)
        self.pending, self.midline = text[cut:], True
        return shown

    def _rewrite(self, text: str) -> str:
        """``rewrite_line`` of a piece of a line: a piece after the shown start of its line
        (it begins with the space of the cut) is rewritten as it reads in the whole line."""
        if not self.midline:
            return rewrite_line(text, self.n)[0]
        return rewrite_line("x" + text, self.n)[0][1:]

    def finish(self, body: str) -> str:
        """What to show after the last delta, given the checked answer's ``body``."""
        out = self._line(self.pending, last=True) if self.pending else ""
        self.pending = ""
        if self.held:
            rewritten = [rewrite_line(line, self.n)[0] for line in self.held]
            kept = "\n".join(rewritten).strip()
            if kept and kept in body:  # not a trailing list after all: the check kept it
                out += "\n".join(rewritten)
            self.held = []
        return out

    def _line(self, line: str, last: bool = False) -> str:
        end = "" if last else "\n"
        if self.midline:  # the rest of a prose line whose start is shown
            rest = self._rewrite(line)
            self.midline = False
            return rest + end
        if self.thinking:
            close = line.lower().find("</think>")
            if close < 0:
                return ""
            self.thinking, line = False, line[close + len("</think>"):]
        if "<think>" in line.lower():
            self.thinking = bool(OPEN_THINK.search(line))
            line = THINK.sub("", line)
        if self.held:
            self.held.append(line)
            return ""
        if self.fence is not None:
            if self.fence.match(line):
                self.fence = None
            return line + end
        opener = FENCE.match(line)
        if opener:
            mark = opener.group(1)
            self.fence = re.compile(r"^\s{0,3}" + re.escape(mark[0]) + rf"{{{len(mark)},}}\s*$")
            return line + end
        if OWN_LIST.match(line):
            self.held.append(line)
            return ""
        return rewrite_line(line, self.n)[0] + end


_HEADINGS = ("sources", "references", "citations")


def _could_open(text: str) -> bool:
    """Whether an unfinished line may still become a fence or a source-list heading."""
    lead = text.lstrip(" ")
    if lead[:1] in ("`", "~", "<") or not lead.strip():
        return True
    word = lead.lstrip("#*_ \t").lower()
    return any(h.startswith(word) or word.startswith(h) for h in _HEADINGS)
