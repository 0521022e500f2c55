"""The final statement of a choice answer, read into a small structure: every option letter it
names, and for each whether it is asserted, negated ("not B", "不是B", "B değil"), retracted by
a later correction ("B? No, D.", "I first thought B, but it is D") or offered as one of
alternatives ("A or C"). The same structure in every language: the words that negate, correct
or hedge are lexicons per language (below); everything else is read by Unicode category.

Also the two readings every choice answer gets first: chat-template debris ends the response
(`cut_template_debris`: `<|im_start|>user …` is the next turn, never part of the answer), and a
letter written in a look-alike script (Cyrillic `В`, Greek `Β`; full-width `Ｂ` is NFKC's) is the
Latin letter when it stands alone (`latin_lookalikes`: the Russian preposition in `В данном
случае` is a word, not a letter).

choice.py uses `read_statement` twice: a final statement that negates, corrects or hedges
decides the answer before the other rules; and no rule may choose a letter that the final
statement rejects. Everything here is linear in the text (bounded by choice.MAX_RESPONSE_CHARS).
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from . import words

# --- look-alike letters --------------------------------------------------------------------

# a character table, not a list of scripts: capitals that look like the Latin option letters
LOOKALIKES = str.maketrans({
    "\u0410": "A", "\u0412": "B", "\u0421": "C", "\u0415": "E", "\u041d": "H", "\u0406": "I", "\u0408": "J",  # Cyrillic
    "\u0391": "A", "\u0392": "B", "\u0395": "E", "\u0397": "H", "\u0399": "I",                              # Greek
})
LOOKALIKE_CHARS = "".join(chr(c) for c in LOOKALIKES)
_LOOKALIKE_RE = re.compile(f"[{LOOKALIKE_CHARS}]")
# the words that may follow a look-alike letter standing alone: they join letters (`В и С`, `А или В`)
_JOINING_WORD = re.compile(rf"\s+{words.alternation(words.AND, words.OR, words.CONTRAST, words.NEGATE_BEFORE)}")
_NEXT_WORD = re.compile(r"\s+(\w)")


def _script(c: str) -> str:
    """The first word of the character's Unicode name: CYRILLIC, GREEK, LATIN …"""
    return unicodedata.name(c, "?").split(" ")[0]


def _cased(c: str) -> bool:
    """A letter of a script with capitals (Latin, Greek, Cyrillic …), or a digit: a look-alike
    beside one is part of a word. Beside a letter without case (CJK, kana, Hangul) it is alone."""
    return c.isdigit() or (c.isalpha() and (c.isupper() or c.islower()))


def latin_lookalikes(text: str) -> str:
    """`Ответ: В` -> `Ответ: B`, `答えはΒです` -> `答えはBです`; `В данном случае` (the word
    before a lower-case word) stays."""
    if not _LOOKALIKE_RE.search(text):
        return text

    def alone(m: re.Match) -> str:
        at = m.start()
        if (at > 0 and _cased(text[at - 1])) or (m.end() < len(text) and _cased(text[m.end()])):
            return m.group()
        word = _NEXT_WORD.match(text, m.end())
        if word and word.group(1).islower() and _script(word.group(1)) == _script(m.group()) \
                and not _JOINING_WORD.match(text, m.end()):
            return m.group()  # a word of its own, before a word of its script: the preposition В, the conjunction А
        return m.group().translate(LOOKALIKES)

    return _LOOKALIKE_RE.sub(alone, text)


# --- the function words of every language (graders/words/) ----------------------------------

