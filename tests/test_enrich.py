"""Enrichment, pure parts: alphabet check, request views, reply reading, placement, cache.

The LLM round trips are in test_enrich_llm.py; the pipeline test in test_enrich_e2e.py.
"""

from __future__ import annotations

import json
import re
import sqlite3
import sysconfig
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from codeseam.chunk import chunk_file
from codeseam.enrich import DescriptionCache, eta_seconds
from codeseam.enrich.place import PREFIX, clean, fit, with_description
from codeseam.enrich.prompt import (BadReply, Item, build_messages, descriptions_from, parse_reply,
                                    plan_views, render_view, split_lines)
from codeseam.enrich.script import LANGUAGES, in_script, language, script_of, script_share
from codeseam.errors import ConfigError

STDLIB = Path(sysconfig.get_paths()["stdlib"])

# One sentence per language about the same code, with the script most of its letters are in.
SAMPLES = {
    "en": ("Parses the command line and returns the namespace with the parsed options.", "Latin"),
    "de": ("Zerlegt die Befehlszeile und gibt die Namensraum-Objekte mit den Optionen zurück.", "Latin"),
    "tr": ("Komut satırını ayrıştırır ve ayrıştırılmış seçeneklerle ad alanını döndürür.", "Latin"),
    "ru": ("Разбирает командную строку и возвращает пространство имён с разобранными опциями.", "Cyrillic"),
    "el": ("Αναλύει τη γραμμή εντολών και επιστρέφει τον χώρο ονομάτων με τις επιλογές.", "Greek"),
    "zh": ("解析命令行并返回包含已解析选项的命名空间。", "Han"),
    "ja": ("コマンドラインを解析して、解析済みのオプションを含む名前空間を返します。", "Katakana"),
    "ko": ("명령줄을 구문 분석하고 구문 분석된 옵션이 있는 네임스페이스를 반환합니다.", "Hangul"),
    "ar": ("يحلل سطر الأوامر ويعيد مساحة الأسماء مع الخيارات المحللة.", "Arabic"),
    "he": ("מנתח את שורת הפקודה ומחזיר את מרחב השמות עם האפשרויות שנותחו.", "Hebrew"),
    "hi": ("कमांड लाइन को पार्स करता है और पार्स किए गए विकल्पों के साथ नेमस्पेस लौटाता है।", "Devanagari"),
    "th": ("แยกวิเคราะห์บรรทัดคำสั่งและส่งคืนเนมสเปซพร้อมตัวเลือกที่แยกวิเคราะห์แล้ว", "Thai"),
}


# -- alphabet check --------------------------------------------------------------------

@pytest.mark.parametrize("code", sorted(SAMPLES))
def test_each_sample_passes_its_own_language(code):
    assert in_script(SAMPLES[code][0], language(code))


def test_a_sample_passes_exactly_the_languages_written_in_its_script():
    """The oracle: the script most of a sample's letters are in (declared above, by hand)."""
    for code, (text, script) in SAMPLES.items():
        for other in LANGUAGES:
            expected = script in language(other).scripts
            assert in_script(text, language(other)) is expected, (code, other)


def test_latin_identifiers_do_not_sink_a_non_latin_description():
    ru = ("Метод `parse_known_args` класса ArgumentParser разбирает аргументы через "
          "self._parse_known_args() и возвращает namespace вместе со списком лишних строк.")
    assert in_script(ru, language("ru"))
    share = script_share(ru, language("ru").scripts)
    assert share is not None and share > 0.8  # code tokens are not counted at all
    assert not in_script(ru, language("en"))


def test_mostly_foreign_text_is_rejected_even_with_a_few_native_words():
    mixed = "Функция parses the command line arguments and returns the resulting namespace object."
    assert not in_script(mixed, language("ru"))
    assert in_script(mixed, language("en"))


def test_text_without_letters_fails_and_code_only_text_is_judged_by_its_letters():
    assert not in_script("1234 -- ()", language("en"))
    assert not in_script("", language("ru"))
    assert in_script("`parse_args()`", language("en"))
    assert not in_script("`parse_args()`", language("ru"))


