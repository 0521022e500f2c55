"""Property-based tests: grade() returns a Verdict for any input, random or hostile.

No wall-clock assertions: the hard bound is the sandbox time limit itself (each sympy step
is killed past EVALSUITE_GRADER_TIMEOUT), so a hang would show up as a test that never ends.
"""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalsuite.graders import METHODS, Verdict, grade

HOSTILE_PIECES = ["\\boxed{", "}", "{", "\\frac", "\\sqrt", "^", "**", "10", "9", "x", "(", ")",
                  "[", "]", "\\{", "\\}", ",", "=", "<", "\\le", "!", "\\pm", "\\cup", "\\infty",
                  "\\begin{pmatrix}", "\\\\", "&", "\\end{pmatrix}", "\\text{", "%", "$", ".",
                  "-", "/", "e", "i", "\\pi", "|", "_", "答案是", "####", "The answer is ",
                  "__import__", "lambda", "'", '"', " ", "\n", "·", "²", "√", "½", "∞",
                  "<answer>", "</answer>", "| answer |", "∅", "⅜", "－", "\\sum_{k=1}^{9}", "\\quad",
                  "\\approx", "\\overline{3}", "since", " and ", "\\\\frac", "Check: "]
hostile = st.lists(st.sampled_from(HOSTILE_PIECES), max_size=40).map("".join)
golds = st.sampled_from(["18", "\\frac{1}{2}", "x^2+1", "(3, 4]", "\\{1, 2\\}", "y = 2x + 3",
                         "\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", "C", "\\text{east}", "50\\%",
                         "\\emptyset", "(C) 40 km", "The area is $\\boxed{12}$ square units.", "2, 3",
                         "x \\ne 2", "2 \\le |z| \\le 5", "\\text{no}", "12 #### 12"])


def check(verdict) -> None:
    assert isinstance(verdict, Verdict)
    assert verdict.equal in (True, False, None)
    assert verdict.method in METHODS
    assert isinstance(verdict.reason, str) and verdict.reason


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gold=golds, response=st.text(max_size=200))
def test_random_text_always_gives_a_verdict(gold, response):
    check(grade(gold, response))


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gold=golds, response=hostile)
def test_hostile_latex_always_gives_a_verdict(gold, response):
    check(grade(gold, response))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gold=hostile, response=hostile, kind=st.sampled_from(["math", "numeric", "text", None]))
def test_hostile_gold_and_response(gold, response, kind):
    try:
        verdict = grade(gold, response, kind)
    except ValueError as e:  # only a gold that is not option letters for kind=choice may raise
        assert "choice gold" in str(e)
        return
    check(verdict)


@settings(max_examples=60, deadline=None)
@given(a=st.integers(-10**6, 10**6), b=st.integers(1, 10**6))
def test_a_fraction_equals_its_own_decimal_forms(a, b):
    from fractions import Fraction
    value = Fraction(a, b)
    assert grade(f"\\frac{{{a}}}{{{b}}}", f"{value.numerator}/{value.denominator}").equal is True
    assert grade(f"\\frac{{{a}}}{{{b}}}", f"{value.numerator + 1}/{value.denominator}").equal is False
