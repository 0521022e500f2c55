"""The maths readers of a final sentence (extract.py calls them when no box, tag, JSON field or cue
holds the answer): an equation chain's value ('4 + 7 = 11只'), a congruence's residue, a label before
its value ('The area of $PQRS$ is 56'), the last maths span and the spans joined to it, plain-text
maths ('She ate 1/7 of the pie'), a value before its words ('40千克'), and lm-eval's last number.
All regexes linear; the function words come from graders/words/.
"""
from __future__ import annotations

import re
import unicodedata

from .numbers import GLUED_SCALE, SCALE_WORD_RE, SCALE_WORDS
from .region import MATH_SPAN_RE, sentences, span_text
from .words import (ADJUNCT_BEFORE, AND, APPROX, CHECK, COMMENT, CONCLUDE, CONDITION, COPULA, MODAL, NEGATE_BEFORE, OR, OR_BETWEEN_VALUES,
                    PREPOSITION, PRONOUN, REASON, alternation, spaced)

MAX_SCAN = 20_000      # characters from the end of a response that are searched
GSM_STRICT_RE = re.compile(r"####\s*(-?[0-9.,]+)")
GSM_ANSWER_IS_RE = re.compile(r"[Tt]he (?:final )?answer is\s*\$?\s*(-?[0-9.,]+)")
GSM_FLEX_RE = re.compile(r"(-?[$0-9.,]{2,})|(-?[0-9]+)")


REASON_AFTER_RE = re.compile(rf",?\s+{alternation(spaced(REASON), spaced(COMMENT))}", re.I)
CONDITION_RE = re.compile(rf"{alternation(PREPOSITION, ADJUNCT_BEFORE, REASON, CONDITION)}", re.I)


def clean_tail(answer: str) -> str:
    """Trim the sentence after an answer: 'is 5. Then ...' -> '5'; keep $...$ contents."""
    answer = re.sub(r"\*\*(.+?)\*\*", r"\1", answer)  # markdown bold (not 3**5)
    answer = re.sub(r"(?<![\w)])\*\*|\*\*(?![\w(])", "", answer.strip()).strip()
    # "9 because 8 x 9 + 19 = 91", "14, since $6x + 19 = 103$ ...": the reason is not the answer
    answer = REASON_AFTER_RE.split(answer, maxsplit=1)[0]
    quoted = re.match(r'^"((?:[^"\\]|\\.)*)"', answer)  # "answer": "\\frac{1}{4}" (JSON)
    if quoted:
        answer = quoted.group(1).strip()
    math = (re.match(r"^\$\$?([^$]+)\$\$?", answer) or re.match(r"^\\\((.{1,2000}?)\\\)", answer, re.S)
            or re.match(r"^\\\[(.{1,2000}?)\\\]", answer, re.S))
    if math:
        rest = answer[math.end():]
        joined = math_run(answer, 0) if re.match(CONNECTOR_RE, rest) else None
        return joined or math.group(1).strip()
    line = answer.split("\n", 1)[0]
    first = sentences(line, semicolons=False)  # ('5; 10' is one answer, a list)
    first_sentence = line[:first[0][1]] if first else line
    spans = list(MATH_SPAN_RE.finditer(first_sentence))
    labelled = label_value(first_sentence) if spans else None
    if labelled is not None:  # "The area of $PQRS$ is 56": the span is a label
        return labelled
    if spans:  # "the roots are $2$ and $3$"
        return math_run(first_sentence, spans[0].start()) or span_text(spans[0])
    answer = first_sentence.strip().strip("*").strip()
    return re.sub(r"[.。,，;；]+$", "", answer).strip()


# what may stand between the maths spans of one answer: "$x=2$ and $x=-5$", "$2$, $3$ or $4$"
# (no nested quantifiers over the same characters: linear on long runs of spaces)
_JOINS = alternation(AND, OR_BETWEEN_VALUES)
CONNECTOR_RE = rf"\s*(?:(?:,|;|，|；|、|{_JOINS}|\\text\{{\s*(?:{_JOINS}|,)\s*\}})\s*)*(?=\$|\\\(|\\\[)"


