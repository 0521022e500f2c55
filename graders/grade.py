"""The one entry point: grade(gold, response, kind) -> Verdict.

Steps: infer the kind from the gold (choice, numeric, math, text); extract the answer
from the response (extract.py); then the cheapest rule that decides wins:
exact string -> normalised string -> parsed structure compared numerically (in process)
or symbolically (sympy, in a time-limited worker) -> for text, rapidfuzz.
Every verdict names its method and gives a reason a person can read.
"""
from __future__ import annotations

import re
from typing import Sequence

from .extract import extract_answer, extract_last_number, find_boxed
from .normalise import normalise, plain_key
from .parse import ParseError, TooBig
from .verdict import Verdict

KINDS = ("choice", "numeric", "math", "text")
MAX_RESPONSE_NOTE = 1_000_000
CHOICE_GOLD_RE = re.compile(r"^\(?([A-J])\)?(?:[\s,、]*\(?([A-J])\)?)*$")
TEXT_WRAP_RE = re.compile(r"^\\(?:text|textbf|mathrm|mbox)\s*\{(.*)\}$")
MATH_WORDS = {"sqrt", "pi", "sin", "cos", "tan", "cot", "sec", "csc", "log", "ln", "exp", "oo",
              "inf", "infty", "infinity", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
              "or", "and", "in", "cm", "mm", "km", "kg", "units", "degrees", "dollars", "cents"}


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


def infer_kind(gold: str) -> str:
    """choice for letter golds, numeric for plain numbers, text for words, else math."""
    if choice_letters(gold) is not None and len(gold.strip()) <= 12:
        return "choice"
    norm = normalise(gold).text
    if re.search(r"[\u4e00-\u9fff]", norm):
        return "text"
    bare = re.sub(r"\\(?:begin|end)\{[a-zA-Z*]+\}|\\[a-zA-Z]+", " ", norm)
    words = [w for w in re.findall(r"(?<![a-zA-Z])[a-zA-Z]{3,}", bare) if w.lower() not in MATH_WORDS]
    if words:
        return "text"
    from .numeric import exact_value
    from .structure import Expr, parse_value
    try:
        value = parse_value(norm)
    except ParseError:
        return "text" if re.search(r"[a-zA-Z]{2,}", norm) and "\\" not in norm else "math"
    if isinstance(value, Expr) and exact_value(value.node) is not None:
        return "numeric"
    return "math"


def grade(gold: str, response: str | None, kind: str | None = None) -> Verdict:
    """Is `response` (a bare answer or a whole model response) the same answer as `gold`?"""
    gold = "" if gold is None else str(gold)
    kind = kind or infer_kind(gold)
    if kind not in KINDS:
        raise ValueError(f"unknown grading kind {kind!r}; expected one of {', '.join(KINDS)}")
    if response is None or not str(response).strip():
        return Verdict(False, None, "none", "empty response: no answer to grade", "none")
    if kind == "choice":
        return grade_choice(gold, response)
    answer, how = extract_answer(response)
    if answer is None:
        return Verdict(False, None, "none", "no answer found in the response", how)
    if kind == "text":
        return grade_text(gold, answer, how)
    if kind == "numeric" and not re.search(r"\d", answer):
        # a numeric gold needs a number: words alone would otherwise parse as a product of
        # symbols ("nothing" = n*o*t*h*i*n*g) and be "symbolically different"
        return Verdict(False, None, "none", f"no number in the answer ({how})", how)
    return grade_math_answer(gold, answer, how, response)


def grade_math(gold: str, answer_text: str | None) -> Verdict:
    """MATH-500 style: the last \\boxed{} (else the usual extraction), then equivalence.

    The kind follows the gold: '\\text{(C)}' grades as a choice, '\\text{east}' as text.
    """
    return grade(gold, answer_text, kind=None)


def verdict(equal: bool | None, answer: str, method: str, reason: str, how: str, **details) -> Verdict:
    return Verdict(equal, answer, method, reason, how, details=dict(details))