_ALT = words.alternation
# a negation before the letter, in its own clause ("not B", "n'est pas B", "не B", "不是B", "排除B")
NEGATION_BEFORE = re.compile(_ALT(words.NEGATE_BEFORE, words.EXCLUDE), re.IGNORECASE)
# a negation after the letter ("B değil", "B नहीं", "Bではなく", "B가 아니라", "B is wrong", "B is not", "B can be ruled out")
NEGATION_AFTER = re.compile(rf"\s*(?:{_ALT(words.OPTION)}\s*)?(?:(?:{_ALT(words.COPULA, words.MODAL)}\s*)*{_ALT(words.NEGATE_AFTER)}"
                            rf"|(?:{_ALT(words.COPULA, words.MODAL)}\s*)+{_ALT(words.NEGATE_BEFORE, words.EXCLUDE)})", re.IGNORECASE)
# a correction between two letters: the earlier one is taken back ("B? No, D.", "first B, but D")
# (a glued 'no' of one character is part of other words: 不 in 不可逆)
CORRECTION = re.compile(_ALT(words.CONTRAST, words.CORRECTION, tuple(w for w in words.NO if len(w) > 2 or not w.startswith("~"))),
                        re.IGNORECASE)
# two letters offered as alternatives ("A or C", "A 或 C", "AかC", "A veya C")
HEDGE = re.compile(rf"[)\]）】]?\s*{_ALT(words.OR)}\s*(?:{_ALT(words.OPTION)}\s*)?[(\[（【]?\s*$", re.IGNORECASE)
# joins two letters into one list: a negation before the first covers the second ("not A or B")
LIST_JOIN = re.compile(rf"[)\]）】]?\s*(?:,|、|/|&|{_ALT(words.AND)})?\s*[(\[（【]?\s*$", re.IGNORECASE)
# words after which a letter is talked about, not chosen ("but A is also plausible")
TALKED_ABOUT = re.compile(rf"\s*(?:{_ALT(words.OPTION)}\s*)?{_ALT(words.COPULA, words.MODAL)}", re.IGNORECASE)
CALLED_RIGHT = re.compile(rf"\s*(?:{_ALT(words.OPTION)}\s*)?(?:{_ALT(words.COPULA, words.MODAL)}\s*)?(?:{_ALT(words.ARTICLE)}\s+)?"
                          rf"{_ALT(words.RIGHT)}", re.IGNORECASE)
# an article "A" before a word, in the languages whose article it is ("A resposta é B"): not before a
# word that joins, negates or says something of a letter
ARTICLE_A = re.compile(rf"A\s+(?!{_ALT(words.OR, words.AND, words.NEGATE_BEFORE, words.NO, words.COPULA, words.CONTRAST, words.REASON, words.RANGE_TO)})"
                       r"[a-zà-öø-ÿ]")
# punctuation that ends a clause: a negation does not reach past it
CLAUSE_END = re.compile(r"[,，;；:：.。!！?？،؛।…\n]|\s[-–—]\s")
# the end of a sentence (not the point of a decimal)
SENTENCE_END = re.compile(r"[.!?。！？।…]+(?!\d)")


@dataclass(frozen=True)
class Mention:
    letter: str
    start: int
    end: int
    negated: bool = False
    retracted: bool = False
    talked_about: bool = False

    @property
    def asserted(self) -> bool:
        return not (self.negated or self.retracted or self.talked_about)


@dataclass(frozen=True)
class Statement:
    text: str
    mentions: tuple[Mention, ...]
    hedged: bool                 # two asserted letters offered as alternatives
    corrected: bool              # a letter taken back, or the statement opens with a correction

    @property
    def rejected(self) -> set[str]:
        """Letters the statement negates or takes back, and never asserts."""
        asserted = self.asserted
        return {m.letter for m in self.mentions if not m.asserted and not m.talked_about} - asserted

    @property
    def asserted(self) -> set[str]:
        return {m.letter for m in self.mentions if m.asserted}

    @property
    def decisive(self) -> bool:
        """The statement's structure says something the letters alone do not."""
        return self.hedged or self.corrected or any(m.negated for m in self.mentions)


_LETTER = re.compile(r"(?<![A-Za-z0-9])([A-J])(?![A-Za-z0-9])(?![-'’][A-Za-z])")
MAX_STATEMENT_CHARS = 600      # a final statement is a sentence or two, not a page
MAX_MENTIONS = 12              # more letters than that is a list of options, not a statement