def math_run(text: str, start: int) -> str | None:
    """The maths spans from `start` on that follow each other with only 'and'/'or'/commas
    between them, joined as a list: '$x=2$ and $x=-5$' -> 'x=2, x=-5'."""
    parts = []
    pos = start
    while True:
        m = MATH_SPAN_RE.match(text, pos)
        if not m:
            break
        parts.append(span_text(m))
        c = re.match(CONNECTOR_RE, text[m.end(): m.end() + 40])
        if not c:
            break
        pos = m.end() + c.end()
    return ", ".join(parts) if parts else None


VERIFY_RE = re.compile(rf"(?:^|\n|[.!] )[*#> \t]{{0,8}}(?:{alternation(PRONOUN, MODAL)}\s+){{0,2}}{alternation(CHECK)}", re.I)


def before_verification(text: str) -> str:
    """The text before a closing check ('So $x = 10$. Check: $40 + 12 = 52$ ✓'), when the
    answer stands before it."""
    matches = list(VERIFY_RE.finditer(text))
    if not matches or len(text) - matches[-1].start() > 600:
        return text
    before = text[: matches[-1].start() + 1]
    spans = list(MATH_SPAN_RE.finditer(before))
    # the sentence right before the check states a value: "So $x = 10$." / "Thus $x = 5$."
    if spans and len(before) - spans[-1].end() < 8 and re.match(r"[a-zA-Z](?:_\{?\w+\}?)?\s*=", span_text(spans[-1])):
        return before
    return text


APPROX_GAP_RE = re.compile(rf"\s*(?:\(\s*)?(?:{alternation(APPROX, ('i.e.', 'i.e.,'))}|≈|\\approx)\s*", re.I)


def last_math(text: str) -> str | None:
    """The last maths span of the final sentence, with the spans joined to it by 'and'/'or'.

    Not used when a later sentence has a number of its own: 'We get $3+4=7$ apples. She
    gives 2 away, leaving 5.' is read through its last number.
    """
    text = before_verification(text)
    spans = list(MATH_SPAN_RE.finditer(text))
    if not spans:
        return None
    last = spans[-1]
    # "The result is 44, since $3 + 4 = 7$.": a reason after the answer is not the answer
    sentence_start = max(text.rfind(". ", 0, last.start()), text.rfind("\n", 0, last.start())) + 1
    sentence_start = max(sentence_start, last.start() - 300)
    clause = re.search(rf"(?<![^\s,]){alternation(spaced(REASON), ('from',))}[^.]*$", text[sentence_start: last.start()], re.I)
    if clause and re.search(r"\d|\$|\\[a-zA-Z]", text[sentence_start: sentence_start + clause.start()]):
        head = text[: sentence_start + clause.start()]
        return last_math(head) if MATH_SPAN_RE.search(text[sentence_start: sentence_start + clause.start()]) \
            else last_sentence_math(head)
    after = text[last.end():]
    if re.match(r"[ \t]*=", after):
        return None  # '\\[|(1-i)^8|\\] = (1-i)^8 = …': the left side of working written on, not an answer
    sentence_end = re.search(r"(?<!\.[a-zA-Z])\.(?:\s|$)|\n\s*\n", after)
    if sentence_end and re.search(r"\d", after[sentence_end.end():]):
        return None
    # "$2\\pi$ (about $6.28$)": the exact value, with its approximation kept beside it
    if len(spans) > 1 and APPROX_GAP_RE.fullmatch(text[spans[-2].end(): last.start()]):
        return f"{span_text(spans[-2])} \\approx {span_text(last)}"
    # "the minimum is $-1$, attained at $x = 0$": a condition after the value is not the answer
    if len(spans) > 1 and CONDITION_RE.search(text, spans[-2].end(), last.start()) \
            and re.fullmatch(r"\s*[a-zA-Z](?:_\{?\w+\}?)?\s*(?:=|\\in|<|>|\\le|\\ge)[^=]*", span_text(last)) \
            and not re.search(r"[.!?]\s", text[spans[-2].end(): last.start()]):
        spans = spans[:-1]
        last = spans[-1]
    # walk back over spans joined by connectors ("$x=2$ and $x=-5$")
    first = len(spans) - 1
    while first > 0 and spans[first].start() - spans[first - 1].end() <= 40 and \
            re.fullmatch(CONNECTOR_RE.replace("(?=", "(?:"), text[spans[first - 1].end(): spans[first].start()] + "$"):
        first -= 1
    joined = math_run(text, spans[first].start())
    return joined or span_text(last)


