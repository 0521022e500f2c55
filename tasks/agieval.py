"""AGIEval v1.1: 21 files of exam questions (Gaokao, SAT, LSAT, LogiQA, JEC-QA, AQuA, MATH).

Data: agieval/<subset>.jsonl, one row {passage, question, options, label, answer, other}.
  - multiple choice: options ["(A)…", …], gold in `label`, a string or (jec-qa-*) a
    one-element list; 7 gaokao-mathqa rows have several letters ("AD", "A B D", "A C").
  - cloze (gaokao-mathcloze, math): gold in `answer`, graded by the math grader.
  - sat-* files have no `answer` key at all.
Item ids are "<subset>/<row index in file>" (0-based). Choices are the option texts without
their "(A)" prefix; gold is the sorted letters ("AD").

Groups (as AGIEval's own code splits them by the language of the questions; gaokao-english
is English): `--subset agieval-zh` and `--subset agieval-en` expand to their subsets.
"""
from __future__ import annotations

import re
from pathlib import Path

from ..graders.verdict import Verdict
from ._exam import (bad_row, clean_text, format_options, grade_choice, grade_cloze, parse_gold_letters,
                    read_jsonl, sample_per_subset, select_subsets)
from .pack import BadDataError, Item, LoadOptions, Pack, skip_row

VERSION = "1.1"
COMMIT = "4673402118fa180356be106f0fc73350bd5bc7df"  # ruixiangcui/AGIEval: adds data/v1_1
ONLINE_URL = "https://raw.githubusercontent.com/ruixiangcui/AGIEval/{commit}/data/v1_1/{subset}.jsonl"

ZH_CHOICE = ["logiqa-zh", "jec-qa-kd", "jec-qa-ca", "gaokao-chinese", "gaokao-geography", "gaokao-history",
             "gaokao-biology", "gaokao-chemistry", "gaokao-physics", "gaokao-mathqa"]
EN_CHOICE = ["lsat-ar", "lsat-lr", "lsat-rc", "logiqa-en", "sat-math", "sat-en", "aqua-rat",
             "sat-en-without-passage", "gaokao-english"]
ZH_CLOZE = ["gaokao-mathcloze"]
EN_CLOZE = ["math"]

SUBSETS = sorted(ZH_CHOICE + EN_CHOICE + ZH_CLOZE + EN_CLOZE)
GROUPS = {"agieval-zh": ZH_CHOICE + ZH_CLOZE, "agieval-en": EN_CHOICE + EN_CLOZE}
CATEGORIES = {s: ("agieval-zh" if s in GROUPS["agieval-zh"] else "agieval-en") for s in SUBSETS}
COUNTS = {  # rows per file (MANIFEST.md); 7272 in all
    "aqua-rat": 254, "gaokao-biology": 230, "gaokao-chemistry": 204, "gaokao-chinese": 246,
    "gaokao-english": 306, "gaokao-geography": 199, "gaokao-history": 235, "gaokao-mathcloze": 118,
    "gaokao-mathqa": 351, "gaokao-physics": 174, "jec-qa-ca": 533, "jec-qa-kd": 479, "logiqa-en": 651,
    "logiqa-zh": 651, "lsat-ar": 230, "lsat-lr": 510, "lsat-rc": 269, "math": 1000,
    "sat-en-without-passage": 206, "sat-en": 206, "sat-math": 220,
}

# --- the prompts (0-shot, in the item's language) ------------------------------------------

ZH_CHOICE_PROMPT = "{question}\n\n{options}\n\n{instruction}\n最后一行只写“答案：<选项字母>”。"
ZH_SINGLE = "请选出正确答案。"
ZH_ONE_OR_MORE = "本题可能有一个或多个正确选项，请选出全部正确答案，写出全部字母。"
EN_CHOICE_PROMPT = "{question}\n\n{options}\n\n{instruction}\nOn the last line write only \"Answer: <letter>\"."
EN_SINGLE = "Choose the correct answer."
EN_ONE_OR_MORE = "One or more options may be correct; choose all the correct answers and write all their letters."
# Which subsets say "one or more", decided per subset, never from an item's gold (that would give
# part of the answer away): AGIEval's own code reads several letters in these three
# (`multi_choice_datasets` in its dataset_loader.py), and gaokao-mathqa's v1.1 file has 7 golds
# of several letters, which a "choose the correct answer" prompt would make unanswerable.
MULTI_ANSWER_SUBSETS = frozenset({"jec-qa-kd", "jec-qa-ca", "gaokao-physics", "gaokao-mathqa"})
ZH_CLOZE_PROMPT = "{question}\n\n请解答这道题，并把最终答案写在 \\boxed{{}} 中。"
EN_CLOZE_PROMPT = "{question}\n\nSolve the problem and put the final answer in \\boxed{{}}."