# the negations that follow what they deny ('wrong', 'falsch', 'yanlış', '不对'), but a glued one of one
# character ('错'), which is also a part of other words ('没错', correct)
SPACED_NEGATE_AFTER = tuple(w for w in words.NEGATE_AFTER if not w.startswith("~") or len(w) > 2)


def _clause_end(text: str, pos: int) -> int:
    end = CLAUSE_END.search(text, pos)
    return end.start() if end else len(text)


def _negated_in_own_clause(text: str, m: Mention, next_letter: int) -> bool:
    """A negation in the clause after the letter, with no other letter in that clause: the
    clause's predicate is denied of the letter ('C n'est pas juste', 'C stimmt nicht', 'C is not
    right'). A negation with a letter after it in the clause is that letter's ('C rather than D')."""
    end = _clause_end(text, m.end)
    if not text[m.end:end].strip() and text[end:end + 1] in ":：":
        end = _clause_end(text, end + 1)  # 'C: wrong': the words after a label's colon are said of it
    if next_letter < end:
        return False
    clause = text[m.end:end]
    return NEGATION_BEFORE.search(text, m.end, end) is not None or bool(words.find(SPACED_NEGATE_AFTER, clause))


def _asked(text: str, pos: int, before: int) -> bool:
    """The sentence of the letter ending at `pos` ends with a question mark before `before`."""
    end = SENTENCE_END.search(text, pos, before)
    return end is not None and "?" in end.group() or "？" in (end.group() if end else "")


def _words_follow(text: str, pos: int) -> bool:
    """Letters or digits between `pos` and the end of its clause."""
    return re.search(r"[^\W_]", text[pos:_clause_end(text, pos)]) is not None