# a value followed only by words, a measure word or a unit ('40千克', '24 كم', '18 $', '9375 км')
VALUE_WORDS_RE = re.compile(r"^\s*\(?\s*(?:\*\*)?\s*(?:[$＄€£¥]\s*)?([-−]?\d[\d,]*(?:\.\d+)?(?:\s*/\s*\d+)?(?:\s*%)?)\s*(?:\*\*)?\s*(.*?)\s*$", re.S)
# what may follow the value: no digit, no operator, no multiplier word, no percent word
MULTIPLIER_RE = re.compile(rf"(?<![^\W\d_])(?:{'|'.join(w for w in SCALE_WORDS if len(w) > 1)}|percent\w*|pct|pi|sqrt|i)(?![^\W\d_])|"
                           rf"{GLUED_SCALE}|%|％|‰", re.I)


def scaled_number(number: str, after: str) -> tuple[str, int] | None:
    """('30000', length of '万') when `after` opens with a multiplier word ('3' + '万人'); else None."""
    from fractions import Fraction

    m = SCALE_WORD_RE.match(after)
    if not m or m.group(1).lower() not in SCALE_WORDS:
        return None
    number = number.replace("−", "-")
    if re.fullmatch(r"-?\d+,(?:\d{1,2}|\d{4,})", number):
        number = number.replace(",", ".")  # '2,5 тыс.': a decimal comma before a multiplier
    try:
        value = Fraction(number.replace(",", "")) * SCALE_WORDS[m.group(1).lower()]
    except (ValueError, ZeroDivisionError):
        return None
    text = str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
    return text, m.end()




# what ends the phrase of a value: a clause boundary, after which another number may be a new result
CLAUSE_BOUNDARY_RE = re.compile(rf"[,，;；:：。]|{alternation(CONCLUDE, COMMENT, OR_BETWEEN_VALUES)}", re.I)


def value_before_words(text: str, numbers_in_phrase: bool = False) -> str | None:
    """'40千克' -> '40', '**47**' -> '47', '24 كم' -> '24', '18 $.' -> '18', '(64)' -> '64': a value
    followed only by words, a unit or a measure word; None when anything else follows (an
    operator, another number, a variable glued to it as in '2x', a multiplier as in '2 million').

    `numbers_in_phrase` (the value of an equation chain): the words after it may hold other
    numbers of the same phrase ('= 15 liters of water out of the 24 liters', '= 9 points in the
    40 minutes'), but no operator and no clause boundary before them ('40千克，所以两箱是80千克',
    '15 pommes, soit 3 de plus')."""
    m = VALUE_WORDS_RE.match(text[:300])
    if not m:
        return None
    value, rest = m.group(1).replace(" ", ""), m.group(2)
    if "," in value and re.match(r"\s*[(\[]", text):
        return None  # '(1,3)': a pair or an interval, not a number
    scaled = scaled_number(value, text[m.end(1):]) if "%" not in value and "/" not in value else None
    if scaled is not None:  # '3万人', '2 millions': the value with its multiplier
        value, rest = scaled[0], text[m.end(1) + scaled[1]:]
    rest = re.sub(r"^[)）\]]+|[\s.。!！,，;；:：)）\]*]+$", "", rest)
    if not rest:
        return value
    rest = re.sub(r"(?<![^\W\d_])[^\W\d_]{1,5}/[^\W\d_]{1,5}(?![^\W\d_])", " ", rest)  # a rate: km/h, км/ч, m/s
    digit = re.search(r"\d", rest)
    if numbers_in_phrase and digit and digit.start() > 0 and rest[digit.start() - 1] in " \t" \
            and not CLAUSE_BOUNDARY_RE.search(rest[: digit.start()]):
        rest = rest[: digit.start()]  # the value's own words end where the phrase's next number starts
    if re.search(r"[\d+\-−*/^=×÷<>|\\{}_]", rest) or MULTIPLIER_RE.search(rest):
        return None
    glued = re.match(r"[A-Za-z]+", rest)
    if glued and not text[m.end(1):].startswith((" ", "**")) and len(glued.group()) == 1:
        return None  # '2x', '3n': one letter glued to a number is a variable ('5cm', '12kg' are units)
    if re.match(r"[A-Za-z](?:\s|$)", rest):
        return None  # '5 x', '3 n': a variable, not a word
    return value


