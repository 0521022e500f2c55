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
