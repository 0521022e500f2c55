"""Issue 43 (graders, round five of the issue series): one reading for numbers, expressions and
letters, and the formats 2024 chat models write. Each test failed on the graders of main before
this round (checked by running it with /work/main's code); the batches it came from are
tests/grader_cases/round6_*.jsonl (first sight recorded there).
"""
from __future__ import annotations

import pytest

from evalsuite.graders import grade


def said(gold: str, response: str, kind: str | None = None, **kw) -> bool | None:
    return grade(gold, response, kind, **kw).equal


def test_a_fraction_read_from_a_sentence_stays_exact():
    # '-32988/15' was read as the decimal -2199.2 and accepted within a tolerance for -32989/15
    assert said("\\frac{-362879}{165}", "-32988/15") is False
    assert said("\\frac{-362879}{165}", "-32989/15") is True
    assert said("3/4", "She ate 3/4 of the pie.", "numeric") is True


# --- kind 3: Unicode maths ------------------------------------------------------------------------

@pytest.mark.parametrize("gold,response,wrong_gold", [
    ("\\sqrt{47}", "So the length of the diagonal is √47.", "47"),
    ("2\\sqrt{11}", "The distance between the two points is 2√11.", "2"),
    ("\\sqrt[3]{2}", "The side length is ∛2 cm.", "\\sqrt{2}"),
    ("10^{-3}", "The concentration is 10⁻³.", "10"),
    ("417", "The inverse we want is 3⁻¹ ≡ 417 (mod 1250).", "418"),
    ("417", "We need the inverse of 3 modulo 1250: 3 × 417 = 1251 ≡ 1, so 3⁻¹ ≡ 417 (mod 1250).", "1"),
])
def test_unicode_maths_is_read_as_maths(gold, response, wrong_gold):
    # main: √47 read as 47, 2√11 as 2, 10⁻³ as 10, the congruence as '3 answers given'
    assert said(gold, response) is True
    assert said(wrong_gold, response) is not True


# --- kind 8: what is shown as extracted is a value or nothing ----------------------------------------

@pytest.mark.parametrize("response", ["Tom has 3 apples and buys more.\nSo, the answer is", "It is either 3 or 5 apples.",
                                      "Between 3 and 5 apples, at least 3."])
def test_extracted_is_a_value_or_nothing(response):
    # main showed 'So, the answer is' as the extracted answer (report transcript, diff)
    v = grade("4", response, "numeric")
    assert v.equal is not True and v.extracted is None and v.reason


# --- kind 4: units inside the box ---------------------------------------------------------------------

@pytest.mark.parametrize("box,gold,wrong", [
    ("6.2\\times10^{-3}\\,\\text{erg s}^{-1}", "6.2\\times 10^{-3}", "6.2\\times 10^{-4}"),
    ("3.0 \\times 10^{8}\\ \\mathrm{m\\,s^{-1}}", "3\\times 10^8", "3\\times 10^6"),
    ("25\\,\\text{km}\\,\\text{h}^{-1}", "25", "\\frac{1}{25}"),
    ("1.2\\ \\text{kg}\\cdot\\text{m}^2", "1.2", "2.1"),
    ("4.5\\,\\mathrm{J\\,K^{-1}\\,mol^{-1}}", "4.5", "5.4"),
])
def test_units_inside_the_box_are_units(box, gold, wrong):
    response = f"Putting the numbers in, the result is\n$$\\boxed{{{box}}}$$"
    assert said(gold, response) is True
    assert said(wrong, response) is not True


@pytest.mark.parametrize("answer,gold", [("2\\mathrm{e}", "2"), ("7\\mathrm{i}", "7")])
def test_a_constant_in_roman_type_is_no_unit(answer, gold):
    assert said(gold, f"$\\boxed{{{answer}}}$") is not True


# --- kind 5: notation that names the same thing -----------------------------------------------------

@pytest.mark.parametrize("answer,gold", [
    ("y = c\\,e^{2x}", "y = C e^{2x}"), ("y = c_1 e^{x} + c_2 e^{-x}", "y = C_1 e^{x} + C_2 e^{-x}"),
    ("\\ln|x| + c", "\\ln|x| + C"), ("I(t) = I(0)\\, e^{-t/\\tau}", "I(t) = I_0 e^{-t/\\tau}"),
    ("N(t) = N_0 e^{-\\lambda t}", "N(t) = N(0) e^{-\\lambda t}"), ("xy = 1", "y = \\frac{1}{x}"),
])
def test_another_name_for_the_same_thing(answer, gold):
    assert said(gold, f"Solving gives\n$$\\boxed{{{answer}}}$$") is True


@pytest.mark.parametrize("answer,gold", [
    ("y = c\\,e^{-2x}", "y = C e^{2x}"), ("y = C e^{2x} + 1", "y = C e^{2x}"), ("y = c_1 e^{x} + c_2 e^{x}", "y = C_1 e^{x} + C_2 e^{-x}"),
    ("I(t) = I(0)\\, e^{t/\\tau}", "I(t) = I_0 e^{-t/\\tau}"), ("xy = 2", "y = \\frac{1}{x}"), ("xy = x^2", "y = x"),
    ("y = \\sqrt{4 - x^2}", "x^2 + y^2 = 4"), ("v(0) + at", "v_0 + at"), ("x + c + C", "x + C"),
])
def test_near_misses_of_another_name_stay_apart(answer, gold):
    # 'xy = x^2' holds on the whole y-axis, 'y = x' does not; half a circle is not the circle; v(0)
    # is renamed only where v is also a function; c beside C is a second constant
    assert said(gold, f"$$\\boxed{{{answer}}}$$") is not True
