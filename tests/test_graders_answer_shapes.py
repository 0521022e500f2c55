"""Issue 32, part A: the reading of a final answer written in prose.

Two kinds of tests. The examples of the issue (and the shapes its brief names), each written by
hand over a few lines of real GSM8K working. And the metamorphic generators of
tests/answer_shapes.py: real GSM8K working with a generated final sentence, graded against
invariants that hold whatever the sentence's unit, language or order (hypothesis draws them,
seeded and bounded so that CI stays fast), and a labelled sweep over every shape and language.

Regression tests of the lexicons, not tests of generalisation: 243 of the 256 contrast, hedge,
bound and correction templates of tests/answer_shapes.py, and every template of
tests/grader_cases/choice_generators.py, use a word of graders/words/ (issue 43). They are marked
`lexicon_regression` (`pytest -m "not lexicon_regression"` leaves them out); the estimate for
replies written elsewhere comes from the first-sight batches and the real replies
(tests/grader_cases/round6_*.jsonl, smollm2_real.jsonl).
"""
from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.lexicon_regression

import answer_shapes as shapes
from evalsuite.graders import clauses, grade, words

# a few lines of GSM8K's own working (test/0), before the final sentence
WORKING = ("Janet sells 16 - 3 - 4 = 9 duck eggs a day.\n"
           "She makes 9 * 2 = $18 every day at the farmer’s market.\n")


def said(gold: str, response: str, kind: str | None = "numeric") -> bool | None:
    return grade(gold, response, kind).equal


def right(gold: str, sentence: str, working: str = WORKING) -> bool:
    return said(gold, working + sentence) is True


# --- every example of the issue (each failed on the graders before it) ---------------------------

@pytest.mark.parametrize("sentence", ["The answer is 14 jars.", "The answer is 14 jars, not 12 jars."])
def test_a_unit_after_the_number_is_a_unit_whatever_the_noun(sentence):
    assert right("14", sentence)
    assert right("14", sentence.replace("jars", "zorvels"))
    assert not right("12", sentence)


@pytest.mark.parametrize("sentence,stated,rejected", [
    ("The answer is 14 jars, not 12 jars.", "14", "12"),
    ("The total is 30 dollars, not 25.", "30", "25"),
    ("Réponse : 7 livres, et non 9.", "7", "9"),
    ("所以小明还剩15元，不是12元。", "15", "12"),       # the 是 inside 不是 is no answer cue
    ("अतः उत्तर 14 है, 12 नहीं।", "14", "12"),         # Hindi: the negation follows the value
    ("Die Antwort ist 14, nicht 12.", "14", "12"),
    ("La respuesta es 14, no 12.", "14", "12"),
])
def test_the_asserted_value_of_a_contrast_is_the_answer_not_the_last_number(sentence, stated, rejected):
    assert right(stated, sentence), sentence
    assert not right(rejected, sentence), sentence


def test_a_hedge_is_not_an_answer_and_no_normalisation_makes_a_number_the_response_did_not_write():
    for gold in ("6", "8"):
        assert not right(gold, "It is 6 or 8.")
    for gold in ("2400", "2", "400"):
        assert not right(gold, "Answer: 2 or 400")
    assert said("2400", "2 or 400") is not True
    assert said("2400", "2 and 400") is not True


@pytest.mark.parametrize("sentence,gold,part", [("The answer is thirty-four.", "34", "4"),
                                                ("The answer is one hundred twenty.", "120", "20")])
def test_number_words_are_read_whole(sentence, gold, part):
    assert right(gold, sentence)
    assert not right(part, sentence)  # the graders before read 4 and 20


@pytest.mark.parametrize("response", ["इसलिए कुल 20 किताबें हैं।", "Επομένως, υπάρχουν 20 βιβλία.", "Итак, всего 20 книг.",
                                      "ดังนั้น ทั้งหมดมี 20 เล่ม"])
def test_any_script_is_prose_alone_or_after_working(response):
    assert said("20", response) is True
    assert right("20", response)
    assert said("21", response) is not True