def read_statement(text: str, valid: str) -> Statement:
    """The letters `text` (one line, already normalised) names, each negated, retracted, talked
    about or asserted; whether it hedges between letters or corrects itself."""
    text = text[-MAX_STATEMENT_CHARS:]
    found: list[Mention] = []
    for m in _LETTER.finditer(text):
        if len(found) > MAX_MENTIONS:
            return Statement(text, (), False, False)
        letter = m.group(1)
        if letter not in valid or (letter == "A" and ARTICLE_A.match(text, m.start())):
            continue
        found.append(Mention(letter, m.start(), m.end()))
    mentions: list[Mention] = []
    denied_after: set[int] = set()   # mentions negated by the words after them, in their own clause
    for n, m in enumerate(found):
        # the clause before the letter: back to the previous letter or clause punctuation
        lo = found[n - 1].end if n else 0
        window = text[lo: m.start]
        cut = list(CLAUSE_END.finditer(window))
        clause = window[cut[-1].end():] if cut else window
        negated = False
        neg = list(NEGATION_BEFORE.finditer(clause))
        if neg and not CORRECTION.search(clause, neg[-1].end()):
            negated = True
        after = text[m.end: m.end + 40]
        if NEGATION_AFTER.match(after) and not CALLED_RIGHT.match(after):
            negated = True
        if not negated and _negated_in_own_clause(text, m, found[n + 1].start if n + 1 < len(found) else len(text)):
            negated = True  # 'C n'est pas juste', 'C stimmt nicht', 'B klopt niet'
            denied_after.add(n)
        if not negated and mentions and (LIST_JOIN.fullmatch(window) or HEDGE.fullmatch(window)) \
                and mentions[-1].negated and not CALLED_RIGHT.match(after):
            negated = True  # "not A or B", "排除A、B、D", "而不是C或D"
        talk = TALKED_ABOUT.match(after)
        # 'D is.' after 'C is not right': a verb with nothing after it repeats the predicate before
        # (an ellipsis that asserts), it does not talk about the letter
        talked = not negated and talk is not None and not CALLED_RIGHT.match(after) \
            and _words_follow(text, m.end + talk.end())
        mentions.append(Mention(m.letter, m.start, m.end, negated, False, talked))
    listed: set[int] = set()         # mentions joined by a word to the negated letter after them
    for n in range(len(mentions) - 2, -1, -1):  # "A and B are wrong": the negation after B covers A
        m, nxt = mentions[n], mentions[n + 1]
        gap = text[m.end: nxt.start]
        worded = re.search(r"[^\s,()\[\]]", gap)
        # (a word or 、 joins them: "A, D değil" is "A, not D"; a comma joins them in a list that a
        # word closes: "A, B und C nicht passen")
        joined = LIST_JOIN.fullmatch(gap) and (worded or n + 1 in listed)
        if not m.negated and nxt.negated and joined and (NEGATION_AFTER.match(text, nxt.end) or n + 1 in denied_after):
            mentions[n] = Mention(m.letter, m.start, m.end, True, False, False)
            denied_after.add(n)
            if worded:
                listed.add(n)
        elif not m.negated and not m.talked_about and nxt.talked_about and LIST_JOIN.fullmatch(text[m.end: nxt.start]):
            mentions[n] = Mention(m.letter, m.start, m.end, False, False, True)  # "C and D are unrelated"
    # a correction between two letters takes the earlier one back
    out: list[Mention] = []
    for n, m in enumerate(mentions):
        # ... and so does a question: 'C? Nope. D.' asks C and answers D
        retracted = any(later.asserted and later.letter != m.letter
                        and (CORRECTION.search(text[m.end: later.start]) or _asked(text, m.end, later.start))
                        and not LIST_JOIN.fullmatch(text[m.end: later.start])
                        for later in mentions[n + 1:])
        out.append(Mention(m.letter, m.start, m.end, m.negated, retracted and not m.negated, m.talked_about))
    hedged = any(a.asserted and b.asserted and a.letter != b.letter and HEDGE.fullmatch(text[a.end: b.start])
                 for a, b in zip(out, out[1:]))
    opens_corrected = bool(out) and CORRECTION.match(text.lstrip(" \t*-")) is not None \
        and CORRECTION.match(text.lstrip(" \t*-")).end() <= out[0].start
    corrected = any(m.retracted for m in out) or (opens_corrected and len({m.letter for m in out if m.asserted}) == 1)
    return Statement(text, tuple(out), hedged, corrected)


def _rejects_or_asks(sentence: str, valid: str) -> bool:
    """A sentence that names letters only to reject them ('C: wrong.') or asks one ('C?')."""
    st = read_statement(sentence, valid)
    if not st.mentions:
        return False
    return all(m.negated for m in st.mentions) or sentence.rstrip().endswith(("?", "？"))


def final_sentences(line: str, valid: str) -> Statement | None:
    """The statement of one line: its last sentence that names a letter, with the sentence
    before it when it opens with a correction ("C? No, D.", "The answer is B. Wait, no: D.")."""
    line = line[-MAX_STATEMENT_CHARS:]
    cuts = [0] + [m.end() for m in SENTENCE_END.finditer(line)] + [len(line)]
    sentences = [line[a:b] for a, b in zip(cuts, cuts[1:]) if line[a:b].strip()]
    for n in range(len(sentences) - 1, -1, -1):
        statement = read_statement(sentences[n], valid)
        if not statement.mentions:
            continue
        first = n
        while first > 0 and CORRECTION.match(sentences[first].lstrip(" \t*-¿¡")) and n - first < 2:
            first -= 1
        for back in (1, 2):  # 'C: wrong. D: right.', 'C? Nope. D.': the rejected or asked letter before the answer
            k = first - back
            if k < 0 or back == 2 and read_statement(sentences[k + 1], valid).mentions:
                break
            if _rejects_or_asks(sentences[k], valid):
                first = k
                break
        return read_statement("".join(sentences[first: n + 1]), valid) if first < n else statement
    return None
