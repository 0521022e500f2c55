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
