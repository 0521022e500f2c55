"""Issue 33 #5: AGIEval's prompt told the model whether a question has several correct options,
decided from the item's gold (`multi = len(item.gold) > 1`): the prompt gave away part of the
answer. Now the instruction is decided per subset, as AGIEval's own code decides which subsets
are multiple-answer (docs/exam-packs.md), and the prompt of an item is the same whatever its gold."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from evalsuite.tasks import LoadOptions, get_pack
from evalsuite.tasks import agieval
from evalsuite.tasks.pack import Item

DOCS = Path(__file__).resolve().parents[1] / "docs" / "exam-packs.md"
CHOICE_SUBSETS = agieval.ZH_CHOICE + agieval.EN_CHOICE


def choice_item(subset: str, gold: str) -> Item:
    lang = "zh" if subset in agieval.ZH_CHOICE else "en"
    return Item(id=f"{subset}/0", subset=subset, question="Which?", gold=gold, choices=("w", "x", "y", "z"),
                meta={"lang": lang, "kind": "choice"})


def test_the_prompt_does_not_depend_on_the_gold():
    pack = get_pack("agieval")
    for subset in CHOICE_SUBSETS:
        prompts = {gold: pack.prompt(choice_item(subset, gold)) for gold in ("A", "D", "AD", "ABC")}
        assert len({str(p) for p in prompts.values()}) == 1, (subset, prompts)


def test_the_several_answers_instruction_is_decided_per_subset():
    pack = get_pack("agieval")
    # AGIEval's own `multi_choice_datasets` (jec-qa-kd, jec-qa-ca, gaokao-physics), and
    # gaokao-mathqa, whose v1.1 file has 7 golds of several letters
    assert agieval.MULTI_ANSWER_SUBSETS == frozenset({"jec-qa-kd", "jec-qa-ca", "gaokao-physics", "gaokao-mathqa"})
    for subset in CHOICE_SUBSETS:
        text = pack.prompt(choice_item(subset, "A"))[0]["content"]
        several = agieval.ZH_ONE_OR_MORE in text or agieval.EN_ONE_OR_MORE in text
        single = agieval.ZH_SINGLE in text or agieval.EN_SINGLE in text
        assert (several, single) == ((True, False) if subset in agieval.MULTI_ANSWER_SUBSETS else (False, True)), subset
    # the docs name the same subsets
    doc = DOCS.read_text(encoding="utf-8")
    assert all(f"`{s}`" in doc for s in agieval.MULTI_ANSWER_SUBSETS)


def test_every_gold_of_several_letters_is_in_a_subset_that_allows_several(data_dir):
    items = get_pack("agieval").load(LoadOptions(data_dir=data_dir))
    several = {i.subset for i in items if i.meta["kind"] == "choice" and len(i.gold) > 1}
    assert several == {"gaokao-mathqa"}        # v1.1: 7 rows (MANIFEST.md)
    assert several <= agieval.MULTI_ANSWER_SUBSETS
    # and a single-answer item of such a subset reads the same as a several-answer one
    by_id = {i.id: i for i in items}
    assert by_id["gaokao-mathqa/148"].gold == "AD" and len(by_id["gaokao-mathqa/0"].gold) == 1
    assert (get_pack("agieval").prompt(by_id["gaokao-mathqa/148"])[0]["content"].split("\n\n")[-1]
            == get_pack("agieval").prompt(replace(by_id["gaokao-mathqa/0"]))[0]["content"].split("\n\n")[-1])
