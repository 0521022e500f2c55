"""Short free-form text answers: normalised equality, then rapidfuzz similarity.

Normalisation (zh and en): NFKC (full-width -> ASCII), lower case, LaTeX \\text{} unwrapped,
punctuation and spaces dropped, English articles dropped. Then two guards before any score:
the numbers (and roman numerals) in both must be the same, and so must negation ("not", "no", "不", "没", "非"),
because "3 apples"/"4 apples" and "even"/"not even" are close strings but different answers.

FUZZY_THRESHOLD was chosen on tests/grader_cases/text.txt (see docs/graders.md): the
highest value that keeps every labelled misspelling and word-order variant equal while
keeping every labelled different answer apart. grade_text is the text kind's grader (grade.grade
dispatches to it): the exact string, then compare_text, then the gold stated in a last sentence.
"""
from __future__ import annotations

import re
import unicodedata

from .region import sentences
from .verdict import Verdict, verdict

FUZZY_THRESHOLD = 90.0   # rapidfuzz score (0-100)
MIN_FUZZY_LENGTH = 4     # shorter strings must match exactly after normalisation
MAX_TEXT = 2000

ARTICLES_RE = re.compile(r"\b(?:the|a|an)\b")
NEGATION_RE = re.compile(r"\b(?:not|no|never|none|neither|nor|cannot|isn't|aren't|doesn't|don't|false)\b|不|没|非|无|否")
NUMBER_RE = re.compile(r"\d+(?:\.\d+)?")


def normalise_text(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)[:MAX_TEXT].lower()
    text = re.sub(r"\\(?:text|textbf|mathrm|mbox)\s*\{([^{}]*)\}", r"\1", text)
    text = text.replace("$", "")
    text = ARTICLES_RE.sub(" ", text)
    text = re.sub(r"\bdne\b", "does not exist", text)
    text = re.sub(r"[^\w\s]|_", " ", text)
    return re.sub(r"\s+", " ", text).strip()


def roman_numerals(text: str) -> list[str]:
    return [w for w in text.split() if re.fullmatch(r"[ivx]+", w)]


def squash(text: str) -> str:
    return text.replace(" ", "")


def compare_text(gold: str, answer: str, threshold: float = FUZZY_THRESHOLD) -> tuple[bool, str, str, float | None]:
    """(equal, method, reason, score) for two short texts."""
    from rapidfuzz import fuzz

    g, a = normalise_text(gold), normalise_text(answer)
    if squash(g) == squash(a):
        return True, "normalised", "equal after text normalisation (case, punctuation, articles, width)", None
    if NUMBER_RE.findall(g) != NUMBER_RE.findall(a):
        return False, "fuzzy", "the numbers in the texts differ", None
    if roman_numerals(g) != roman_numerals(a):
        return False, "fuzzy", "the roman numerals in the texts differ (Henry VII is not Henry VIII)", None
    if bool(NEGATION_RE.search(g)) != bool(NEGATION_RE.search(a)):
        return False, "fuzzy", "one text is negated and the other is not", None
    if min(len(squash(g)), len(squash(a))) < MIN_FUZZY_LENGTH:
        return False, "fuzzy", f"short texts differ (under {MIN_FUZZY_LENGTH} characters, exact match needed)", None
    # letters of a script written without spaces between words (East Asian wide letters: CJK, kana,
    # Hangul), told by their Unicode width, not a list of scripts: characters, not words
    cjk = any(unicodedata.east_asian_width(c) in "WF" and unicodedata.category(c)[0] == "L" for c in g + a)
    if cjk:  # characters, not words: compare without spaces
        score = fuzz.ratio(squash(g), squash(a))
    else:
        score = max(fuzz.ratio(g, a), fuzz.token_sort_ratio(g, a))
    if score >= threshold:
        return True, "fuzzy", f"similar text: score {score:.0f} >= {threshold:.0f}", score
    return False, "fuzzy", f"different text: score {score:.0f} < {threshold:.0f}", score


def grade_text(gold: str, answer: str, how: str) -> Verdict:
    if answer.strip() == gold.strip():
        return verdict(True, answer, "exact", "identical to the gold", how)
    equal, method, reason, score = compare_text(gold, answer)
    if not equal and how in ("whole", "answer-is", "last-math", "boxed", "last-sentence"):
        found = gold_in_sentence(gold, answer)
        if found:
            return verdict(True, answer, "fuzzy", found, how)
    return verdict(equal, answer, method, reason, how, **({"score": score} if score is not None else {}))


def gold_in_sentence(gold: str, answer: str) -> str | None:
    """'So the day is Tuesday.' answers the text gold 'Tuesday': the gold's words appear once,
    whole, in a short last sentence that negates nothing and names no alternative ('or')."""
    line = answer.strip().rsplit("\n", 1)[-1]
    said = [line[a:b].strip() for a, b in sentences(line, semicolons=False)]
    if not said:
        return None
    last = normalise_text(said[-1])
    g = normalise_text(gold)
    if not g or len(last.split()) > 14 or re.search(r"\b(?:or|either|maybe|perhaps)\b", last):
        return None
    if NEGATION_RE.search(last) and not NEGATION_RE.search(g):
        return None
    if re.search(r"(?:^|\s)" + re.escape(g) + "$", last):
        return f"the answer's last sentence ends by stating the gold {gold!r}"
    if g in ("yes", "no", "true", "false") and re.match(re.escape(g) + r"\b", last) \
            and re.match(r"\s*" + re.escape(g) + r"\s*[,.;:!]", said[-1], re.I):
        return f"the answer's last sentence opens with {gold!r}"
    return None
