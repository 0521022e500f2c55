"""The scale a flip's margin is judged against: the noise the diff can see, not a fixed tau.

A divergence's margin m (the baseline's own logprob gap between its token and the candidate's)
says how clearly the baseline preferred its token. Whether that is "clearly" depends on how far
the two engines' logprobs move apart where their texts are still the same: two passes of one
llama-server over the same prompts on a real model (SmolLM2 Q4_1, docs/lossless.md) disagree by
up to 0.5 nats on identical text, ten times the fixed tau of 0.05 that planted fakes need. So
each flip is judged against a scale s (near tie m <= s, suspicious m <= 2 s, real beyond), the
largest of:

- tau (`--tau` / `--precision`): the floor, and all there is when no drift is measured;
- with an A/A repeat (`--aa-run`): the A/A floor, the largest logprob disagreement or flip
  margin the engine showed against itself. The measured noise: a candidate's own larger drift
  is the change under test, not noise, and excuses nothing;
- without one: the item's own drift over the text both runs share before the flip (a maximum
  over fewer tokens is smaller, never larger: a short prefix only makes the scale stricter), else,
  for a flip at the first token (no text of its own to measure), the pair's median drift over the
  items that have some. At most NOISE_CEILING: drift beyond that is what a change does, not what
  rounding does.

Every rescaled verdict's sentence names its scale and where it came from. Items whose scale is
tau keep the sentence they had (planted fakes stay exact: their drift is 0). The item's drift
is `ItemDrift.lp_max` (drift.py): per position the largest |lp difference| of a token both
top-K lists hold, maximised over the positions measured.
"""
from __future__ import annotations

import dataclasses
import statistics
from dataclasses import dataclass
from typing import Any, Iterable

from .classify import ItemDiff, classify_margin

# nats: the most drift a diff without an A/A repeat takes for noise. The largest seen between two
# passes of one engine over the same prompts, 0.61 (SmolLM2 Q4_1, llama-server, docs/lossless.md),
# rounded up: beyond it, 2 s = 1.4 nats, a flip the baseline preferred 4 to 1 is called real
NOISE_CEILING = 0.7
FLIPS = ("near_tie", "suspicious", "real")


@dataclass(frozen=True)
class Scale:
    value: float
    source: str          # tau, aa_floor, own_drift, pair_drift, ceiling

    def words(self, tau: float) -> str:
        return {"tau": f"tau {tau:g}: no drift measured above it",
                "aa_floor": f"the A/A floor {self.value:.2g}: the engine against itself",
                "own_drift": f"this item's own drift {self.value:.2g} on the text both runs share",
                "pair_drift": f"the pair's median drift {self.value:.2g}: this item shares too little text to measure",
                "ceiling": f"the noise ceiling {self.value:g}: the drift here is larger than noise"}[self.source]


def _drift(item: ItemDiff) -> float | None:
    d = item.drift
    if d is None or d.lp_max is None or not d.tokens:
        return None
    return d.lp_max


def pair_drift(items: Iterable[ItemDiff]) -> float | None:
    """The median drift over the items with enough shared text to measure it (identical ones too)."""
    values = [v for v in map(_drift, items) if v is not None]
    return statistics.median(values) if values else None


def aa_floor(aa_items: Iterable[ItemDiff]) -> float:
    """How far the engine moved against itself: the largest drift (any measured length) or exact
    flip margin of an A/A diff."""
    worst = 0.0
    for item in aa_items:
        d = item.drift
        if d is not None and d.lp_max is not None:
            worst = max(worst, d.lp_max)
        if item.verdict in FLIPS and item.margin is not None and not item.margin_is_bound:
            worst = max(worst, item.margin)
    return worst


def item_scale(item: ItemDiff, tau: float, pair: float | None, floor: float | None) -> Scale:
    if floor is not None:
        return Scale(floor, "aa_floor") if floor > tau else Scale(tau, "tau")
    own = _drift(item)
    drift, source = (own, "own_drift") if own is not None else (pair, "pair_drift")
    if drift is None or drift <= tau:
        return Scale(tau, "tau")
    if drift > NOISE_CEILING:
        return Scale(NOISE_CEILING, "ceiling")
    return Scale(drift, source)


def _rescaled(item: ItemDiff, scale: Scale, tau: float) -> ItemDiff:
    m = item.margin
    said = scale.words(tau)
    if item.margin_is_bound:
        if m > 2 * scale.value:
            return dataclasses.replace(item, reason=f"{item.reason}; beyond 2 s, s = {said}", scale=scale.value)
        return dataclasses.replace(item, verdict="suspicious", scale=scale.value, reason=(
            f"{item.reason}: within 2 s, s = {said}, so not called real; re-score (--rescore-url) for the exact margin"))
    verdict = classify_margin(m, True, scale.value)
    if verdict not in FLIPS:
        return dataclasses.replace(item, scale=scale.value)
    words = {"near_tie": f"m {m:.2g} <= s, s = {said}: a near tie at the noise this pair shows, which can flip it",
             "suspicious": f"s < m {m:.2g} <= 2 s, s = {said}: larger than that noise should give",
             "real": f"m {m:.3g} > 2 s, s = {said}: the baseline clearly preferred its token"}[verdict]
    # the tau-scaled note "more than float noise" says nothing once the scale is the measured noise
    notes = tuple(n for n in item.notes if "more than float noise (tau" not in n)
    rescored = item.reason.split(": m ", 1)[0] + ": " if item.reason.startswith("re-scored on ") else ""
    return dataclasses.replace(item, verdict=verdict, reason=rescored + words, notes=notes, scale=scale.value)


def rescale(result: Any, floor: float | None = None) -> Any:
    """The diff with each flip judged against its scale (`floor`: the A/A floor, when measured)."""
    tau = result.tau
    pair = pair_drift(result.items)
    items, moved = [], 0
    for item in result.items:
        if item.verdict in FLIPS and item.margin is not None:
            scale = item_scale(item, tau, pair, floor)
            if scale.source != "tau":
                new = _rescaled(item, scale, tau)
                moved += new.verdict != item.verdict
                item = new
        items.append(item)
    noise = {"tau": tau, "aa_floor": floor, "pair_drift": pair, "ceiling": NOISE_CEILING, "verdicts_moved": moved}
    return dataclasses.replace(result, items=tuple(items), noise_scale=noise)
