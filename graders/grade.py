"""The one entry point: grade(gold, response, kind) -> Verdict.

Steps: read the gold and infer its kind (choice, numeric, math, text; gold.py); extract the
answer from the response (extract.py); then the kind's grader, where the cheapest rule that
decides wins: option letters (choice_grade.py); exact string -> normalised string -> parsed
structure compared numerically (in process) or symbolically (sympy, in a time-limited worker)
(math_answer.py); for text, rapidfuzz (fuzzy.py). This module only dispatches.
Every verdict names its method and gives a reason a person can read.
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Sequence

from .choice_grade import gold_choice_letters, grade_choice
from .extract import read_answer
from .fuzzy import grade_text
from .gold import gold_answer, gold_has_several, infer_kind
from .math_answer import grade_math_answer, looks_like_prose, number_word
from .normalise import unicode_to_latex
from .region import cut_at_turn_end
from .verdict import Verdict

KINDS = ("choice", "numeric", "math", "text")
MAX_RESPONSE_NOTE = 1_000_000
MAX_ANSWER_CHARS = 2_000       # the parser's own limit (parse.MAX_TEXT)
# a doubled backslash before a LaTeX command: text copied from JSON or Python source
ESCAPED_COMMAND_RE = re.compile(r"(?<!\\)\\\\(?:[a-zA-Z]{2,}|[{}()\[\]%$,!;])")


def unescape(text: str) -> str:
    """'\\\\frac{3}{4}' (escaped once too often) -> '\\frac{3}{4}'; a lone '\\\\' line break stays."""
    if ESCAPED_COMMAND_RE.search(text):
        return text.replace("\\\\", "\\")
    return text


def grade(gold: str, response: str | None, kind: str | None = None, *, choices: Sequence[str] = (),
          deadline_s: float | None = None, rounded_golds: bool = False) -> Verdict:
    """Is `response` (a bare answer or a whole model response) the same answer as `gold`?

    `gold` may be a bare answer or an answer key written as a short solution. `choices` (the
    option texts, in letter order) help read a choice answer. All sympy work of one call
    shares one deadline, `deadline_s` (default sandbox.DEFAULT_DEADLINE_S, env
    EVALSUITE_GRADER_TIMEOUT); past it the verdict is undecided. `rounded_golds`: the golds written
    with decimals are rounded values (a pack's or a file's policy; maths stays exact by default).
    """
    from . import sandbox

    gold = unescape("" if gold is None else str(gold))
    requested_kind = kind
    if kind is not None and kind not in KINDS:
        raise ValueError(f"unknown grading kind {kind!r}; expected one of {', '.join(KINDS)}")
    if response is None or not str(response).strip():
        return Verdict(False, None, "none", "empty response: no answer to grade", "none")
    response = cut_at_turn_end(unescape(str(response)))  # a chat-template marker ends the response
    if not response.strip():
        return Verdict(False, None, "none", "empty response: no answer before the chat-template marker", "none")
    if kind == "choice" or (kind is None and gold_choice_letters(gold) is not None):
        return grade_choice(gold, response, choices, grade_answer=grade)
    gold_text, gold_how = gold_answer(gold)
    kind = kind or infer_kind(gold_text)
    if kind == "choice":
        return grade_choice(gold_text, response, choices, grade_answer=grade)
    several = gold_has_several(gold_text)
    # a gold of one number: a final statement in prose is read by clauses.py (its one asserted
    # value; a hedge, a bound or only negated values give none)
    numeric = not several and kind in ("numeric", "math") and infer_kind(gold_text) == "numeric"
    found = read_answer(response, several=several, numeric=numeric)
    answer, how = found.answer, found.how
    if found.refusal:  # (its words are in the reason: what is shown as extracted is a value or nothing)
        return Verdict(None if found.undecided else False, None, "none", found.refusal, how)
    if answer is None:
        return Verdict(False, None, "none", "no answer found in the response", how)
    if len(answer) > MAX_ANSWER_CHARS:  # refused before any regex or parse sees it
        return Verdict(None, answer[:200], "none",
                       f"undecided: answer too large to check safely ({len(answer)} characters)", how)
    if kind == "text":
        v = grade_text(gold_text, answer, how)
        if v.equal is not True and how in ("last-math", "last-number", "last-sentence"):
            # a word answer sits in the final sentence, not in the last formula or number
            lines = [line.strip() for line in response.strip().splitlines() if line.strip()]
            if re.search(r"[^\W\d_]{2,}", lines[-1]):
                return grade_text(gold_text, lines[-1], "last-sentence")
        return v
    if kind == "numeric" and not re.search(r"\d|\\[a-zA-Z]", unicode_to_latex(answer)):
        # a numeric gold needs a number: words alone would otherwise parse as a product of
        # symbols ("nothing" = n*o*t*h*i*n*g) and be "symbolically different"
        word = number_word(answer)
        if word is None:
            return Verdict(False, None, "none", f"no number in the answer ({how})", how)
        answer, how = word, "number-word"
    with sandbox.deadline(deadline_s):
        v = grade_math_answer(gold_text, answer, how, response, percent_strict=requested_kind != "numeric",
                              rounded_golds=rounded_golds)
        if v.equal is not True and found.second is not None:
            # '10.066 Gläser': a dot between thousands where the language writes it so
            second = grade_math_answer(gold_text, found.second, how, response, percent_strict=requested_kind != "numeric",
                                       rounded_golds=rounded_golds)
            if second.equal is True:
                v = replace(second, reason=f"{second.reason} [the dot read as a thousands separator: {answer} -> {found.second}]")
    if found.note:
        v = replace(v, reason=f"{v.reason} [read from the statement: {found.note}]")
    if v.method == "none" and v.extracted and looks_like_prose(v.extracted):
        v = replace(v, extracted=None)  # a sentence that was read as no value is no extracted answer
    if gold_how != "bare":
        v = replace(v, reason=f"{v.reason} [gold read from its {gold_how[5:]}: {gold_text!r}]")
    return v


def grade_math(gold: str, answer_text: str | None) -> Verdict:
    """MATH-500 style: the last \\boxed{} (else the usual extraction), then equivalence.

    The kind follows the gold: '\\text{(C)}' grades as a choice, '\\text{east}' as text.
    """
    return grade(gold, answer_text, kind=None)
