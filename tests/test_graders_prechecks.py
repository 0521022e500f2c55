"""The cheap checks before the costly steps of a reading, and the fast path of two integers (issue 45
part 2), change no result.

`words.find` skips a lexicon's pattern (hundreds of case-insensitive alternatives) when no word of
the text can open a whole-word match; numbers.py runs text2num only in the languages in which some
word of the text is a number word alone. Both are held here to the unchecked steps: every lexicon
on the tail of every corpus response, on Hypothesis texts built from the lexicons' own entries in
other cases and scripts (İ, ı, ſ, ς, marks), and text2num on number words of its seven languages.
Two different integers (most wrong GSM8K answers) get their verdict without the comparison's
normalising and parsing, and an integer gold its kind (one numeric answer): held to the whole steps
on every pair or gold of the corpus that takes the fast path and on Hypothesis integers. No timing is asserted: benchmarks/graders.py measures the cost.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalsuite.graders import numbers, words

REPO = Path(__file__).resolve().parents[1]
LEXICONS = {name: value for name, value in vars(words).items()
            if name.isupper() and isinstance(value, tuple) and value and all(isinstance(w, str) for w in value)}


def unchecked(lexicon: tuple[str, ...], text: str) -> list[tuple[int, int]]:
    """What find gives without its precheck: the pattern's matches that are whole words."""
    return [m.span() for m in words.pattern(lexicon).finditer(text) if words.bounded(text, m, lexicon)]


def checked(lexicon: tuple[str, ...], text: str) -> list[tuple[int, int]]:
    return [m.span() for m in words.find(lexicon, text)]


def corpus_tails() -> list[str]:
    spec = importlib.util.spec_from_file_location("graders_benchmark_prechecks", REPO / "benchmarks" / "graders.py")
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench
    spec.loader.exec_module(bench)
    return sorted({c.response[-160:] for c in bench.load_cases()})


def test_every_lexicon_finds_the_same_on_every_corpus_response():
    tails = corpus_tails()
    assert len(tails) > 5000
    differ = [(name, text) for text in tails for name, lexicon in LEXICONS.items() if checked(lexicon, text) != unchecked(lexicon, text)]
    assert not differ, differ[:5]


ENTRIES = sorted({w.lstrip("~") or w for lexicon in LEXICONS.values() for w in lexicon})
# look-alikes IGNORECASE takes for one another, marks, and neighbours that make or break a whole word
PIECES = ["İ", "ı", "I", "i", "ſ", "s", "ς", "σ", "Σ", "K", "k", "µ", "\u0301", "\u0307", "\u093e", "ß", "ẞ", " ", "  ", "\n", ",", ".",
          "-", "'", "’", "5", "14", "x", "ab", "é", "Ⅻ", "²", "_", "不", "是", "答案", "ไม่", "~", "…"]


def _variant(entry: str, how: int) -> str:
    return (entry, entry.upper(), entry.title(), entry.swapcase())[how % 4]


texts = st.lists(st.one_of(st.sampled_from(PIECES), st.tuples(st.sampled_from(ENTRIES), st.integers(0, 3)).map(lambda t: _variant(*t)),
                           st.text(max_size=3)), max_size=14).map("".join)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts, name=st.sampled_from(sorted(LEXICONS)))
def test_find_with_its_precheck_is_find_without_it(text, name):
    assert checked(LEXICONS[name], text) == unchecked(LEXICONS[name], text)


def test_the_fold_takes_every_ignorecase_pair_alike():
    """The precheck's soundness: two letters re.IGNORECASE matches fold alike (İ/i, ı/i, ſ/s, ς/σ, K/k)."""
    import re
    for a, b in (("İ", "i"), ("ı", "I"), ("ſ", "S"), ("ς", "Σ"), ("\u212a", "k"), ("µ", "Μ"), ("ϐ", "Β"), ("ẛ", "Ṡ")):
        assert re.fullmatch(re.escape(a), b, re.I), (a, b)
        assert words.fold(a) == words.fold(b), (a, b)


def text2num_languages(text: str) -> set[str]:
    """The languages in which text2num reads a value in the text (what _text2num_values keeps)."""
    from text_to_num import alpha2digit
    out = set()
    for lang in words.TEXT2NUM:
        converted = alpha2digit(text, lang, threshold=0)
        if converted != text and numbers._aligned(text, converted):
            out.add(lang)
    return out


NUMBER_WORDS = ["one", "twenty-one", "a hundred", "three thousand and five", "first", "dozen", "zero point five", "minus seven",
                "vingt-et-un", "quatre-vingt-dix", "soixante-dix-sept", "cent", "mille", "un", "deuxième",
                "dreiundzwanzig", "einhundert", "zwei", "Tausend", "elf", "vierte",
                "veintiún", "cien", "treinta y dos", "mil", "uno", "ventitré", "cento", "mille", "diciannove", "un'altra",
                "vinte e um", "cem", "tweeënveertig", "honderd", "een", "drie", "Twenty", "FIVE", "Vingt"]
OTHER_WORDS = ["the", "answer", "is", "apples", "jars", "la", "réponse", "est", "die", "Antwort", "ist", "de", "het", "y", "e", "und",
               "and", "et", "a", "an", "l'", "per", "cent", "point", "second", "half", "quarter", "one's", "none", "often", "tension", "einer"]
