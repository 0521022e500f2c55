"""The reading of a statement: its values (numbers.py's numbers, or option letters) and the words
around each, read once.

A final answer written as a sentence ("So Tom needs 14 jars, not 12.", "答案是15元，不是12元。",
"अतः उत्तर 14 है, 12 नहीं।", "Es sind entweder 6 oder 8.") is read into a `Reading`: its candidate
values, each with what the function words of its clause make of it (graders/words/): negated
("not 12", "12 नहीं"), bounded ("at least 14"), one of alternatives ("6 or 8", "between 6 and 8"),
or working rather than the answer (a term of an equation chain, a premise before "so", a reason
after "because", a circumstance "in 2.5 hours"). `decide` then says what the statement gives:

  one asserted value             -> that value
  a negated value                -> never counts
  two or more asserted values    -> several answers (wrong for a one-value gold, never either)
  alternatives or a range        -> a hedge (never right)
  only bounded values            -> a bound, not a value
  nothing readable               -> none

Where the structure is unclear -- maths beyond plain numbers (variables, LaTeX, an expression
without its value) -- `read_statement` declines (None) and the maths readers of extract.py decide.
Option letters are values of the same `Reading` (`read_letters`, below: negated, retracted, talked
about, a hedge), decided by the same `decide`; choice.py reads a reply's final statement so.
Clauses are split by Unicode punctuation and contrast words; letters and digits told by their
Unicode category: no list of scripts, no list of nouns or verbs. Pure string work, bounded:
statements of at most MAX_STATEMENT characters, every regex linear.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace
from functools import lru_cache

from .numbers import MAX_VALUES, Declined, Value, scan_digits, scan_words, show
from .region import asked, char_kind, clean, plain_maths
from .words import (ADJUNCT_AFTER, ADJUNCT_BEFORE, AND, ARTICLE, BOUND_AFTER, BOUND_BEFORE, COMMENT, CONCLUDE, CONTRAST, COPULA,
                    CORRECTION, EXCLUDE, MODAL, NEGATE_AFTER, NEGATE_BEFORE, NO, NOT_NEGATION, OPTION, OR, OR_BETWEEN_VALUES,
                    RANGE_START, RANGE_TO, REASON, RIGHT, alternation, ends, find, is_letter, opens, placed, whole)

MAX_STATEMENT = 600        # characters of one statement that are read
BIND_WORDS = 4             # a negation binds a value at most this many words away
RANGE_MARKS = ("~", "〜", "～", "–", "—", "…")  # '6~8', '6–8': a range between two values


@dataclass(frozen=True)
class Reading:
    """What a statement gives: kind is one of 'one', 'several', 'hedge', 'bound', 'negated',
    'question' (a final sentence that asks: 'Is the answer 14?'), 'none'."""

    kind: str
    values: tuple[Value, ...]
    statement: str
    corrected: bool = False   # letters: one taken back, or the statement opens with a correction

    @property
    def asserted(self) -> tuple[Value, ...]:
        return tuple(v for v in self.values if not (v.negated or v.bound or v.alternative or v.working or v.weak or v.retracted))

    @property
    def stated(self) -> set:
        """The values said to be the answer, a hedge's included (neither negated, retracted nor talked about)."""
        return {v.value for v in self.values if not (v.negated or v.retracted or v.weak)}

    @property
    def rejected(self) -> set:
        """The values the statement negates or takes back, and never states."""
        return {v.value for v in self.values if (v.negated or v.retracted) and not v.weak} - self.stated

    @property
    def decisive(self) -> bool:
        """The statement's structure says something its values alone do not: a hedge, a correction, a negation."""
        return self.kind == "hedge" or self.corrected or any(v.negated for v in self.values)

    @property
    def answer(self) -> str | None:
        """The answer text: the value ('14'), or the distinct values of several or of a hedge
        ('14, 12'); None for a bound, a negation alone or nothing."""
        if self.kind == "one":
            return self.asserted[0].text
        if self.kind in ("several", "hedge"):
            pool = self.asserted if self.kind == "several" else [v for v in self.values if v.alternative]
            return ", ".join(dict.fromkeys(v.text for v in pool))
        return None

    @property
    def second(self) -> str | None:
        """The other reading of a one-value answer written '10.066' (10066 where a dot separates
        thousands), tried when the first reading is not the gold."""
        if self.kind != "one" or self.asserted[0].thousands is None:
            return None
        one = self.asserted[0]
        return show(one.thousands) + ("%" if one.percent else "")

    @property
    def note(self) -> str:
        """What the reading found, for the verdict's reason."""
        parts = []
        one = self.asserted[0] if self.kind == "one" else None
        if one is not None and (one.unit or one.words):
            parts.append(f"{one.written!r}" + (f" (unit {one.unit!r})" if one.unit else ""))
        negated = sorted({v.text for v in self.values if v.negated})
        if negated:
            parts.append("negated " + ", ".join(negated))
        if self.kind == "hedge":
            parts.append("a hedge between " + " and ".join(dict.fromkeys(v.text for v in self.values if v.alternative)))
        if self.kind == "bound":
            parts.append("a bound, not a value: " + ", ".join(v.written for v in self.values if v.bound))
        if self.kind == "several":
            parts.append(f"{len({v.value for v in self.asserted})} values asserted")
        return "; ".join(parts)


