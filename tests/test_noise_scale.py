"""Each flip judged against the noise the diff can see (lossless/noise_scale.py, issue 41): the A/A
floor where one was measured, else the item's own drift (the pair's for a first-token flip), never
more than the ceiling; tau where no drift shows. Planted items: the figures are exact."""
from __future__ import annotations

from evalsuite.lossless.classify import ItemDiff
from evalsuite.lossless.drift import ItemDrift
from evalsuite.lossless.noise_scale import NOISE_CEILING, aa_floor, rescale
from evalsuite.lossless.runs import DiffResult, RunSide

TAU = 0.05


def flip(item_id: str, margin: float, drift: float | None, tokens: int = 10, verdict: str = "real",
         bound: bool = False, index: int | None = None) -> ItemDiff:
    measured = ItemDrift(tokens, tokens, 0.0, 0.0, 1.0, 0.0, drift) if drift is not None else None
    return ItemDiff(item_id, verdict, f"m {margin:.3g} > 2 tau (0.1): the baseline clearly preferred its token",
                    token_index=tokens if index is None else index, margin=margin, margin_is_bound=bound,
                    drift=measured, notes=("the engines' logprobs differ by up to 0.2 nats at this position, on an "
                                           "identical prefix: more than float noise (tau 0.05)",))


def same(item_id: str, drift: float, tokens: int = 50) -> ItemDiff:
    return ItemDiff(item_id, "identical", "answer and reasoning byte-identical, token for token",
                    drift=ItemDrift(tokens, tokens, 0.0, 0.0, 1.0, 0.0, drift))


def result(*items: ItemDiff) -> DiffResult:
    side = RunSide("b", "m", (), 0, 0, 0)
    return DiffResult(side, side, TAU, tuple(items))


def by_id(res: DiffResult) -> dict[str, ItemDiff]:
    return {i.id: i for i in res.items}


def test_a_flip_within_its_own_drift_is_a_near_tie_and_says_so():
    out = by_id(rescale(result(flip("a", 0.2, 0.3), flip("b", 0.5, 0.3), flip("c", 0.7, 0.3))))
    assert [out[k].verdict for k in "abc"] == ["near_tie", "suspicious", "real"]
    assert "this item's own drift 0.3" in out["a"].reason and "m 0.2 <= s" in out["a"].reason
    assert not any("more than float noise" in n for n in out["a"].notes)


def test_a_first_token_flip_takes_the_pairs_median_drift():
    res = rescale(result(flip("first", 0.25, None, tokens=0), same("x", 0.2), same("y", 0.4), same("z", 0.3)))
    item = by_id(res)["first"]
    assert item.verdict == "near_tie" and "the pair's median drift 0.3" in item.reason
    assert res.noise_scale["pair_drift"] == 0.3


def test_drift_beyond_the_ceiling_is_a_change_not_noise():
    out = by_id(rescale(result(flip("a", 0.6, 3.0), flip("b", 1.0, 3.0), flip("c", 1.5, 3.0))))
    assert [out[k].verdict for k in "abc"] == ["near_tie", "suspicious", "real"]
    assert f"the noise ceiling {NOISE_CEILING:g}" in out["c"].reason


def test_the_aa_floor_is_the_measured_noise_and_a_candidates_own_drift_excuses_nothing():
    out = by_id(rescale(result(flip("a", 0.3, 0.5), flip("b", 0.08, 0.5)), floor=0.1))
    assert out["a"].verdict == "real" and "the A/A floor 0.1" in out["a"].reason
    assert out["b"].verdict == "near_tie"


def test_a_bound_margin_is_real_only_beyond_twice_the_scale():
    out = by_id(rescale(result(flip("in", 0.4, 0.3, bound=True), flip("out", 0.9, 0.3, bound=True))))
    assert out["in"].verdict == "suspicious" and "--rescore-url" in out["in"].reason
    assert out["out"].verdict == "real" and out["out"].margin_is_bound


def test_without_drift_the_verdicts_stay_the_planted_ones():
    items = (flip("real", 0.3, 0.0), flip("tie", 0.03, None, verdict="near_tie"), same("s", 0.0))
    res = rescale(result(*items))
    assert res.items == items and res.noise_scale["verdicts_moved"] == 0


def test_the_aa_floor_is_the_largest_drift_or_exact_flip_margin():
    assert aa_floor([same("a", 0.2), flip("b", 0.4, 0.1, verdict="near_tie"), flip("c", 2.0, 0.1, bound=True)]) == 0.4
    assert aa_floor([same("a", 0.0)]) == 0.0
