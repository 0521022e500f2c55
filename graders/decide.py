"""The decision from a response's statements: which statement is final, whether a later one corrects
or restates it (clauses.py reads each; extract.py finds where they are).
"""
from __future__ import annotations

import re
from fractions import Fraction

from .clauses import MAX_STATEMENT, TAKES_BACK, Reading, correction_at, read_letters, read_statement
from .region import asks, sentences
from .words import CONCLUDE, CONTRAST, find, is_letter


# --- the final statement of a response ----------------------------------------------------------

def read_final(text: str, threshold_one: bool = False) -> Reading | None:
    """The reading of a response's final statement: its last sentence that holds a value.

    Passed over on the way back: up to two closing sentences without a value ("I hope this
    helps!"), and one sentence that only rejects a value ("合計は45頭です。4頭ではありません。",
    "The answer is 14. Not 12.") when the sentence before it is on the same line; the rejected
    values never count. A value-less sentence that reads like an answer ('Đáp số: bảy trang', a
    label and its words: number words not read) is the final statement: it gives none (kind
    'none'). None where the final sentence holds maths this structure does not read."""
    tail = text[-4 * MAX_STATEMENT:]
    listed = OPTION_LINE_RE.findall(tail.rstrip().split("\n")[-1]) and _option_lines(tail)
    if listed:
        return listed
    spans = sentences(tail)
    rejected: set[Fraction] = set()
    skipped = 0
    after_rejection = None
    last_closing = ""
    skipped_weak = False
    for index in range(len(spans) - 1, max(-1, len(spans) - 5), -1):
        start, end = spans[index]
        sentence = tail[start:end]
        reading = read_statement(sentence, threshold_one)
        if reading is None:
            # maths after a closing sentence is the maths readers' ('x = 9. I hope this helps!'),
            # not after a sentence whose only number words are ambiguous ('… có ba viên bi.')
            return Reading("none", (), last_closing) if skipped_weak else None
        if after_rejection is not None and "\n" in tail[start:after_rejection]:
            return Reading("negated", (), tail[after_rejection:])  # the rejection opened its own line
        if reading.kind == "none" and not any(is_letter(c) or c.isdigit() for c in sentence):
            continue  # '**', '😊', '---': marks, no sentence
        if reading.kind == "none":
            # a label and words ('Đáp số: …') or a conclusion ('따라서 모두 열네 개입니다.') is an answer in
            # words not read, not a closing: the working before it is not taken for it
            if skipped >= 2 or re.search(r"[:：]\s*[^\W\d_]", sentence) or after_rejection is not None \
                    or find(CONCLUDE, sentence):
                return Reading("none", (), sentence)
            skipped += 1
            last_closing = sentence
            skipped_weak = skipped_weak or any(v.weak for v in reading.values)
            continue
        if skipped and (not _answer_like(reading) or skipped_weak and len(reading.values) > 1):
            # a value-less last sentence after working: perhaps a closing, perhaps an answer in words
            # that are not read ('Đáp án là năm mươi bốn.'); the working's value is not taken for it
            return Reading("none", (), last_closing)
        if reading.kind == "negated" and after_rejection is None:
            rejected |= {v.value for v in reading.values if v.negated}
            after_rejection = start
            continue
        if rejected and reading.kind == "one" and reading.asserted[0].value in rejected:
            return Reading("negated", reading.values, sentence)
        if reading.kind == "negated":
            return reading
        if reading.kind == "one" and asks(sentence):
            return Reading("question", reading.values, sentence)  # 'Is the answer 14?' asserts nothing
        return reading
    if rejected:
        return Reading("negated", (), tail[after_rejection or 0:])
    return None


OPTION_LINE_RE = re.compile(r"^[ \t*>-]*\(?([A-Za-z])[).:：]\s*\S")


def _option_lines(text: str) -> Reading | None:
    """'A: 12\nB: 15\nC: 18\nD: 21': the last lines are options labelled by consecutive letters,
    a list, not a statement of one value (several)."""
    lines = [line for line in text.rstrip().split("\n") if line.strip()][-6:]
    labels = [OPTION_LINE_RE.match(line) for line in lines]
    run = []
    for line, label in zip(reversed(lines), reversed(labels)):
        if label is None or run and ord(label.group(1).upper()) != ord(run[-1][0]) - 1:
            break
        run.append((label.group(1).upper(), line))
    if len(run) < 2:
        return None
    values = [v for _, line in run for v in (read_statement(line[OPTION_LINE_RE.match(line).end() - 1:]) or
                                              Reading("none", (), "")).values]
    return Reading("several", tuple(values), "\n".join(line for _, line in reversed(run)))


def _answer_like(reading: Reading) -> bool:
    """A statement of one value in prose (no equation chain, no other value): what an answer
    before a closing sentence looks like, not a line of working."""
    return reading.kind == "one" and not any(v.working for v in reading.values) and len(reading.values) <= 2


