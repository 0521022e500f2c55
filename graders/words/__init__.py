"""Function words, one module per language, merged by role: the only words graders/ lists.

A role is what a word does in a statement, whatever its language: NEGATE_BEFORE ('not 12', '不是12')
and NEGATE_AFTER ('12 is wrong', '12 नहीं') reject a value; NOT_NEGATION ('not only') rejects nothing;
NO answers no; EXCLUDE rules an option out ('except', '排除'); OR offers alternatives; RANGE_START,
RANGE_TO and AND make a range or a list; BOUND_BEFORE / BOUND_AFTER bound a value ('at least',
'or more'); CONTRAST ('but', '而是') and CORRECTION ('wait', 'actually') replace what came before;
CONCLUDE ('so', '所以') opens a result, REASON ('because') and COMMENT ('which is') working after it;
ADJUNCT_BEFORE / ADJUNCT_AFTER ('in 2.5 hours', '2.5 घंटे में') make a circumstance; COPULA ('is',
'equals') and MODAL ('could', '也') join a subject to what is said of it; RIGHT ('correct') calls an
option right, OPTION names one ('option', '选项'), CHECK opens a check of working ('verify',
'检验'); ARTICLE ('the'), PREPOSITION ('of') and PRONOUN ('she', 'in all') are words a reader
places without a role of their own. No verbs of content, no nouns: a word no role places is a
word the reader cannot place (`placed`).

An entry is matched as a whole word; an entry marked '~' (languages written without spaces between
words: Chinese, Japanese, Thai; Korean particles glue to the word before) anywhere. Each language
module may also give SCALE (multiplier words: 'million', '万'), its number words (NUMBERS, read by
numbers.py's GRAMMAR) and AMBIGUOUS number words (common words elsewhere: alone they count only in
a hedge). The modules, by size, are listed in docs/graders.md.
"""
from __future__ import annotations

import builtins
import re
import unicodedata
from functools import lru_cache

from . import ar, de, el, en, es, fr, hi, id, it, ja, ko, nl, pl, pt, ru, th, tr, uk, vi, zh

LANGUAGES = {m.__name__.rsplit(".", 1)[1]: m for m in (en, fr, de, es, it, pt, nl, ru, uk, pl, tr, el, ar, hi, vi, id, zh, ja, ko, th)}


def _merged(role: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(w for m in LANGUAGES.values() for w in getattr(m, role, ())))


NEGATE_BEFORE, NEGATE_AFTER, NOT_NEGATION, NO, EXCLUDE = map(_merged, ("NEGATE_BEFORE", "NEGATE_AFTER", "NOT_NEGATION", "NO",
                                                                      "EXCLUDE"))
OR, RANGE_START, RANGE_TO, AND = map(_merged, ("OR", "RANGE_START", "RANGE_TO", "AND"))
BOUND_BEFORE, BOUND_AFTER, CONTRAST, CORRECTION = map(_merged, ("BOUND_BEFORE", "BOUND_AFTER", "CONTRAST", "CORRECTION"))
CONCLUDE, REASON, COMMENT, ADJUNCT_BEFORE, ADJUNCT_AFTER = map(_merged, ("CONCLUDE", "REASON", "COMMENT", "ADJUNCT_BEFORE",
                                                                        "ADJUNCT_AFTER"))
COPULA, MODAL, RIGHT, ARTICLE, PREPOSITION, PRONOUN = map(_merged, ("COPULA", "MODAL", "RIGHT", "ARTICLE", "PREPOSITION",
                                                                   "PRONOUN"))
OPTION, CHECK, ANSWER, FINAL, CHOOSE, CERTAIN, TURN, TOPIC = map(_merged, ("OPTION", "CHECK", "ANSWER", "FINAL", "CHOOSE",
                                                                           "CERTAIN", "TURN", "TOPIC"))
APPROX, CONDITION, QUESTION = map(_merged, ("APPROX", "CONDITION", "QUESTION"))
# 'of' offers alternatives in Dutch and is a preposition in English: between two values it is the latter
OR_BETWEEN_VALUES = tuple(w for w in OR if w not in PREPOSITION)
SCALE = {w: v for m in LANGUAGES.values() for w, v in getattr(m, "SCALE", {}).items()}
AMBIGUOUS = frozenset(_merged("AMBIGUOUS"))
TEXT2NUM = tuple(name for name, m in LANGUAGES.items() if getattr(m, "GRAMMAR", "") == "text2num")


