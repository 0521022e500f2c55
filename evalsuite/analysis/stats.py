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


# ---------------------------------------------------------------------------- equivalence


def normal_quantile(q: float) -> float:
    """The standard normal quantile (statistics.NormalDist: exact to float precision, no scipy)."""
    from statistics import NormalDist

    return NormalDist().inv_cdf(q)


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularised incomplete beta function (modified Lentz;
    Numerical Recipes' betacf), for x < (a + 1) / (a + b + 2), where it converges."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 100_000):
        m2 = 2 * m
        for numerator in (m * (b - m) * x / ((a + m2 - 1.0) * (a + m2)),
                          -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-16:
            break
    return h


def _incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b), 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, 1.0 - x) / b


def t_two_sided_p(t: float, df: float) -> float:
    """The two-sided p of Student's t statistic with df degrees of freedom, P(|T_df| >= |t|) =
    I_x(df/2, 1/2) with x = df / (df + t²) (scipy.stats.t.sf(|t|, df) * 2; checked against it)."""
    if not df > 0:
        raise ValueError(f"t_two_sided_p: need df > 0, got {df}")
    if math.isinf(t):
        return 0.0
    return min(1.0, max(0.0, _incomplete_beta(df / 2.0, 0.5, df / (df + t * t))))


def t_quantile(df: float, q: float) -> float:
    """Student's t quantile: t such that P(T_df <= t) = q (scipy.special.stdtrit(df, q)).

    Pure standard library, like the rest of this module: importing scipy.special for this one
    number cost a sampled run ~0.25 CPU s. The tests check it against scipy to 1e-9 relative.
    Closed forms for 1 and 2 degrees of freedom; otherwise the upper tail 0.5 I_x(df/2, 1/2),
    x = df / (df + t^2) (near the middle the central part instead), solved for t by Newton steps
    kept inside a bracket (bisection when a step would leave it), from the Cornish-Fisher
    expansion around the normal quantile (four terms; alone from 3,000 degrees of freedom)."""
    if not 0.0 < q < 1.0:
        raise ValueError(f"t_quantile: need 0 < q < 1, got {q}")
    if not df > 0:
        raise ValueError(f"t_quantile: need df > 0, got {df}")
    if q == 0.5:
        return 0.0
    # the quantile is odd about q = 1/2: work on the upper half, with the tail probability and
    # the central part |q - 1/2| taken from q itself (1 - q would round a tiny lower tail away)
    sign = 1.0 if q > 0.5 else -1.0
    tail = 1.0 - q if q > 0.5 else q
    central = abs(q - 0.5)
    if df == 1:   # Cauchy; in the far tail from the tail, which keeps its precision there
        return sign * (math.tan(math.pi * central) if central < 0.25 else 1.0 / math.tan(math.pi * tail))
    if df == 2:
        return sign * 2.0 * central / math.sqrt(2.0 * tail * (1.0 - tail))
    z = -normal_quantile(tail)
    t = z + ((z ** 3 + z) / 4 + ((5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96
                                 + ((3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384
                                    + (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z)
                                    / 92160 / df) / df) / df) / df
    if df >= 3000:
        # the expansion is exact to ~1e-14 here, while the continued fraction, with a = df/2 in
        # the hundreds of thousands, would lose digits (5e-9 at a million degrees of freedom)
        return sign * t
    log_density_front = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    low, high = 0.0, math.inf
    for _ in range(200):
        if not low < t < high:
            t = (low + high) / 2 if high < math.inf else 2 * low + 1.0
        # P(T > t) - tail > 0 means t is too small; near the middle from the central part
        # P(0 < T <= t) = I_y(1/2, df/2) / 2, y = t^2 / (df + t^2), which keeps its precision there
        if central < 0.25:
            excess = central - 0.5 * _incomplete_beta(0.5, df / 2, t * t / (df + t * t))
        else:
            excess = 0.5 * _incomplete_beta(df / 2, 0.5, df / (df + t * t)) - tail
        if excess > 0:
            low = t
        else:
            high = t
        density = math.exp(log_density_front - (df + 1) / 2 * math.log1p(t * t / df))
        step = excess / density
        t += step
        if abs(step) <= 1e-15 * abs(t) or high - low <= 1e-15 * abs(t):
            break
    return sign * t


@dataclass(frozen=True)
class PairedDifference:
    """Candidate − baseline accuracy on paired right/wrong outcomes, with Newcombe's hybrid
    score interval for paired proportions (Newcombe 1998, method 10).

    a: both right, b: baseline right only, c: candidate right only, d: both wrong.
    `low`/`high` are proportions (−1..1) at two-sided confidence `confidence`.
    """

    a: int
    b: int
    c: int
    d: int
    confidence: float
    difference: float
    low: float
    high: float

    @property
    def n_pairs(self) -> int:
        return self.a + self.b + self.c + self.d


def paired_difference_ci(a: int, b: int, c: int, d: int, confidence: float = 0.90) -> PairedDifference:
    """Newcombe's method 10: a Wilson score interval for each run's accuracy, combined with the
    correlation φ of the paired outcomes (the square-and-add rule). Unlike the Wald interval it
    stays inside [−1, 1] and keeps its coverage near 0 and 1 and at few discordant pairs.

        θ = p2 − p1 = (c − b) / n        (p1 baseline, p2 candidate)
        L = θ − √((p2 − l2)² − 2φ (p2 − l2)(u1 − p1) + (u1 − p1)²)
        U = θ + √((u2 − p2)² − 2φ (u2 − p2)(p1 − l1) + (p1 − l1)²)
        φ = (ad − bc) / √((a+b)(c+d)(a+c)(b+d)),  0 when a margin is empty
    """
    if min(a, b, c, d) < 0:
        raise ValueError(f"paired difference: counts must be >= 0, got a={a} b={b} c={c} d={d}")
    n = a + b + c + d
    if n == 0:
        return PairedDifference(a, b, c, d, confidence, 0.0, -1.0, 1.0)
    z = normal_quantile(1 - (1 - confidence) / 2)
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = wilson(a + b, n, z)
    l2, u2 = wilson(a + c, n, z)
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    phi = (a * d - b * c) / math.sqrt(margins) if margins else 0.0
    theta = (c - b) / n
    low = theta - math.sqrt(max(0.0, (p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2))
    high = theta + math.sqrt(max(0.0, (u2 - p2) ** 2 - 2 * phi * (u2 - p2) * (p1 - l1) + (p1 - l1) ** 2))
    return PairedDifference(a, b, c, d, confidence, theta, max(-1.0, low), min(1.0, high))


@dataclass(frozen=True)
class Equivalence:
    """Two one-sided tests (TOST) at level alpha against a margin of ±margin_pp points:
    equivalent when the (1 − 2α) interval of the paired difference lies inside the margin."""

    verdict: str                    # "equivalent", "worse", "better" or "undecided"
    margin_pp: float
    alpha: float
    difference_pp: float
    low_pp: float
    high_pp: float
    n_pairs: int
    items_needed: int | None        # paired items in all for 80% power (None: not reachable)
    more_items: int | None          # items_needed − n_pairs (undecided only)
    method: str = "Newcombe hybrid score interval (method 10) for paired proportions"

    def words(self) -> str:
        ci = (f"{100 * (1 - 2 * self.alpha):g}% CI [{self.low_pp:+.2f}, {self.high_pp:+.2f}] pp of the paired "
              f"difference {self.difference_pp:+.2f} pp on {self.n_pairs} items, margin ±{self.margin_pp:g} pp, "
              f"TOST α={self.alpha:g}")
        if self.n_pairs == 0:
            return "undecided: no paired items"
        if self.verdict == "equivalent":
            return f"equivalent ({ci})"
        if self.verdict in ("worse", "better"):
            return f"{self.verdict} by more than the margin ({ci})"
        if self.more_items is None:
            return (f"undecided: the observed difference is at or beyond the margin, so no number of paired items "
                    f"is expected to show equivalence ({ci})")
        return f"undecided: {self.more_items} more paired items needed ({ci}; {self.items_needed} in all for 80% power)"

    def to_dict(self) -> dict:
        return {"verdict": self.verdict, "margin_pp": self.margin_pp, "alpha": self.alpha,
                "difference_pp": self.difference_pp, "ci_pp": [self.low_pp, self.high_pp],
                "confidence": 1 - 2 * self.alpha, "n_pairs": self.n_pairs, "items_needed": self.items_needed,
                "more_items": self.more_items, "method": self.method, "words": self.words()}


def equivalence_items_needed(discordant: float, difference: float, margin: float, alpha: float,
                             power: float = 0.80) -> int | None:
    """Paired items for a TOST on paired binary outcomes to show equivalence with `power`, if
    the discordant rate and the difference (proportions) are what was observed (the normal
    approximation of a TOST on the per-pair difference, as in Chow, Shao & Wang, Sample Size
    Calculations in Clinical Research; checked against the interval itself by simulation in the tests):

        n = (z_{1−α} + z_{1−β})² · σ² / (M − |δ|)²     (δ ≠ 0; z_{1−β/2} for δ = 0)
        σ² = p_disc − δ²   (the variance of one pair's difference, −1, 0 or +1)

    None when |δ| >= M (equivalence is not expected however many items)."""
    if abs(difference) >= margin:
        return None
    beta = 1 - power
    z = normal_quantile(1 - alpha) + normal_quantile(1 - (beta / 2 if difference == 0 else beta))
    variance = max(discordant - difference ** 2, 0.0)
    return max(1, math.ceil(z * z * variance / (margin - abs(difference)) ** 2 - 1e-9))


def equivalence(a: int, b: int, c: int, d: int, margin_pp: float, alpha: float = 0.05) -> Equivalence:
    """TOST verdict for candidate − baseline on paired outcomes (see PairedDifference).
    equivalent: −M < L and U < M; worse: U < −M; better: L > M; otherwise undecided, with the
    paired items needed for 80% power at the observed discordance (at least one discordant
    pair in n assumed when none was seen: a zero variance would promise equivalence for free)."""
    if not 0 < alpha < 0.5:
        raise ValueError(f"equivalence: alpha must be in (0, 0.5), got {alpha}")
    ci = paired_difference_ci(a, b, c, d, confidence=1 - 2 * alpha)
    n = ci.n_pairs
    margin = margin_pp / 100
    if -margin < ci.low and ci.high < margin:
        verdict = "equivalent"
    elif ci.high < -margin:
        verdict = "worse"
    elif ci.low > margin:
        verdict = "better"
    else:
        verdict = "undecided"
    needed = more = None
    if verdict == "undecided" and n:
        discordant = max((b + c) / n, 1 / n)
        needed = equivalence_items_needed(discordant, ci.difference, margin, alpha)
        if needed is not None:
            more = max(needed - n, 1)   # undecided now: at least one more item, whatever the approximation says
    return Equivalence(verdict=verdict, margin_pp=margin_pp, alpha=alpha, difference_pp=100 * ci.difference,
                       low_pp=100 * ci.low, high_pp=100 * ci.high, n_pairs=n, items_needed=needed, more_items=more)