def test_language_codes_are_normalised_and_unknown_codes_stop_the_run():
    assert language("pt-BR").code == "pt" and language("zh_Hant").code == "zh"
    assert language(" RU ").scripts == frozenset({"Cyrillic"})
    with pytest.raises(ConfigError, match="RAG_ENRICH_LANGUAGE"):
        language("klingon")


def test_script_of_agrees_with_unicode_names_for_every_letter():
    """Cross-check the range table against the character database's names, exhaustively
    over every letter Unicode has (a sample once missed U+FB00, LATIN SMALL LIGATURE FF)."""
    import sys
    import unicodedata

    names = {"LATIN": "Latin", "CYRILLIC": "Cyrillic", "GREEK": "Greek", "HEBREW": "Hebrew",
             "ARABIC": "Arabic", "HANGUL": "Hangul", "HIRAGANA": "Hiragana", "THAI": "Thai",
             "DEVANAGARI": "Devanagari", "ARMENIAN": "Armenian", "GEORGIAN": "Georgian",
             "KATAKANA": "Katakana"}
    wrong, checked = [], 0
    for cp in range(sys.maxunicode + 1):
        ch = chr(cp)
        if not unicodedata.category(ch).startswith("L"):
            assert script_of(ch) is None
            continue
        name = unicodedata.name(ch, "")
        first = name.split(" ")[0]
        expected = None
        if first in names and "MODIFIER" not in name and "FULLWIDTH" not in name:
            expected = names[first]
        elif name.startswith("CJK UNIFIED IDEOGRAPH"):
            expected = "Han"
        if expected is not None:
            checked += 1
            if script_of(ch) != expected:
                wrong.append((f"U+{cp:04X}", name, script_of(ch)))
    assert checked > 100_000
    assert wrong == []


# -- request views -----------------------------------------------------------------------

def _items(chunks):
    return [Item(f"c{i}", c.start_line, c.end_line, c.kind, c.symbol) for i, c in enumerate(chunks, 1)]


def _shown_and_marked(rendered: str, n: int) -> tuple[list[int], list[int]]:
    shown, marked = [], []
    for line in rendered.split("\n"):
        m = re.match(r"^\s*(\d+)\| ", line)
        if m:
            shown.append(int(m.group(1)))
            continue
        g = re.fullmatch(r"\.\.\. lines (\d+)-(\d+) not shown \.\.\.", line)
        assert g, f"unexpected line {line!r}"
        marked.extend(range(int(g.group(1)), int(g.group(2)) + 1))
    return shown, marked


def _check_views(lines, items, views):
    n = len(lines)
    asked = [i for v in views for i in v.ids]
    assert sorted(asked) == sorted(it.id for it in items)  # every id asked exactly once
    by_id = {it.id: it for it in items}
    for v in views:
        rendered = render_view(lines, v)
        shown, marked = _shown_and_marked(rendered, n)
        # nothing is cut silently: every line is shown or inside a "not shown" marker, once
        assert sorted(shown + marked) == list(range(1, n + 1))
        assert shown == sorted(shown)
        for i in v.ids:
            it = by_id[i]
            assert set(range(it.start, it.end + 1)) <= set(shown)  # a chunk is shown whole
        for num_line in rendered.split("\n"):
            m = re.match(r"^\s*(\d+)\| (.*)$", num_line, re.S)
            if m:
                assert m.group(2) == lines[int(m.group(1)) - 1]


def test_a_small_file_is_one_view_with_every_line():
    text = (STDLIB / "bisect.py").read_text(encoding="utf-8")
    chunks = chunk_file("bisect.py", text)
    lines = split_lines(text)
    views = plan_views(lines, _items(chunks))
    assert len(views) == 1 and views[0].ranges == ((1, len(lines)),)
    _check_views(lines, _items(chunks), views)


def test_a_large_file_is_sent_as_views_that_fit_and_cover_every_chunk():
    text = (STDLIB / "argparse.py").read_text(encoding="utf-8")
    chunks = chunk_file("argparse.py", text)
    lines = split_lines(text)
    items = _items(chunks)
    budget = 12_000
    views = plan_views(lines, items, max_chars=budget, around=10)
    assert len(views) > 5
    _check_views(lines, items, views)
    for v in views:
        if len(v.ids) > 1:  # a view with one chunk may exceed the budget, never a packed one
            assert len(render_view(lines, v)) <= budget + 200