def test_chat_template_debris_ends_the_response():
    next_turn = "<|im_end|>\n<|im_start|>user\nJim has 3 cats and 9 dogs. How many pets does he have?"
    assert right("14", "So Tom needs 14 jars." + next_turn)
    assert not right("9", "So Tom needs 14 jars." + next_turn)
    answered = "The answer is 14.\n<|im_start|>user\nAnd with 2 more jars?\n<|im_start|>assistant\nThe answer is 16."
    assert right("14", answered) and not right("16", answered)


# --- the shapes the brief names beside the issue's ---------------------------------------------

@pytest.mark.parametrize("sentence", [
    "$14", "The total is $14.", "It costs 14 €.", "It costs €14.", "**14**", "The answer is **14** jars.", "14 (fourteen)",
    "fourteen (14)", "So she has a total of 14 jars.", "14 is the answer.", "The answer is 14. I hope this helps!",
    "14? No wait — 16. Hmm, no: 14.", "Rather than 12, it's 14.", "It's 14 instead of 12.", "Not 12 but 14.",
    "The answer is approximately 14.", "About 14 jars.", "The answer is fourteen.", "Ответ: четырнадцать.",
    "La réponse est quatorze.", "Die Antwort ist vierzehn.", "La respuesta es catorce.", "答案是十四个。", "答えは十四個です。",
    "所以一共有14个苹果。", "정답은 14개입니다.", "The answer is 14 cups of flour.", "So the answer is $14.00.",
])
def test_one_asserted_value_is_the_answer(sentence):
    assert right("14", sentence), sentence
    assert not right("12", sentence) and not right("16", sentence), sentence


@pytest.mark.parametrize("sentence,gold", [
    ("The answer is 25%.", "25"), ("Die Antwort ist 1.234,5 Euro.", "1234.5"), ("The answer is 1,234,567.", "1234567"),
    ("La réponse est 1 234 567 euros.", "1234567"), ("Die Antwort ist 1'234 Franken.", "1234"),
    ("उत्तर 12,34,567 रुपये है।", "1234567"), ("La respuesta es 2,5 litros.", "2.5"), ("The answer is -14.", "-14"),
    ("The temperature is −14 degrees.", "-14"), ("所以一共有一百二十元。", "120"), ("答案是十五。", "15"),
    ("Ответ: сто двадцать рублей.", "120"), ("La réponse est quatre-vingt-dix-sept.", "97"),
    ("Die Antwort ist dreiundzwanzig Äpfel.", "23"), ("La respuesta es ciento veinte.", "120"),
    ("The answer is ١٤.", "14"), ("उत्तर १४ है।", "14"), ("คำตอบคือ ๑๔ ชิ้น", "14"), ("答案是１４个。", "14"),
    ("So she ends up with 2.5 million dollars.", "2500000"), ("所以共有3万人。", "30000"),
])
def test_numbers_in_other_conventions_scripts_and_words(sentence, gold):
    assert right(gold, sentence), sentence
    off = str(float(gold) + 1).removesuffix(".0")
    assert not right(off, sentence), sentence


@pytest.mark.parametrize("sentence", [
    "The answer is 14 or 16.", "It is either 14 or 16.", "The answer is between 14 and 16.", "Somewhere from 14 to 16.",
    "The answer is 14 jars and 16 jars.", "At least 14.", "The answer is more than 14.", "14 dollars and 50 cents",
    "The answer is not 14.", "La réponse n'est pas 14.", "答案不是14。", "It's 14 or maybe 16 jars.",
    "The answer is 14. Wait, no: it's 16.", "14? No wait — 16.",
])
def test_hedges_bounds_negations_and_corrections_never_accept_14(sentence):
    assert not right("14", sentence), sentence


# --- the metamorphic generators ----------------------------------------------------------------

