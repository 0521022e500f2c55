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
  statement    (a gold that is one number) the final statement read by clauses.py: its one
               asserted value, never a negated one; several values, a hedge or a bound give no
               answer of one value
  whole        a short one-line response is the answer itself
  last-number  the last number in the text, a last resort (a grader may treat it with care)

For a gold that is one number, the words after an answer cue are read by clauses.py too
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
from dataclasses import dataclass

from .normalise import vulgar_fractions
from .clauses import Reading, read_statement
from .decide import corrected_after, disowned_after, read_final, restated_after
from .words import QUESTION, alternation, known_language
from .region import (MATH_SPAN_RE, ANSWER_TAG_RE, CONCLUDE_CUE_RE, CUE_RE, TABLE_ANSWER_RE, ascii_digits, cues, cut_at_turn_end, find_all_boxed,
                     find_boxed, json_answer, sentences)
from .final_maths import (MAX_SCAN, _last_match, chain_value, clean_tail, congruence_value,  # noqa: F401
                          extract_gsm8k_strict, extract_last_number, final_equation_value, final_sentence, label_value,
                          last_math, last_sentence_math, prepare_numbers, scaled_number, value_before_words)

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


@dataclass(frozen=True)
class Extraction:
    """The answer read from a response and how: `answer` None when nothing was found; `refusal`
    set when the final statement gives no answer of one value (a hedge, a bound, only negated
    values: the verdict is wrong, with this reason); `note` what clauses.py read."""

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
    clauses.py (its asserted value, never a negated one, no hedge)."""
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
    if NEXT_QUESTION_RE.search(text) is None:
        return text  # (no next question: the answer marks need not be looked for)
    marks = [m for m in (ANSWER_MARK_RE.search(text), CUE_RE.search(text)) if m is not None]  # one pass each: linear
    mark = min(marks, key=lambda m: m.start()) if marks else None
    if mark is not None:
        after = NEXT_QUESTION_RE.search(text, mark.end())
        if after is not None:
            return text[: after.start()]
    return text


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