# --- reading one statement ----------------------------------------------------------------------

# maths that the structure does not read: a LaTeX command, a variable beside an operator, a power
MATHS_RE = re.compile(r"\\(?!text\b|textbf\b|mathrm\b|,|!|;|%|\$|quad\b|qquad\b)[a-zA-Z]+|\^|"
                      r"(?<![^\W\d_])[a-zA-Z](?![^\W\d_])\s*[=+*/<>]|[=+*/<>]\s*[a-zA-Z](?![^\W\d_])|\d[a-zA-Z](?![^\W\d_])\s*[=+*/^]")
def _words_between(text: str) -> int:
    """Words in a gap: runs of letters, marks or digits between spaces and punctuation."""
    return sum(1 for token in re.split(r"[\s,.;:!?、，。：；]+", text) if any(c.isalnum() or is_letter(c) for c in token))


# --- relations ---------------------------------------------------------------------------------

@lru_cache(maxsize=64)  # (asked twice a statement: its negations and its bounds)
def _clauses(text: str) -> tuple[tuple[int, int], ...]:
    """(start, end) of the clauses of a sentence: split at commas, semicolons, colons, dashes,
    brackets and contrast words ('but', 'sondern', 'а', '而是', 'بل', 'แต่')."""
    cuts = {0, len(text)}
    for i, ch in enumerate(text):
        if char_kind(ch) == "clause" and not (ch in ",." and 0 < i < len(text) - 1 and text[i - 1].isdigit()
                                                and text[i + 1].isdigit()):
            cuts.update((i, i + 1))
    for m in find(CONTRAST, text):
        cuts.add(m.start())
    points = sorted(cuts)
    return tuple((a, b) for a, b in zip(points, points[1:]) if b > a)


def _clause_of(clauses: tuple[tuple[int, int], ...], pos: int) -> tuple[int, int]:
    for a, b in clauses:
        if a <= pos < b:
            return a, b
    return 0, 0


def _mark_negations(text: str, values: list[Value]) -> list[Value]:
    skip = [(m.start(), m.end()) for m in find(NOT_NEGATION, text)]
    bounds = [(m.start(), m.end()) for m in find(BOUND_BEFORE, text)]
    clauses = _clauses(text)
    negated = set()
    for words, forward in ((NEGATE_BEFORE, True), (NEGATE_AFTER, False)):
        for m in find(words, text):
            if any(a <= m.start() < b for a, b in skip + bounds):
                continue  # 'not only', 'no more than': not a negation of the value
            a, b = _clause_of(clauses, m.start())
            if forward:  # the first value after it in its clause
                pick = [i for i, v in enumerate(values) if m.end() <= v.start < b
                        and _words_between(text[m.end():v.start]) <= BIND_WORDS][:1]
                rest = re.sub(r"[^\w\s]", " ", text[m.end():b]).strip()
                if not pick and all(placed(t) for t in rest.split()):
                    # a negation that ends its clause, or has only its verb after it, is said of what
                    # came before it ('14 ist es nicht', '14 is het niet', '14, c'est pas', '17 no
                    # es', '17 non è'; not '14 apples and no pears'): the last value before it,
                    # across at most one clause mark
                    # ... when that value opens its clause, the thing the sentence is about ('há 40 no
                    # total' is no rejection: 'no' there is a preposition)
                    before = [i for i, v in enumerate(values) if v.end <= m.start()
                              and _words_between(text[v.end:m.start()]) <= BIND_WORDS
                              and sum(char_kind(c) == "clause" for c in text[v.end:m.start()]) <= 1
                              and not re.search(r"[^\W_]", text[_clause_of(clauses, v.start)[0]:v.start])]
                    pick = before[-1:]
            else:  # the last value before it in its clause
                pick = [i for i, v in enumerate(values) if a <= v.start and v.end <= m.start()
                        and _words_between(text[v.end:m.start()]) <= BIND_WORDS][-1:]
            negated.update(pick)
    for i in sorted(negated):  # 'not 5 × 10 = 50': the negation takes the whole chain
        j = i
        while values[j].working and j + 1 < len(values) and not any(char_kind(c) == "clause" for c in text[values[j].end:values[j + 1].start]):
            j += 1
            negated.add(j)
    return [replace(v, negated=True) if i in negated else v for i, v in enumerate(values)]


