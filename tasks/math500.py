"""MATH-500 (the 500-problem test subset of MATH from "Let's Verify Step by Step"), 0-shot chat.

Load: math500/test.jsonl from the data folder, or HuggingFaceH4/MATH-500 from the hub.
Prompt: the problem, asking for the final answer in \\boxed{}.
Extract and grade: the last \\boxed{} of the answer, compared with `answer` by
evalsuite.graders.grade_math (normalisation, then numeric and symbolic equivalence).
Subsets are the seven MATH subjects.
"""
from __future__ import annotations

from ..graders import grade_math
from ._data import read_hub, read_jsonl, require_file
from .pack import BadDataError, Item, LoadOptions, Pack, seeded_sample, skip_row

TEMPLATE = (
    "Solve the following math problem step by step. "
    "Put your final answer within \\boxed{{}}.\n\n"
    "{question}"
)
SUBJECTS = ("Algebra", "Counting & Probability", "Geometry", "Intermediate Algebra",
            "Number Theory", "Prealgebra", "Precalculus")


def load(opts: LoadOptions) -> list[Item]:
    if opts.data_dir is not None:
        path = require_file(opts.data_dir, "math500/test.jsonl", "math500")
        rows, where = read_jsonl(path), str(path)
    else:
        rows, where = read_hub("HuggingFaceH4/MATH-500", None, "test"), "HuggingFaceH4/MATH-500"
    items = []
    for index, row in enumerate(rows):
        if not row.get("problem") or row.get("answer") in (None, ""):
            if opts.skip_bad_rows:
                skip_row(opts, f"{where}: row {index} (line {index + 1})", "no problem or no answer")
                continue
            raise BadDataError(f"{where}: row {index} (line {index + 1}) has no problem or no answer "
                               f"(use --skip-bad-rows to go on without it)")
        subject = row.get("subject") or "unknown"
        # unique_id ("test/precalculus/807.json") is MATH's own stable name for the problem
        items.append(Item(id=str(row.get("unique_id") or f"test/{index}"), subset=subject,
                          question=row["problem"], gold=str(row["answer"]),
                          meta={"level": row.get("level")}))
    if opts.subsets:
        unknown = set(opts.subsets) - set(SUBJECTS)
        if unknown:
            raise BadDataError(f"math500: unknown subset(s) {sorted(unknown)}; valid: {', '.join(SUBJECTS)}")
        items = [i for i in items if i.subset in opts.subsets]
    if opts.per_subset:
        chosen = set()
        for subject in sorted({i.subset for i in items}):
            chosen.update(seeded_sample([i.id for i in items if i.subset == subject], opts.per_subset, opts.seed))
        items = [i for i in items if i.id in chosen]
    return items


def prompt(item: Item) -> list[dict[str, str]]:
    return [{"role": "user", "content": TEMPLATE.format(question=item.question)}]


def grade(item: Item, answer: str):
    return grade_math(item.gold, answer)


PACK = Pack(
    name="math500", version="1", description="MATH-500: competition maths, free-form answers in \\boxed{}",
    template=TEMPLATE, load=load, prompt=prompt, grade=grade, subsets=SUBJECTS,
    source="math500/test.jsonl (data folder) or hub HuggingFaceH4/MATH-500", count=500,
    data_paths=("math500/test.jsonl",),
    needs_sympy=True,
)
