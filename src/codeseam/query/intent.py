"""A query's intent and language, decided from its text alone.

``intent``: ``symbol`` (the whole query is one name), ``topic`` (a question or a noun phrase
about a part of the code) or ``behaviour`` (a description of one behaviour or change);
``language``: the language it is written in (py3langid's model over ``LANGUAGES``, English
unless another is far likelier); ``is_change``: a change description (a commit subject), whose
change words the BM25 query leaves out. ``analysis.analyze`` reads them once per query.
"""

from __future__ import annotations

import functools
import re
from itertools import pairwise

# One identifier, possibly qualified (``Sinatra::Base``, ``self->field``, ``a.b``, ``\\Foo\\Bar``):
# written like a name, not a word: an uppercase letter or an underscore somewhere, or a
# qualifier. A plain lower-case word ("session") is a question, not a lookup.
_SYMBOL_QUERY = re.compile(
    r"^(?:[A-Za-z_$][A-Za-z0-9_$]*(?:(?:::|\\|->|\.|#)[A-Za-z_$][A-Za-z0-9_$]*)+"
    r"|_[A-Za-z0-9_]*|[A-Za-z][A-Za-z0-9]*[A-Z_][A-Za-z0-9_]*|[A-Z][A-Za-z0-9]*)$")

# -- intent: a question about a part of the code, or a description of one behaviour -------------
#
# "how are routes registered", "session management", "JSON response helpers" ask about a part
# of the system: the answer is a few files, and a reader wants the best chunk of each before
# the third chunk of one. "fix zsh completion escaping", "insert an item into a sorted list"
# describe one behaviour or change: the answer is one definition, often the second chunk of the
# strongest file, and spreading the list over files costs it. English only: a query in
# another language (a translation of a change, in the dev sets) reads as a behaviour.

QUESTION_WORDS = frozenset({"how", "what", "where", "which", "why", "who", "whose"})
# Verbs that open a description of a behaviour or a change whatever follows them.
BEHAVIOUR_VERBS = frozenset("""
fix fixes fixed add adds added allow allows support supports ensure ensures avoid avoids prevent prevents
remove removes removed replace replaces insert inserts parse parses convert converts compute computes
calculate calculates return returns raise raises throw throws emit emits print prints show shows hide hides
make makes use uses handle handles update updates improve improves change changes detect detects
separate move moves rename renames refactor refactors simplify drop drops skip skips ignore ignores keep
keeps preserve preserves respect respects accept accepts reject rejects validate validates verify verifies
check checks expand expands extract extracts decode decodes encode encodes escape escapes unescape quote
unquote strip strips trim trims normalize normalise normalizes split splits join joins merge merges
find finds locate locates look lookup search get gets fetch fetches read reads write writes load loads
save saves open opens close closes create creates build builds generate generates render renders
format formats guess guesses resolve resolves register registers unregister deregister call calls invoke
invokes run runs execute executes start starts stop stops restart wait waits retry retries repeat
count counts sort sorts shuffle reverse compare compares match matches memoize memoise cache combine
combines fit fits adapt adapts include includes exclude excludes require requires warn warns log logs
mention mentions document documents deprecate deprecates re-add readd revert reverts restore restores
reset resets clear clears set sets assign assigns append appends prepend extend extends wrap wraps
unwrap map maps filter filters reduce reduces list lists enable enables disable disables limit limits
control controls evaluate evaluates initialize initialise init copy copies clone clones delete deletes
send sends receive receives accept serialize serialise deserialize deserialise marshal unmarshal
lazily securely properly correctly always never don't dont do not stop made suggest suggests provide
provides give gives abort aborts shift shifts attempt attempts harden catch catches terminate terminates
""".split())  # noqa: SIM905 - a word list reads better as words
# Words that begin a noun phrase as often as an instruction ("request context handling",
# "test runner", "error messages"): an instruction only when a determiner or a preposition
# follows ("request a token", "test that the ...").
_AMBIGUOUS = frozenset({"request", "test", "error", "flow", "format", "route", "cache", "log", "match", "process",
                        "report", "record", "map", "filter", "sort", "merge", "query", "index", "search", "stream",
                        "list", "set", "control", "limit", "copy", "call", "run", "start", "lookup", "look", "load",
                        "build", "check", "render", "count", "read", "write", "open", "close", "wrap", "document",
                        "insert", "parse", "validate", "show", "register", "send"})
_DETERMINERS = frozenset({"a", "an", "the", "all", "each", "every", "its", "their", "this", "that", "these", "those",
                          "any", "some", "no", "to", "from", "for", "with", "when", "if", "in", "on", "out", "up",
                          "into", "only", "more", "less", "one", "two", "multiple", "several", "both", "whether"})
# A finite verb's helpers: a query holding one is a sentence about a behaviour ("blueprint name
# may not contain a dot", "converters have access to session"), not a noun phrase.
_SENTENCE_WORDS = frozenset({"is", "are", "was", "were", "be", "been", "being", "can", "cannot", "could", "may",
                             "might", "must", "should", "shall", "will", "would", "has", "have", "had", "does",
                             "did", "not", "never", "doesn't", "don't", "isn't", "aren't", "can't", "won't",
                             "didn't", "wasn't", "shouldn't"})
