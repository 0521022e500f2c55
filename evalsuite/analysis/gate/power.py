"""What a gate's paired items can detect: the smallest significant loss at alpha, and why a gate
too small for the drop it was asked to catch refuses (unless --allow-underpowered)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .checks import _pp
from .settings import GateSettings
from ..stats import binomial_two_sided_p

# ---------------------------------------------------------------------------- power


def smallest_significant_loss(alpha: float) -> int:
    """The fewest net-lost items that can ever be significant at alpha: all discordant pairs
    one way (b lost, none gained), exact McNemar p = 2 / 2**b < alpha."""
    b = 1
    while binomial_two_sided_p(b, b) >= alpha:
        b += 1
    return b


@dataclass(frozen=True)
class Power:
    """What these paired items can detect at alpha, at best (every discordant pair a loss)."""
    n_pairs: int
    min_loss: int                     # items
    min_detectable_pp: float          # the smallest drop that could be significant here
    items_needed: int | None          # paired items for the requested --max-drop to be detectable

    def to_dict(self) -> dict[str, Any]:
        return {"n_pairs": self.n_pairs, "min_significant_loss": self.min_loss,
                "min_detectable_drop_pp": self.min_detectable_pp, "items_needed": self.items_needed}


def power(n_pairs: int, alpha: float, max_drop: float) -> Power | None:
    """None when alpha is 1 (no significance condition: any drop over --max-drop fails)."""
    if alpha >= 1:
        return None
    loss = smallest_significant_loss(alpha)
    detectable = 100.0 * loss / n_pairs if n_pairs else math.inf
    needed = math.ceil(100.0 * loss / max_drop - 1e-9) if max_drop > 0 else None
    return Power(n_pairs, loss, detectable, needed)


def underpowered(pw: Power | None, s: GateSettings) -> str | None:
    """Why this gate cannot fail on the drop it was asked to catch (None when it can)."""
    if pw is None:
        return None
    if pw.min_loss > pw.n_pairs:
        return (f"this gate cannot fail: on {pw.n_pairs} paired items no drop is significant at α={s.alpha:g} "
                f"(it takes {pw.min_loss} items lost and none gained)"
                + (f"; a {_pp(s.max_drop)} pp drop needs >= {pw.items_needed} paired items" if pw.items_needed else ""))
    # a drop just over --max-drop must be able to be significant: 100 * min_loss <= max_drop * n
    if s.max_drop > 0 and 100 * pw.min_loss > s.max_drop * pw.n_pairs + 1e-9 * pw.n_pairs:
        return (f"a {_pp(s.max_drop)} pp drop is undetectable here: the smallest drop {pw.n_pairs} paired items can "
                f"show significant at α={s.alpha:g} is {pw.min_detectable_pp:.2g} pp ({pw.min_loss} items lost, none "
                f"gained); a {_pp(s.max_drop)} pp drop needs >= {pw.items_needed} paired items")
    return None


# ---------------------------------------------------------------------------- sampled runs


@dataclass(frozen=True)
class SampledPower:
    """What two sampled runs' paired items can detect at alpha (docs/gate.md, "Sampled runs").

    At best: the sign-flip test's smallest p with m moved items is 2 / 2**m, so at least
    `min_loss` items must move, each by at least one answer of `samples`: no drop below
    100 * min_loss / (n * samples) points can be significant. With 80% power: the normal
    approximation (z_{1-α/2} + z_0.8) * se, se from the observed spread of the per-item
    differences but never below each item's Agresti-Caffo sampling spread."""
    n_pairs: int
    samples: int
    min_loss: int                     # items that must move (one answer each) for p < alpha
    best_case_pp: float               # the smallest drop that could ever be significant here
    mde_pp: float | None              # the drop detectable with 80% power (conservative variance)
    items_needed: int | None          # paired items (at these samples) for --max-drop to be detectable
    samples_needed: int | None        # samples per item (on these items) for the same; None: samples alone cannot

    def to_dict(self) -> dict[str, Any]:
        return {"n_pairs": self.n_pairs, "samples": self.samples, "min_significant_loss": self.min_loss,
                "best_case_drop_pp": self.best_case_pp, "min_detectable_drop_pp": self.mde_pp,
                "items_needed": self.items_needed, "samples_needed": self.samples_needed, "power": 0.8}