def _mark_bounds(text: str, values: list[Value]) -> list[Value]:
    out = []
    starts = find(BOUND_BEFORE, text)
    ends = find(BOUND_AFTER, text)
    clauses = _clauses(text)
    for k, v in enumerate(values):
        lo = max(_clause_of(clauses, v.start)[0], values[k - 1].end if k else 0)
        # 'at least 14', 'على الأقل إلى 14', '至少需要14': a bound phrase at most two words before, a single
        # word right before ('over 14'; '12 left over after giving 2 away' bounds nothing)
        before = any(lo <= m.start() and m.end() <= v.start and _words_between(text[m.end():v.start]) <= (
            2 if " " in m.group().strip() or not m.group()[:1].isascii() else 0) for m in starts)
        tail_from = v.end + len(v.unit) + (1 if text[v.end:v.end + 1] == " " else 0)
        after = any(v.end <= m.start() <= tail_from + 1 and not text[tail_from:m.start()].strip(" ")
                    or (m.start() == v.end and m.group() in "多余餘") for m in ends)
        if re.match(r"\+(?!\s*\d)", text[v.end:v.end + 2]):
            after = True  # '14+'
        out.append(replace(v, bound=True) if before or after else v)
    return out


# an operator between two values, with the unit of the first before it ('$1500/month * 12',
# '200 hours * $50/hour = $10000')
_UNIT_WORDS = r"(?:\s*/?\s*[^\W\d_]+){0,2}"
OPERATOR_GAP_RE = re.compile(_UNIT_WORDS + r"[\s(（\[]*(?:\*\*|[+*/×÷·=^<>≤≥]|\s-\s|-(?=\s*\()|[xX]|\\times|\\cdot)"
                             r"[\s)）\]]*[$＄€£¥₹]?\s*[(（\[]*")
DASH_GAP_RE = re.compile(r"\s?[-‐–—−]\s?[$＄€£¥₹]?")
EQUALS_GAP_RE = re.compile(_UNIT_WORDS + r"\s*[)）\]]*\s*=\s*[$＄€£¥₹]?\s*")