def last_line_sentences(text: str) -> list[str]:
    """The sentences of the last non-empty line (region.sentences)."""
    line = text.strip().rsplit("\n", 1)[-1].strip()
    return [line[a:b].strip() for a, b in sentences(line)]


def final_sentence(text: str) -> str:
    """The last sentence of the last non-empty line."""
    parts = last_line_sentences(text)
    # a closing sentence without a number ("I hope it is correct.") does not hide the answer
    while len(parts) > 1 and not re.search(r"\d", parts[-1]):
        parts.pop()
    return parts[-1] if parts else ""


# a formula in words between two sides: '总价 = 单价 × 数量 = 12 × 8 = 96'
WORD_FORMULA_RE = re.compile(r"\s*[^\W\d_]+(?:\s*[×÷*/+\-−·]\s*[^\W\d_]+)+\s*")


def _word_formula(text: str) -> bool:
    """Words joined by operators ('单价 × 数量', 'price × count'): each a word of two letters or
    more, or of a script without case (Unicode category Lo: one CJK character is a word)."""
    if WORD_FORMULA_RE.fullmatch(text) is None:
        return False
    return all(len(w) >= 2 or unicodedata.category(w) == "Lo" for w in re.findall(r"[^\W\d_]+", text))
ARITHMETIC_RE = re.compile(r"[\d\s.,+\-−*/×÷·()（）\[\]%$€£¥＄^]*")
CHECK_SENTENCE_RE = re.compile(rf"^\W*{alternation(CHECK)}", re.I)


def chain_value(text: str) -> str | None:
    """The value an equation chain of numbers ends with: '4 + 7 = 11只猫和狗' -> '11',
    '每箱重量 = 960 / 24 = 40千克' -> '40', 'le total est (48 + 16 = 64)' -> '64'.

    Every side but the first and the last is arithmetic on numbers (or a formula in words); the
    first is arithmetic after any words of the sentence, or a label in words or CJK; the last is
    a value followed only by words or a unit. An equation with unknowns ('2x = 10', 'x + y = 7',
    'f(x) = 2x + 9') or a maths name on the left ('x = 5', 'AB = 4') is no chain here: those are
    left to the rules after this one."""
    text = re.sub(r"(?<=\d)\s*[xX]\s*(?=[\d(])", " × ", text.replace("＝", "="))  # '16 x 3': times, not a variable
    if "=" not in text or len(text) > 600 or re.search(r"==|<=|>=|!=|≠|\\[a-zA-Z]", text):
        return None
    sides = text.split("=")
    if len(sides) > 20:
        return None
    for middle in sides[1:-1]:
        middle = middle.replace("**", "")
        arithmetic = re.search(r"\d", middle) and ARITHMETIC_RE.fullmatch(middle) is not None
        if not arithmetic and not _word_formula(middle):
            return None
    first = sides[0].replace("**", "").rstrip()
    arithmetic = re.search(r"[\d.,+\-−*/×÷·()（）\[\]%$€£¥＄^! \t]*$", first).group()
    before = first[: len(first) - len(arithmetic)].rstrip()
    word = re.search(r"(\S+)$", before)
    token = word.group(1).strip("(（:：,，、;；") if word else ""
    # the last word before the arithmetic: a word of the sentence or a CJK label, never a
    # maths name ('x', '2x', 'f(x)', 'x_1', 'AB'), whose right side is not its value
    wordlike = bool(re.fullmatch(r"[^\W\d_]{2,}", token) and not re.fullmatch(r"[A-Z]{2,}", token)
                    or token and unicodedata.category(token[-1]) == "Lo")
    if token and not wordlike:
        return None
    if not re.search(r"\d", arithmetic) and not token:
        return None
    if not re.search(r"\d", arithmetic) and re.search(r"[+\-−*/×÷^]\s*\S+$", before):
        return None  # 'x + total'
    return value_before_words(sides[-1], numbers_in_phrase=True)


