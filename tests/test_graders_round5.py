"""Issue 32, round five: what the fresh batch (tests/grader_cases/issue32_round5.jsonl) found at
first sight, and the three leftovers of parts A and B. Each test failed on the graders before
round five (2c2f530). The invariants over generated wordings are in
tests/test_graders_answer_shapes.py; this file holds the rules, each with its near misses.
"""
from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from evalsuite.graders import grade, infer_kind
from evalsuite.graders.normalise import normalise

CASES = Path(__file__).parent / "grader_cases"
FLOUR = "Each loaf needs 2 kg of flour, and she bakes 7 loaves: 2 * 7 = 14.\n"
EGGS = "Janet sells 16 - 3 - 4 = 9 duck eggs a day.\nShe makes 9 * 2 = 18 dollars every day.\n"


def said(gold: str, response: str, kind: str | None = "numeric") -> bool | None:
    return grade(gold, response, kind).equal


# --- numeric statements -----------------------------------------------------------------------

@pytest.mark.parametrize("ending", ["Final answer: Rs. 18", "That is Rs. 18 per day.", "Total: Nr. 18",
                                    "The answer is Vol. 18"])
def test_a_full_stop_after_a_short_abbreviation_before_a_number_ends_no_sentence(ending):
    # 'Rs. 18' was cut after 'Rs.' and read as the answer 'Rs'
    assert said("18", EGGS + ending) is True
    assert said("9", EGGS + ending) is not True


@pytest.mark.parametrize("ending", ["She needs 14 kg. 7 loaves in all.", "It takes 3 bolts. 2 of them are white."])
def test_a_full_stop_after_a_unit_still_ends_a_sentence(ending):
    # the rule is for a capitalised abbreviation of two or three letters, not a word before a number
    assert said("14" if "14" in ending else "3", FLOUR + ending) is not True


@pytest.mark.parametrize("ending", ["14 ist es jedenfalls nicht.", "14 is het zeker niet.", "14, c'est sûrement pas.",
                                    "14 kg she does not.", "14? Nein, das stimmt nicht."])
def test_a_negation_that_ends_its_clause_rejects_the_value_before_it(ending):
    assert said("14", FLOUR + ending) is not True


@pytest.mark.parametrize("ending", ["She needs 14 kg and not a gram more.", "14 kg, not less."])
def test_a_negation_followed_by_words_is_no_rejection_of_the_value_before(ending):
    # 'and not a gram more': the negation governs words after it; the value before stands
    # (a precision rule only: these pairs may be refused, never the wrong value accepted)
    assert said("7", FLOUR + ending) is not True


@pytest.mark.parametrize("ending,gold", [
    ("Antwort: 14.\nAlso nochmal: 16 kg.", "14"), ("Antwort: 14.\nAlso nochmal: 16 kg.", "16"),
    ("The answer is 14.\nIn short: 16 kg.", "14"), ("Answer: 14\n\n**Result:** 12", "14"),
])
def test_a_later_label_line_with_another_value_is_a_second_answer(ending, gold):
    assert said(gold, FLOUR + ending) is not True


@pytest.mark.parametrize("ending", ["Antwort: 14.\nAlso nochmal: 14 kg.", "The answer is 14.\nIn short: 14 kg.",
                                    "Answer: 14\n\nCheck: 7 × 2 = 14 ✓", "Answer: 14 kg\nVerification: 14 / 2 = 7 loaves.",
                                    "Answer: 14\nConfidence: 90%"])
def test_a_later_label_line_with_the_same_value_or_working_keeps_the_answer(ending):
    assert said("14", FLOUR + ending) is True


# --- choice letters ----------------------------------------------------------------------------