WORKINGS = shapes.load_workings()
LANGUAGES = sorted(shapes.LANGS)
FAST = settings(max_examples=60, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def case_of(rng: random.Random, shape: str, code: str) -> shapes.ShapeCase | None:
    return shapes.make_case(rng, rng.choice(WORKINGS), code, shape)


@FAST
@given(seed=st.integers(0, 2**32 - 1), code=st.sampled_from(LANGUAGES), shape=st.sampled_from(["unit", "unit-made-up"]))
def test_the_same_answer_with_any_unit_gives_the_same_verdict(seed, code, shape):
    # the same working, template and value (the same seed); only the unit differs
    verdicts = set()
    for k in range(3):
        noun_rng = random.Random(seed * 7 + k)
        unit = shapes.made_up_word(noun_rng, code) if shape == "unit-made-up" else shapes.pick_noun(noun_rng, shapes.LANGS[code])
        rng = random.Random(seed)
        case = shapes.make_case(rng, rng.choice(WORKINGS), code, shape, unit=unit)
        verdict = said(case.gold, case.response) is True
        assert verdict == case.equal, (case.gold, case.sentence)
        verdicts.add(verdict)
    assert len(verdicts) == 1


@FAST
@given(seed=st.integers(0, 2**32 - 1), code=st.sampled_from(LANGUAGES))
def test_gold_not_wrong_is_right_and_wrong_not_gold_is_wrong_in_both_orders(seed, code):
    for shape, expected in (("contrast-gold-first", True), ("contrast-wrong-first", False),
                            ("contrast-gold-last", True), ("contrast-wrong-last", False)):
        case = case_of(random.Random(seed), shape, code)
        assert case.equal is expected
        assert (said(case.gold, case.response) is True) is expected, (shape, case.gold, case.sentence)


@FAST
@given(seed=st.integers(0, 2**32 - 1), code=st.sampled_from(LANGUAGES))
def test_any_hedge_between_two_values_is_not_right(seed, code):
    case = case_of(random.Random(seed), "hedge", code)
    assert said(case.gold, case.response) is not True, case.sentence
    for value in __import__("re").findall(r"\d+(?:[.,]\d+)?", case.sentence):
        assert said(value.replace(",", "."), case.response) is not True, (value, case.sentence)


@FAST
@given(seed=st.integers(0, 2**32 - 1), code=st.sampled_from(LANGUAGES),
       shape=st.sampled_from(["unit", "bare", "contrast-gold-first", "contrast-wrong-last", "hedge", "number-words"]),
       debris=st.sampled_from(shapes.DEBRIS), other=st.integers(0, 10**6))
def test_appending_template_debris_never_changes_the_verdict(seed, code, shape, debris, other):
    case = case_of(random.Random(seed), shape, code)
    if case is None:
        return
    continuation = debris.format(q=WORKINGS[other % len(WORKINGS)].question, n=case.gold)
    assert said(case.gold, case.response + continuation) == said(case.gold, case.response), continuation


@FAST
@given(seed=st.integers(0, 2**32 - 1), code=st.sampled_from(["ar", "hi", "th", "zh", "ja"]),
       shape=st.sampled_from(["unit", "bare", "contrast-gold-first", "contrast-wrong-first"]))
def test_digits_in_another_script_read_the_same(seed, code, shape):
    import re
    case = case_of(random.Random(seed), shape, code)
    digits = shapes.LANGS[code].digits
    own = case.sentence.translate(str.maketrans("0123456789", digits))
    head = case.response[: len(case.response) - len(case.sentence)]
    assert said(case.gold, head + own) == said(case.gold, case.response), own
    assert (said(case.gold, head + own) is True) == case.equal, own
    assert re.search(r"[0-9]", own) is None


# shapes the graders do not read (docs/graders.md says why): only their false positives count there.
# Vietnamese and Indonesian single number words that are words of other languages too ('ba',
# 'lima'), alone, are not read (words.AMBIGUOUS).
NOT_READ: set[tuple[str, str]] = set()


def test_every_generated_shape_in_every_language_is_graded_as_labelled():
    cases = shapes.generate(seed=32, per_cell=4)
    assert {c.language for c in cases} == set(shapes.LANGS) and len(shapes.LANGS) >= 10
    assert {c.shape for c in cases} == set(shapes.SHAPES)
    wrong = []
    for case in cases:
        verdict = grade(case.gold, case.response, "numeric")
        unread = (case.shape, case.language) in NOT_READ or case.shape.startswith("number") and any(
            w in case.sentence.lower().split() for w in words.AMBIGUOUS)
        if (verdict.equal is True) != case.equal and (not unread or not case.equal):
            wrong.append(f"[{case.shape}/{case.language}] {'+' if case.equal else '-'} {case.gold} vs {case.sentence!r} "
                         f"-> {verdict.equal} {verdict.extracted!r} {verdict.reason[:80]}")
    assert not wrong, "\n".join(wrong[:40])


# svg.py reads SVG attributes by name (`points` is a polyline's attribute, not a unit)
NOT_CHECKED = {"svg.py", "svg_stats.py"}


def test_no_grader_module_keeps_a_list_of_nouns_or_of_scripts():
    """The units the generators draw (nouns of GSM8K's questions) are not listed in any grader
    module, and no module tells a script by a range of its letters (Unicode categories do)."""
    import re
    import unicodedata
    from pathlib import Path

    nouns = shapes.question_nouns()
    assert len(nouns) >= 100 or not shapes.gsm8k_path().exists() and len(nouns) >= 40
    folder = Path(shapes.REPO) / "graders"
    for path in sorted(folder.rglob("*.py")):
        if path.name in NOT_CHECKED:
            continue
        source = path.read_text(encoding="utf-8")
        # a list of nouns: string literals that are one word each ("jars",) or regex alternations (jars|cups)
        literals = set(re.findall(r'"([a-z]+)"(?!\s*:)', source))  # not a dict's key
        alternated = {w for group in re.findall(r"[a-z?]+(?:\|[a-z?]+)+", source) for w in group.replace("?", "").split("|")}
        listed = sorted({n for n in nouns if n in literals or n in alternated})
        assert not listed, f"{path.name} lists nouns: {listed}"
        for a, b in re.findall(r"\\u([0-9a-fA-F]{4})-\\u([0-9a-fA-F]{4})", source):
            ends = [unicodedata.category(chr(int(x, 16))) for x in (a, b)]
            assert not all(c.startswith("L") for c in ends), f"{path.name} tells a script by its range {a}-{b}"


# --- the structure's decisions, one by one --------------------------------------------------------

def test_no_normalisation_glues_a_list_into_a_number():
    from evalsuite.graders.normalise import normalise
    for text in ("2 or 400", "2 and 400", "2 \\text{ or } 400", "2 \\text{or} 400"):
        assert normalise(text).text.replace(" ", "") == "2,400" and normalise(text).text != "2400", text
    assert grade("2400", "2 or 400", kind="math").equal is not True


@pytest.mark.parametrize("sentence,gold,expected", [
    # an equation chain: its value is what the statement computes, the values before it its premises
    ("There are 12 eggs in 1 dozen and she'll eat 84 eggs so that's 84/12 = 7 dozen eggs", "7", True),
    ("The team won 22 – 7 = 15 games.", "15", True),
    ("The answer is 9 because 8 × 9 + 19 = 91.", "9", True),
    ("The answer is 60, not 5 × 10 = 50.", "60", True),
    ("The answer is 60, not 5 × 10 = 50.", "50", False),
    # conclusions, reasons, comments, circumstances
    ("She pays $12 and gets $3 back, so she spent $9.", "9", True),
    ("She sells 9 eggs for $2 each, making $18.", "18", True),
    ("The answer is $12$, which is 3 more than 9.", "3", False),
    ("The train covers 150 km in 2.5 hours.", "150", True),
    ("Kylar needs to pay $64 for 16 glasses.", "64", True),
    ("Tom has 14 jars and 12 boxes.", "14", False),          # two values asserted: never either
    ("She makes $18 (that's 9 eggs × $2).", "18", True),
    ("There are 60 crayons in total — 5 boxes of 12.", "60", True),
    # a question, options listed as lines, a later correction of a cue, one that is no correction
    ("Is the answer 14?", "14", False),
    ("A: 12\nB: 15\nC: 18\nD: 21", "21", False),
    ("The answer is 14. Wait, no: it's 16.", "16", True),
    ("The answer is 14. Wait times are 5 minutes.", "14", True),
    ("الجواب هو 40. لا، عذرًا: 140.", "140", True),
    # bounds and approximations, a value twice
    ("She has over 14 jars.", "14", False),
    ("She has about 14 jars.", "14", True),
    ("The probability is $\\frac{1}{2}$, i.e. 50%.", "1/2", True),
    # a title is no sentence end; a single letter before a full stop is
    ("There are 192 cows after Mr. Sylas adds four into each stall.", "192", True),
    # a closing after the answer is passed over; an answer in words that are not read is not
    ("She has 14 jars.\n\nI hope this helps!", "14", True),
    ("Tom has 3 boxes.\n따라서 모두 열네 개입니다.", "3", False),
    ("Tom has 3 boxes.\nĐáp số: tám hộp", "3", False),
])
def test_the_structure_decides(sentence, gold, expected):
    assert (said(gold, sentence) is True) is expected, sentence


def test_each_refusal_says_why():
    reasons = {s: grade("14", s, "numeric").reason for s in (
        "It is 14 or 16.", "At least 14.", "The answer is not 14.", "Is it 14?", "따라서 모두 열네 개입니다.")}
    assert "hedge" in reasons["It is 14 or 16."]
    assert "bound" in reasons["At least 14."]
    assert "rejects" in reasons["The answer is not 14."]
    assert "asks" in reasons["Is it 14?"]
    assert "no value read" in reasons["따라서 모두 열네 개입니다."]  # Korean number words are not read


def test_the_issue32_batches_are_what_their_scripts_write_and_have_no_false_positive():
    import importlib.util
    import json
    folder = shapes.REPO / "tests" / "grader_cases"
    for name in ("issue32_fresh", "issue32_fresh2"):
        path = folder / f"{name}.jsonl"
        before = path.read_text(encoding="utf-8")
        spec = importlib.util.spec_from_file_location(f"make_{name}", folder / f"make_{name}.py")
        make = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(make)
        assert make.build() == before, f"run tests/grader_cases/make_{name}.py"
        rows = [json.loads(line) for line in before.splitlines() if line.strip()]
        said_ = [grade(r["gold"], r["response"]).equal is True for r in rows]
        false_positives = [r["response"][-80:] for r, s in zip(rows, said_) if s and not r["equal"]]
        false_negatives = [r["response"][-80:] for r, s in zip(rows, said_) if r["equal"] and not s]
        assert not false_positives, false_positives
        assert len(false_negatives) <= 0.03 * len(rows), false_negatives


# --- round five (issue 32): invariants of the rules its fresh batch called for ------------------
# Currency signs are every character of Unicode category Sc, codes any capitals, words made up in
# any script: none of them is a list the graders keep, so the invariants hold for words no one wrote.

CURRENCY_SIGNS = tuple(chr(c) for c in range(0x20, 0x20C1) if __import__("unicodedata").category(chr(c)) == "Sc")
ROUND5_ENDINGS = {  # a final sentence per language, {x} the amount
    "en": "So she makes {x} a day.", "fr": "Elle gagne donc {x} par jour.", "de": "Sie verdient {x} am Tag.",
    "ru": "Итого {x} в день.", "zh": "所以她每天赚{x}。", "ja": "答えは{x}です。", "ar": "إذن تربح {x} يوميا.",
    "hi": "अतः वह प्रतिदिन {x} कमाती है।", "tr": "Günde {x} kazanır.", "cue": "Final answer: {x}",
}


def _reads_nothing(word: str) -> bool:
    """A made-up word that no lexicon of the statement reader holds and that reads as no value."""
    reading = clauses.read_statement(f"x {word} x")
    return (word.lower() not in words.SCALE and not words.placed(word) and not any(words.find(getattr(words, role), f" {word} ")
                                                                             for role in ("COPULA", "NEGATE_BEFORE", "BOUND_BEFORE"))
            and reading is not None and not reading.values)


@FAST
@given(seed=st.integers(0, 2**32 - 1), lang=st.sampled_from(sorted(ROUND5_ENDINGS)),
       sign=st.sampled_from(CURRENCY_SIGNS), code=st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=3, max_size=3),
       form=st.sampled_from(["{s}{n}", "{s} {n}", "{n}{s}", "{n} {s}", "{c} {n}", "{n} {c}", "{c}{n}", "{c}. {n}"]))
