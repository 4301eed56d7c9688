"""Checking hits against their files (fresh/hits.py): the pure core against an oracle.

The oracle is the edited file itself: after any edit, a checked hit either holds exactly the
file's lines at ``start_line..end_line`` (``lines_current``), or says it does not; it is
``stale`` exactly when the file no longer holds the text at the indexed lines."""

from __future__ import annotations

import os

from hypothesis import given, settings as hsettings, strategies as st

from codeseam.fresh import sendable
from codeseam.fresh.hits import check_hit, check_hits, line_starts, locate, span_text
from codeseam.records import Hit

LINES = [f"line {i}: value_{i} = compute({i})\n" for i in range(40)]


def hit_of(text: str, start: int, end: int, path: str = "a.py") -> Hit:
    return Hit("repo", path, "sym", "function", "python", start, end, 1.0, text)


def lines(text: str, start: int, end: int) -> str:
    return span_text(text, line_starts(text), start, end)


def test_line_starts_count_newlines_only():
    text = "a\fb\nc\r\nd"
    assert line_starts(text) == [0, 4, 7]
    assert lines(text, 2, 3) == "c\r\nd"
    assert lines(text, 4, 4) is None


def test_fresh_hit_is_returned_unchanged():
    text = "".join(LINES)
    hit = hit_of("".join(LINES[5:9]), 6, 9)
    assert check_hit(hit, text) is hit


def test_lines_inserted_above_move_the_hit_and_say_so():
    old = "".join(LINES)
    hit = hit_of("".join(LINES[5:9]), 6, 9)
    new = "# one\n# two\n# three\n" + old
    got = check_hit(hit, new)
    assert got.stale and got.lines_current and (got.start_line, got.end_line) == (9, 12)
    assert lines(new, got.start_line, got.end_line) == hit.text
    assert "now at lines 9-12" in got.note and "the index has 6-9" in got.note


def test_text_gone_keeps_the_indexed_lines_flagged_not_current():
    old = "".join(LINES)
    hit = hit_of("".join(LINES[5:9]), 6, 9)
    new = old.replace("value_7", "renamed_7")
    got = check_hit(hit, new)
    assert got.stale and not got.lines_current and (got.start_line, got.end_line) == (6, 9)
    assert "no longer holds this text" in got.note


def test_unreadable_file_is_stale_with_the_reason():
    hit = hit_of("x\n", 1, 1)
    got = check_hit(hit, None, unreadable="the file is now binary")
    assert got.stale and not got.lines_current and got.note.startswith("the file is now binary")


def test_nearest_occurrence_wins():
    block = "def f():\n    return 1\n"
    text = block + "\n" * 10 + block + "\n" * 30 + block
    hit = hit_of(block, 14, 15)  # indexed near the second copy, which moved down by one line
    got = check_hit(hit, "\n" + text)
    assert (got.start_line, got.end_line) == (14, 15)
    assert locate(block, text, line_starts(text), 40) == (45, 46)


def test_redacted_hit_is_compared_with_the_scrubbed_file():
    file_text = 'TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"\nx = 1\n'
    stored = 'TOKEN = "[REDACTED:github-token]"\nx = 1\n'

    def scrub(text: str, path: str) -> str:
        return text.replace("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "[REDACTED:github-token]")

    hit = hit_of(stored, 1, 2)
    assert not check_hit(hit, file_text, scrub=scrub).stale
    assert check_hit(hit, file_text).stale  # without the scrubber it would not match


@hsettings(max_examples=300, deadline=None)
@given(st.integers(0, 35), st.integers(1, 5), st.lists(st.tuples(st.sampled_from(["ins", "del", "edit"]),
                                                                 st.integers(0, 45)), max_size=6))
def test_checked_hits_never_show_old_lines_as_current(first, size, edits):
    """Any sequence of line edits: a hit marked current holds exactly the file's lines now;
    a fresh one is one whose indexed lines still hold it."""
    old_lines = list(LINES)
    start, end = first + 1, min(first + size, len(old_lines))
    hit = hit_of("".join(old_lines[start - 1:end]), start, end)
    new_lines = list(old_lines)
    for op, at in edits:
        at = min(at, len(new_lines))
        if op == "ins":
            new_lines.insert(at, f"inserted at {at}\n")
        elif op == "del" and new_lines:
            del new_lines[min(at, len(new_lines) - 1)]
        elif new_lines:
            i = min(at, len(new_lines) - 1)
            new_lines[i] = new_lines[i].replace("compute", "changed")
    new = "".join(new_lines)
    got = check_hit(hit, new)
    at_old_lines = lines(new, start, end)
    assert got.stale == (at_old_lines != hit.text)
    if got.lines_current:
        assert lines(new, got.start_line, got.end_line) == hit.text
    else:
        assert hit.text not in new


def test_check_hits_reads_each_file_and_reports_missing_ones(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("".join(LINES))
    (root / "b.bin").write_bytes(b"abc\0def\n")
    os.symlink(tmp_path, root / "out.py")
    hits = [hit_of("".join(LINES[0:2]), 1, 2), hit_of("gone\n", 1, 1, "gone.py"), hit_of("abc\n", 1, 1, "b.bin"),
            hit_of("x\n", 1, 1, "out.py"), Hit("other", "a.py", "s", "k", "python", 1, 1, 1.0, "x\n")]
    got = check_hits(hits, {"repo": str(root), "other": str(tmp_path / "nowhere")}, max_file_bytes=1 << 20)
    assert not got[0].stale
    assert "deleted" in got[1].note and "binary" in got[2].note
    assert "outside the repo" in got[3].note and "no longer exists" in got[4].note
    assert all(not h.lines_current for h in got[1:])


def test_ask_sends_only_current_text_and_says_what_it_left_out():
    fresh = hit_of("a\n", 1, 1)
    import dataclasses

    moved = dataclasses.replace(hit_of("b\n", 5, 5, "m.py"), stale=True, note="moved")
    gone = dataclasses.replace(hit_of("c\n", 7, 7, "g.py"), stale=True, lines_current=False, note="no longer there")
    keep, notes = sendable([fresh, moved, gone])
    assert keep == (fresh, moved)
    assert any("left out g.py:7-7: no longer there" in n for n in notes)
    assert any("m.py:5-5" in n and "current lines" in n for n in notes)