@pytest.mark.parametrize("response,right,wrong", [
    ("C is not right, D is.", "D", "C"),
    ("C n'est pas juste ; c'est D.", "D", "C"),
    ("C stimmt nicht, D stimmt.", "D", "C"),
    ("C isn't it; D is.", "D", "C"),
    ("B klopt niet, C klopt wel.", "C", "B"),
])
def test_a_negation_in_the_clause_after_a_letter_rejects_it(response, right, wrong):
    text = "Let's compute 6 × 7 = 42.\n" + response
    assert said(right, text, "choice") is True
    assert said(wrong, text, "choice") is not True


@pytest.mark.parametrize("response", ["The answer is C, not D.", "C, which is 42.", "C is the right one.", "Answer: C"])
def test_a_letter_with_no_negation_in_its_clause_is_still_chosen(response):
    assert said("C", "Let's compute 6 × 7 = 42.\n" + response, "choice") is True


# --- the three leftovers -----------------------------------------------------------------------

def test_normalise_keeps_a_function_apart_from_the_angle_it_takes():
    assert "\\cosBAC" not in normalise("\\cos\\angle BAC").text
    assert re.match(r"\\cos[^A-Za-z]", normalise("\\cos\\angle BAC").text)
    assert said("\\cos\\angle BAC = \\frac{1}{3}", "$\\boxed{\\frac{1}{3}}$", None) is True
    assert said("\\cos\\angle BAC = \\frac{1}{3}", "$\\boxed{\\frac{2}{3}}$", None) is not True
    assert said("\\cos\\angle BAC", "$\\boxed{\\sin \\angle BAC}$", None) is not True
    # no command is glued to the letters after a dropped one
    assert "\\cdotb" not in normalise("\\vec{a}\\cdot\\vec{b}").text


def test_the_norm_of_a_vector_expression_is_a_label_and_vector_products_are_no_number_products():
    assert said("|\\vec{a}+\\vec{b}| = \\sqrt{7}", "$\\boxed{\\sqrt{7}}$", None) is True
    assert said("|\\vec{a}+\\vec{b}| = \\sqrt{7}", "$\\boxed{\\sqrt{5}}$", None) is not True
    assert said("|\\overrightarrow{a}-2\\overrightarrow{b}| = 3", "3", None) is True
    # without the arrows the bars are an absolute value of unknowns: a relation, never its right side
    assert said("|a+b| = \\sqrt{7}", "$\\boxed{\\sqrt{7}}$", None) is not True
    # a cross product is not a dot product, though a product of numbers commutes
    assert said("\\vec{a}\\cdot\\vec{b}", "$\\boxed{\\vec{a}\\times\\vec{b}}$", None) is not True
    assert said("\\vec{a}\\times\\vec{b}", "$\\boxed{\\vec{b}\\times\\vec{a}}$", None) is not True
    assert said("\\vec{a}\\cdot\\vec{b}", "$\\boxed{\\vec{a}\\cdot\\vec{b}}$", None) is True


@pytest.mark.parametrize("gold", ["(11,7)or(7,11)", "(11,7) or (7,11)", "(11, 7) ou (7, 11)"])
def test_an_or_between_brackets_joins_answers_of_a_gold(gold):
    assert infer_kind(gold) == "math"
    assert said(gold, "$\\boxed{(7,11),(11,7)}$", None) is True
    assert said(gold, "$\\boxed{(7,11)}$", None) is not True
    assert said(gold, "$\\boxed{(11,7),(7,12)}$", None) is not True


def test_an_or_between_bare_numbers_makes_no_number():
    # 'or' joins only closed brackets: '2 or 400' never becomes 2,400
    assert said("2400", "Answer: 2 or 400") is not True
    assert infer_kind("2 or 400") != "numeric"


# --- the batches ---------------------------------------------------------------------------------

