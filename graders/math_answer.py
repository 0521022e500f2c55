"""Grading a maths or numeric answer once it is read: the cheapest rule that decides wins.

exact string -> normalised string -> both parsed (structure.py) and compared numerically in
process or symbolically in the sympy worker (equivalence.py). An answer that is a sentence is
read through its last maths or its numbers (prose_numbers); a decimal comma is read as a point
where it cannot separate list items or thousands. grade.grade dispatches here for math and
numeric golds.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import replace
from typing import Any

from .extract import extract_last_number, last_sentence_math, prepare_numbers, scaled_number
from .numbers import INTEGER_RE, SCALE_WORDS
from .words import AND, OR_BETWEEN_VALUES, alternation
from .gold import MATH_WORDS
from .normalise import normalise, plain_key
from .parse import ParseError, TooBig
from .verdict import Verdict, verdict

def number_word(answer: str) -> str | None:
    """'There are three ways.' -> '3', 'thirty-four' -> '34': the one value of a short answer
    written in words (clauses.py reads them, in the languages it knows); None otherwise."""
    from .clauses import read_statement

    if len(answer) > 300:
        return None
    reading = read_statement(answer)
    if reading is None or reading.kind != "one" or not reading.asserted[0].words:
        return None
    return reading.answer


DECIMAL_COMMA_RE = re.compile(r"^(-?)(\d+),(\d+)$")
EURO_NUMBER_RE = re.compile(r"^(-?\d{1,3}(?:\.\d{3})+),(\d+)$")


# an arbitrary constant (C, C_1, c_2) and an initial value written X_0 or X(0)
_CONSTANT_RE = r"(?<![A-Za-z\\]){}(?:_\{{?\d\}}?)?(?![A-Za-z])"
_INITIAL_RE = re.compile(r"(?<![A-Za-z\\])([A-Za-z])(?:_\{?0\}?|\(0\))")


def same_names(gold: str, answer: str) -> str:
    """The answer with the gold's names for what both name: an arbitrary constant written `c` where
    the gold writes `C` (or the other way round), `I(0)` where the gold writes `I_0` (or the other
    way round, where X is also a function: `I(t)`). Only a name the gold does not use otherwise is
    renamed: `c` stays `c` beside a gold that has a `c` of its own."""
    for mine, theirs in (("c", "C"), ("C", "c")):
        if re.search(_CONSTANT_RE.format(theirs), gold) and not re.search(_CONSTANT_RE.format(mine), gold) \
                and re.search(_CONSTANT_RE.format(mine), answer) and not re.search(_CONSTANT_RE.format(theirs), answer):
            answer = re.sub(rf"(?<![A-Za-z\\]){mine}(?![A-Za-z])", theirs, answer)
            break
    written = {m.group(1): m.group() for m in _INITIAL_RE.finditer(gold)}
    for m in reversed(list(_INITIAL_RE.finditer(answer))):
        gold_form = written.get(m.group(1))
        if gold_form and ("(" in gold_form) != ("(" in m.group()) and m.group() not in gold \
                and re.search(rf"(?<![A-Za-z\\]){m.group(1)}\((?!0\))", gold + answer):
            answer = answer[:m.start()] + gold_form + answer[m.end():]
    return answer


def decimal_comma(text: str) -> str | None:
    """The decimal-comma reading of one number ('2,5' -> '2.5'), or None when it is not one.

    A single comma between digits is a decimal comma unless exactly three digits follow it
    and the part before is not 0 ('1,000' stays one thousand, '0,125' is 0.125); '1.234,5'
    (dots as thousands) is 1234.5. Only applied when the gold is a single number, so a list
    '2,5' against the gold '2, 5' stays a list.
    """
    m = EURO_NUMBER_RE.match(text)
    if m:
        return m.group(1).replace(".", "") + "." + m.group(2)
    m = DECIMAL_COMMA_RE.match(text)
    if not m:
        return None
    sign, whole, frac = m.groups()
    if len(frac) == 3 and whole.lstrip("0") != "" and len(whole) <= 3:
        return None
    return f"{sign}{whole}.{frac}"


def gold_decimal_comma(gold: str, text: str) -> str | None:
    """The decimal-comma reading of a gold written `3,75`, or None where a comma between digits
    may separate answers (`-2,1` and `2,5` are lists in MATH) or thousands (`1,500`).

    A decimal comma when the part after it starts with 0 (`3,05`, `0,045`: a listed answer is
    never written 05), has two digits (`3,75`, `19,99`), or is not three digits after a whole
    part of 0 or of four digits or more (`0,125`, `1234,5`); `1.234,5` (dots for thousands);
    any part after a currency sign (`5,90 €`). Used only when the answer is one number, as a
    second reading after the list one.
    """
    m = EURO_NUMBER_RE.match(text)
    if m:
        return m.group(1).replace(".", "") + "." + m.group(2)
    m = DECIMAL_COMMA_RE.match(text)
    if not m:
        return None
    sign, whole, frac = m.groups()
    money = any(unicodedata.category(c) == "Sc" for c in gold) or re.search(r"\b[A-Z]{3}\b", gold) is not None
    if (frac.startswith("0") or len(frac) == 2 or (whole == "0" and len(frac) >= 2)
            or (len(whole) >= 4 and len(frac) != 3) or (money and len(frac) != 3)):
        return f"{sign}{whole}.{frac}"
    return None


def different_integers(gold: str, answer: str, how: str) -> Verdict:
    """Two different integers (most wrong GSM8K answers): the verdict the whole comparison gives them
    (normalised, parsed, compared as exact rationals), without its cost; tests hold it to that."""
    return verdict(False, answer, "numeric", f"different numbers ({gold} vs {answer})"
                   + (LAST_NUMBER_NOTE if how == "last-number" else ""), how)


LAST_NUMBER_NOTE = " [answer taken from the last number in the response: no marked final answer]"


def grade_math_answer(gold: str, answer: str, how: str, response: str, percent_strict: bool = True,
                      rounded_golds: bool = False) -> Verdict:
    """`rounded_golds`: a gold written with decimals is a rounded value (a pack or a user's file says
    so): an answer that rounds to it at its own last place counts (see rounds_to).
    `percent_strict`: a percent answer to a gold that is not a percent is unequal (10% is not
    10). A pack that asks for kind="numeric" (GSM8K: golds are bare numbers, answers keep their
    signs) compares the number instead."""
    from .equivalence import Decision, compare
    from .structure import Expr, Items, parse_value

    if answer.strip() == gold.strip():
        return verdict(True, answer, "exact", "identical to the gold", how)
    if INTEGER_RE.fullmatch(gold) and INTEGER_RE.fullmatch(answer):
        return different_integers(gold, answer, how)
    renamed = same_names(gold, answer)
    g_norm, a_norm = normalise(gold), normalise(renamed)
    if plain_key(g_norm.text) == plain_key(a_norm.text) and g_norm.text and a_norm.percent <= g_norm.percent:
        extra = f" (removed unit {a_norm.unit!r})" if a_norm.unit else ""
        return verdict(True, answer, "normalised", f"equal after normalisation: {a_norm.text!r}{extra}", how)
    try:
        gold_value = parse_value(g_norm.text)
    except ParseError as e:
        return verdict(None, answer, "none", f"undecided: the gold {gold!r} could not be parsed ({e})", how)
    note = ""
    if isinstance(gold_value, Expr):
        comma = decimal_comma(a_norm.text)
        if comma is not None:
            a_norm = replace(a_norm, text=comma, approx=None)  # the comma reading keeps no approximation
            note = f" [decimal comma read as a point: {comma}]"
    try:
        if how in ("whole", "answer-is", "zh-answer") and looks_like_prose(a_norm.text):
            raise ParseError("a sentence, not a bare answer")
        answer_value = parse_value(a_norm.text)
    except TooBig as e:
        return verdict(None, answer, "none", f"undecided: answer too large to check safely ({e})", how)
    except ParseError as e:
        # a sentence instead of a bare answer: fall back to its last number, marked so
        # (a bare formula that fails to parse is not read through its numbers: '2\\ln|x|' is not 2)
        readable = how in ("answer-is", "zh-answer", "gsm8k") or (how in ("whole", "last-math", "last-sentence") and looks_like_prose(answer))
        several = isinstance(gold_value, Items) and not gold_value.ordered
        number, maths = None, False
        if readable:
            plain = last_sentence_math(answer)  # 'The side length is 4√7.' -> '4√7'
            if plain and plain != answer.strip() and not re.fullmatch(r"[-−]?[\d,]*\.?\d+\s*%?", plain):
                number, maths = plain, True
            else:
                number = prose_numbers(answer, several)
        elif "=" in answer and how in ("whole", "last-math", "last-sentence", "boxed"):
            number = answer  # a worked line: its value after the last '=' is tried below
        if number is None:
            return verdict(False, answer, "none", f"could not read the answer as maths ({e})", how)
        answer, how = number, ("last-sentence" if maths else "last-number")
        a_norm = normalise(number)
        try:
            answer_value = parse_value(a_norm.text)
        except ParseError as e2:
            # a worked line that does not parse whole ("12/20 x 100% = 60%"): its last value
            tail = number.rsplit("=", 1)[1].strip() if "=" in number else ""
            if UNKNOWNS_RE.search(number.rsplit("=", 1)[0]):
                tail = ""  # 'x + y = 7', '2x = 10': an equation in unknowns is not its right side
            try:
                if not tail:
                    raise e2
                a_norm = normalise(tail)
                answer_value = parse_value(a_norm.text)
                answer = tail
            except ParseError:
                return verdict(False, answer, "none", f"could not read the answer as maths ({e2})", how)
    if a_norm.percent and not g_norm.percent and percent_strict:
        return verdict(False, answer, "numeric",
                       f"the answer is a percent ({a_norm.text}%) and the gold {gold!r} is not: not converted", how)
    decision = compare(gold_value, answer_value, gold_percent=g_norm.percent)
    gold_comma = gold_decimal_comma(gold, g_norm.text) if isinstance(gold_value, Items) else None
    if decision.equal is not True and gold_comma is not None and isinstance(answer_value, Expr):
        comma_decision = compare(parse_value(gold_comma), answer_value, gold_percent=g_norm.percent)
        if comma_decision.equal is True:
            decision = comma_decision
            note += f" [the gold's decimal comma read as a point: {gold_comma}]"
    if decision.equal is not True and a_norm.approx:
        # "8\\pi \\approx 25.13" against the gold 25.13: the approximation was the answer asked for
        try:
            approx = compare(gold_value, parse_value(a_norm.approx), gold_percent=g_norm.percent)
        except ParseError:
            approx = None
        if approx is not None and approx.equal is True:
            decision = approx
            note += f" [the value after the approximation sign, {a_norm.approx}]"
    if decision.equal is not True and rounded_golds and isinstance(answer_value, Expr):
        place = rounds_to(g_norm.text, answer_value)
        if place is not None:
            decision = Decision(True, "numeric", f"rounds to the gold at its last place ({place}; the golds are rounded)")
    reason = decision.reason + note
    if how == "last-number":
        reason += LAST_NUMBER_NOTE
    return verdict(decision.equal, answer, decision.method, reason, how)


# a decimal gold ('20.39', '-4.5') or one in scientific notation ('6.2\\times 10^{-3}'): its last place
ROUNDED_GOLD_RE = re.compile(r"(-?\d+)\.(\d+)|(-?\d+)(?:\.(\d+))?\s*(?:\\times|\\cdot)\s*10\s*\^\s*\{?\s*(-?\d+)\s*\}?")


def rounds_to(gold: str, answer: Any) -> str | None:
    """The gold's last place ('0.01') when the answer's exact value is within half of it of the gold
    (20.385 rounds to 20.39, 4.47 to 4.5; 4.44 does not); None otherwise, and for an integer gold
    (12.4 is never 12: only golds written with decimals are rounded ones)."""
    from fractions import Fraction

    from .parse import exact_value

    m = ROUNDED_GOLD_RE.fullmatch(gold.strip())
    value = exact_value(answer.node)
    if m is None or value is None:
        return None
    if m.group(2) is not None:
        digits, exponent = m.group(1) + "." + m.group(2), 0
        places = len(m.group(2))
    else:
        digits, exponent, places = m.group(3) + ("." + m.group(4) if m.group(4) else ""), int(m.group(5)), len(m.group(4) or "")
        if not places:
            return None
    place = Fraction(10) ** (exponent - places)
    target = Fraction(digits) * Fraction(10) ** exponent
    return str(float(place)) if abs(value - target) <= place / 2 else None


# a letter standing for an unknown beside an operator or a coefficient ('x + y', '2x', '3 * n')
UNKNOWNS_RE = re.compile(r"(?<![A-Za-z\\])[a-zA-Z]\s*[+\-−*/×÷^]|[+\-−*/×÷^]\s*[a-zA-Z](?![A-Za-z])|\d[a-zA-Z](?![A-Za-z])")
_SCALES = alternation(tuple(w for w in SCALE_WORDS if len(w) > 1))
PROSE_NUMBER = rf"-?\d[\d,]*(?:\.\d+)?(?:/\d+)?(?:\s*{_SCALES})?"
NUMBER_LIST_RE = re.compile(rf"({PROSE_NUMBER})((?:\s*(?:,|;|&|{alternation(AND, OR_BETWEEN_VALUES)})\s*(?:{PROSE_NUMBER}))+)", re.I)


def prose_numbers(answer: str, several: bool) -> str | None:
    """The number a sentence gives: the one value clauses.py reads in it ("I get 6 ways, not
    5." -> 6; a hedge, several values or a bound give none); where it reads no structure, its
    last number ('2.5 million' as one), or, when the gold has several answers, the last run of
    numbers joined by and/or/commas ('are 3 and 5')."""
    from .clauses import read_statement

    if several:
        runs = list(NUMBER_LIST_RE.finditer(answer))
        if runs:
            return ", ".join(re.findall(PROSE_NUMBER, runs[-1].group(0), re.I))
    reading = read_statement(answer)
    if reading is not None and reading.kind != "none":
        return reading.answer if reading.kind == "one" else None
    prepared = prepare_numbers(answer)
    numbers = list(re.finditer(PROSE_NUMBER, prepared, re.I))
    if numbers and re.search(rf"/|{_SCALES}", numbers[-1].group(0), re.I):
        return numbers[-1].group(0).replace(",", "")  # 'ate 7/8 of the pie', '2.5 million'
    if numbers:
        scaled = scaled_number(numbers[-1].group(0), prepared[numbers[-1].end():])
        if scaled is not None:  # '3万人', '2 Millionen': never the bare 3 or 2
            return scaled[0]
    return extract_last_number(answer)


def looks_like_prose(text: str) -> bool:
    """Words, not maths: read its numbers instead of parsing it.

    Any letter of a script without case (Unicode category Lo: CJK, kana, Hangul, Arabic,
    Devanagari, Thai …), a word of 3+ letters in another cased script than Latin (Cyrillic,
    Greek: single Greek letters are maths), two Latin words of 3+ letters, or one such word with a
    vowel beside another word ('He ran 15'); 'xy + yz' and 'ab' are maths."""
    bare = re.sub(r"\\(?:begin|end)\{[a-zA-Z*]+\}|\\[a-zA-Z]+|_\{?\w+\}?", " ", text)
    if any(unicodedata.category(ch) == "Lo" for ch in bare):
        return True
    if any(not w.isascii() for w in re.findall(r"[^\W\d_]{3,}", bare)):
        return True
    words = [w for w in re.findall(r"(?<![a-zA-Z])[a-zA-Z]{2,}(?![a-zA-Z])", bare) if w.lower() not in MATH_WORDS]
    long = [w for w in words if len(w) >= 3]
    if len(long) >= 2:
        return True
    return bool(long) and len(words) >= 2 and bool(re.search(r"[aeiouy]", long[0], re.I))
