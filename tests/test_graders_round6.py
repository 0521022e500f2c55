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


# --- kind 1: the answer inside a JSON object, or on the line after its cue ------------------------

BOXES = "There are 9 boxes and each box holds 3 pens, so 9 × 3 = 27 pens.\n\n"


@pytest.mark.parametrize("ending", [
    'The final answer is:\n\n```json\n{"reasoning": "9 boxes of 3", "answer": "27"}\n```',
    '```json\n{\n  "steps": ["9 boxes", "3 pens each"],\n  "answer": 27\n}\n```',
    '{"final_answer": "27", "confidence": "high"}',
    "#### Final Answer\n27",
])
def test_a_json_answer_field_or_the_line_after_a_cue(ending):
    assert said("27", BOXES + ending, "numeric") is True
    assert said("26", BOXES + ending, "numeric") is not True


def test_the_json_answer_field_is_read_not_its_reasoning():
    reply = BOXES + '```json\n{"reasoning": "27 would be 9 x 3, but one box is empty", "answer": "24"}\n```'
    assert said("27", reply, "numeric") is not True and said("24", reply, "numeric") is True
    empty = grade("27", BOXES + '```json\n{"answer": null}\n```', "numeric")
    assert empty.equal is not True and empty.extracted is None and "JSON" in empty.reason


def test_a_json_object_is_parsed_by_the_standard_library_bounded():
    from evalsuite.graders.region import MAX_JSON, json_answer
    assert json_answer('x {"answer": "5", "a": {"answer": "6"}} y')[2] in ("5", "6")
    huge = '{"answer": "5", "pad": "' + "x" * (2 * MAX_JSON) + '"}'
    assert json_answer(huge) is None  # larger than the bound: not parsed
    assert json_answer('{"answer": true}') is None and json_answer("{not json}") is None
    # LaTeX written with one backslash inside a JSON string ('\\f' would be a form feed)
    assert said("\\frac{3}{4}", 'Here it is:\n{"answer": "\\frac{3}{4}", "work": "x^2 = 9"}') is True


# --- kind 2: the answer stated first, then the explanation of the other options ---------------------

LETTERS = ["1", "2", "3", "4"]


@pytest.mark.parametrize("reply,gold,other", [
    ("答案：B\n\n解析：选项A中的说法不对，故A错误；选项C与题意不符，C错误；选项D也不满足条件。", "B", "C"),
    ("Answer: C\n\nExplanation: Option A mixes up cause and effect. Option B overstates the passage's claim, "
     "and D brings in something the author never says.", "C", "B"),
    ("The correct choice is C.\n\nA would require the current to double, B ignores the resistance, and D has the wrong unit.", "C", "B"),
])
def test_an_answer_stated_first_is_not_undone_by_its_explanation(reply, gold, other):
    assert said(gold, reply, "choice", choices=LETTERS) is True
    assert said(other, reply, "choice", choices=LETTERS) is not True


# --- kind 6: a stated answer disowned later ----------------------------------------------------------

OPTS10 = [str(n) for n in range(10, 20)]


@pytest.mark.parametrize("reply,kind,choices,disowned,final", [
    ("The answer is (G).\n\nLet me double-check G: if it were 16, the remainder would be 4, which fails the second "
     "condition. So G does not work after all; the value must be 17, which is (H).", "choice", OPTS10, "G", "H"),
    ("The answer is B.\n\nHmm, on reflection B can't be it: the passage says the opposite. Going back over the options, "
     "D fits best.", "choice", LETTERS, "B", "D"),
    ("The answer is 12.\n\nVerifying: 12 × 3 = 36, but the total should be 39, so 12 falls short. "
     "Redoing the division, 39 / 3 = 13 per bag.", "numeric", (), "12", "13"),
    ("The answer is 12.\n\nChecking: 12 × 3 = 36, so 12 is wrong. The bags hold 39 in all.", "numeric", (), "12", None),
])
def test_a_stated_answer_disowned_later_is_not_given(reply, kind, choices, disowned, final):
    assert said(disowned, reply, kind, choices=choices) is not True
    if final is not None:
        assert said(final, reply, kind, choices=choices) is True


