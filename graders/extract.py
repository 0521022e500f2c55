"""Finding the final answer in a whole model response.

Order (the first rule that finds something wins, and says so in `how`):
  boxed        the last \\boxed{...} or \\fbox{...} (nested braces; the final one, not a merge)
  answer-is    "The (final) answer is ...", "Final answer: ...", "Answer: ..." (the last one)
  answer-is    also in French, German, Spanish, Russian, Arabic, Japanese ("La réponse est",
               "Die Antwort lautet", "La respuesta es", "Ответ:", "الجواب هو", "答えは")
  zh-answer    "答案是…", "答案为…", "答：…", "故…为…" / "所以…为…"
  gsm8k        "A: 21" (a line holding only a number) and "#### 42"
  last-equation  the final sentence ends an equation chain of numbers: its value after the
               last '=' ("所以一共有4 + 7 = 11只猫和狗。" -> 11)
  statement    (a gold that is one number) the final statement read by statement.py: its one
               asserted value, never a negated one; several values, a hedge or a bound give no
               answer of one value
  whole        a short one-line response is the answer itself
  last-number  the last number in the text, a last resort (a grader may treat it with care)

For a gold that is one number, the words after an answer cue are read by statement.py too
("The answer is 14 jars, not 12." -> 14; "Answer: 2 or 400" -> a hedge), and a later sentence
that corrects them ("Wait, no: it's 16.") wins.

Before any rule: the response ends at a chat-template marker (`<|im_start|>`, `<|eot_id|>`,
`</s>`, `<end_of_turn>` …), GSM8K calculator annotations (`<<24-3=21>>`) are dropped (working,
never the answer), digits of any script read as ASCII, and a few-shot continuation after the
answer ("A: 21\n\nQ: Tom has 5 apples…") is cut.

Only the last MAX_SCAN characters are scanned, so a 1 MB response costs one slice; all
regexes are linear (no nested quantifiers).
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from .normalise import vulgar_fractions
from .clauses import Reading, read_statement
from .decide import corrected_after, disowned_after, read_final, restated_after
from .numbers import GLUED_SCALE, SCALE_WORD_RE, SCALE_WORDS
from .words import (ADJUNCT_BEFORE, AND, APPROX, CHECK, COMMENT, CONCLUDE, CONDITION, COPULA, MODAL, NEGATE_BEFORE, OR,
                    OR_BETWEEN_VALUES, PREPOSITION, PRONOUN, QUESTION, REASON, alternation, known_language, spaced)
from .region import (ANSWER_TAG_RE, CONCLUDE_CUE_RE, CUE_RE, TABLE_ANSWER_RE, ascii_digits, cues, cut_at_turn_end, find_all_boxed,
                     find_boxed, json_answer, sentences)

MAX_SCAN = 20_000      # characters from the end of a response that are searched
MAX_WHOLE = 80         # a one-line response up to this long may be the bare answer

# GSM8K's own answer line: "A: 21", "A: $21", "**A: 21**", "A: 21 dollars" (a number only; an
# "A:" that opens the reasoning is not one)
A_LINE_RE = re.compile(r"^[ \t>*]*A\s*[:：]\s*(?:\*\*)?\s*((?:[$＄]\s*)?-?\d[\d,]*(?:\.\d+)?)\s*(?:\*\*)?\s*"
                       r"(?:[a-zA-Z]{2,12}\.?)?\s*(?:\*\*)?\s*[.!]?\s*$", re.M)
OPTION_LINES_RE = re.compile(r"^[ \t>*]*[B-E]\s*[:：]", re.M)  # options listed as lines, not an answer line
# GSM8K calculator annotations: working, never the answer
ANNOTATION_RE = re.compile(r"<<[^<>\n]{0,200}=[^<>\n]{0,100}>>")
# a few-shot continuation: the next question after the answer line
NEXT_QUESTION_RE = re.compile(rf"\n[ \t]*{alternation(QUESTION)}\s*[:：]")
ANSWER_MARK_RE = re.compile(r"^[ \t*]*A\s*[:：]\s*\S|####", re.M)
GSM8K_RE = re.compile(r"####\s*(.+)")
NUMBER_RE = re.compile(r"-?\d+(?:,\d{3})*(?:\.\d+)?(?:/\d+)?|-?\.\d+")
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
    first_sentence = re.split(r"(?<!\d)\.(?:\s|$)|\n", answer)[0]
    spans = list(MATH_SPAN_RE.finditer(first_sentence))
    labelled = label_value(first_sentence) if spans else None
    if labelled is not None:  # "The area of $PQRS$ is 56": the span is a label
        return labelled
    if spans:  # "the roots are $2$ and $3$"
        return math_run(first_sentence, spans[0].start()) or span_text(spans[0])
    answer = answer.split("\n")[0]
    answer = re.split(r"(?<!\d)\.(?:\s|$)|\.\s+(?=[A-Z])|。", answer)[0]
    answer = answer.strip().strip("*").strip()
    return re.sub(r"[.。,，;；]+$", "", answer).strip()


# $$..$$, $..$, \[..\], \(..\): bounded lengths keep the scan linear enough on hostile text
MATH_SPAN_RE = re.compile(r"\$\$([^$]{1,2000}?)\$\$|\$([^$]{1,2000}?)\$|\\\[(.{1,2000}?)\\\]|\\\((.{1,2000}?)\\\)", re.S)
# what may stand between the maths spans of one answer: "$x=2$ and $x=-5$", "$2$, $3$ or $4$"
# (no nested quantifiers over the same characters: linear on long runs of spaces)
_JOINS = alternation(AND, OR_BETWEEN_VALUES)
CONNECTOR_RE = rf"\s*(?:(?:,|;|，|；|、|{_JOINS}|\\text\{{\s*(?:{_JOINS}|,)\s*\}})\s*)*(?=\$|\\\(|\\\[)"


def span_text(m: re.Match) -> str:
    return next(g for g in m.groups() if g is not None).strip()


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


@dataclass(frozen=True)
class Extraction:
    """The answer read from a response and how: `answer` None when nothing was found; `refusal`
    set when the final statement gives no answer of one value (a hedge, a bound, only negated
    values: the verdict is wrong, with this reason); `note` what statement.py read."""

    answer: str | None
    how: str
    refusal: str | None = None
    note: str = ""
    second: str | None = None   # another reading of the same words ('10.066' -> '10066')
    undecided: bool = False     # the refusal is no verdict: words the reader cannot place (the judge may read them)


def extract_answer(response: str, several: bool = False, numeric: bool = False) -> tuple[str | None, str]:
    """(answer text, how it was found); (None, 'none') when the response holds nothing.

    See read_answer; a statement that gives no answer of one value reads as none."""
    found = read_answer(response, several, numeric)
    return (None if found.refusal else found.answer), found.how


def read_answer(response: str, several: bool = False, numeric: bool = False) -> Extraction:
    """The answer of a response (see _extract_answer); money marked while reading ('＄') is
    written '$' again. `numeric`: the gold is one number, so a statement in prose is read by
    statement.py (its asserted value, never a negated one, no hedge)."""
    found = _extract_answer(response, several, numeric)
    if not isinstance(found, Extraction):
        found = Extraction(*found)
    return Extraction(found.answer.replace("\uff04", "$") if found.answer is not None else None, found.how,
                      found.refusal, found.note, found.second, found.undecided)


def _from_reading(reading: Reading, how: str, text: str = "") -> Extraction | None:
    """What a statement's reading gives as an extraction; None when it read nothing. A statement
    with words around its values in a response written in no language the function words know
    ('Jibu si 14.'): undecided, never asserted (`text`: the response, whose language is judged)."""
    if reading.kind in ("one", "several") and text and not known_language(text) and unplaced_words(reading):
        shown = reading.statement.strip()[:200]
        return Extraction(None, how, refusal=f"undecided: words this reader cannot place around the values: {shown!r}",
                          undecided=True)
    if reading.kind in ("one", "several"):
        return Extraction(reading.answer, how, note=reading.note, second=reading.second)
    shown = reading.statement.strip()[:200]
    if reading.kind == "hedge":
        return Extraction(shown, how, refusal=f"a hedge, not one answer ({reading.note}): {shown!r}", note=reading.note)
    if reading.kind == "bound":
        return Extraction(shown, how, refusal=f"{reading.note}: {shown!r}", note=reading.note)
    if reading.kind == "negated":
        return Extraction(shown, how, refusal=f"the statement only rejects values ({reading.note}): {shown!r}",
                          note=reading.note)
    if reading.kind == "question":
        return Extraction(shown, how, refusal=f"the final sentence asks, it does not answer: {shown!r}")
    return None


def unplaced_words(reading: Reading) -> bool:
    """The statement holds two words or more besides its values and the units right after them."""
    text = reading.statement
    for v in sorted(reading.values, key=lambda v: -v.start):
        text = text[:v.start] + " " + text[v.end + len(v.unit) + 1:]
    return len(re.findall(r"[^\W\d_]{2,}", text)) >= 2


def _read_cue(text: str, match: re.Match, how: str) -> Extraction | None:
    """The words after an answer cue read as a statement (from the cue to the end of its
    sentence); a later sentence that corrects it wins. None when they hold maths or nothing."""
    tail_start = match.end()
    spans = sentences(text[tail_start: tail_start + 600])
    end = tail_start + (spans[0][1] if spans else 0)
    reading = read_statement(text[match.start(): end])
    if reading is None or reading.kind == "none":
        return None
    later = corrected_after(text[end:], reading) or disowned_after(text[end:], reading)
    return _from_reading(later or restated_after(text[end:], reading) or reading, how, text)


def _extract_answer(response: str, several: bool = False, numeric: bool = False) -> tuple[str | None, str] | Extraction:
    """(answer text, how it was found); (None, 'none') when the response holds nothing.

    `several`: the gold has several answers, so several different boxes are read as one
    list ('$\\boxed{2}$ or $\\boxed{3}$'); otherwise the last box counts. A "final answer"
    statement after the last box wins over it. `numeric`: the gold is one number (see read_answer).
    """
    if response is None:
        return None, "none"
    # an escaped dollar (\\$36) is money, not a maths delimiter: full-width here, '$' again after NFKC
    text = prepare_response(response[-MAX_SCAN:])
    text = mark_currency(vulgar_fractions(text.replace("\\$", "\uff04")))
    tagged = _last_match_obj(ANSWER_TAG_RE, text)
    if tagged is not None and tagged.group(1).strip():  # <answer>351/2</answer>
        inner = tagged.group(1).strip()
        return (find_boxed(inner) or clean_tail(inner)), "answer-tag"
    row = _last_match_obj(TABLE_ANSWER_RE, text)
    if row is not None and row.start() > len(text) - 300:  # | answer | -11 |
        return row.group(1).strip(), "answer-is"
    boxes = find_all_boxed(text)
    found = cues(text)
    cue = found[-1] if found else None
    stated = cue is not None and bool(clean_tail(text[cue.end():]))
    data = json_answer(text)
    if data is not None and (not boxes or data[0] > boxes[-1][1]) and (cue is None or cue.start() < data[1] or not stated):
        if data[2] is None or not data[2]:  # {"answer": null}
            return Extraction(None, "json", refusal='the JSON "answer" field is empty')
        return data[2], "json"
    if boxes and not (cue is not None and cue.start() > boxes[-1][1] and stated and _states_final_answer(text, cue)):
        if several:
            # the last group of boxes close to each other ("$\\boxed{2}$ or $\\boxed{3}$"), not
            # a box given to an intermediate result paragraphs earlier
            first = len(boxes) - 1
            while first > 0 and boxes[first][0] - boxes[first - 1][1] <= 200:
                first -= 1
            distinct = list(dict.fromkeys(b[2] for b in boxes[first:]))
            if len(distinct) > 1:
                return ", ".join(distinct), "boxed"
        after = text[boxes[-1][1]: boxes[-1][1] + 16]
        percent = "%" if re.match(r"\s*(?:\\%|%|\\text\{\s*\\?%\s*\}|\s*percent\b)", after) else ""
        return boxes[-1][2] + percent, "boxed"
    if stated:
        read = _read_cue(text, cue, "answer-is") if numeric else None
        if read is not None:
            return read
        tail = text[cue.end():].strip()
        if re.match(r"\$\$?\s*$|\\\[|\\\(|\*+\s*$", tail.split("\n")[0]):  # "**Final answer**\n\\[\n x = 5 \n\\]"
            tail = tail[:2000].lstrip("*").strip()
        answer = clean_tail(tail)
        return congruence_value(answer) or chain_value(answer) or value_before_words(answer) or answer, "answer-is"
    a_line = _last_match_obj(A_LINE_RE, text)
    if a_line is not None and not OPTION_LINES_RE.search(text):  # GSM8K's "A: 21", not "A: 12\nB: 15"
        return a_line.group(1).replace(" ", ""), "gsm8k"
    concluded = _last_match_obj(CONCLUDE_CUE_RE, text)  # '故所求的面积为 6。'
    if concluded is not None and text[concluded.end():].strip():
        read = _read_cue(text, concluded, "answer-is") if numeric else None
        if read is not None:
            return read
        answer = clean_tail(text[concluded.end():])
        return chain_value(answer) or value_before_words(answer) or answer, "answer-is"
    found = _last_match(GSM8K_RE, text)
    if found:
        return clean_tail(found), "gsm8k"
    reading = read_final(text) if numeric else None
    residue = congruence_value(final_sentence(text))
    if residue is not None:  # '3⁻¹ ≡ 417 (mod 1250)'
        return residue, "last-equation"
    chain = final_equation_value(text)
    # an equation chain ends the response unless a later statement holds a value of its own (number
    # words: 'Ze heeft dus veertigduizend euro.' after '… = 4000')
    if chain is not None and (reading is None or reading.kind == "none" or "=" in reading.statement):
        return chain, "last-equation"
    labelled = label_value(final_sentence(text))
    if labelled is not None:
        return labelled, "last-sentence"
    if reading is not None:
        read = _from_reading(reading, "statement", text)
        if read is not None:
            return read
        if reading.kind == "none" and reading.statement:  # an answer in words that are not read
            return Extraction(reading.statement.strip()[:200], "statement",
                              refusal=f"no value read in the final statement: {reading.statement.strip()[:200]!r}")
    stripped = text.strip()
    if stripped and "\n" not in stripped and not MATH_SPAN_RE.search(stripped) and (
            len(stripped) <= MAX_WHOLE or (len(stripped) <= 2000 and not _has_words(stripped))):
        return stripped, "whole"
    math = last_math(text)
    if math:
        return math, "last-math"
    plain = last_sentence_math(text)
    if plain and not re.fullmatch(r"[-−]?[\d,]*\.?\d+\s*%?", plain):  # a plain number: last-number below
        return plain, "last-sentence"
    if stripped and len(stripped) <= MAX_WHOLE and "\n" not in stripped:
        return stripped, "whole"
    number = extract_last_number(text)
    if number is not None:
        return number, "last-number"
    if stripped and len(response) <= MAX_SCAN:
        return stripped, "whole"
    return None, "none"


def prepare_response(text: str) -> str:
    """The response up to a chat-template marker, GSM8K calculator annotations dropped
    ('$<<24-3=21.00>>21.00' -> '$21.00'), digits of any script as ASCII, and a few-shot
    continuation after the answer ('A: 21\n\nQ: …') cut."""
    text = cut_at_turn_end(text)
    if "<<" in text:
        text = ANNOTATION_RE.sub("", text)
    text = ascii_digits(text)
    marks = [m for m in (ANSWER_MARK_RE.search(text), CUE_RE.search(text)) if m is not None]  # one pass each: linear
    mark = min(marks, key=lambda m: m.start()) if marks else None
    if mark is not None:
        after = NEXT_QUESTION_RE.search(text, mark.end())
        if after is not None:
            return text[: after.start()]
    return text


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


def final_sentence(text: str) -> str:
    """The last sentence of the last non-empty line."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    parts = [p for p in re.split(r"(?:(?<=[.?])|(?<=\D!))\s+(?=\S)|(?<=[。！？])", lines[-1].strip()) if p.strip()]
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
    tail = re.split(r"\.\s+(?=[A-Z])|[。!?！？]", sentence[verb.end():])[0].strip()
    if not tail or MATH_SPAN_RE.search(tail) or "$" in tail or not re.search(r"\d|√|π", tail):
        return None
    tail = re.sub(r"\*\*", "", tail)
    tail = re.split(rf",?\s+{alternation(spaced(REASON), spaced(COMMENT), CONDITION, spaced(CONCLUDE))}", tail, maxsplit=1, flags=re.I)[0]
    tail = re.sub(r"[.。!;；,，]+$", "", tail.strip()).strip()
    value = value_before_words(tail)
    if value is None and last_sentence_math(tail) == tail:  # 'is 4√2', 'is 3/4': the whole tail is maths
        value = tail
    return value


