"""The query's language and kind (query.intent.language, intent): py3langid's model over the
query's prose words, English unless another language is far likelier (ENGLISH_FLOOR)."""

from __future__ import annotations

import pytest

from codeseam.query.intent import ENGLISH_FLOOR, LANGUAGES, _identifier, intent, is_change, language, prose_words

# English queries the model alone reads as another language (the dev sets' nine)
MISREAD_ENGLISH = [
    "Rack spec conformance validator", "JSON Schema to Zod schema conversion", "Fix unescaped single quotes in zsh",
    "generate a random version 4 UUID", "harden error handling in `lib/cli/run.js`",
    "Support uint in InDelta and InEpsilon", "Add .svg to select_jinja_autoescape", "add MOCHA_OPTIONS env variable",
    "support modern RegExp flags in Mocha#grep",
]


@pytest.mark.parametrize("query", MISREAD_ENGLISH)
def test_english_code_phrases_are_english(query):
    assert language(query) == "en"
    ranked = dict(_identifier().rank(" ".join(prose_words(query)) or query))
    assert max(ranked, key=ranked.__getitem__) != "en"  # what the model alone says: the floor decides


@pytest.mark.parametrize("query,lang", [
    ("die Dateiendung eines Pfadobjekts ersetzen oder entfernen", "de"),
    ("Arrays im nullinitialisierten Zustand gelten als leer", "de"),
    ("didPanic soll auch panic(nil) erkennen", "de"),
    ("wie werden Routen registriert", "de"),
    ("rotalar nasıl kaydedilir", "tr"),
    ("komut satırı argümanlarını ayrıştır", "tr"),
    ("comment les routes sont-elles enregistrées", "fr"),
    ("cómo se registran las rutas", "es"),
    ("come vengono registrate le rotte", "it"),
    ("hoe worden routes geregistreerd", "nl"),
    ("как регистрируются маршруты", "ru"),
])
def test_other_languages_stay_themselves(query, lang):
    assert language(query) == lang
    assert dict(_identifier().rank(" ".join(prose_words(query)) or query))["en"] < ENGLISH_FLOOR


def test_short_queries_are_english_and_the_model_knows_the_languages():
    assert language("Session") == language("g") == language("retry delay") == "en"
    assert set(LANGUAGES) == {lang for lang, _ in _identifier().rank("anything at all")}


@pytest.mark.parametrize("query,kind", [
    ("Rack spec conformance validator", "topic"),  # read as Portuguese, it was a behaviour
    ("JSON Schema to Zod schema conversion", "topic"),
    ("how are routes registered", "topic"), ("session management", "topic"),
    ("fix zsh completion escaping", "behaviour"), ("Session", "symbol"),
    ("die Dateiendung eines Pfadobjekts ersetzen oder entfernen", "behaviour"),  # not English: a behaviour
])
def test_intent(query, kind):
    assert intent(query) == kind


@pytest.mark.parametrize("query,change", [
    ("fix zsh completion escaping", True), ("Emit value terminators on zsh", False),
    ("ArgsRequiredElseHelp should ignore defaults", False), ("Fix a crash with Got accessing a request", True),
    ("don't intercept 307/308 routing redirects", True), ("escape fish possible values bug", True),
    # a question asks about fixes, it does not describe one
    ("how zls provides code actions for quick fixes", False), ("what happens when a bug report is filed", False),
])
def test_a_change_description_opens_with_a_change_verb_or_names_a_fix_and_is_no_question(query, change):
    assert is_change(query) is change