def _mark_alternatives(text: str, values: list[Value]) -> tuple[list[Value], bool]:
    """Values joined by 'or', or by a range ('between A and B', 'A to B', 'A–B'), are
    alternatives. Values joined by operators form an expression: with '=', the value after its
    last '=' is the chain's value and the terms before it are working; without one (or with an
    operation after the last '='), the statement is maths that is not read here (False)."""
    out = list(values)
    links = []
    for a, b in zip(values, values[1:]):
        gap = text[a.end:b.start]
        if DASH_GAP_RE.fullmatch(gap):
            links.append("dash")   # '6-8', '6 – 8': a range, or a subtraction in a chain ('22 – 7 = 15')
        elif "=" in gap and (EQUALS_GAP_RE.fullmatch(gap) or not re.search(r"[^\W\d_]{2,}", gap)):
            links.append("eq")
        elif OPERATOR_GAP_RE.fullmatch(gap):
            links.append("op")
        else:
            links.append(None)
    i = 0
    while i < len(links):  # a dash inside an equation chain subtracts
        j = i
        while j < len(links) and links[j] in ("eq", "op", "dash"):
            j += 1
        if "eq" in links[i:j]:
            links[i:j] = ["op" if link == "dash" else link for link in links[i:j]]
        i = max(j, i + 1)
    i = 0
    chains: list[tuple[int, int]] = []  # (first term, value) of each equation chain
    while i < len(links):  # groups of values joined by operators
        if links[i] not in ("eq", "op"):
            i += 1
            continue
        j = i
        while j < len(links) and links[j] in ("eq", "op"):
            j += 1
        group = links[i:j]
        if "eq" not in group or "op" in group[len(group) - 1 - group[::-1].index("eq"):]:
            return out, False  # '12 + 2' or '= 12 + 2': an expression without its value
        last_eq = i + len(group) - 1 - group[::-1].index("eq")
        for k in range(i, last_eq + 1):
            out[k] = replace(out[k], working=True)
        chains.append((i, last_eq + 1))
        i = j
    # 'Janet sells 16 - 3 - 4 = 9 eggs, and she makes 9 × $2 = $18', 'There are 12 eggs in 1 dozen
    # and she'll eat 84 eggs so that's 84/12 = 7': the last chain's value is what the statement
    # computes; the values before that chain (an earlier chain's value too) are its premises
    if chains:
        first = chains[-1][0]
        # not across a reason, a comment or a negation ('The answer is 60, not 5 × 10 = 50.')
        asides = [m.end() for words in (REASON, COMMENT, NEGATE_BEFORE) for m in find(words, text) if m.end() <= values[first].start]
        floor = max(asides, default=-1)
        for k in range(first):
            if not out[k].negated and out[k].start > floor:
                out[k] = replace(out[k], working=True)
    for i, link in enumerate(links):
        a, b = values[i], values[i + 1]
        joined = link == "dash"
        if link is None:
            gap = text[a.end:b.start]
            bare = gap.lstrip(" ")
            if a.unit and bare.startswith(a.unit):
                bare = bare[len(a.unit):]  # '14 jars or 16 jars': the gap without the first unit
            if find(NEGATE_BEFORE, gap) or find(NEGATE_AFTER, gap):
                continue  # '14 instead of 12', '14, not 12': a contrast, not alternatives
            for words in dict.fromkeys((gap.strip(" ,、，"), bare.strip(" ,、，"))):
                if not words:
                    continue
                joined = joined or whole(OR_BETWEEN_VALUES, words) or whole(RANGE_TO + RANGE_MARKS, words)
                if not joined and whole(AND, words):
                    lead = text[max(0, a.start - 40):a.start]
                    joined = any(len(lead) - m.end() <= 12 for m in find(RANGE_START, lead))
                opening = opens(OR_BETWEEN_VALUES, words)
                if not joined and opening and len(opening.group()) > 1 and _words_between(words) <= 2:
                    joined = True  # 'or maybe', 'ou bien', 'oder vielleicht'
        if joined:
            out[i], out[i + 1] = replace(out[i], alternative=True), replace(out[i + 1], alternative=True)
    return out, True


PAREN_RE = re.compile(r"\(([^()]{1,200})\)|（([^（）]{1,200})）")


def _aside(text: str) -> str:
    """'She makes $18 (that's 9 eggs × $2).', '540 meters (3 sprints × 3 times × 60 meters)': a
    bracketed computation after a value is its working; blanked (same length) when a value
    stands before it outside brackets and it holds an operator but no 'or' and no negation."""
    def blank(m: re.Match) -> str:
        inner = m.group(1) or m.group(2)
        before = text[: m.start()]
        if not re.search(r"\d", before) or not re.search(r"\d\s*[^\W\d_]*\s*[×x*+/=÷·]\s*[$＄€£]?\s*\d|[×*÷=]", inner):
            return m.group()
        if find(OR, inner) or find(NEGATE_BEFORE, inner) or find(NEGATE_AFTER, inner):
            return m.group()
        return " " * len(m.group())
    return PAREN_RE.sub(blank, text) if "(" in text or "（" in text else text


def read_statement(text: str, threshold_one: bool = True) -> Reading | None:
    """The reading of one statement (a sentence, or the words after an answer cue); None where
    it holds maths this structure does not read (the maths readers decide then)."""
    text = text[:MAX_STATEMENT]
    plain = plain_maths(text)
    if plain is None:
        return None
    plain = _aside(clean(plain))
    if MATHS_RE.search(plain) or re.search(r"\d[eE][+-]?\d|\d\s*:\s*\d|\|\s*[-−]?\d|\d\s*\||(?<![^\W\d_])\d+[a-jl-zA-JL-Z](?![^\W\d_])"
                                          r"|[√∛∜]|\d[⁻⁺⁰¹²³⁴⁵⁶⁷⁸⁹]|≡", plain):
        return None  # variables, powers, LaTeX, '6.02e23', a ratio '6 : 7', '|-5|', '3x', '√47', '10⁻³', '≡'
    if re.search(r"\d!", plain) and not re.search(r"[^\W\d_]{2,}", plain):
        return None  # '5!': a factorial, not an exclamation
    if "\\" in plain and not re.search(r"\d", plain):
        return None  # '\\text{five}': a word in maths mode is the maths readers' to read
    try:
        values = scan_digits(plain)
    except Declined:
        return None
    if len(values) > MAX_VALUES:
        return None
    taken = [(v.start, v.end) for v in values]
    words = scan_words(plain, taken, threshold_one or not values)
    if values:  # beside digits, number words count in a hedge or a contrast, not as an answer
        words = [replace(w, weak=True) for w in words]
    values = sorted(values + words, key=lambda v: v.start)
    values, readable = _mark_alternatives(plain, values)
    if not readable:
        return None
    values = _mark_bounds(plain, values)
    values = _mark_negations(plain, values)
    values = _mark_corrected(plain, values)
    values = _mark_premises(plain, values)
    values = _mark_adjuncts(plain, values)
    return Reading(decide(values), tuple(values), text)