def mark_currency(text: str) -> str:
    """Dollar signs that are money, not maths delimiters, become '＄' (a '$' again after NFKC):
    a '$' before a digit whose would-be maths span holds prose ('$12 and gets $'), ends in a
    space ('9 * $2 = $18') or is followed by a digit. One pass, left to right."""
    if "$" not in text:
        return text
    out = []
    pos = 0
    while True:
        start = text.find("$", pos)
        if start < 0:
            out.append(text[pos:])
            return "".join(out)
        if text.startswith("$$", start) and text[start + 2: start + 3].isdigit() and not re.search(r"\\[a-zA-Z]", text):
            out.append(text[pos:start] + "\uff04")  # '$$43.00' in plain text (a typo in GSM8K keys): money
            pos = start + 2
            continue
        if text.startswith("$$", start):  # display maths: skip to its end
            end = text.find("$$", start + 2)
            end = len(text) if end < 0 else end + 2
            out.append(text[pos:end])
            pos = end
            continue
        close = text.find("$", start + 1)
        content = text[start + 1: close] if close > 0 else text[start + 1:]
        money = content[:1].isdigit() and (close < 0 or _has_words(content) or content != content.rstrip()
                                           or text[close + 1: close + 2].isdigit() or len(content) > 300)
        if money:
            out.append(text[pos:start] + "\uff04")
            pos = start + 1
        else:
            end = len(text) if close < 0 else close + 1
            out.append(text[pos:end])
            pos = end


