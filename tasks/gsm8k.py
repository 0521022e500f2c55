"""GSM8K (test, 1,319 grade-school maths word problems), 0-shot chat.

Load: gsm8k/test.jsonl from the data folder, else the copy of that file the package carries
(tasks/data/gsm8k/, MIT: the first command runs offline), byte for byte the official one.
Prompt: the question, asking for the final number on its own line.
Extract and grade: like lm-eval, two extractions side by side -- "strict" (lm-eval's
strict-match: the number after `####`, else after "The answer is"; None without either) and
"flexible" (lm-eval's flexible-extract: the last number in the answer) -- stored in the
verdict's details and graded against the gold the same way; the verdict itself (the run's
accuracy) comes from evalsuite.graders.grade, which reads the explicit answer first ("The
answer is N", GSM8K's "A: N", "#### N", a box), then the final equation chain, then the final
statement in prose (its one asserted value: not a negated one, no hedge), and falls back to the
last number, saying so. docs/graders.md says what each figure of `show` means.
"""
from __future__ import annotations

import re
from dataclasses import replace
from decimal import Decimal

from ..graders import extract_gsm8k_strict, extract_last_number, grade
from ._data import bundled_file, read_jsonl, require_file
from .pack import BadDataError, Item, LoadOptions, Pack, seeded_sample, skip_row

TEMPLATE = (
    "Solve the following math word problem step by step. "
    "At the end, write the final answer on its own line as \"The answer is N\", where N is a number.\n\n"
    "{question}"
)


def gold_number(solution: str) -> str | None:
    """GSM8K solutions end with '#### <number>'."""
    if "####" not in solution:
        return None
    return solution.rsplit("####", 1)[1].strip().replace(",", "") or None


def load(opts: LoadOptions) -> list[Item]:
    if set(opts.subsets) - {"test"}:
        raise BadDataError(f"gsm8k: unknown subset(s) {sorted(set(opts.subsets) - {'test'})}; valid: test")
    path = require_file(opts.data_dir, "gsm8k/test.jsonl", "gsm8k") if opts.data_dir is not None \
        else bundled_file("gsm8k/test.jsonl")
    rows, where = read_jsonl(path), str(path)
    items = []
    for index, row in enumerate(rows):
        gold = gold_number(str(row.get("answer", "")))
        if not row.get("question") or gold is None:
            if opts.skip_bad_rows:
                skip_row(opts, f"{where}: row {index} (line {index + 1})", "no question or no '#### answer'")
                continue
            raise BadDataError(f"{where}: row {index} (line {index + 1}) has no question or no '#### answer' "
                               f"(use --skip-bad-rows to go on without it)")
        items.append(Item(id=f"test/{index}", subset="test", question=row["question"], gold=gold))
    if opts.per_subset:
        chosen = set(seeded_sample([i.id for i in items], opts.per_subset, opts.seed))
        items = [i for i in items if i.id in chosen]
    return items


def prompt(item: Item) -> list[dict[str, str]]:
    return [{"role": "user", "content": TEMPLATE.format(question=item.question)}]


# (gold, extracted number) -> equal, for the strict and flexible columns: the two often extract the
# same number, and the N samples of an item the same final number. Only decided verdicts are
# kept (an undecided one, e.g. past a sympy deadline, is asked again); cleared when full.
_EQUAL: dict[tuple[str, str], bool] = {}
_EQUAL_MAX = 8192


# Both a plain decimal number (the usual strict and flexible extraction, the usual gold): grade()
# decides those as equal exactly when they are the same number (tests/test_graders_round3_b.py
# checks the two agree on thousands of pairs), in ~1 us instead of ~40 us; a sampled run asks
# it twice per answer. Longer strings go to grade(), which bounds what it parses.
_PLAIN_DECIMAL = re.compile(r"-?\d{1,20}(?:\.\d{1,20})?")


def _extracted_equal(gold: str, extracted: str) -> bool:
    if _PLAIN_DECIMAL.fullmatch(gold) and _PLAIN_DECIMAL.fullmatch(extracted):
        return Decimal(gold) == Decimal(extracted)   # exact: 1.50 == 1.5, 007 == 7, -0 == 0
    key = (gold, extracted)
    equal = _EQUAL.get(key)
    if equal is None:
        verdict = grade(gold, extracted, kind="numeric")
        equal = bool(verdict)
        if verdict.equal is not None:
            if len(_EQUAL) >= _EQUAL_MAX:
                _EQUAL.clear()
            _EQUAL[key] = equal
    return equal


def grade_answer(item: Item, answer: str):
    strict = extract_gsm8k_strict(answer)
    flexible = extract_last_number(answer)
    verdict = grade(item.gold, answer, kind="numeric")
    details = dict(verdict.details)
    details["strict"] = {"extracted": strict, "equal": None if strict is None else _extracted_equal(item.gold, strict)}
    details["flexible"] = {"extracted": flexible, "equal": None if flexible is None else _extracted_equal(item.gold, flexible)}
    return replace(verdict, details=details)


PACK = Pack(
    name="gsm8k", version="1", description="GSM8K test: grade-school maths word problems, numeric answers",
    template=TEMPLATE, load=load, prompt=prompt, grade=grade_answer, subsets=("test",),
    source="gsm8k/test.jsonl (data folder, else the package's copy of openai/grade-school-math's file)", count=1319,
    data_paths=("gsm8k/test.jsonl",), bundled=("gsm8k/test.jsonl",),
)
