"""The few statistics a profile needs: mean, sample std and the Student-t 95% interval of the
mean over the runs, a percentile, and the ratio of two means with its interval (delta method
on the log scale, Welch's degrees of freedom) for comparing two profiles. Pure functions."""
from __future__ import annotations

import math
from typing import Sequence

from .quantile import finite, percentile  # noqa: F401  (percentile: the room's one, quantile.py)
from .rows import Stat


def summarize(values: Sequence[float | None]) -> Stat:
    """Stat of the finite values (None and inf/nan left out)."""
    xs = finite(values)
    if not xs:
        return Stat(None, None, None, ())
    mean = sum(xs) / len(xs)
    if len(xs) < 2:
        return Stat(mean, None, None, tuple(xs))
    std = math.sqrt(sum((x - mean) ** 2 for x in xs) / (len(xs) - 1))
    half = t975(len(xs) - 1) * std / math.sqrt(len(xs))
    return Stat(mean, std, (mean - half, mean + half), tuple(xs))


def t975(df: float) -> float:
    from ..analysis.stats import t_quantile

    return t_quantile(df, 0.975)


def ratio(a: Stat, b: Stat) -> tuple[float | None, tuple[float, float] | None]:
    """b.mean / a.mean and its 95% interval: the log of a ratio of means has variance about
    sA²/(nA mA²) + sB²/(nB mB²); Welch-Satterthwaite degrees of freedom. No interval when either
    side has fewer than two runs (its noise is not known)."""
    if not a.mean or b.mean is None or a.mean <= 0 or b.mean <= 0:
        return None, None
    r = b.mean / a.mean
    if a.n < 2 or b.n < 2 or a.std is None or b.std is None:
        return r, None
    va = (a.std / a.mean) ** 2 / a.n
    vb = (b.std / b.mean) ** 2 / b.n
    se = math.sqrt(va + vb)
    if se == 0:
        return r, (r, r)
    df = (va + vb) ** 2 / ((va ** 2 / (a.n - 1) if va else 0.0) + (vb ** 2 / (b.n - 1) if vb else 0.0))
    half = t975(df) * se
    return r, (r * math.exp(-half), r * math.exp(half))