# '3⁻¹ ≡ 417 (mod 1250)', 'x \\equiv 4 \\pmod{7}': a congruence's value is its residue (the last one)
CONGRUENCE_RE = re.compile(r"(?:≡|\\equiv)\s*\$?\s*([-−]?\d+)\s*\$?\s*(?:\(\s*(?:\\bmod|\\mod|mod)\s*\$?\s*\d+\s*\$?\s*\)"
                           r"|\\pmod\s*\{?\s*\d+\s*\}?)")


def congruence_value(text: str) -> str | None:
    found = _last_match(CONGRUENCE_RE, text.replace("$", " "))
    return found.replace("−", "-") if found else None


def final_equation_value(text: str) -> str | None:
    """The value of the last equation chain of the final sentence, when that sentence holds no
    LaTeX maths and is not a check ('Check: 40 + 12 = 52')."""
    sentence = final_sentence(text)
    if not sentence or "=" not in sentence and "＝" not in sentence or MATH_SPAN_RE.search(sentence) \
            or CHECK_SENTENCE_RE.search(sentence):
        return None
    return chain_value(sentence)


# "The area of $PQRS$ is 56.": the maths before the verb is a label, the value follows it
COPULA_RE = re.compile(rf"\s+{alternation(spaced(COPULA))}\s+(?!{alternation(NEGATE_BEFORE)})", re.I)


def label_value(sentence: str) -> str | None:
    """'The value of $g(t)$ is 7.' -> '7', 'The perimeter of $ABCD$ is 4√2.' -> '4√2': every maths
    span of the sentence stands before its last 'is'/'equals', and a plain value follows."""
    # "…is 3, attained at $x = 1$": a condition after the value is not part of the sentence's claim
    sentence = re.split(rf",?\s+{alternation(CONDITION)}|,\s*(?:[^\W\d_]+\s+)?{alternation(PREPOSITION, ADJUNCT_BEFORE, CONDITION)}", sentence)[0]
    spans = list(MATH_SPAN_RE.finditer(sentence))
    if not spans:
        return None
    verb = COPULA_RE.search(sentence, spans[-1].end())
    # only the label's own words between it and the verb ('$5$-digit integers is'), not a
    # clause about a value already given ('$12$, which is 3')
    if verb is None or not re.fullmatch(r"[\w\s'-]{0,40}", sentence[spans[-1].end(): verb.start()]) \
            or re.search(alternation(COMMENT, AND, OR, CONCLUDE), sentence[spans[-1].end(): verb.start()], re.I):
        return None
    tail = sentence[verb.end():]
    first = sentences(tail, semicolons=False)
    tail = (tail[:first[0][1]] if first else tail).strip()
    if not tail or MATH_SPAN_RE.search(tail) or "$" in tail or not re.search(r"\d|√|π", tail):
        return None
    tail = re.sub(r"\*\*", "", tail)
    tail = re.split(rf",?\s+{alternation(spaced(REASON), spaced(COMMENT), CONDITION, spaced(CONCLUDE))}", tail, maxsplit=1, flags=re.I)[0]
    tail = re.sub(r"[.。!;；,，]+$", "", tail.strip()).strip()
    value = value_before_words(tail)
    if value is None and last_sentence_math(tail) == tail:  # 'is 4√2', 'is 3/4': the whole tail is maths
        value = tail
    return value


def _last_match(pattern: re.Pattern, text: str) -> str | None:
    last = None
    for m in pattern.finditer(text):
        last = m
    if last is None:
        return None
    value = last.group(1).strip()
    return value or None


FULL_WIDTH_DIGITS = {**{0xFF10 + d: ord("0") + d for d in range(10)}, 0xFF0D: ord("-"), 0xFF0E: ord(".")}
SPACED_THOUSANDS_RE = re.compile(r"(?<![\d.,])\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?![\d,]|\.\d)")


MATH_WORD_NAMES = {"sqrt", "pi", "sin", "cos", "tan", "cot", "sec", "csc", "log", "ln", "exp", "infinity", "inf"}
# one whitespace-separated word that is maths: digits, operators, a function call, 2x, x^2, \frac..
MATH_CHUNK_RE = re.compile(r"[\d+\-−*/^=<>()\[\]{}|√π∞∅²³±·×÷≤≥_'!%$\\.,:]|^[A-Za-z]$")
CONNECTOR_WORDS = {"and", "or", ","}


