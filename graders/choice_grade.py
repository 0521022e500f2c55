"""Grading a multiple-choice answer: the option letters of a gold, and the letters a response chose.

A gold is bare letters ('C', 'AD', '(B)', '\\text{(C)}') or a letter with its option's text
('(C) 40 km', 'B. Lisbon'); the response's letters are read by the last \\boxed{}, else by
choice.py's rules (shared with the exam packs). grade.grade dispatches here for a choice gold.
"""
from __future__ import annotations

import re
from typing import Callable, Sequence

from .extract import extract_answer
from .region import cut_at_turn_end, find_boxed
from .normalise import normalise
from .verdict import Verdict

CHOICE_GOLD_RE = re.compile(r"^\(?([A-J])\)?(?:[\s,、]*\(?([A-J])\)?)*$")
# an option letter followed by the option's text: "(C) 40 km", "B. Lisbon", "D: none of these"
CHOICE_WITH_TEXT_RE = re.compile(r"^\s*(?:\(([A-J])\)\s*|([A-J])\s*(?:[.:)]\s+|[：、．]\s*))(?=\S)")
TEXT_WRAP_RE = re.compile(r"^\\(?:text|textbf|mathrm|mbox)\s*\{(.*)\}$")


def choice_letters(text: str) -> str | None:
    """'(B)', 'A, C', 'A B D', '\\text{(C)}' -> 'B', 'AC', 'ABD', 'C'; None if not letters."""
    text = text.strip().strip("$").strip()
    m = TEXT_WRAP_RE.match(text)
    if m:
        text = m.group(1).strip()
    if not CHOICE_GOLD_RE.match(text):
        return None
    letters = re.findall(r"[A-J]", text)
    if len(set(letters)) != len(letters):
        return None
    return "".join(sorted(letters))


CHOICE_WRAPPER_RE = re.compile(r"\\(?:textbf|text|mathrm|mathbf|textrm|mbox)\s*\{\s*(\(?[A-J]\)?)\s*\}")


def gold_choice_letters(gold: str) -> str | None:
    """Letters of a choice gold, bare ('C', 'AD') or with the option text ('(C) 40 km',
    '\\textbf{(D)}\\ 70')."""
    gold = CHOICE_WRAPPER_RE.sub(r"\1", gold).replace("\\ ", " ").replace("\\qquad", " ").replace("\\quad", " ")
    if gold.startswith("$") and gold.count("$") == 2 and gold.endswith("$"):
        gold = gold[1:-1]
    if len(gold.strip()) <= 12:
        letters = choice_letters(gold)
        if letters is not None:
            return letters
    m = CHOICE_WITH_TEXT_RE.match(gold)
    if m:
        return m.group(1) or m.group(2)
    return None


def gold_option_text(gold: str) -> str | None:
    """'(C) 40 km' -> '40 km'; None for a bare letter gold."""
    gold = CHOICE_WRAPPER_RE.sub(r"\1", gold).replace("\\ ", " ")
    m = CHOICE_WITH_TEXT_RE.match(gold)
    return gold[m.end():].strip() or None if m else None


# a letter and its option's text with only a space between ("B Marta"): read only when the
# kind is choice (asked for, or given by a letter gold), never to infer the kind ("A man")
LETTER_SPACE_TEXT_RE = re.compile(r"^\s*\(?([A-J])\)?\s+(\S.*)$", re.S)


def letter_with_spaced_text(gold: str, choices: Sequence[str]) -> tuple[str, str] | None:
    """('B', 'Marta') for the choice gold 'B Marta'; with the option texts, the text must be
    option B's (a gold 'B Luis' where B is 'Marta' is a bad row, not a letter)."""
    from .choice import _option_key

    m = LETTER_SPACE_TEXT_RE.match(gold)
    if not m:
        return None
    letter, text = m.group(1), m.group(2).strip()
    if choices:
        index = ord(letter) - ord("A")
        if index >= len(choices) or _option_key(choices[index]) != _option_key(text):
            raise ValueError(f"choice gold {gold!r}: option {letter} is {choices[index] if index < len(choices) else 'absent'!r}, "
                             f"not {text!r}")
    return letter, text


def grade_choice(gold: str, response: str, choices: Sequence[str] = (), *,
                 grade_answer: Callable[[str, str], Verdict]) -> Verdict:
    """Option letters: the last boxed letter, else graders/choice.py's rules (shared with the
    exam packs). Letters are compared as sets (a one-letter gold answered with two letters is
    wrong); no letter, or an ambiguous answer ("A or B"), is undecided (equal=None).

    `grade_answer(gold, response)` grades an option's text given instead of its letter: the
    dispatcher (grade.grade) passes itself, so this module does not import it back."""
    from .choice import extract_choice

    gold_letters = gold_choice_letters(gold)
    spaced_text = None
    if gold_letters is None:
        spaced = letter_with_spaced_text(gold, choices)
        if spaced is not None:
            gold_letters, spaced_text = spaced
    if gold_letters is None:
        raise ValueError(f"choice gold {gold!r} is not option letters")
    response = cut_at_turn_end(response[-20_000:])  # the next turn of a chat template is no answer
    boxed = find_boxed(response)
    letters = (choice_letters(normalise(boxed).text) or gold_choice_letters(boxed)
               or gold_choice_letters(normalise(boxed).text)) if boxed is not None else None
    how = "boxed"
    found = "the last \\boxed{}"
    if letters is None:
        letters, found = extract_choice(response, choices, len(gold_letters))
        how = found.split(":")[0].strip() or "none"
    if letters is None and not found.startswith("ambiguous"):
        # a letter alone in the last maths span ("\\[ \\text{(C)} \\]")
        answer, answer_how = extract_answer(response)
        if answer is not None and answer_how in ("last-math", "answer-is", "whole"):
            letters = choice_letters(normalise(answer).text)
            if letters is not None:
                how, found = answer_how, f"{answer_how}: {answer!r}"
    if letters is None:
        option_text = gold_option_text(gold) or spaced_text
        if option_text:  # "(C) 40 km" answered "40 km": the option's text instead of its letter
            by_text = grade_answer(option_text, response)
            if by_text.equal is True:
                return Verdict(True, gold_letters, "choice",
                               f"gives the text of option {gold_letters} ({option_text!r}): {by_text.reason}", "option-text")
        if found.startswith("no choice letter found"):  # the reason says it once
            return Verdict(None, None, "none", found.replace("no choice letter found", "no option letter found"), "none")
        return Verdict(None, None, "none", f"no option letter chosen ({found})", how)
    letters = "".join(sorted(set(letters)))
    equal = letters == gold_letters
    reason = f"chose {letters}, gold {gold_letters}" + ("" if equal else " (different options)")
    return Verdict(equal, letters, "choice", f"{reason}; read from {found}", how)