TEMPLATE = "\n---\n".join([ZH_CHOICE_PROMPT, ZH_SINGLE, ZH_ONE_OR_MORE, EN_CHOICE_PROMPT, EN_SINGLE, EN_ONE_OR_MORE,
                           ZH_CLOZE_PROMPT, EN_CLOZE_PROMPT])

_OPTION_PREFIX = re.compile(r"^\s*\(?[A-J]\)\s*")


def prompt(item: Item) -> list[dict[str, str]]:
    zh = item.meta["lang"] == "zh"
    if item.meta["kind"] == "cloze":
        text = (ZH_CLOZE_PROMPT if zh else EN_CLOZE_PROMPT).format(question=item.question)
    else:
        several = item.subset in MULTI_ANSWER_SUBSETS   # per subset: the prompt must not depend on the gold
        text = (ZH_CHOICE_PROMPT if zh else EN_CHOICE_PROMPT).format(
            question=item.question, options=format_options(item.choices),
            instruction=(ZH_ONE_OR_MORE if several else ZH_SINGLE) if zh else (EN_ONE_OR_MORE if several else EN_SINGLE))
    return [{"role": "user", "content": text}]


def grade(item: Item, answer_text: str) -> Verdict:
    if item.meta["kind"] == "cloze":
        return grade_cloze(item, answer_text)
    return grade_choice(item, answer_text)


# --- loading ------------------------------------------------------------------------------

def _location(opts: LoadOptions, subset: str) -> str:
    if opts.data_dir is None:
        return ONLINE_URL.format(commit=COMMIT, subset=subset)
    return str(Path(opts.data_dir) / "agieval" / f"{subset}.jsonl")


def _item(subset: str, index: int, row: dict, location: str) -> Item:
    """One row as an Item; BadDataError (naming file and row) when it has no usable gold."""
    passage = clean_text(row.get("passage"))
    question = clean_text(row.get("question"))
    if not question:
        raise bad_row(location, index, "empty question")
    text = f"{passage}\n\n{question}" if passage else question
    lang = "zh" if CATEGORIES[subset] == "agieval-zh" else "en"
    if subset in ZH_CLOZE + EN_CLOZE:
        gold = clean_text(row.get("answer"))
        if not gold:
            raise bad_row(location, index, "cloze row without an `answer`")
        return Item(id=f"{subset}/{index}", subset=subset, question=text, gold=gold,
                    meta={"lang": lang, "kind": "cloze"})
    options = row.get("options")
    if not isinstance(options, list) or len(options) < 2:
        raise bad_row(location, index, f"expected a list of options, got {options!r:.80}")
    choices = tuple(_OPTION_PREFIX.sub("", clean_text(o)) for o in options)
    gold = parse_gold_letters(row.get("label"), len(choices))
    if gold is None:
        raise bad_row(location, index, f"label {row.get('label')!r:.40} is not option letters "
                                       f"of {len(choices)} options")
    return Item(id=f"{subset}/{index}", subset=subset, question=text, gold=gold, choices=choices,
                meta={"lang": lang, "kind": "choice"})


def load(opts: LoadOptions) -> list[Item]:
    if opts.fewshot:
        raise BadDataError("agieval has no dev split to draw few-shot examples from; use --fewshot 0")
    items: list[Item] = []
    for subset in select_subsets("agieval", opts.subsets, SUBSETS, GROUPS):
        location = _location(opts, subset)
        for index, row in enumerate(read_jsonl(location)):
            try:
                items.append(_item(subset, index, row, location))
            except BadDataError as e:
                if not opts.skip_bad_rows:
                    raise
                skip_row(opts, f"{location}: row {index}", str(e))
    return sample_per_subset(items, opts.per_subset, opts.seed)


PACK = Pack(
    name="agieval",
    version=VERSION,
    description="AGIEval v1.1: Gaokao, SAT, LSAT, LogiQA, JEC-QA, AQuA and MATH exam questions, "
                "Chinese and English (groups agieval-zh, agieval-en)",
    template=TEMPLATE,
    load=load,
    prompt=prompt,
    grade=grade,
    needs_sympy=True,  # the gaokao-mathcloze and math subsets grade symbolic answers
    subsets=SUBSETS,
    categories=CATEGORIES,
    source=f"ruixiangcui/AGIEval@{COMMIT[:7]} data/v1_1/*.jsonl (offline: <data-dir>/agieval/)",
    data_paths=("agieval",),
    count=sum(COUNTS.values()),
)