_ROLES = ("NEGATE_BEFORE", "NEGATE_AFTER", "NOT_NEGATION", "NO", "EXCLUDE", "OR", "RANGE_START", "RANGE_TO", "AND",
          "BOUND_BEFORE", "BOUND_AFTER", "CONTRAST", "CORRECTION", "CONCLUDE", "REASON", "COMMENT", "ADJUNCT_BEFORE",
          "ADJUNCT_AFTER", "COPULA", "MODAL", "RIGHT", "ARTICLE", "PREPOSITION", "PRONOUN", "OPTION", "CHECK",
          "ANSWER", "FINAL", "CHOOSE", "CERTAIN", "APPROX", "CONDITION")
PLACED = frozenset(part for role in _ROLES for entry in _merged(role) if not entry.startswith("~")
                   for part in entry.lower().split())


def placed(word: str) -> bool:
    """A word (of a script written with spaces) that some role of some language places."""
    return word.lower() in PLACED


def known_language(text: str) -> bool:
    """Whether the text may be read by these function words: False only for a text of twenty words
    or more, in a script written with spaces, none of whose last 400 words of three letters or more
    any role places (a
    response in a language graders/words/ has no module for). Such a response is read as undecided
    where its statement holds words around its values; a short text or a script without spaces is
    not judged."""
    tail = text[-4000:]
    if not tail.isascii() and any(unicodedata.category(c) == "Lo" for c in tail):
        return True
    spaced = re.findall(r"[^\W\d_]+(?:['’][^\W\d_]+)?", tail)[-400:]
    return len(spaced) < 20 or any(len(w) > 2 and placed(w) for w in spaced)  # ('si', 'ya': too short to tell)


def numbers(grammar: str) -> dict:
    """The number words of every language read by `grammar` ('generic': numbers.py's grammar of digits,
    fixed values, multipliers and scales)."""
    return {w: v for m in LANGUAGES.values() if getattr(m, "GRAMMAR", "") == grammar for w, v in m.NUMBERS.items()}


def is_letter(ch: str) -> bool:
    """A letter or a mark (Devanagari vowel signs, Thai tone marks) of any script."""
    return unicodedata.category(ch)[0] in "LM"


# The lexicons are module constants of a few hundred entries: keyed by the tuple's identity, a
# lookup costs no hash of every entry (an lru_cache hashed the whole tuple on each of the ~13
# calls a statement makes). The tuple is kept with its value, so its id is never reused while cached.
_COMPILED: dict[int, tuple] = {}
_identity = builtins.id   # (the name `id` is Indonesian's module here)


@lru_cache(maxsize=8192)
def fold(ch: str) -> str:
    """A character as the precheck compares it: any two characters that re.IGNORECASE takes for one
    another fold alike (casefold, compatibility decomposition without its marks, dotless i as i)."""
    return "".join(c for c in unicodedata.normalize("NFKD", ch.casefold()) if not unicodedata.combining(c)).replace("ı", "i")


def _words(entry: str) -> frozenset[str]:
    """The entry's runs of letters and marks, folded: each is a whole word of a text the entry matches
    as a whole word (the first starts the match, the last ends it, the others lie between marks)."""
    return words_of(entry) if entry.isascii() else frozenset("".join(map(fold, w)) for w in letter_runs(entry))


@lru_cache(maxsize=64)
def letter_runs(text: str) -> tuple[str, ...]:
    """The runs of letters and marks of a text, as written."""
    if text.isascii():
        return tuple(re.findall(r"[A-Za-z]+", text))
    out, start = [], None
    for i, ch in enumerate(text):
        if is_letter(ch):
            start = i if start is None else start
        elif start is not None:
            out.append(text[start:i])
            start = None
    if start is not None:
        out.append(text[start:])
    return tuple(out)


@lru_cache(maxsize=64)
def words_of(text: str) -> frozenset[str]:
    """The runs of letters and marks of a text, folded (one pass, remembered for the ~13 lexicons a
    statement is read with)."""
    if text.isascii():
        return frozenset(w.lower() for w in letter_runs(text))
    return frozenset("".join(map(fold, w)) for w in letter_runs(text))


@lru_cache(maxsize=64)
def _chars_of(text: str) -> frozenset[str]:
    return frozenset(map(fold, set(text)))