# Words that say a change or a defect is meant, wherever they stand.
_CHANGE_MARKS = frozenset({"fix", "fixes", "fixed", "bugfix", "bug", "bugs", "crash", "crashes", "regression", "typo",
                           "workaround", "revert", "deprecate", "deprecated", "hotfix"})
_LATIN_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_'\-.]*")
_NON_ENGLISH = re.compile(r"[çğıöşüäßéèêàâîôûñÇĞİÖŞÜÄÉÈÊÀÂÎÔÛÑ]")  # case by hand: re's IGNORECASE folds ı to i



# Languages the language check chooses among (a model limited to the languages people write
# code questions in tells a short English question from them far better than one over 97).
LANGUAGES = ("en", "de", "fr", "es", "pt", "it", "nl", "pl", "ru", "uk", "cs", "sv", "tr", "zh", "ja", "ko")
_CODE_TOKEN = re.compile(r"[_./\\:#<>0-9]|[a-z][A-Z]")


@functools.lru_cache(maxsize=1)
def _identifier():
    """py3langid's naive Bayes model (it ships in the wheel), limited to ``LANGUAGES``."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    ident.set_languages(list(LANGUAGES))
    return ident


def prose_words(query: str) -> list[str]:
    """The query's words without code: identifiers, paths, acronyms, numbers, backquoted names."""
    out = []
    for token in query.split():
        t = token.strip("`'\",.;:()[]{}!?")
        if t and not _CODE_TOKEN.search(t) and not (t.isupper() and len(t) > 1) and "`" not in token:
            out.append(t)
    return out


# A code-search query is English unless another language is far likelier: the model's
# probability of English (over ``LANGUAGES``) must fall below this. Short English noun phrases of
# code words read as another language by the model alone ("Rack spec conformance validator":
# Portuguese, "JSON Schema to Zod schema conversion": Italian) still give English 0.07 to 0.31;
# every Turkish and German query of the dev sets (106, translations and negatives) gives it at
# most 0.003 (measured at 0cef1bf; tests/test_query_language.py holds both kinds).
ENGLISH_FLOOR = 0.05


@functools.lru_cache(maxsize=4096)
def language(query: str) -> str:
    """The language a query is written in (``LANGUAGES``; ``en`` when there are fewer than three
    words of prose to tell by, or when the model gives English at least ``ENGLISH_FLOOR``). A
    query with letters English does not use (ç, ğ, ß, é, ...) is left to the model however short."""
    if _NON_ENGLISH.search(query) is None:
        words = prose_words(query)
        if len(words) < 3:
            return "en"
        text = " ".join(words)
    else:
        text = " ".join(prose_words(query)) or query
    ranked = _identifier().rank(text)
    if dict(ranked).get("en", 0.0) >= ENGLISH_FLOOR:
        return "en"
    return str(ranked[0][0])


def intent(query: str) -> str:
    """``topic`` (a question or a noun phrase about a part of the code), ``behaviour`` (a
    description of one behaviour or change) or ``symbol`` (one name). Module comment above."""
    q = query.strip()
    if _SYMBOL_QUERY.match(q):
        return "symbol"
    words = [w.lower() for w in _LATIN_WORD.findall(q)]
    if not words or language(q) != "en":
        return "behaviour"
    first, nxt = words[0], (words[1] if len(words) > 1 else "")
    if first in QUESTION_WORDS or " and how " in f" {' '.join(words)} " or q.endswith("?"):
        return "topic"
    if any(w in _SENTENCE_WORDS or w in _CHANGE_MARKS for w in words):
        return "behaviour"
    if first in BEHAVIOUR_VERBS and (first not in _AMBIGUOUS or nxt in _DETERMINERS):
        return "behaviour"
    # a main clause after a leading phrase ("on invalid input, print the usage"), or a relative
    # clause that says what a thing does ("a file buffer that moves its contents to disk")
    for clause in re.split(r"[,;:]", q)[1:]:
        cw = [w.lower() for w in _LATIN_WORD.findall(clause)]
        if cw and cw[0] in BEHAVIOUR_VERBS and (cw[0] not in _AMBIGUOUS or (len(cw) > 1 and cw[1] in _DETERMINERS)):
            return "behaviour"
    for a, b in pairwise(words):
        if a in ("that", "which") and (b in BEHAVIOUR_VERBS or b.endswith("s") and b[:-1] in BEHAVIOUR_VERBS):
            return "behaviour"
    return "topic"


# A change description (a commit subject, a task): it opens with the kind of change, or names a
# defect. Its change words ("fix", "not", "when", "handle") say what kind of change it is, not
# which code, so the BM25 query leaves them out (``rank.CHANGE_WORDS``).
CHANGE_OPENERS = frozenset("""fix fixes fixed add adds added allow allows support supports remove removes update
updates change changes improve improves make makes use uses ensure ensures avoid avoids prevent prevents handle
handles correct don't dont do stop revert reverts bugfix hotfix re-add readd better""".split())  # noqa: SIM905 - a word list reads better as words


def is_change(query: str) -> bool:
    """Does the query describe a change (a commit subject: "fix zsh completion escaping")? It
    opens with a change verb or names a fix or a bug; a question never is one ("how zls provides
    code actions for quick fixes" asks about fixes)."""
    words = [w.lower() for w in _LATIN_WORD.findall(query)]
    if not words or words[0] in QUESTION_WORDS:
        return False
    return words[0] in CHANGE_OPENERS or any(w in _CHANGE_MARKS for w in words)
