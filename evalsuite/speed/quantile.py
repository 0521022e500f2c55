"""The finite values of a list, and a percentile of them: the room's one definition (numpy's
default, linear between the closest ranks), used by the rows, the load's percentiles and the stats."""
from __future__ import annotations

import math
from typing import Sequence


def finite(values: Sequence[float | None]) -> list[float]:
    return [float(v) for v in values if v is not None and math.isfinite(v)]


def percentile(values: Sequence[float | None], q: float) -> float | None:
    """The q-th percentile (0-100) of the finite values, linear between the closest ranks."""
    xs = sorted(finite(values))
    if not xs:
        return None
    pos = (len(xs) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)