def _mark_adjuncts(text: str, values: list[Value]) -> list[Value]:
    """Two or more values asserted, all but one governed by a preposition of time, extent or rate
    ('The train covers 150 km in 2.5 hours.'): those are circumstances (working). Otherwise the
    values stay as they are: several values with no such word are several answers."""
    strong = [i for i, v in enumerate(values) if not (v.negated or v.bound or v.alternative or v.working or v.weak)]
    if len({values[i].value for i in strong}) < 2:
        return values
    befores, afters = find(ADJUNCT_BEFORE, text), find(ADJUNCT_AFTER, text)
    governed = set()
    for i in strong:
        v = values[i]
        if any(m.end() <= v.start and not re.sub(r"[\s$＄€£¥₹]", "", text[m.end():v.start]) for m in befores[-8:]):
            governed.add(i)
            continue
        tail_from = v.end + len(v.unit) + (1 if text[v.end:v.end + 1] == " " else 0)
        if any(v.end <= m.start() <= tail_from + 1 and not text[tail_from:m.start()].strip() for m in afters):
            governed.add(i)
    rest = {values[i].value for i in strong if i not in governed}
    if len(rest) != 1 or not governed:
        return values
    return [replace(v, working=True) if i in governed else v for i, v in enumerate(values)]


def correction_at(text: str, pos: int = 0) -> re.Match | None:
    """A correction word ('wait', 'actually', 'attendez', 'не', '不对', 'แก้ไข') at `pos`,
    followed by punctuation or a space: the words after it replace what came before."""
    for words in (CORRECTION, NO):
        m = opens(words, text, pos)
        if m is not None:
            after = text[m.end(): m.end() + 3].lstrip(" ")
            if not after or char_kind(after[0]) in ("clause", "end"):
                return m
            # 'wait no', 'no wait': two of them; 'Wait times are 5 minutes' is no correction
            nxt = len(text[m.end():]) - len(text[m.end():].lstrip(" "))
            if nxt and (opens(CORRECTION, text, m.end() + nxt) or opens(NO, text, m.end() + nxt)):
                return m
    return None


def _opens_clause(text: str, m: re.Match, loose: bool = False) -> bool:
    """A word opens a clause: at the start, after punctuation or 'and' ('…, so she spent $9',
    'and so'); `loose`: after any space too."""
    before = text[: m.start()].rstrip(" ")
    return not before or char_kind(before[-1]) in ("clause", "end") or unicodedata.category(m.group()[0]) == "Lo" \
        or bool(ends(AND, before)) or loose and text[m.start() - 1:m.start()] == " "


def _mark_premises(text: str, values: list[Value]) -> list[Value]:
    """'She pays $12 and gets $3 back, so she spent $9': values before the last conclusion word
    ('so', 'donc', 'daher', 'поэтому', '所以') that opens a clause, with values after it, are
    its premises (working). 'The answer is 9 because 8 × 9 + 19 = 91': values after a reason
    word ('because', 'parce que', 'weil', '因为') that follows a value are its reasons."""
    out = list(values)
    last = None
    for m in find(CONCLUDE, text):
        loose = not m.group().lower().endswith(("ing", "ndo", "resulting in"))  # 'after giving 2 away' concludes nothing
        if _opens_clause(text, m, loose=loose) and any(v.start >= m.end() for v in values) \
                and any(v.end <= m.start() for v in values):
            last = m
    if last is not None:
        out = [replace(v, working=True) if v.end <= last.start() and not v.negated else v for v in out]
    out = _subject_terms(text, out)
    for m in re.finditer(r"\s[—–]\s|\s-\s(?=[^\d])", text):  # 'There are 60 crayons in total — 5 boxes of 12.'
        head = [v for v in out if v.end <= m.start() and not (v.working or v.negated or v.bound or v.alternative or v.weak)]
        tail = [v for v in out if v.start >= m.end()]
        if head and tail and not any(v.alternative or v.negated for v in tail) and not find(CORRECTION, text[m.end():]):
            out = [replace(v, working=True) if v.start >= m.end() else v for v in out]
            break
    concluding = [(m.start(), m.end()) for m in find(CONCLUDE, text)]
    for words in (REASON, COMMENT):  # 'The answer is $12$, which is 3 more than 9.'
        for m in find(words, text):
            if any(a <= m.start() < b for a, b in concluding) or not any(v.end <= m.start() and not v.working for v in out):
                continue
            if words is COMMENT and not _opens_clause(text, m, loose=True):
                continue
            out = [replace(v, working=True) if v.start >= m.end() else v for v in out]
            break
    return out