@pytest.mark.parametrize("reply,kind,choices,gold", [
    ("The answer is (G).\n\nChecking G: 16 leaves a remainder of 1 when divided by 3, exactly as required. So (G) holds.",
     "choice", OPTS10, "G"),
    ("The answer is 12.\n\nVerifying: 12 × 3 = 36, and 36 is indeed the total. ✓", "numeric", (), "12"),
])
def test_a_check_that_confirms_the_stated_answer_keeps_it(reply, kind, choices, gold):
    assert said(gold, reply, kind, choices=choices) is True


# --- kind 7: rounded decimal golds, a policy --------------------------------------------------------

@pytest.mark.parametrize("gold,answer,rounded", [
    ("20.39", "20.385", True), ("4.5", "4.47", True), ("6.2\\times 10^{-3}", "0.00618", True),
    ("20.39", "20.385", False), ("4.5", "4.47", False), ("4.5", "4.44", True), ("12", "12.4", True), ("12.4", "12", True),
])
def test_rounded_golds_are_a_policy_and_maths_stays_exact(gold, answer, rounded):
    expected = rounded and (gold, answer) in (("20.39", "20.385"), ("4.5", "4.47"), ("6.2\\times 10^{-3}", "0.00618"))
    assert said(gold, f"The answer is {answer}.", rounded_golds=rounded) is expected


def test_a_users_file_declares_its_golds_rounded(tmp_path):
    import json

    from evalsuite.tasks import open_pack
    from evalsuite.tasks.pack import LoadOptions

    (tmp_path / "q.jsonl").write_text(json.dumps({"question": "Flux?", "answer": "20.39"}) + "\n", encoding="utf-8")
    (tmp_path / "q.toml").write_text('data = "q.jsonl"\nkind = "numeric"\nrounded_golds = true\n', encoding="utf-8")
    (tmp_path / "exact.toml").write_text('data = "q.jsonl"\nkind = "numeric"\n', encoding="utf-8")
    for name, expected in (("q.toml", True), ("exact.toml", False)):
        pack = open_pack(str(tmp_path / name))
        item = pack.load(LoadOptions())[0]
        assert pack.rounded_golds is expected
        assert pack.grade(item, "The answer is 20.385").equal is expected


# --- a real model's own replies (tests/grader_cases/smollm2_real.jsonl) -----------------------------

OPTIONS = ["冲突规范", "外国人民事法律地位规范", "程序规范", "国际统一实体规范"]


@pytest.mark.parametrize("reply", [
    "A. 冲突规范\n\nA. 冲突规范\n\nB. 外国人民事法律地位规范\n\nC. 程序规范\n\nD. 国际统一实体规范",
    "A. 冲突规范\nB. 外国人民事法律地位规范\nC. 程序规范\nD. 国际统一实体规范\n\nA. 冲突规范\nB",
    "选择：A. 冲突规范\nB. 外国人民事法律地位规范\nC. 程序规范\nD. 国际统一实体规范",
])
def test_a_reply_that_writes_the_options_out_chooses_none(reply):
    # main read the first line 'A. …' of an echoed option list as the choice A
    assert said("A", reply, "choice", choices=OPTIONS) is not True


def test_a_reply_cycling_through_the_options_under_its_cues_chooses_none():
    reply = "\n\n".join(f"选择：{letter}. {OPTIONS[ord(letter) - 65]}" for letter in "CCDCDCDCDC")
    assert said("C", reply, "choice", choices=OPTIONS) is not True
    assert said("D", reply, "choice", choices=OPTIONS) is not True
    corrected = "The answer is:\nC.\n\nThe last line of the text is incorrect. The correct answer is:\nD."
    assert said("D", corrected, "choice", choices=OPTIONS) is True


