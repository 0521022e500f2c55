"""Presets: fixed, documented item sets built from the packs, usable wherever a pack name is.

agieval-zh1200
    AGIEval, 8 Chinese subsets x 150 items = 1,200: gaokao-history, gaokao-biology,
    gaokao-chinese, gaokao-english, gaokao-physics, gaokao-geography, gaokao-chemistry,
    logiqa-zh. In each subset the 150 ids first in seeded_sample(ids, 150, seed=0) order,
    i.e. exactly `agieval --subset <those 8> --per-subset 150 --seed 0`: same ids, same
    fingerprint. Ids and subsets are AGIEval's ("gaokao-history/12").

ceval220-cmmlu200
    One run of 420 items: 220 from C-Eval val and 200 from CMMLU test. Within each pack the
    total is spread over its subjects by allocate(total, sizes, seed=0): every subject gets
    total // n_subjects items (C-Eval: 4 of 52, CMMLU: 2 of 67); the rest (C-Eval 12,
    CMMLU 66) go one each to the subjects first in seeded_sample(subject names, seed=0)
    order. In each subject the items are the first in seeded_sample(ids, quota, seed=0)
    order. Ids and subsets are prefixed with the pack: "ceval/accountant/3" in subset
    "ceval/accountant"; categories likewise ("ceval/STEM", "cmmlu/China specific").

Both keep items in file order. `--subset` may narrow a preset to some of its subsets;
`--per-subset` and a seed other than 0 are refused (they would change the preset's items).
"""
from __future__ import annotations

import importlib
from dataclasses import replace
from typing import Callable

from ..graders.verdict import Verdict
from ._exam import allocate, rename, unwrap
from .pack import BadDataError, Item, LoadOptions, Pack, seeded_sample

PRESET_SEED = 0

AGIEVAL_ZH1200_SUBSETS = ("gaokao-history", "gaokao-biology", "gaokao-chinese", "gaokao-english",
                          "gaokao-physics", "gaokao-geography", "gaokao-chemistry", "logiqa-zh")
AGIEVAL_ZH1200_PER_SUBSET = 150

CEVAL_CMMLU_TOTALS = {"ceval": 220, "cmmlu": 200}


def _pack(name: str) -> Pack:
    return importlib.import_module(f"{__package__}.{name}").PACK


def _check_fixed(preset: str, opts: LoadOptions) -> None:
    if opts.per_subset is not None:
        raise BadDataError(f"{preset} fixes its items; --per-subset does not apply (use the pack itself)")
    if opts.seed != PRESET_SEED:
        raise BadDataError(f"{preset} is chosen with seed {PRESET_SEED}; got seed {opts.seed} "
                           f"(use the pack itself with --per-subset and --seed)")


def _narrow(preset: str, items: list[Item], subsets: tuple[str, ...], valid: list[str]) -> list[Item]:
    if not subsets:
        return items
    unknown = [s for s in subsets if s not in valid]
    if unknown:
        raise BadDataError(f"{preset}: unknown subset(s) {', '.join(unknown)}; valid: {', '.join(valid)}")
    return [item for item in items if item.subset in subsets]


# --- agieval-zh1200 --------------------------------------------------------------------------

def agieval_zh1200() -> Pack:
    agieval = _pack("agieval")
    name = "agieval-zh1200"

    def load(opts: LoadOptions) -> list[Item]:
        _check_fixed(name, opts)
        chosen = replace(opts, subsets=AGIEVAL_ZH1200_SUBSETS, per_subset=AGIEVAL_ZH1200_PER_SUBSET,
                         seed=PRESET_SEED)
        return _narrow(name, agieval.load(chosen), opts.subsets, list(AGIEVAL_ZH1200_SUBSETS))

    return replace(agieval, name=name,
                   description="AGIEval 8 Chinese subsets x 150 (seed 0): gaokao history, biology, "
                               "chinese, english, physics, geography, chemistry; logiqa-zh",
                   load=load, subsets=AGIEVAL_ZH1200_SUBSETS,
                   categories={s: agieval.categories[s] for s in AGIEVAL_ZH1200_SUBSETS},
                   count=len(AGIEVAL_ZH1200_SUBSETS) * AGIEVAL_ZH1200_PER_SUBSET)


# --- ceval220-cmmlu200 -----------------------------------------------------------------------

def _choose(items: list[Item], total: int) -> list[Item]:
    by_subset: dict[str, list[str]] = {}
    for item in items:
        by_subset.setdefault(item.subset, []).append(item.id)
    quota = allocate(total, {s: len(ids) for s, ids in by_subset.items()}, PRESET_SEED)
    chosen = {i for s, ids in by_subset.items() for i in seeded_sample(ids, quota[s], PRESET_SEED)}
    return [item for item in items if item.id in chosen]


def ceval220_cmmlu200() -> Pack:
    packs = {name: _pack(name) for name in CEVAL_CMMLU_TOTALS}
    name = "ceval220-cmmlu200"
    subsets = [f"{p}/{s}" for p, pack in packs.items() for s in pack.subsets]

    def load(opts: LoadOptions) -> list[Item]:
        _check_fixed(name, opts)
        items: list[Item] = []
        for pack_name, total in CEVAL_CMMLU_TOTALS.items():
            whole = packs[pack_name].load(replace(opts, subsets=(), per_subset=None, seed=PRESET_SEED))
            items += [rename(item, pack_name) for item in _choose(whole, total)]
        return _narrow(name, items, opts.subsets, subsets)

    def prompt(item: Item) -> list[dict[str, str]]:
        pack_name, inner = unwrap(item)
        return packs[pack_name].prompt(inner)

    def grade(item: Item, answer_text: str) -> Verdict:
        pack_name, inner = unwrap(item)
        return packs[pack_name].grade(inner, answer_text)

    return Pack(
        name=name,
        version="1",
        description="C-Eval val 220 + CMMLU test 200 in one run (spread evenly over subjects, seed 0)",
        template="\n=====\n".join(f"{p}:\n{pack.template}" for p, pack in packs.items()),
        load=load, prompt=prompt, grade=grade,
        subsets=subsets,
        categories={f"{p}/{s}": f"{p}/{c}" for p, pack in packs.items() for s, c in pack.categories.items()},
        source="; ".join(pack.source for pack in packs.values()),
        data_paths=tuple(p for pack in packs.values() for p in (pack.data_paths or ())),
        count=sum(CEVAL_CMMLU_TOTALS.values()),
    )


PRESETS: dict[str, Callable[[], Pack]] = {
    "agieval-zh1200": agieval_zh1200,
    "ceval220-cmmlu200": ceval220_cmmlu200,
}