def sampled_power(pair: Any, alpha: float, max_drop: float) -> SampledPower | None:
    """`pair`: analysis.sampling.RatePair. None when alpha is 1 (no significance condition)."""
    from ..stats import normal_quantile

    if alpha >= 1:
        return None
    n, k = pair.n_items, max(1, pair.samples)
    loss = smallest_significant_loss(alpha)
    best = 100.0 * loss / (n * k) if n >= loss else math.inf
    z = normal_quantile(1 - alpha / 2) + normal_quantile(0.8)
    items = samples = None
    if max_drop > 0:
        delta = max_drop / 100.0
        observed = (pair.sd_pp / 100.0) ** 2 if pair.sd_pp is not None else 0.0
        floor = (pair.floor_sd_pp / 100.0) ** 2 if pair.floor_sd_pp is not None else 0.5 / k
        per_item = max(observed, floor)      # the per-item variance se² × n the interval uses
        items = max(loss, math.ceil(100.0 * loss / (max_drop * k) - 1e-9),
                    math.ceil(z * z * per_item / delta ** 2 - 1e-9))
        # more samples shrink the sampling part of the spread, not the items' real differences:
        # per-item variance at k' samples ~ between + sampling * k / k'
        sampling = max(pair.within_var or 0.0, floor)
        between = max(0.0, observed - (pair.within_var or 0.0))
        room = n * delta ** 2 / (z * z) - between
        if n >= loss and room > 0:
            samples = max(k + 1, math.ceil(100.0 * loss / (max_drop * n) - 1e-9), math.ceil(sampling * k / room - 1e-9))
    return SampledPower(n, k, loss, best, pair.mde_pp, items, samples)


def sampled_underpowered(pw: SampledPower | None, s: GateSettings) -> str | None:
    """Why this sampled gate cannot (or is unlikely to) catch the drop it was asked to (None when it can)."""
    if pw is None:
        return None
    shape = f"{pw.n_pairs} paired items × {pw.samples} samples"
    need = ""
    if pw.items_needed:
        need = (f"; a {_pp(s.max_drop)} pp drop needs >= {pw.items_needed} paired items at {pw.samples} samples"
                + (f" (or >= {pw.samples_needed} samples per item on these {pw.n_pairs} items)" if pw.samples_needed
                   else f" (more samples per item alone cannot do it on these {pw.n_pairs} items)"))
    if pw.min_loss > pw.n_pairs:
        return (f"this gate cannot fail: on {pw.n_pairs} paired items no drop is significant at α={s.alpha:g} "
                f"(the sign-flip test needs {pw.min_loss} items moved the same way)" + need)
    if s.max_drop <= 0:
        return None
    best = (f"the smallest drop {shape} can show significant at α={s.alpha:g} is {pw.best_case_pp:.2g} pp "
            f"({pw.min_loss} items each losing one of {pw.samples} answers, none gaining)")
    if pw.best_case_pp > s.max_drop + 1e-9:
        return f"a {_pp(s.max_drop)} pp drop is undetectable here: {best}" + need
    if pw.mde_pp is not None and pw.mde_pp > s.max_drop + 1e-9:
        return (f"a {_pp(s.max_drop)} pp drop is undetectable here: with {shape} the drop detectable with 80% power "
                f"at α={s.alpha:g} is ~{pw.mde_pp:.2g} pp (from the spread of the per-item differences, never below "
                f"the sampling spread of {pw.samples} answers per item); {best}" + need)
    return None
