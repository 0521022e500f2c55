"""Issue 32 part B: equivalence pairs. Labelled golds whose label is a length, a norm or a ratio
of segments; points written with ';'; sums and products with symbolic bounds (parsed, compared
under the same bound variable, evaluated by sympy in the worker); inverse trig names; a function
of a named angle. Each failed on the graders before this round (first sight in docs/graders.md,
"Equivalence pairs, round four").
"""
from __future__ import annotations

import pytest

from evalsuite.graders import grade
from evalsuite.graders.parse import parse_expression, symbols_of
from evalsuite.graders.structure import Labelled, parse_value


def equal(gold: str, answer: str) -> bool | None:
    return grade(gold, answer).equal


# --- the examples of the issue -------------------------------------------------------------

@pytest.mark.parametrize("gold,answer", [
    ("|PQ| = 7", "7"),
    ("\\frac{AE}{EC} = \\frac{2}{3}", "\\frac{2}{3}"),
    ("$(1;2),(3;4)$", "\\boxed{(3,4),(1,2)}"),
    ("\\sum_{i=1}^{n} a_i b_i", "\\sum_{i=1}^{n} b_i a_i"),
])
def test_the_issues_equivalence_pairs(gold, answer):
    assert equal(gold, answer) is True


def test_a_relation_between_unknowns_still_never_equals_a_value():
    for gold, answer in [("x + y = 3", "3"), ("|x| = 3", "3"), ("\\frac{x}{y} + 1 = 3", "3"), ("|2x - 1| = 3", "3"),
                         ("x^2 = 4", "4"), ("\\frac{a+b}{c} = 2", "2"), ("|x| + |y| = 1", "1")]:
        assert equal(gold, answer) is not True, gold


# --- labels: lengths, norms, ratios of segments -------------------------------------------

@pytest.mark.parametrize("gold,answer", [
    ("|AB| = 2\\sqrt{5}", "\\sqrt{20}"),
    ("\\|\\mathbf{v}\\| = 5", "5"),
    ("|\\overrightarrow{AB}| = 3", "3"),
    ("\\frac{BD}{DC} = 2", "2"),
    ("\\frac{|PF_1|}{|PF_2|} = 3", "3"),
    ("\\frac{S_1}{S_2} = \\frac{1}{4}", "0.25"),
    ("\\frac{AM}{MB} = \\frac{1}{3}", "1:3"),
    ("\\frac{AE}{EC} = \\frac{2}{3}", "AE:EC = 2:3"),
    ("\\cos\\angle BAC = \\frac{1}{3}", "\\frac13"),
])
def test_a_measure_or_ratio_label_equals_its_value(gold, answer):
    assert equal(gold, answer) is True


@pytest.mark.parametrize("gold,answer", [
    ("|PQ| = 7", "49"), ("\\frac{AE}{EC} = \\frac{2}{3}", "\\frac{3}{2}"), ("\\frac{AM}{MB} = \\frac{1}{3}", "3:1"),
    ("\\frac{AE}{EC} = \\frac{2}{3}", "\\frac{AE}{AC} = \\frac{2}{3}"), ("|PQ| = 7", "|PQ| = 8"),
])
def test_near_misses_of_the_measure_labels(gold, answer):
    assert equal(gold, answer) is not True


def test_the_label_is_read_as_the_measure():
    assert parse_value("|PQ| = 7") == parse_value("|PQ|=7")
    label = parse_value("\\frac{PA}{PB} = \\frac12")
    assert isinstance(label, Labelled) and label.label == "PA:PB"
    assert not isinstance(parse_value("\\frac{x}{y} = 2"), Labelled)  # unknowns: a relation


# --- points with ';' -------------------------------------------------------------------------

@pytest.mark.parametrize("gold,answer,expected", [
    ("(1;2)", "(1, 2)", True), ("(1;2)", "(2, 1)", False), ("(0;0;0)", "(0, 0, 0)", True),
    ("(0;0;0)", "(0,0)", False), ("(-1;3),(2;0)", "(2,0), (-1,3)", True), ("(-1;3),(2;0)", "(-1,3)", False),
    ("(1;2)", "\\{1, 2\\}", False), ("(\\frac{1}{2};3)", "(0.5, 3)", True),
])
def test_points_written_with_semicolons_are_tuples(gold, answer, expected):
    assert (equal(gold, answer) is True) is expected


# --- sums and products with symbolic bounds --------------------------------------------------

@pytest.mark.parametrize("gold,answer", [
    ("\\sum_{i=1}^{n} i", "\\sum_{j=1}^{n} j"),                        # another bound letter
    ("\\sum_{k=1}^{n} k", "\\frac{n(n+1)}{2}"),                        # sympy's closed form
    ("\\sum_{k=1}^{n} k^2", "\\frac{n(n+1)(2n+1)}{6}"),
    ("\\sum_{k=0}^{n} 2^k", "2^{n+1} - 1"),
    ("\\prod_{i=1}^{n} x_i y_i", "\\prod_{i=1}^{n} y_i x_i"),
    ("\\sum_{i=1}^{n} 2a_i", "2\\sum_{i=1}^{n} a_i"),
    ("\\sum\\limits_{i=1}^{n} a_i b_i", "\\sum_{i=1}^{n} b_ia_i"),
    ("\\sum_{i=1}^{3} a_i", "a_1 + a_2 + a_3"),                        # numeric bounds: the terms indexed
])
def test_sums_compare_their_summands_under_the_same_bounds(gold, answer):
    assert equal(gold, answer) is True


@pytest.mark.parametrize("gold,answer", [
    ("\\sum_{i=1}^{n} a_i b_i", "\\sum_{i=1}^{n} a_i"), ("\\sum_{i=1}^{n} a_i b_i", "\\sum_{i=1}^{m} a_i b_i"),
    ("\\sum_{k=1}^{n} k^2", "\\sum_{k=2}^{n} k^2"), ("\\sum_{k=0}^{n} 2^k", "2^{n} - 1"),
    ("\\prod_{i=1}^{n} x_i", "\\sum_{i=1}^{n} x_i"), ("\\sum_{i=1}^{3} a_i", "3a_1"),
])
def test_sums_that_differ_are_never_equal(gold, answer):
    assert equal(gold, answer) is not True


def test_a_bound_variable_is_not_a_free_symbol_and_alpha_renaming_is_the_same_tree():
    node = parse_expression("\\sum_{i=1}^{n} a_i b_i")
    assert symbols_of(node) == {"n"}
    assert parse_expression("\\sum_{i=1}^{n} i^2") == parse_expression("\\sum_{t=1}^{n} t^2")
    nested = parse_expression("\\sum_{i=1}^{n}\\sum_{j=1}^{i} j")
    assert nested == parse_expression("\\sum_{p=1}^{n}\\sum_{q=1}^{p} q")


def test_a_sum_sympy_cannot_settle_is_undecided_within_the_deadline():
    v = grade("\\sum_{k=1}^{n} k^{k}", "n^n", deadline_s=2)
    assert v.equal is not True


# --- names of functions ----------------------------------------------------------------------

@pytest.mark.parametrize("gold,answer,expected", [
    ("\\frac{\\pi}{6}", "\\sin^{-1}\\frac{1}{2}", True), ("\\frac{\\pi}{4}", "\\tan^{-1}(1)", True),
    ("\\frac{\\pi}{3}", "\\cos^{-1}\\frac12", True), ("\\frac{\\pi}{6}", "\\sin^{-1}\\frac{\\sqrt{3}}{2}", False),
])
def test_an_inverse_trig_name_is_the_inverse_function(gold, answer, expected):
    assert (equal(gold, answer) is True) is expected