def test_any_currency_sign_or_code_on_either_side_gives_the_same_verdict(seed, lang, sign, code, form):
    rng = random.Random(seed)
    if code.lower() in words.SCALE:  # '18 MRD' is 18 milliards: a multiplier, not a unit
        return
    w = rng.choice(WORKINGS)
    gold, wrong = str(rng.randint(2, 9999)), None
    while wrong is None or wrong == gold:
        wrong = str(rng.choice([int(gold) + 1, int(gold) - 1, int(gold) * 10, rng.randint(1, 9999)]))
    head = w.working + "\n"
    plain = said(gold, head + ROUND5_ENDINGS[lang].format(x=gold))
    money = said(gold, head + ROUND5_ENDINGS[lang].format(x=form.format(s=sign, c=code, n=gold)))
    assert plain is True and money is True, (lang, form.format(s=sign, c=code, n=gold))
    assert said(gold, head + ROUND5_ENDINGS[lang].format(x=form.format(s=sign, c=code, n=wrong))) is not True


NEGATION_AT_CLAUSE_END = (  # the rejected value before a negation that ends its clause, in both orders
    ("de", "{w} {u} ist es nicht, sondern {g} {u}.", "Es sind {g} {u}; {w} {u} ist es nicht."),
    ("nl", "{w} {u} is het niet, het is {g} {u}.", "Het is {g} {u}, {w} {u} is het niet."),
    ("fr", "{w} {u}, c'est pas ça : c'est {g} {u}.", "C'est {g} {u} ; {w} {u}, ce n'est pas."),
    ("en", "{w} {u} it is not; it is {g} {u}.", "It is {g} {u}. {w} {u} it is not."),
)


