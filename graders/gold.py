"""Reading a gold: the answer inside an answer key, and the kind of answer it asks for.

A bare gold is its own answer; a key written as a short solution is read like a response (its
boxes, its GSM8K '####', its 'answer is'). infer_kind tells choice letters, plain numbers,
words and maths apart; grade.grade grades by that kind.
"""
from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from .choice_grade import gold_choice_letters
from .extract import extract_answer
from .region import MATH_SPAN_RE, span_text
from .normalise import normalise
from .numbers import INTEGER_RE
from .parse import ParseError

# names that are maths, not words, when a gold or an answer is told from prose (units are found by
# their place after a value, normalise.split_unit, not listed here)
MATH_WORDS = {"sqrt", "pi", "sin", "cos", "tan", "cot", "sec", "csc", "log", "ln", "exp", "oo",
              "inf", "infty", "infinity", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
              "or", "and", "in", "percent", "pct", "sum", "prod", "frac", "dfrac", "approx", "emptyset",
              "varnothing", "mathbb", "cup", "cap", "cdot", "times", "left", "right", "text", "boxed"}
GOLD_PERCENT_AFTER_BOX_RE = re.compile(r"\s*\$?\s*(?:\\?%|per\s?cent\b|percentage\b)", re.I)


@lru_cache(maxsize=4096)  # pure in the gold text, asked once per answer
def gold_answer(gold: str) -> tuple[str, str]:
    """The answer inside an answer key: (text, how). A bare answer is itself ('bare'); a key
    written as a short solution is read like a response -- all its boxes (several form a
    list), else its 'answer is', else its last maths."""
    from .region import find_all_boxed

    stripped = gold.strip().replace("\\$", "\uff04")  # \\$ is money, not a maths delimiter
    boxes = find_all_boxed(stripped)
    if boxes:
        # a percent written after the box belongs to it: "$\\boxed{35}$ percent", "\\boxed{20}\\%"
        distinct = list(dict.fromkeys(b[2] + ("%" if GOLD_PERCENT_AFTER_BOX_RE.match(stripped, b[1]) else "")
                                      for b in boxes))
        return ", ".join(distinct), "gold-boxed"
    if "####" in stripped:  # a GSM8K answer key: the worked solution, then '#### 18'
        return stripped.rsplit("####", 1)[1].strip(), "gold-gsm8k"
    if re.match(r"\s*(?:答案|答|final answer|answer)\s*(?:是|为|[:：])", stripped, re.I):  # "答案：17"
        answer, how = extract_answer(stripped)
        if answer:
            return answer, f"gold-{how}"
    if not re.search(r"\$|\\\(|\\\[|\n", stripped) or re.fullmatch(r"\$+[^$]*\$+", stripped):
        return stripped, "bare"
    outside = re.sub(r"或者|或|和|及", " ", MATH_SPAN_RE.sub(" ", stripped))
    if not re.search(r"[a-zA-Z]{2,}", outside) and not _uncased_letters(outside) and "\n" not in stripped:
        # '1;$\\frac{8}{9}$': maths with separators only, no prose around it
        return MATH_SPAN_RE.sub(lambda m: span_text(m), stripped), "bare"
    answer, how = extract_answer(stripped)
    if answer is None:
        return stripped, "bare"
    return answer, f"gold-{how}"


def _uncased_letters(text: str) -> bool:
    """A letter of a script without case (Unicode category Lo: CJK, kana, Hangul, Arabic, Thai …):
    words, where a formula would use Latin or Greek letters."""
    return any(unicodedata.category(ch) == "Lo" for ch in text)


@lru_cache(maxsize=4096)  # pure in the gold text, asked once per answer
def infer_kind(gold: str) -> str:
    """choice for letter golds, numeric for plain numbers, text for words, else math."""
    if INTEGER_RE.fullmatch(gold):
        return "numeric"  # (what the steps below find for an integer, without normalising and parsing it)
    if gold_choice_letters(gold) is not None:
        return "choice"
    norm = normalise(gold).text
    if _uncased_letters(norm) or norm.strip().lower() in ("yes", "no", "true", "false"):
        return "text"
    if re.fullmatch(r"\s*\$?\s*\\text(?:bf|rm)?\s*\{\s*[A-Za-z]{2,}[A-Za-z .'-]*\}\s*\$?\s*", gold):
        return "text"  # \text{no}, \text{east}
    bare = re.sub(r"\\(?:begin|end)\{[a-zA-Z*]+\}|\\[a-zA-Z]+", " ", label_dropped(norm))
    words = [w for w in re.findall(r"(?<![a-zA-Z])[a-zA-Z]{3,}", bare) if w.lower() not in MATH_WORDS]
    if words:
        return "text"
    from .parse import exact_value
    from .structure import Expr, parse_value
    try:
        value = parse_value(norm)
    except ParseError:
        return "text" if re.search(r"[a-zA-Z]{2,}", norm) and "\\" not in norm else "math"
    if isinstance(value, Expr) and exact_value(value.node) is not None:
        return "numeric"
    return "math"


def label_dropped(norm: str) -> str:
    """'ABC = 40', 'V_{ABC}:V=3:11' -> the value after the label: the names of a label are not
    words (the kind is the value's)."""
    from .parse import tokenize
    from .structure import function_value_label, label_text

    left, eq, right = norm.partition("=")
    if not eq or "=" in right:
        return norm
    try:
        tokens = tokenize(left.strip())
    except ParseError:
        return norm
    return right if tokens and (label_text(tokens) or function_value_label(tokens)) else norm


@lru_cache(maxsize=4096)  # pure in the gold text, asked once per answer
def gold_has_several(gold_text: str) -> bool:
    """A gold of several answers ('2, 3', '\\{1, 4\\}', '\\pm 2'): several boxes form a list."""
    from .structure import Items, parse_value
    if INTEGER_RE.fullmatch(gold_text):
        return False
    try:
        value = parse_value(normalise(gold_text).text)
    except ParseError:
        return False
    return (isinstance(value, Items) and not value.ordered and len(value.items) > 1) or "\\pm" in gold_text