@pytest.mark.parametrize("reply,gold", [("A. 冲突规范", "A"), ("A", "A"), ("选项字母：A\n\nA. 冲突规范", "A")])
def test_a_reply_of_one_option_still_chooses_it(reply, gold):
    assert said(gold, reply, "choice", choices=OPTIONS) is True


def test_the_left_side_of_working_written_on_is_no_final_answer():
    # main accepted the question's own |(1-i)^8| (= 16) from a reply that never states a value
    reply = "First, we calculate \\[|(1-i)^8|\\] by squaring it:\n\n\\[|(1-i)^8|\\] = (1-i)^8 = 1-i^8 = 1-i^8i^2 = 1-i^16i^3"
    assert said("16", reply) is not True


def test_the_real_replies_are_read_as_they_state():
    import json
    from pathlib import Path

    rows = [json.loads(line) for line in (Path(__file__).parent / "grader_cases" / "smollm2_real.jsonl").read_text(
        encoding="utf-8").splitlines()]
    said_equal = [grade(r["gold"], r["response"], r["kind"], choices=r.get("choices", ())).equal is True for r in rows]
    false_positives = sum(s and not r["equal"] for s, r in zip(said_equal, rows))
    false_negatives = sum(r["equal"] and not s for s, r in zip(said_equal, rows))
    assert len(rows) == 576 and false_positives <= 2 and false_negatives <= 2  # first sight: 39 and 3


# --- the second batch (round6_formats_b): what its first sight found ---------------------------------

def test_a_later_choice_of_another_letter_takes_the_stated_one_back():
    reply = "Final answer: C\n\nActually, rereading the question, C only covers the first case; D covers both, so I'll go with D."
    assert said("D", reply, "choice", choices=LETTERS) is True and said("C", reply, "choice", choices=LETTERS) is not True


def test_a_letter_called_the_one_opens_an_answer_first_reply():
    reply = "B is the one.\n\nA is ruled out by the second sentence, C contradicts the graph, and D overgeneralizes."
    assert said("B", reply, "choice", choices=LETTERS) is True and said("A", reply, "choice", choices=LETTERS) is not True


def test_a_correction_followed_by_its_working_gives_the_working_s_value():
    reply = "The answer is 42.\n\nHmm, 42 isn't right: I forgot the 6 that were returned. 42 + 6 = 48."
    assert said("48", reply, "numeric") is True and said("42", reply, "numeric") is not True and said("6", reply, "numeric") is not True
    assert said("16", "The answer is 14. Wait, no: it's 16.", "numeric") is True


def test_a_cube_root_written_with_a_superscript_index():
    assert said("\\sqrt[3]{4}", "Hence r = ³√4.") is True and said("\\sqrt{4}", "Hence r = ³√4.") is not True


# --- a statement in a language the function words do not know: undecided, never asserted ----------

SWAHILI = ("Swali hili linahusu mayai ya bata. Kila siku bata hutaga mayai kumi na sita, halafu Janeti hula mayai matatu "
           "asubuhi na huoka mikate kwa mayai manne. ")


def test_a_statement_in_an_unknown_language_is_undecided_not_asserted():
    # 'Jibu si 14' is 'the answer is not 14': main read 14 and said equal
    for ending in ("Jibu si 14.", "Jibu ni 14."):
        v = grade("14", SWAHILI + ending, "numeric")
        assert v.equal is None and "cannot place" in v.reason
    assert said("14", SWAHILI + "14") is True  # a bare value needs no words placed
    assert said("18", "Janet sells 16 - 3 - 4 = 9 duck eggs a day.\nShe makes 9 * 2 = $18 every day at the market.\n"
                      "Η απάντηση είναι 18 δολάρια.", "numeric") is True  # the working's language is known
