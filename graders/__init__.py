"""Answer extraction and equivalence: pure functions that return a Verdict with its reason.

    from evalsuite.graders import grade
    grade("\\frac{1}{2}", "The answer is $0.5$.")   # Verdict(equal=True, method="numeric", ...)

Modules: grade (the dispatcher), gold (reading a gold, its kind), choice_grade and choice
(option letters), extract (finding the answer), normalise (strings), parse (safe expression parser),
structure (sets, intervals, equations ...), numeric (fast exact/float checks), equivalence,
sandbox (time-limited sympy worker processes), symbolic (the sympy side), fuzzy (text).
Importing this package imports neither sympy nor rapidfuzz.
"""
from .extract import extract_answer, extract_gsm8k_strict, extract_last_number
from .gold import infer_kind
from .grade import KINDS, grade, grade_math
from .verdict import METHODS, Verdict

__all__ = ["KINDS", "METHODS", "Verdict", "extract_answer", "extract_gsm8k_strict",
           "extract_last_number", "grade", "grade_math", "infer_kind"]