sentences = st.lists(st.one_of(st.sampled_from(NUMBER_WORDS), st.sampled_from(OTHER_WORDS), st.sampled_from([" ", ", ", "-", ". ", "14"])),
                     min_size=1, max_size=10).map(" ".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=sentences)
def test_text2num_runs_in_every_language_that_reads_a_value(text):
    assert text2num_languages(text) <= set(numbers._number_word_languages(text))


def test_text2num_languages_on_the_answer_shapes():
    """Every final sentence of the answer shapes (number words of nineteen languages)."""
    spec = importlib.util.spec_from_file_location("answer_shapes", REPO / "tests" / "answer_shapes.py")
    shapes = importlib.util.module_from_spec(spec)
    sys.modules["answer_shapes"] = shapes
    spec.loader.exec_module(shapes)
    missed = [c.sentence for c in shapes.generate(seed=1, per_cell=2)
              if not text2num_languages(c.sentence) <= set(numbers._number_word_languages(c.sentence))]
    assert not missed, missed[:5]


# --- the fast path of two integers ------------------------------------------------------------------

def _whole_comparison(gold: str, answer: str, how: str) -> set[str]:
    """The verdicts of math_answer's whole comparison (the fast path switched off), under every
    setting a caller passes."""
    import re

    from evalsuite.graders import math_answer

    saved, math_answer.INTEGER_RE = math_answer.INTEGER_RE, re.compile(r"(?!)")
    try:
        return {repr(math_answer.grade_math_answer(gold, answer, how, answer, percent_strict=strict, rounded_golds=rounded))
                for strict in (True, False) for rounded in (True, False)}
    finally:
        math_answer.INTEGER_RE = saved


def test_two_integers_get_the_whole_comparisons_verdict_on_every_corpus_pair(monkeypatch):
    from evalsuite.graders import grade, math_answer

    fired = []
    real = math_answer.different_integers
    monkeypatch.setattr(math_answer, "different_integers", lambda *args: fired.append(args) or real(*args))
    spec = importlib.util.spec_from_file_location("graders_benchmark_fast", REPO / "benchmarks" / "graders.py")
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench
    spec.loader.exec_module(bench)
    for c in bench.load_cases():
        grade(c.gold, c.response, c.kind, choices=c.choices)
    assert len(set(fired)) > 500
    differ = [args for args in set(fired) if _whole_comparison(*args) != {repr(real(*args))}]
    assert not differ, differ[:5]


@settings(max_examples=300, deadline=None)
@given(gold=st.integers(-10**99, 10**99), answer=st.integers(-10**99, 10**99),
       how=st.sampled_from(["answer-is", "statement", "last-number", "boxed", "gsm8k", "whole", "last-equation"]))
def test_two_integers_get_the_whole_comparisons_verdict(gold, answer, how):
    from evalsuite.graders import math_answer

    if gold != answer:
        assert _whole_comparison(str(gold), str(answer), how) == {repr(math_answer.different_integers(str(gold), str(answer), how))}


def _gold_steps(gold: str) -> tuple[str, bool]:
    """infer_kind and gold_has_several of a gold, with and without their integer fast path."""
    import re

    from evalsuite.graders import gold as gold_module

    fast = (gold_module.infer_kind.__wrapped__(gold), gold_module.gold_has_several.__wrapped__(gold))
    saved, gold_module.INTEGER_RE = gold_module.INTEGER_RE, re.compile(r"(?!)")
    try:
        assert fast == (gold_module.infer_kind.__wrapped__(gold), gold_module.gold_has_several.__wrapped__(gold)), gold
    finally:
        gold_module.INTEGER_RE = saved
    return fast


@settings(max_examples=200, deadline=None)
@given(gold=st.integers(-10**99, 10**99))
def test_an_integer_gold_is_one_numeric_answer_as_its_whole_reading_says(gold):
    assert _gold_steps(str(gold)) == ("numeric", False)


def test_every_integer_gold_of_the_corpus_reads_as_before():
    from evalsuite.graders import gold as gold_module
    from evalsuite.graders.numbers import INTEGER_RE

    spec = importlib.util.spec_from_file_location("graders_benchmark_golds", REPO / "benchmarks" / "graders.py")
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench
    spec.loader.exec_module(bench)
    golds = {gold_module.gold_answer(c.gold)[0] for c in bench.load_cases()}
    integers = [g for g in golds if INTEGER_RE.fullmatch(g)]
    assert len(integers) > 300
    for g in integers:
        _gold_steps(g)


GENERIC = sorted(numbers.GENERIC_WORDS)
number_word_texts = st.lists(st.one_of(st.sampled_from(GENERIC), st.sampled_from(PIECES), st.sampled_from(OTHER_WORDS)),
                             max_size=10).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(number_word_texts, number_word_texts.map(lambda t: t.replace(" ", "")), texts))
def test_number_words_are_looked_for_only_where_a_run_of_letters_is_made_of_them(text):
    """_generic_runs passes over a text none of whose runs of letters is made of number words."""
    checked = numbers._generic_runs(text)
    saved, numbers.letter_runs = numbers.letter_runs, lambda _: (GENERIC[0],)  # a run that always is one
    try:
        assert checked == numbers._generic_runs(text)
    finally:
        numbers.letter_runs = saved