def _states_final_answer(text: str, match: re.Match) -> bool:
    """A later statement that overrides a box: "final answer", "the answer is", or "Answer:"
    opening a line -- not "we may check our answer: ...". """
    head = text[match.start(): match.start() + 20].lower()
    if "final" in head or head.startswith("the answer"):
        return True
    line_start = text.rfind("\n", 0, match.start()) + 1
    return not re.sub(r"[\s*#>]", "", text[line_start: match.start()])


def _has_words(text: str) -> bool:
    """Two English words outside LaTeX commands: prose, not a long bare formula."""
    bare = re.sub(r"\\(?:begin|end)\{[a-zA-Z*]+\}|\\[a-zA-Z]+", " ", text)  # \\begin{pmatrix} holds no word
    return len(re.findall(r"(?<![a-zA-Z])[a-zA-Z]{3,}(?![a-zA-Z])", bare)) >= 2


def _last_match_obj(pattern: re.Pattern, text: str) -> re.Match | None:
    last = None
    for m in pattern.finditer(text):
        last = m
    return last


def _last_match(pattern: re.Pattern, text: str) -> str | None:
    last = None
    for m in pattern.finditer(text):
        last = m
    if last is None:
        return None
    value = last.group(1).strip()
    return value or None


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
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return None
    sentences = [x for x in re.split(r"(?<=[.!?])\s+(?=[A-Z])", lines[-1].strip()) if x.strip()]
    words = sentences[-1].split()[:80] if sentences else []
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
    text = prepare_numbers(text)
    last = None
    for m in GSM_FLEX_RE.finditer(text):
        cleaned = _clean_number(m.group())
        if cleaned is not None:
            last = cleaned
    return last
