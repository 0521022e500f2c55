"""Choice-letter extraction: a table of realistic answers (tests/choice_cases.json) must pass 100%."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalsuite.graders.choice import MAX_RESPONSE_CHARS, extract_choice

TABLE = json.loads((Path(__file__).parent / "choice_cases.json").read_text(encoding="utf-8"))
CASES = TABLE["cases"]
OPTION_SETS = TABLE["option_sets"]


def test_the_table_is_large_and_bilingual():
    assert len(CASES) >= 120
    chinese = [c for c in CASES if any("\u4e00" <= ch <= "\u9fff" for ch in c["response"])]
    assert len(chinese) >= 60 and len(CASES) - len(chinese) >= 40
    assert sum(c["expected"] is None for c in CASES) >= 20          # ambiguous / nothing
    assert sum(c["expected"] is not None and len(c["expected"]) > 1 for c in CASES) >= 15  # multi-answer


@pytest.mark.parametrize("case", CASES, ids=[f"{i:03d}" for i in range(len(CASES))])
def test_table_case(case):
    letters, reason = extract_choice(case["response"], OPTION_SETS[case["options"]], case["n_gold"])
    assert letters == case["expected"], f"{case['response']!r} ({case['why']}): got {letters!r}, {reason}"
    assert reason  # always says which rule decided, or why nothing was read


def test_reason_names_the_rule():
    assert extract_choice("答案：C")[1].startswith("answer-cue")
    assert extract_choice("\\boxed{B}")[1].startswith("boxed")
    assert extract_choice("A 或 B")[1].startswith("ambiguous")
    assert extract_choice("nothing here")[1].startswith("no choice letter")


def test_huge_untrusted_answers_are_cut_and_still_read():
    # only the tail is read: a long preamble neither hangs the parser nor hides the answer
    flood = "A、" * 400_000 + "\n" + "((((" * 50_000 + "\n" + "A、B、" * 3_000 + "\n答案：D"
    letters, _ = extract_choice(flood, ("w", "x", "y", "z"))
    assert letters == "D"
    assert len(flood) > MAX_RESPONSE_CHARS
    # a run of letters before a word used to cost quadratic time in the option-correct pattern
    assert extract_choice("A、B、" * 5_000 + "不对", ("w", "x", "y", "z"))[0] is None
    # long whitespace runs used to make neighbouring \s* patterns backtrack for minutes
    assert extract_choice("A" + " " * 19_000 + "x", ("w", "x", "y", "z"))[0] is None
    assert extract_choice("答案" + " \t" * 9_000 + "\n C", ("w", "x", "y", "z"))[0] == "C"