@FAST
@given(seed=st.integers(0, 2**32 - 1), row=st.sampled_from(NEGATION_AT_CLAUSE_END), first=st.booleans())
def test_a_value_rejected_at_its_clause_end_is_never_the_answer_in_either_order(seed, row, first):
    rng = random.Random(seed)
    lang, rejected_first, rejected_last = row
    gold = str(rng.randint(2, 999))
    wrong = str(int(gold) + rng.choice([1, -1, 10, 7]))
    unit = shapes.made_up_word(rng, lang)
    sentence = (rejected_first if first else rejected_last).format(g=gold, w=wrong, u=unit)
    response = rng.choice(WORKINGS).working + "\n" + sentence
    assert said(gold, response) is True, sentence
    assert said(wrong, response) is not True, sentence


@FAST
@given(seed=st.integers(0, 2**32 - 1), lang=st.sampled_from(LANGUAGES), shape=st.integers(0, 3))
def test_two_values_offered_with_words_no_lexicon_holds_are_never_right(seed, lang, shape):
    # a hedge in words the graders do not know ('Could be 14, could be 16'): two asserted values,
    # so neither is the answer
    rng = random.Random(seed)
    words = [shapes.made_up_word(rng, lang) for _ in range(3)]
    if not all(_reads_nothing(word) for word in words):
        return
    a, b = rng.sample(range(2, 999), 2)
    sentence = ["{x} {a}, {x} {b}.", "{x} {a} {y} {b} {z}.", "{a}? {b}? {x}.", "{x}: {a} {y}, {b} {z}."][shape].format(
        a=a, b=b, x=words[0], y=words[1], z=words[2])
    response = rng.choice(WORKINGS).working + "\n" + sentence
    for value in (a, b):
        assert said(str(value), response) is not True, sentence


@FAST
@given(seed=st.integers(0, 2**32 - 1), lang=st.sampled_from(LANGUAGES), before=st.integers(0, 4),
       after=st.integers(0, 4), cue=st.booleans(), working=st.booleans(), mark=st.sampled_from([".", "", "!", "。", " :)"]))
def test_a_wrong_number_is_never_accepted_whatever_words_surround_it(seed, lang, before, after, cue, working, mark):
    rng = random.Random(seed)
    gold = rng.randint(2, 9999)
    wrong = rng.choice([gold + 1, gold - 1, gold * 10, gold * 2, gold // 2 or 1, rng.randint(1, 9999)])
    if wrong == gold:
        return
    words = [shapes.made_up_word(rng, lang) for _ in range(before + after)]
    sentence = " ".join(words[:before] + [str(wrong)] + words[before:]) + mark
    response = (rng.choice(WORKINGS).working + "\n" if working else "") + ("Answer: " if cue else "") + sentence
    assert said(str(gold), response) is not True, sentence
