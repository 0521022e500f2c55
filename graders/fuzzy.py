"""Short free-form text answers: normalised equality, then rapidfuzz similarity.

Normalisation (zh and en): NFKC (full-width -> ASCII), lower case, LaTeX \\text{} unwrapped,
punctuation and spaces dropped, English articles dropped. Then two guards before any score:
the numbers (and roman numerals) in both must be the same, and so must negation ("not", "no", "不", "没", "非"),
because "3 apples"/"4 apples" and "even"/"not even" are close strings but different answers.

FUZZY_THRESHOLD was chosen on tests/grader_cases/text.txt (see docs/graders.md): the
highest value that keeps every labelled misspelling and word-order variant equal while
keeping every labelled different answer apart.
"""
from __future__ import annotations

import re
import unicodedata

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
    cjk = bool(re.search(r"[\u4e00-\u9fff]", g + a))
    if cjk:  # characters, not words: compare without spaces
        score = fuzz.ratio(squash(g), squash(a))
    else:
        score = max(fuzz.ratio(g, a), fuzz.token_sort_ratio(g, a))
    if score >= threshold:
        return True, "fuzzy", f"similar text: score {score:.0f} >= {threshold:.0f}", score
    return False, "fuzzy", f"different text: score {score:.0f} < {threshold:.0f}", score