@given(
    sizes=st.lists(st.integers(min_value=1, max_value=30), min_size=1, max_size=25),
    widths=st.lists(st.integers(min_value=0, max_value=120), min_size=1, max_size=10),
    budget=st.integers(min_value=50, max_value=3000),
    around=st.integers(min_value=0, max_value=8),
)
@hsettings(max_examples=150, deadline=None)
def test_views_cover_and_mark_everything(sizes, widths, budget, around):
    items, lines, start = [], [], 1
    for k, size in enumerate(sizes):
        items.append(Item(f"c{k + 1}", start, start + size - 1, "function", f"f{k}"))
        lines.extend("x" * widths[(start + j) % len(widths)] for j in range(size))
        start += size
    _check_views(lines, items, plan_views(lines, items, max_chars=budget, around=around))


def test_messages_list_every_id_with_its_span_and_the_language():
    items = [Item("c1", 1, 3, "function", "f"), Item("c7", 4, 9, "class", "K")]
    msgs = build_messages("a/b.py", "python", "1| x", items, "Turkish")
    user = msgs[-1]["content"]
    assert "c1: lines 1-3, function f" in user and "c7: lines 4-9, class K" in user
    assert "Turkish" in user and "Turkish" in msgs[0]["content"]
    assert "a/b.py" in user


# -- reply reading -----------------------------------------------------------------------

@given(st.dictionaries(st.from_regex(r"c[0-9]{1,3}", fullmatch=True), st.text(max_size=40), max_size=6),
       st.sampled_from(["{}", "```json\n{}\n```", "Sure! Here you go:\n```\n{}\n```\nHope it helps.",
                        "Here is the JSON: {}", "{}\n"]))
@hsettings(max_examples=150, deadline=None)
def test_parse_reply_finds_the_object_inside_fences_and_chatter(obj, wrapper):
    assert parse_reply(wrapper.replace("{}", json.dumps(obj, ensure_ascii=False))) == obj


@pytest.mark.parametrize("bad", ["", "no json here", "[1, 2]", '{"c1": "unterminated', "```\n{c1: x}\n```"])
def test_parse_reply_rejects_what_is_not_an_object(bad):
    with pytest.raises(BadReply):
        parse_reply(bad)


def test_descriptions_from_normalises_keys_and_unwraps_one_level():
    wanted = ["c1", "c2", "c3"]
    assert descriptions_from({"C1": "a", "2": "b", "c9": "x", "c3": 5}, wanted) == {"c1": "a", "c2": "b"}
    assert descriptions_from({"descriptions": {"c1": "a", "c3": {"description": "c"}}}, wanted) == \
        {"c1": "a", "c3": "c"}
    assert descriptions_from({"c1": "   ", "c2": None}, wanted) == {}


# -- placement ---------------------------------------------------------------------------

def _count(text: str) -> int:
    return len(re.findall(r"\w+|[^\w\s]", text))


def test_description_goes_between_header_and_code_and_text_is_untouched():
    text = (STDLIB / "heapq.py").read_text(encoding="utf-8")
    for c in chunk_file("heapq.py", text):
        placed, how = fit(c, "Keeps a heap ordered.")
        assert how == "placed" and placed.text == c.text
        assert placed.indexed_text.endswith("\n" + PREFIX + "Keeps a heap ordered.\n" + c.text)
        assert placed.indexed_text.startswith(c.indexed_text[: len(c.indexed_text) - len(c.text)])
        assert placed.hash != c.hash


def test_a_chunk_without_header_gets_the_line_on_top():
    assert with_description("x = 1\n", "x = 1\n", "Sets x.") == PREFIX + "Sets x.\nx = 1\n"
    assert with_description("other", "x", "D") == PREFIX + "D\nother"


@given(words=st.lists(st.from_regex(r"[a-z]{1,9}", fullmatch=True), min_size=1, max_size=60),
       slack=st.integers(min_value=-5, max_value=80))