# words that join or oppose values: a gap holding one is no predicate between a subject and its result
_JOINING = (OR, AND, CONTRAST, CORRECTION, NEGATE_BEFORE, NEGATE_AFTER, CONCLUDE, REASON, COMMENT, NO)


def _predicate_in(text: str, unit: str = "", known: bool = True) -> bool:
    """A gap between values, within one clause, holds a copula ('is', '等于') or a word no role
    places (one: a verb, whatever it is: 'make', 'hold'), besides the unit of the value before it, and no
    word that joins or opposes values ('and', 'or', 'but', 'not'). `known`: the sentence's language
    is known (two words of it placed), else only a copula is a predicate."""
    if any(char_kind(c) in ("clause", "end") for c in text) or any(find(words, text) for words in _JOINING):
        return False
    tokens = re.findall(r"[^\W\d_]+(?:['’][^\W\d_]+)?", text)
    if unit and tokens and tokens[0] == unit.split()[0]:
        tokens = tokens[1:]
    unplaced = [t for t in tokens if not placed(t) and not any(unicodedata.category(c) == "Lo" for c in t)]
    return bool(find(COPULA, text)) or known and len(unplaced) == 1  # two unplaced: a language it does not know


def _subject_terms(text: str, values: list[Value]) -> list[Value]:
    """'So 5 boxes of 50 pencils make 250 pencils.', 'The number of divisors of 36 is 9.': values joined
    by units and function words only, then a predicate, then one value: the values before it are the
    subject's terms (working). No verb list: the predicate is a copula or a word no role places; a
    word right before the subject's first value must be placed ('She bought 3 …' is no subject)."""
    if len(values) < 2 or any(v.alternative for v in values):
        return values
    known = sum(placed(t) for t in re.findall(r"[^\W\d_]+(?:['’][^\W\d_]+)?", text)) >= 2
    for k in range(len(values) - 1, 0, -1):
        before = [v for v in values[:k] if not v.working]
        after = {v.value for v in values[k:] if not (v.working or v.negated or v.bound or v.weak)}
        if not before or all(v.weak for v in before) or len(after) != 1 \
                or not _predicate_in(text[values[k - 1].end:values[k].start], values[k - 1].unit, known):
            continue
        lead = re.findall(r"[^\W\d_]+(?:['’][^\W\d_]+)?", text[:before[0].start])
        gaps = [text[a.end:b.start] for a, b in zip(values[:k], values[1:k])]
        if find(COPULA, text[:before[0].start]) or lead and not placed(lead[-1]) \
                or any(_predicate_in(g, a.unit, known) for g, a in zip(gaps, values)):
            return values  # a predicate before the subject's values ('She bought 3 …'): not a subject
        return [replace(v, working=True) if v.end <= values[k - 1].end and not v.negated else v for v in values]
    return values


def _mark_corrected(text: str, values: list[Value]) -> list[Value]:
    """'14, wait, 16', 'คำตอบคือ 120 แก้ไข: ที่ถูกคือ 12': values before a correction word that
    opens a clause, with a value after it, are superseded (working, not an answer)."""
    last = None
    for m in find(CORRECTION, text):
        opens = m.start() == 0 or char_kind(text[m.start() - 1]) in ("clause", "end") or text[m.start() - 1] == " "
        if opens and correction_at(text, m.start()) is not None and any(v.start >= m.end() for v in values) \
                and any(v.end <= m.start() for v in values):
            last = m
    if last is None:
        return values
    return [replace(v, working=True) if v.end <= last.start() else v for v in values]