def grade_math_answer(gold: str, answer: str, how: str, response: str) -> Verdict:
    from .equivalence import compare
    from .structure import parse_value

    if answer.strip() == gold.strip():
        return verdict(True, answer, "exact", "identical to the gold", how)
    g_norm, a_norm = normalise(gold), normalise(answer)
    if plain_key(g_norm.text) == plain_key(a_norm.text) and g_norm.text:
        extra = f" (removed unit {a_norm.unit!r})" if a_norm.unit else ""
        return verdict(True, answer, "normalised", f"equal after normalisation: {a_norm.text!r}{extra}", how)
    try:
        gold_value = parse_value(g_norm.text)
    except ParseError as e:
        return verdict(None, answer, "none", f"undecided: the gold {gold!r} could not be parsed ({e})", how)
    try:
        if how in ("whole", "answer-is", "zh-answer") and looks_like_prose(a_norm.text):
            raise ParseError("a sentence, not a bare answer")
        answer_value = parse_value(a_norm.text)
    except TooBig as e:
        return verdict(None, answer, "none", f"undecided: answer too large to check safely ({e})", how)
    except ParseError as e:
        # a sentence instead of a bare answer: fall back to its last number, marked so
        number = extract_last_number(answer) if how in ("whole", "answer-is", "zh-answer", "gsm8k") else None
        if number is None:
            return verdict(False, answer, "none", f"could not read the answer as maths ({e})", how)
        answer, how = number, "last-number"
        try:
            answer_value = parse_value(normalise(number).text)
        except ParseError as e2:
            return verdict(False, answer, "none", f"could not read the answer as maths ({e2})", how)
    decision = compare(gold_value, answer_value, gold_percent=g_norm.percent)
    reason = decision.reason
    if how == "last-number":
        reason += " [answer taken from the last number in the response: no marked final answer]"
    return verdict(decision.equal, answer, decision.method, reason, how)


def looks_like_prose(text: str) -> bool:
    """Two English words (not maths names) or any CJK character: read its last number instead."""
    bare = re.sub(r"\\(?:begin|end)\{[a-zA-Z*]+\}|\\[a-zA-Z]+", " ", text)
    words = [w for w in re.findall(r"[a-zA-Z]{3,}", bare) if w.lower() not in MATH_WORDS]
    return len(words) >= 2 or bool(re.search(r"[\u4e00-\u9fff]", text))


def grade_text(gold: str, answer: str, how: str) -> Verdict:
    from .fuzzy import compare_text

    if answer.strip() == gold.strip():
        return verdict(True, answer, "exact", "identical to the gold", how)
    equal, method, reason, score = compare_text(gold, answer)
    return verdict(equal, answer, method, reason, how, **({"score": score} if score is not None else {}))


def _extract_choice(response: str, choices: Sequence[str], n_gold: int) -> tuple[str | None, str]:
    """graders/choice.py (shared with the exam packs) when present; until then only a bare
    letter answer or a boxed letter is read."""
    try:
        from .choice import extract_choice
    except ImportError:
        boxed = find_boxed(response)
        letters = choice_letters(boxed if boxed is not None else response)
        return letters, ("boxed" if boxed is not None else "bare-letters") if letters else "none"
    return extract_choice(response, choices, n_gold)


def grade_choice(gold: str, response: str, choices: Sequence[str] = ()) -> Verdict:
    gold_letters = choice_letters(gold)
    if gold_letters is None:
        raise ValueError(f"choice gold {gold!r} is not option letters")
    boxed = find_boxed(response[-20_000:])
    letters = choice_letters(normalise(boxed).text) if boxed is not None else None
    how = "boxed"
    found = "the last \\boxed{}"
    if letters is None:
        letters, found = _extract_choice(response, choices, len(gold_letters))
        how = found.split(":")[0].strip() or "none"
    if letters is None:
        return Verdict(False, None, "none", f"no option letter found ({found})", how)
    letters = "".join(sorted(set(letters)))
    equal = letters == gold_letters
    reason = f"chose {letters}, gold {gold_letters}" + ("" if equal else " (different options)")
    return Verdict(equal, letters, "choice", f"{reason}; read from {found}", how)
