"""The alphabet check: is a description written in the script its language uses?

Small models slide into another script under load without saying so (a Russian run turns
Chinese, an English run turns Cyrillic). The check is by Unicode ranges, not by guessing
the language: ``expected_scripts("ru") == {"Cyrillic"}``, and a description passes when
at least ``min_share`` of its letters are in an expected script.

Code identifiers inside a description are Latin whatever the language. So letters inside
code-like tokens (backtick spans, ``snake_case``, ``camelCase``, ``a.b``, ``f()``) are not
counted, and the threshold is a share, not "every letter": an English word such as
``namespace`` in a Russian description does not get it rejected.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass

from ..errors import ConfigError

# A description passes when at least this share of its counted letters is in an
# expected script ("most letters in another script" -> rejected).
MIN_SHARE = 0.5

# (first, last, script) code point ranges of letters, sorted by first.
_RANGES: list[tuple[int, int, str]] = sorted([
    (0x0041, 0x024F, "Latin"), (0x1E00, 0x1EFF, "Latin"), (0x2C60, 0x2C7F, "Latin"),
    (0xA720, 0xA7FF, "Latin"), (0xAB30, 0xAB64, "Latin"),
    (0xAB65, 0xAB65, "Greek"), (0xAB66, 0xAB6F, "Latin"), (0xFF21, 0xFF5A, "Latin"),
    (0x0250, 0x02AF, "Latin"),  # IPA extensions
    # phonetic extensions: Latin with a few Greek and Cyrillic small capitals inside
    (0x1D00, 0x1D25, "Latin"), (0x1D26, 0x1D2A, "Greek"), (0x1D2B, 0x1D2B, "Cyrillic"),
    (0x1D2C, 0x1D65, "Latin"), (0x1D66, 0x1D6A, "Greek"), (0x1D6B, 0x1DBF, "Latin"),
    (0x2090, 0x209C, "Latin"), (0x2184, 0x2184, "Latin"), (0xFB00, 0xFB06, "Latin"),
    (0x10780, 0x107BF, "Latin"), (0x1DF00, 0x1DFFF, "Latin"),
    (0x0370, 0x03FF, "Greek"), (0x1F00, 0x1FFF, "Greek"),
    (0x0400, 0x052F, "Cyrillic"), (0x1C80, 0x1C8F, "Cyrillic"), (0x2DE0, 0x2DFF, "Cyrillic"),
    (0xA640, 0xA69F, "Cyrillic"),
    (0x0530, 0x058F, "Armenian"), (0xFB13, 0xFB17, "Armenian"),
    (0x0590, 0x05FF, "Hebrew"), (0xFB1D, 0xFB4F, "Hebrew"),
    (0x0600, 0x06FF, "Arabic"), (0x0750, 0x077F, "Arabic"), (0x0870, 0x089F, "Arabic"), (0x08A0, 0x08FF, "Arabic"),
    (0x1EE00, 0x1EEFF, "Arabic"),
    (0xFB50, 0xFDFF, "Arabic"), (0xFE70, 0xFEFF, "Arabic"),
    (0x0900, 0x097F, "Devanagari"), (0xA8E0, 0xA8FF, "Devanagari"), (0x0980, 0x09FF, "Bengali"), (0x0A00, 0x0A7F, "Gurmukhi"),
    (0x0A80, 0x0AFF, "Gujarati"), (0x0B00, 0x0B7F, "Oriya"), (0x0B80, 0x0BFF, "Tamil"),
    (0x0C00, 0x0C7F, "Telugu"), (0x0C80, 0x0CFF, "Kannada"), (0x0D00, 0x0D7F, "Malayalam"),
    (0x0D80, 0x0DFF, "Sinhala"), (0x0E00, 0x0E7F, "Thai"), (0x0E80, 0x0EFF, "Lao"),
    (0x0F00, 0x0FFF, "Tibetan"), (0x1000, 0x109F, "Myanmar"), (0x10A0, 0x10FF, "Georgian"),
    (0x1C90, 0x1CBF, "Georgian"), (0x2D00, 0x2D2F, "Georgian"), (0x1100, 0x11FF, "Hangul"), (0x3130, 0x318F, "Hangul"),
    (0xA960, 0xA97F, "Hangul"), (0xAC00, 0xD7AF, "Hangul"), (0xD7B0, 0xD7FF, "Hangul"),
    (0x1200, 0x139F, "Ethiopic"), (0x1780, 0x17FF, "Khmer"), (0x1800, 0x18AF, "Mongolian"),
    (0x3040, 0x309F, "Hiragana"), (0x30A0, 0x30FF, "Katakana"), (0x31F0, 0x31FF, "Katakana"),
    (0xFF66, 0xFF9F, "Katakana"),
    (0x1AFF0, 0x1AFFF, "Katakana"), (0x1B000, 0x1B000, "Katakana"), (0x1B001, 0x1B11F, "Hiragana"), (0x1B120, 0x1B122, "Katakana"),
    (0x1B132, 0x1B132, "Hiragana"), (0x1B150, 0x1B152, "Hiragana"), (0x1B155, 0x1B155, "Katakana"),
    (0x1B164, 0x1B167, "Katakana"),
    (0x2E80, 0x2FDF, "Han"), (0x3005, 0x3007, "Han"), (0x3021, 0x3029, "Han"),
    (0x3400, 0x4DBF, "Han"), (0x4E00, 0x9FFF, "Han"), (0xF900, 0xFAFF, "Han"),
    (0x20000, 0x323AF, "Han"),
])
_STARTS = [r[0] for r in _RANGES]

_LATIN = frozenset({"Latin"})
_CYRILLIC = frozenset({"Cyrillic"})
_ARABIC = frozenset({"Arabic"})
_DEVANAGARI = frozenset({"Devanagari"})

# language code (ISO 639-1, or 639-3 where there is none) -> (English name, scripts)
LANGUAGES: dict[str, tuple[str, frozenset[str]]] = {
    **{code: (name, _LATIN) for code, name in {
        "en": "English", "de": "German", "tr": "Turkish", "fr": "French", "es": "Spanish",
        "it": "Italian", "pt": "Portuguese", "nl": "Dutch", "pl": "Polish", "cs": "Czech",
        "sk": "Slovak", "sv": "Swedish", "da": "Danish", "no": "Norwegian", "nb": "Norwegian Bokmål",
        "nn": "Norwegian Nynorsk", "fi": "Finnish", "et": "Estonian", "lv": "Latvian",
        "lt": "Lithuanian", "hu": "Hungarian", "ro": "Romanian", "hr": "Croatian", "bs": "Bosnian",
        "sl": "Slovenian", "sq": "Albanian", "id": "Indonesian", "ms": "Malay", "vi": "Vietnamese",
        "tl": "Tagalog", "fil": "Filipino", "sw": "Swahili", "ca": "Catalan", "eu": "Basque",
        "gl": "Galician", "is": "Icelandic", "ga": "Irish", "cy": "Welsh", "az": "Azerbaijani",
        "uz": "Uzbek", "tk": "Turkmen", "af": "Afrikaans", "mt": "Maltese", "eo": "Esperanto",
        "la": "Latin", "lb": "Luxembourgish", "ha": "Hausa", "yo": "Yoruba", "zu": "Zulu",
        "xh": "Xhosa", "so": "Somali", "mi": "Maori", "haw": "Hawaiian",
    }.items()},
    **{code: (name, _CYRILLIC) for code, name in {
        "ru": "Russian", "uk": "Ukrainian", "be": "Belarusian", "bg": "Bulgarian",
        "sr": "Serbian", "mk": "Macedonian", "kk": "Kazakh", "ky": "Kyrgyz", "mn": "Mongolian",
        "tg": "Tajik", "tt": "Tatar", "ba": "Bashkir",
    }.items()},
    **{code: (name, _ARABIC) for code, name in {
        "ar": "Arabic", "fa": "Persian", "ur": "Urdu", "ps": "Pashto", "ug": "Uyghur",
        "ckb": "Central Kurdish", "sd": "Sindhi",
    }.items()},
    **{code: (name, _DEVANAGARI) for code, name in {
        "hi": "Hindi", "mr": "Marathi", "ne": "Nepali", "sa": "Sanskrit",
    }.items()},
    "el": ("Greek", frozenset({"Greek"})),
    "zh": ("Chinese", frozenset({"Han"})),
    "ja": ("Japanese", frozenset({"Han", "Hiragana", "Katakana"})),
    "ko": ("Korean", frozenset({"Hangul"})),  # Hanja are rare in modern prose
    "he": ("Hebrew", frozenset({"Hebrew"})),
    "yi": ("Yiddish", frozenset({"Hebrew"})),
    "hy": ("Armenian", frozenset({"Armenian"})),
    "ka": ("Georgian", frozenset({"Georgian"})),
    "bn": ("Bengali", frozenset({"Bengali"})),
    "pa": ("Punjabi", frozenset({"Gurmukhi"})),
    "gu": ("Gujarati", frozenset({"Gujarati"})),
    "or": ("Odia", frozenset({"Oriya"})),
    "ta": ("Tamil", frozenset({"Tamil"})),
    "te": ("Telugu", frozenset({"Telugu"})),
    "kn": ("Kannada", frozenset({"Kannada"})),
    "ml": ("Malayalam", frozenset({"Malayalam"})),
    "si": ("Sinhala", frozenset({"Sinhala"})),
    "th": ("Thai", frozenset({"Thai"})),
    "lo": ("Lao", frozenset({"Lao"})),
    "bo": ("Tibetan", frozenset({"Tibetan"})),
    "my": ("Burmese", frozenset({"Myanmar"})),
    "km": ("Khmer", frozenset({"Khmer"})),
    "am": ("Amharic", frozenset({"Ethiopic"})),
}

# Tokens whose letters are code, not prose: backtick spans, and words with an underscore,
# a dot or parentheses inside, or a lower-to-upper case change (camelCase).
_CODE_SPAN = re.compile(r"`[^`]*`")
_WORD = re.compile(r"\S+")
_CAMEL = re.compile(r"[a-z][A-Z]")
_CODE_MARK = re.compile(r"[_()\[\]{}<>=/\\#$@]|\w\.\w|::|->")


@dataclass(frozen=True)
class Language:
    code: str  # normalised primary subtag: "ru", "zh", "pt"
    name: str  # English name, used in the prompt
    scripts: frozenset[str]


def language(code: str) -> Language:
    """The language for a code such as ``ru``, ``pt-BR``, ``zh_Hant``; ``ConfigError`` when
    it is not known (the check could not decide the script, so the run stops)."""
    raw = (code or "").strip()
    primary = re.split(r"[-_]", raw, maxsplit=1)[0].lower()
    entry = LANGUAGES.get(primary)
    if entry is None:
        raise ConfigError(
            f"RAG_ENRICH_LANGUAGE={raw!r} is not a known language code",
            hint="use an ISO 639-1 code such as en, de, tr, fr, ru, el, zh, ja, ko, ar, he",
        )
    return Language(primary, entry[0], entry[1])


def script_of(ch: str) -> str | None:
    """The script of one letter by Unicode range (``None`` for non-letters and letters of
    scripts not in the table)."""
    if not unicodedata.category(ch).startswith("L"):
        return None
    cp = ord(ch)
    i = bisect.bisect_right(_STARTS, cp) - 1
    if i >= 0 and _RANGES[i][0] <= cp <= _RANGES[i][1]:
        return _RANGES[i][2]
    return "Other"


def _is_code_token(word: str) -> bool:
    return bool(_CODE_MARK.search(word) or _CAMEL.search(word))


def prose_letters(text: str) -> dict[str, int]:
    """Letters per script in ``text``, leaving out code-like tokens."""
    counts: dict[str, int] = {}
    for word in _WORD.findall(_CODE_SPAN.sub(" ", text)):
        if _is_code_token(word):
            continue
        for ch in word:
            s = script_of(ch)
            if s is not None:
                counts[s] = counts.get(s, 0) + 1
    return counts


def script_share(text: str, scripts: frozenset[str]) -> float | None:
    """Share of ``text``'s prose letters in ``scripts``; ``None`` when it has no prose letters
    (nothing to judge). When every letter sits in a code token, all letters are counted."""
    counts = prose_letters(text)
    if not counts:
        counts = {}
        for ch in text:
            s = script_of(ch)
            if s is not None:
                counts[s] = counts.get(s, 0) + 1
    total = sum(counts.values())
    if total == 0:
        return None
    return sum(n for s, n in counts.items() if s in scripts) / total


def in_script(text: str, lang: Language, min_share: float = MIN_SHARE) -> bool:
    """Is ``text`` written in ``lang``'s script? Text with no letters at all fails."""
    share = script_share(text, lang.scripts)
    return share is not None and share >= min_share