def decide(values: list[Value]) -> str:
    """The kind of reading: see the module's docstring."""
    alternatives = {v.value for v in values if v.alternative and not v.negated}
    strong = [v for v in values if not (v.negated or v.bound or v.alternative or v.working or v.weak or v.retracted)]
    if len(alternatives) > 1:
        return "hedge"
    distinct = {v.value for v in strong}
    plain = {v.value for v in strong if not v.percent}
    if len(distinct) == 2 and any(v.percent and v.value / 100 in plain for v in strong if not isinstance(v.value, str)):
        distinct = plain  # '$\\frac{1}{2}$, i.e. 50%': one value twice
    if len(alternatives) == 1 and not distinct - alternatives:
        return "one" if distinct else "hedge"
    if len(distinct) == 1:
        return "one"
    if len(distinct) > 1:
        return "several"
    if any(v.bound for v in values):
        return "bound"
    if any(v.negated for v in values):
        return "negated"
    return "none"


# --- letters -------------------------------------------------------------------------------------
# An option letter is one more value, read with the roles of the same lexicons: 'not B', 'B değil',
# 'C n'est pas juste' negate it; 'B? No, D.' and 'first B, but D' take it back (retracted); 'A or C'
# offers alternatives (a hedge); 'C and D are unrelated' talks about it (weak: named, not stated). A
# letter has no unit and no operator: it is bound within its clause, told by punctuation, whatever
# the words between, and a list of letters shares what is said of its last one ('A and B are wrong').

LETTER_RE = re.compile(r"(?<![A-Za-z0-9])([A-J])(?![A-Za-z0-9])(?![-'’][A-Za-z])")
MAX_LETTERS = 12          # more letters than that is a list of options, not a statement
_A = alternation
LETTER_NEGATION = re.compile(_A(NEGATE_BEFORE, EXCLUDE), re.I)   # 'not B', 'n'est pas B', 'не B', '不是B', '排除B'
# right after the letter: 'B değil', 'B नहीं', 'Bではなく', 'B is wrong', 'B is not', 'B can be ruled out'
NEGATED_AFTER = re.compile(rf"\s*(?:{_A(OPTION)}\s*)?(?:(?:{_A(COPULA, MODAL)}\s*)*{_A(NEGATE_AFTER)}"
                           rf"|(?:{_A(COPULA, MODAL)}\s*)+{_A(NEGATE_BEFORE, EXCLUDE)})", re.I)
# what takes an earlier letter back (a glued 'no' of one character is part of other words: 不 in 不可逆)
TAKES_BACK = re.compile(_A(CONTRAST, CORRECTION, tuple(w for w in NO if len(w) > 2 or not w.startswith("~"))), re.I)
OR_GAP = re.compile(rf"[)\]）】]?\s*{_A(OR)}\s*(?:{_A(OPTION)}\s*)?[(\[（【]?\s*$", re.I)     # 'A or C', 'A 或 C', 'AかC'
LIST_GAP = re.compile(rf"[)\]）】]?\s*(?:,|、|/|&|{_A(AND)})?\s*[(\[（【]?\s*$", re.I)   # 'A and B', 'A、B'
SAID_OF = re.compile(rf"\s*(?:{_A(OPTION)}\s*)?{_A(COPULA, MODAL)}", re.I)                  # 'A is also plausible'
CALLED_RIGHT = re.compile(rf"\s*(?:{_A(OPTION)}\s*)?(?:{_A(COPULA, MODAL)}\s*)?(?:{_A(ARTICLE)}\s+)?{_A(RIGHT)}", re.I)
# the article 'A' before a word ('A resposta é B'), not before a word that joins, negates or says something of a letter
ARTICLE_A = re.compile(rf"A\s+(?!{_A(OR, AND, NEGATE_BEFORE, NO, COPULA, CONTRAST, REASON, RANGE_TO)})[a-zà-öø-ÿ]")
CLAUSE_END = re.compile(r"[,，;；:：.。!！?？،؛।…\n]|\s[-–—]\s")
# the negations after what they deny ('wrong', 'falsch', '不对'), but a glued one of one character ('错': 没错 is correct)
SPACED_NEGATE_AFTER = tuple(w for w in NEGATE_AFTER if not w.startswith("~") or len(w) > 2)


def _clause_end(text: str, pos: int) -> int:
    end = CLAUSE_END.search(text, pos)
    return end.start() if end else len(text)