def _is_math_word(word: str, prev: str, nxt: str) -> bool:
    bare = word.strip(".,;:!?")
    if not bare or bare == "|" or re.fullmatch(r"[a-zA-Z]\.[a-zA-Z]\.?", bare) \
            or any(unicodedata.category(c) == "Lo" or not c.isascii() and unicodedata.category(c) == "Po" for c in bare):
        # words of a script without case, or glued to its punctuation ('10。'): prose, not maths
        return False
    if re.fullmatch(r"[A-Za-z]", bare):  # a lone letter is a variable, except the articles a/A/I
        if bare in ("a", "A", "I"):
            return bool(re.match(r"[=+\-*/^<>]", nxt) or re.search(r"[=+\-*/^<>]$", prev))
        return True
    bare = re.sub(r"(?<=\d)/[A-Za-z]+$", "", bare)  # $18,000/year: a rate's unit
    letters = re.findall(r"[A-Za-z]{2,}", re.sub(r"\\[A-Za-z]+", "", bare))
    if any(w.lower() not in MATH_WORD_NAMES for w in letters):
        return False
    return bool(MATH_CHUNK_RE.search(bare)) or bool(letters)


def last_sentence_math(text: str) -> str | None:
    """Plain-text maths in the final sentence: 'She ate 1/7 of the pie.' -> '1/7',
    'So f(x) = 2x + 9.' -> 'f(x) = 2x + 9', 'The area is 3π/2.' -> '3π/2'. The last run of maths
    words (runs joined by 'and'/'or' form a list); it must hold a digit, an operator or a
    maths name."""
    parts = last_line_sentences(text)
    words = parts[-1].split()[:80] if parts else []
    runs: list[list[str]] = []
    current: list[str] = []
    joined_by_connector = False
    for n, word in enumerate(words):
        prev = words[n - 1] if n else ""
        nxt = words[n + 1] if n + 1 < len(words) else ""
        if _is_math_word(word, prev, nxt):
            if not current and runs and joined_by_connector:
                runs[-1].append(",")
                current = runs.pop()
            current.append(word)
            joined_by_connector = False
            continue
        if current:
            runs.append(current)
            current = []
        joined_by_connector = word.lower().strip(",") in CONNECTOR_WORDS and bool(runs)
    if current:
        runs.append(current)
    for run in reversed(runs):
        candidate = " ".join(run).strip().rstrip(".,;:!?").strip()
        candidate = re.sub(r"\s+,", ",", candidate)
        if re.search(r"\d|[=+*/^√π∞∅]|\\[A-Za-z]|sqrt|pi", candidate):
            return candidate
        return None
    return None


def prepare_numbers(text: str) -> str:
    """LaTeX and spaced thousands as plain ones: '6,\\!516', '12{,}480', '8\\,076', '9 929 295'."""
    text = text[-MAX_SCAN:].replace(",\\!", ",").replace("{,}", ",").replace("\u2212", "-")
    text = text.translate(FULL_WIDTH_DIGITS)
    text = re.sub(r"(?<=\d)\\,(?=\d{3})", "", text)
    return SPACED_THOUSANDS_RE.sub(lambda m: re.sub(r"\s", "", m.group()), text)


def extract_last_number(text: str) -> str | None:
    """lm-eval's flexible GSM8K extraction: the last number-like run in the text, cleaned.

    LaTeX and spaced thousands ('6,\\!516,\\!477', '12{,}480', '9 929 295') count as one number.
    """
    if text is None:
        return None
    cleaned = (_clean_number(m.group()) for m in reversed(list(GSM_FLEX_RE.finditer(prepare_numbers(text)))))
    return next((c for c in cleaned if c is not None), None)


def _clean_number(text: str) -> str | None:
    text = text.replace(",", "").replace("$", "").rstrip(".")
    return text if re.fullmatch(r"-?\d*\.?\d+", text) else None


def extract_gsm8k_strict(text: str) -> str | None:
    """lm-eval's strict GSM8K extraction: the number after '####' (or 'The answer is N').

    Returns the number with commas, '$' and a final '.' removed, or None.
    """
    if text is None:
        return None
    text = text[-MAX_SCAN:]
    for pattern in (GSM_STRICT_RE, GSM_ANSWER_IS_RE):
        m = pattern.search(text)
        if m:
            cleaned = _clean_number(m.group(1))
            if cleaned is not None:
                return cleaned
    return None