@hsettings(max_examples=120, deadline=None)
def test_fit_never_breaks_the_token_budget_and_trims_only_the_description(words, slack):
    text = (STDLIB / "bisect.py").read_text(encoding="utf-8")
    chunk = chunk_file("bisect.py", text)[1]
    max_tokens = _count(chunk.indexed_text) + slack
    desc = " ".join(words)
    placed, how = fit(chunk, desc, _count, max_tokens)
    assert placed.text == chunk.text
    if how == "dropped":
        assert placed is chunk
        return
    assert _count(placed.indexed_text) <= max_tokens or _count(chunk.indexed_text) > max_tokens
    line = next(ln for ln in placed.indexed_text.split("\n") if ln.startswith(PREFIX))
    got = line[len(PREFIX):]
    if how == "placed":
        assert got == desc
    else:
        assert got.endswith("…") and desc.startswith(got[:-1]) and len(got) - 1 < len(desc)
        longer = " ".join(words[: len(got[:-1].split(" ")) + 1]) + "…"  # one more word would not fit
        assert _count(with_description(chunk.indexed_text, chunk.text, longer)) > max_tokens


def test_clean_makes_one_capped_line():
    text, capped = clean('  "Reads   the\nfile.\tThen closes it."  ')
    assert (text, capped) == ("Reads the file. Then closes it.", False)
    long = "word " * 200
    text, capped = clean(long, max_chars=100)
    assert capped and len(text) <= 101 and text.endswith("…") and "\n" not in text


# -- cache ---------------------------------------------------------------------------------

def test_cache_is_keyed_by_hash_model_language_and_version(tmp_path):
    path = tmp_path / "sub" / "enrich-cache.sqlite"
    cache = DescriptionCache(path)
    cache.put_many([("h1", "d1"), ("h2", "d2")], "m", "en", "1")
    assert cache.get_many(["h1", "h2", "h3"], "m", "en", "1") == {"h1": "d1", "h2": "d2"}
    for key in [("m2", "en", "1"), ("m", "ru", "1"), ("m", "en", "2")]:
        assert cache.get_many(["h1"], *key) == {}
    cache.close()
    again = DescriptionCache(path)  # persisted
    assert again.get_many(["h1"], "m", "en", "1") == {"h1": "d1"}
    assert again.count() == 2
    again.close()


def test_cache_handles_many_keys_and_threads(tmp_path):
    cache = DescriptionCache(tmp_path / "c.sqlite")
    errors = []

    def work(k):
        try:
            items = [(f"h{k}-{i}", f"d{k}-{i}") for i in range(300)]
            cache.put_many(items, "m", "en", "1")
            got = cache.get_many([h for h, _ in items], "m", "en", "1")
            assert got == dict(items)
        except Exception as exc:  # pragma: no cover  # noqa: BLE001 - every error is reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and cache.count() == 1800
    assert len(cache.get_many([f"h1-{i}" for i in range(300)] * 3, "m", "en", "1")) == 300
    cache.close()


def test_a_broken_cache_file_does_not_stop_the_run(tmp_path, caplog):
    bad = tmp_path / "enrich-cache.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    cache = DescriptionCache(bad)
    cache.put_many([("h", "d")], "m", "en", "1")
    assert cache.get_many(["h"], "m", "en", "1") == {"h": "d"}
    assert "cannot open the enrichment cache" in caplog.text
    cache.close()
    with pytest.raises(sqlite3.DatabaseError):  # the file itself was left alone
        sqlite3.connect(bad).execute("SELECT 1 FROM descriptions").fetchall()


def test_rates_blend_runs(tmp_path):
    cache = DescriptionCache(tmp_path / "c.sqlite")
    assert cache.rate("m") is None
    cache.record_rate("m", 4.0, 10)
    cache.record_rate("m", 8.0, 10)
    assert cache.rate("m") == pytest.approx(6.0)
    cache.close()


def test_eta():
    assert eta_seconds(0, 10, 5.0) is None and eta_seconds(3, None, 5.0) is None
    assert eta_seconds(5, 10, 20.0) == pytest.approx(20.0)
    assert eta_seconds(12, 10, 20.0) == 0.0