def _denied_in_own_clause(text: str, v: Value, next_start: int) -> bool:
    """A negation in the clause after the letter, with no other letter in it: the clause's predicate
    is denied of the letter ('C n'est pas juste', 'C stimmt nicht'); the words after a label's colon
    are said of it ('C: wrong')."""
    end = _clause_end(text, v.end)
    if not text[v.end:end].strip() and text[end:end + 1] in ":：":
        end = _clause_end(text, end + 1)
    return next_start >= end and (LETTER_NEGATION.search(text, v.end, end) is not None or bool(find(SPACED_NEGATE_AFTER, text[v.end:end])))


def read_letters(text: str, valid: str) -> Reading:
    """The option letters of a statement (one line, normalised by choice.py), each negated,
    retracted, talked about (weak) or stated; two stated letters joined by an or-word are a hedge."""
    text = text[-MAX_STATEMENT:]
    found = [Value(m.group(1), m.start(), m.end(), m.group(1)) for m in LETTER_RE.finditer(text)
             if m.group(1) in valid and not (m.group(1) == "A" and ARTICLE_A.match(text, m.start()))]
    if len(found) > MAX_LETTERS:
        return Reading("none", (), text)
    values: list[Value] = []
    denied_after: set[int] = set()   # letters negated by the words after them, in their own clause
    for n, v in enumerate(found):
        window = text[found[n - 1].end if n else 0:v.start]   # back to the previous letter
        cut = list(CLAUSE_END.finditer(window))
        clause = window[cut[-1].end():] if cut else window
        before = list(LETTER_NEGATION.finditer(clause))
        after = text[v.end:v.end + 40]
        right = CALLED_RIGHT.match(after) is not None
        negated = bool(before) and not TAKES_BACK.search(clause, before[-1].end()) or bool(NEGATED_AFTER.match(after)) and not right
        if not negated and _denied_in_own_clause(text, v, found[n + 1].start if n + 1 < len(found) else len(text)):
            negated = True
            denied_after.add(n)
        if not negated and values and values[-1].negated and not right and (LIST_GAP.fullmatch(window) or OR_GAP.fullmatch(window)):
            negated = True  # 'not A or B', '排除A、B、D', '而不是C或D'
        said = SAID_OF.match(after)
        # 'D is.' after 'C is not right': a verb with nothing after it repeats the predicate before
        talked = not negated and said is not None and not right and re.search(r"[^\W_]", text[v.end + said.end():_clause_end(text, v.end + said.end())])
        values.append(replace(v, negated=negated, weak=bool(talked)))
    listed: set[int] = set()   # letters joined by a word to the negated letter after them
    for n in range(len(values) - 2, -1, -1):  # 'A and B are wrong': the negation after B covers A
        v, nxt = values[n], values[n + 1]
        gap = text[v.end:nxt.start]
        worded = re.search(r"[^\s,()\[\]]", gap)
        # (a word or 、 joins them: 'A, D değil' is 'A, not D'; a comma joins a list a word closes: 'A, B und C nicht passen')
        if not v.negated and nxt.negated and LIST_GAP.fullmatch(gap) and (worded or n + 1 in listed) \
                and (NEGATED_AFTER.match(text, nxt.end) or n + 1 in denied_after):
            values[n] = replace(v, negated=True, weak=False)
            denied_after.add(n)
            if worded:
                listed.add(n)
        elif not v.negated and not v.weak and nxt.weak and LIST_GAP.fullmatch(gap):
            values[n] = replace(v, weak=True)  # 'C and D are unrelated'
    # a correction or a question between two letters takes the earlier one back ('C? Nope. D.')
    values = [replace(v, retracted=not v.negated and any(
        not (later.negated or later.weak) and later.value != v.value and not LIST_GAP.fullmatch(text[v.end:later.start])
        and (TAKES_BACK.search(text[v.end:later.start]) or asked(text, v.end, later.start)) for later in values[n + 1:]))
        for n, v in enumerate(values)]
    hedged = {k for k, (a, b) in enumerate(zip(values, values[1:])) if a.value != b.value and OR_GAP.fullmatch(text[a.end:b.start])
              and not any(x.negated or x.retracted or x.weak for x in (a, b))}
    values = [replace(v, alternative=True) if k in hedged or k - 1 in hedged else v for k, v in enumerate(values)]
    opening = TAKES_BACK.match(text.lstrip(" \t*-"))
    stated = {v.value for v in values if not (v.negated or v.retracted or v.weak)}
    corrected = any(v.retracted for v in values) or bool(values) and opening is not None \
        and opening.end() <= values[0].start and len(stated) == 1
    return Reading(decide(values), tuple(values), text, corrected)