def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, CASES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["make_issue32_round5", "make_issue32_round5b"])
def test_the_round5_batches_are_written_by_their_scripts_in_words_the_graders_do_not_list(name):
    make = _load(name)
    assert make.main(["--check"]) == 0, f"run python tests/grader_cases/{name}.py"
    listed = set(make.listed_probes()) - set(getattr(make, "LISTED_AT_FIRST_SIGHT", ()))
    assert not listed, f"probe words now lexicon entries (the batch no longer tests generalisation): {listed}"
    rows = [json.loads(line) for line in make.OUT.read_text(encoding="utf-8").splitlines()]
    assert all("first_sight" in r for r in rows) and len(rows) >= 60
    for gold, words in ((r["gold"], r) for r in rows):
        assert isinstance(gold, str) and isinstance(words["equal"], bool)


# Wrong answers the graders still accept, on purpose named here: a negation in a language that no
# lexicon serves ('inte', 'ekki') cannot be told from any other word by structure, and listing the
# batch's words is the defect issue 32 is about (docs/graders.md, "Round five"). The test fails
# when one of them is no longer accepted (take it off the list) or when any other pair is.
KNOWN_FALSE_POSITIVES = {
    ("17", "17 är det inte."),     # Swedish: '17 it is not'
    ("17", "Það er ekki 17."),     # Icelandic: 'it is not 17'
}


@pytest.mark.parametrize("name", ["issue32_round5", "issue32_round5b"])
def test_no_round5_pair_is_a_false_positive_but_the_named_ones(name):
    rows = [json.loads(line) for line in (CASES / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()]
    accepted = {(r["gold"], r["response"].rsplit("\n", 1)[-1]) for r in rows if not r["equal"]
                and grade(r["gold"], r["response"], r["kind"], choices=r.get("choices", ())).equal}
    expected = {k for k in KNOWN_FALSE_POSITIVES if any((r["gold"], r["response"].rsplit("\n", 1)[-1]) == k for r in rows)}
    assert accepted == expected


@pytest.mark.parametrize("response", ["C är fel, D är rätt.", "C: wrong. D: right."])
def test_a_line_that_names_a_second_letter_does_not_open_with_its_answer(response):
    # at first sight both chose C (the leading letter): with words no lexicon holds, neither letter
    assert said("C", "6 × 8 = 48.\n" + response, "choice") is not True


def test_a_letter_after_a_symbol_is_a_unit_not_a_second_option():
    assert said("D", "D. 120 °C\n\nThe other choices (C, B) contradict the given data.", "choice") is True


@pytest.mark.parametrize("ending", ["It is 6~8.", "大约6~8个。"])
def test_a_tilde_between_values_is_a_range(ending):
    from evalsuite.graders import clauses
    reading = clauses.read_statement(ending)
    assert reading is not None and reading.kind == "hedge"


@pytest.mark.parametrize("ending,gold", [("<b>18</b> bushels", "18"), ("So <strong>18</strong>.", "18")])
def test_markup_tags_are_marks(ending, gold):
    assert said(gold, "3 * 6 = 18.\n" + ending) is True
    assert said("19", "3 * 6 = 18.\n" + ending) is not True


@pytest.mark.parametrize("ending,gold,right", [("17 no es.", "17", False), ("17 non è.", "17", False),
                                               ("Portanto, há 40 no total.", "40", True),
                                               ("She has 14 apples and no pears.", "14", True)])
def test_a_negation_with_only_its_verb_after_it_rejects_a_value_that_opens_its_clause(ending, gold, right):
    assert (said(gold, FLOUR + ending) is True) is right


@pytest.mark.parametrize("response,right", [("C: wrong. D: right.", "D"), ("C? Nope. D.", "D"), ("B? Hmm. C.", "C"),
                                            ("Could it be B? Checking: 6 × 7 = 42, so C.", "C")])
def test_a_letter_rejected_after_its_colon_or_asked_before_the_answer_is_not_chosen(response, right):
    text = "6 × 8 = 48.\n" + response
    assert said(right, text, "choice") is True
    for other in "BCD".replace(right, ""):
        assert said(other, text, "choice") is not True


def test_a_glued_negation_inside_a_word_denies_no_letter():
    assert said("B", "这道题选B没错。", "choice") is True   # 没错: 'no mistake', not 错