def _compiled(words: tuple[str, ...]) -> tuple:
    """(the tuple, its alternatives, its glued entries, the words of its spaced entries by one of their
    words, those words, the folded first characters of the entries matched anywhere)."""
    entry = _COMPILED.get(_identity(words))
    if entry is None or entry[0] is not words:
        # ('~' alone is the tilde of '6~8', not the mark of a glued entry: no entry is empty)
        bare = {w[1:] if w.startswith("~") and len(w) > 1 else w for w in words}
        ordered = sorted(bare, key=lambda w: (-len(w), w))  # the same under any hash seed
        glued_entries = frozenset(w[1:].lower() for w in words if w.startswith("~") and len(w) > 1)
        by_word: dict[str, set[frozenset[str]]] = {}   # a word of a spaced entry -> the words of each such entry
        for w in bare:
            if is_letter(w[0]):
                runs = _words(w)
                by_word.setdefault(min(runs), set()).add(runs)
        entry = (words, "|".join(re.escape(w).replace("\\ ", r"\s+") for w in ordered), glued_entries,
                 {word: tuple(entries) for word, entries in by_word.items()}, frozenset(by_word),
                 frozenset(fold(w[0]) for w in bare if w.lower() in glued_entries or not is_letter(w[0])))
        _COMPILED[_identity(words)] = entry
    return entry


def pattern(words: tuple[str, ...]) -> re.Pattern:
    """One pattern for a lexicon, longest entries first (boundaries: see find); compiled when first
    run (most lexicons never pass find's precheck on most statements)."""
    return _pattern(_compiled(words)[1])


@lru_cache(maxsize=None)
def _pattern(alternatives: str) -> re.Pattern:
    return re.compile(alternatives, re.I)


def _glued(words: tuple[str, ...]) -> frozenset[str]:
    return _compiled(words)[2]


def bounded(text: str, m: re.Match, words: tuple[str, ...]) -> bool:
    """A match is a whole word: no letter right before or after it, unless its entry is glued."""
    if m.group().lower() in _glued(words) or not is_letter(m.group()[0]):
        return True
    before = text[m.start() - 1] if m.start() else " "
    after = text[m.end()] if m.end() < len(text) else " "
    return not is_letter(before) and not is_letter(after)


def find(words: tuple[str, ...], text: str, start: int = 0, end: int | None = None) -> list[re.Match]:
    """Every whole-word entry of the lexicon in text[start:end].

    Checked first, by sets: every word of a spaced entry matched as a whole word is a whole word of
    the text (folded as IGNORECASE folds); a glued entry or one that opens with a mark needs one of
    its first characters. Where no entry can match so, there is no match and the lexicon's pattern
    (hundreds of alternatives) is not run."""
    compiled, present = _compiled(words), words_of(text)
    if (compiled[4].isdisjoint(present) or not any(entry <= present for word in compiled[4] & present for entry in compiled[3][word])) \
            and compiled[5].isdisjoint(_chars_of(text)):
        return []
    return [m for m in _pattern(compiled[1]).finditer(text, start, len(text) if end is None else end) if bounded(text, m, words)]


def whole(words: tuple[str, ...], text: str) -> bool:
    """`text` is one entry of the lexicon."""
    return pattern(words).fullmatch(text) is not None


def opens(words: tuple[str, ...], text: str, pos: int = 0) -> re.Match | None:
    """An entry of the lexicon at `pos`, as a whole word."""
    m = pattern(words).match(text, pos)
    return m if m is not None and bounded(text, m, words) else None


@lru_cache(maxsize=None)
def alternation(*lexicons: tuple[str, ...]) -> str:
    """A regex alternation of the entries: a spaced entry with no letter or digit on either side (its
    spaces match any spacing), a glued one anywhere; longest first."""
    entries = {w for words in lexicons for w in words}
    spaced = sorted((w for w in entries if not w.startswith("~")), key=lambda w: (-len(w), w))
    glued = sorted((w[1:] for w in entries if w.startswith("~") and len(w) > 1), key=lambda w: (-len(w), w))
    parts = [r"(?<!\w)(?:" + "|".join(re.escape(w).replace("\\ ", r"\s+") for w in spaced) + r")(?!\w)"] if spaced else []
    return "(?:" + "|".join(parts + [re.escape(w) for w in glued]) + ")"


def spaced(words: tuple[str, ...]) -> tuple[str, ...]:
    """The entries of a script written with spaces."""
    return tuple(w for w in words if not w.startswith("~"))


def glued(words: tuple[str, ...]) -> tuple[str, ...]:
    """The entries of a script written without spaces."""
    return tuple(w for w in words if w.startswith("~"))


def ends(words: tuple[str, ...], text: str) -> re.Match | None:
    """An entry of the lexicon that ends `text`, as a whole word."""
    last = None
    for m in find(words, text):
        if not text[m.end():].strip():
            last = m
    return last