def corrected_after(text: str, reading: Reading) -> Reading | None:
    """A later sentence that corrects a stated answer ("The answer is 14. Wait, no: it's 16.",
    "الجواب هو 40. لا، عذرًا: 140."): its reading when a sentence after the statement opens with
    a correction word and states a value of its own; None otherwise (the statement stands)."""
    for start, end in sentences(text[:2 * MAX_STATEMENT]):
        sentence = text[start:end]
        lead = sentence.lstrip(" \t\n*_>#-–—.…")
        if correction_at(lead) is None:
            continue
        later = read_statement(sentence)
        if later is not None and later.kind in ("one", "several", "hedge", "bound"):
            if later.kind == "one" and reading.kind == "one" and later.asserted[0].value == reading.asserted[0].value:
                return None
            worked = read_final(text[start:]) if end < len(text.rstrip()) else None
            if worked is not None and worked.kind == "one" and "=" in worked.statement:
                return worked  # 'Hmm, 42 isn't right: I forgot the 6 returned. 42 + 6 = 48.': the working reaches it
            return later
    return None


def disowned_after(text: str, reading: Reading) -> Reading | None:
    """A stated answer that later sentences reject ('The answer is 12. … 12 is wrong.') or question
    (its value again after a contrast: '12 × 3 = 36, but the total should be 39, so 12 falls short.'):
    the final statement of those sentences when it asserts another value ('39 / 3 = 13'); for a
    rejected value with no other one stated, a reading that only rejects ('negated'). None: the
    stated answer stands (a check that confirms it, an explanation)."""
    if reading.kind != "one" or not text.strip():
        return None
    value, rejected, questioned = reading.asserted[0].value, False, False
    for start, end in sentences(text[:4 * MAX_STATEMENT]):
        sentence = text[start:end]
        later = read_statement(sentence)
        if later is None:
            continue
        rejected = rejected or any(v.negated and v.value == value for v in later.values)
        turns = [m.end() for m in find(CONTRAST, sentence)]
        questioned = questioned or bool(turns) and any(v.value == value and v.start >= turns[0] for v in later.values)
    if not (rejected or questioned):
        return None
    final = read_final(text)
    if final is not None and final.kind == "one" and final.asserted[0].value != value:
        return final
    return Reading("negated", reading.values, reading.statement) if rejected else None


# a line that opens with a label: a few words and a colon ('In short:', 'Also nochmal:', '**Result:**')
LABEL_LINE_RE = re.compile(r"^[ \t*_>#-]*[^\W\d_][^\n:：\d]{0,40}?[:：]")


def restated_after(text: str, reading: Reading) -> Reading | None:
    """A later line that states the answer again under a label of its own ('Antwort: 14.' then
    'Also nochmal: 16 kg.', 'In short: 16'): two final answers. The reading of both ('several')
    when the later line asserts one other value in prose; None when it repeats the value, holds
    working (a check: 'Check: 7 × 2 = 14'), a percent beside a plain answer (a confidence, a
    share) or no value. A later answer never replaces the first here: it only makes two."""
    if reading.kind != "one":
        return None
    first = reading.asserted[0]
    for line in text[:2 * MAX_STATEMENT].split("\n"):
        label = LABEL_LINE_RE.match(line)
        if label is None:
            continue
        later = read_statement(line[label.end():])
        if later is None or later.kind != "one" or len(later.values) != 1 or later.values[0].working:
            continue
        other = later.asserted[0]
        if other.value != first.value and other.percent == first.percent:
            return Reading("several", reading.values + later.values, reading.statement + "\n" + line.strip())
    return None


def final_letters(line: str, valid: str) -> Reading | None:
    """The statement of letters of one line: its last sentence that names a letter, with the
    sentence before it when it opens with a correction ('C? No, D.', 'The answer is B. Wait, no: D.')
    or when the one before rejects or asks a letter ('C: wrong. D: right.', 'C? Nope. D.')."""
    line = line[-MAX_STATEMENT:]
    said = [line[a:b] for a, b in sentences(line)]
    for n in range(len(said) - 1, -1, -1):
        reading = read_letters(said[n], valid)
        if not reading.values:
            continue
        first = n
        while first > 0 and TAKES_BACK.match(said[first].lstrip(" \t*-¿¡")) and n - first < 2:
            first -= 1
        for back in (1, 2):
            k = first - back
            if k < 0 or back == 2 and read_letters(said[k + 1], valid).values:
                break
            before = read_letters(said[k], valid)
            if before.values and (all(v.negated for v in before.values) or said[k].rstrip().endswith(("?", "？"))):
                first = k
                break
        return read_letters("".join(said[first:n + 1]), valid) if first < n else reading
    return None
