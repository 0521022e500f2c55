"""Small exact statistics for comparing runs: Wilson intervals, exact McNemar, percentiles.

Pure standard library (math.lgamma, sums in floats relative to the largest term) so the
CLI needs no scipy; linear in the number of items. The tests check every figure against
scipy.stats.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence


def accuracy(n_correct: int, n_items: int, n_errors: int) -> float | None:
    """correct / (items − errors), as docs/records.md defines it: an item that errored was never
    answered, so it counts neither way. None when no item was graded."""
    graded = n_items - n_errors
    return n_correct / graded if graded else None


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for k successes in n trials (z=1.96: 95%).

    n == 0 gives (0.0, 1.0): nothing is known, and callers print it as such.
    """
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"wilson: need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    # clamp rounding noise at the ends (k == 0 or k == n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def binomial_two_sided_p(k: int, n: int) -> float:
    """Exact two-sided p of k successes in n fair coin flips (p = 1/2).

    The same definition as scipy.stats.binomtest: the total probability of every outcome
    no more likely than the one seen. With p = 1/2 the pmf is symmetric, so that is both
    tails beyond min(k, n - k): p = 2 * P(X <= m), or 1 when m is the middle. The tail is
    summed as ratios to its largest term C(n, m) (each term is the previous one times
    i / (n - i + 1)), and scaled once in log space: O(m) float operations, no big integers.
    """
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"binomial test: need 0 <= k <= n, got k={k}, n={n}")
    m = min(k, n - k)
    if n == 0 or 2 * m >= n - 1:
        # the middle outcome (or one of the two middle ones): every outcome is at most as likely
        return 1.0
    ratio_sum, term = 1.0, 1.0
    for i in range(m, 0, -1):
        term *= i / (n - i + 1)
        ratio_sum += term
        if term < 1e-17 * ratio_sum:
            break
    log_comb = math.lgamma(n + 1) - math.lgamma(m + 1) - math.lgamma(n - m + 1)
    log_p = math.log(2.0) + log_comb + math.log(ratio_sum) - n * math.log(2.0)
    return min(1.0, math.exp(log_p))


@dataclass(frozen=True)
class McNemar:
    """Exact McNemar test on paired right/wrong outcomes of run A (first) and run B.

    b: items A got right and B got wrong; c: items A got wrong and B got right.
    Items both got right or both got wrong carry no information about which is better.
    """

    b: int
    c: int
    n_pairs: int          # paired items the test saw (errors in either run excluded)
    p: float              # two-sided exact p: binomial(b, b + c, 1/2)

    @property
    def discordant(self) -> int:
        return self.b + self.c

    def significant(self, alpha: float) -> bool:
        return self.p < alpha


def mcnemar_exact(a_correct: Sequence[bool], b_correct: Sequence[bool]) -> McNemar:
    """McNemar's exact test for two equal-length lists of per-item correctness."""
    if len(a_correct) != len(b_correct):
        raise ValueError(f"mcnemar: {len(a_correct)} outcomes for A but {len(b_correct)} for B")
    b = sum(1 for x, y in zip(a_correct, b_correct) if x and not y)
    c = sum(1 for x, y in zip(a_correct, b_correct) if y and not x)
    return McNemar(b=b, c=c, n_pairs=len(a_correct), p=binomial_two_sided_p(b, b + c))


def smallest_possible_p(n_pairs: int) -> float:
    """The smallest McNemar p that n paired items can ever give (all of them discordant,
    all one way). Above alpha, no drop on this many items can be called significant."""
    return binomial_two_sided_p(0, n_pairs) if n_pairs > 0 else 1.0


def percentile(values: Sequence[float], q: float) -> float | None:
    """q-th percentile (0..100) with linear interpolation (numpy's default); None if empty."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def median(values: Sequence[float]) -> float | None:
    return percentile(values, 50)


def mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None
