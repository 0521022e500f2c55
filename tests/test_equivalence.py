"""The equivalence statistics: Newcombe's paired-difference interval and the TOST sample size."""
from __future__ import annotations

import math
import random

import pytest

from evalsuite.analysis.stats import equivalence, equivalence_items_needed, paired_difference_ci


def wald(a, b, c, d, z):
    n = a + b + c + d
    theta = (c - b) / n
    half = z * math.sqrt(((b + c) / n - theta ** 2) / n)
    return theta - half, theta + half


def test_newcombe_agrees_with_wald_when_the_sample_is_large():
    ci = paired_difference_ci(7000, 215, 185, 2600, confidence=0.90)
    low, high = wald(7000, 215, 185, 2600, 1.6448536269514722)
    assert ci.difference == pytest.approx(-0.003)
    assert ci.low == pytest.approx(low, abs=2e-4) and ci.high == pytest.approx(high, abs=2e-4)


def test_newcombe_stays_in_range_and_is_not_degenerate_where_wald_is():
    ci = paired_difference_ci(20, 0, 0, 0)       # every item both right: Wald gives [0, 0]
    assert -1 <= ci.low < 0 < ci.high <= 1
    ci = paired_difference_ci(0, 10, 0, 0)       # every item lost
    assert ci.low >= -1 and ci.high < 0
    assert paired_difference_ci(0, 0, 0, 0).low == -1


def test_coverage_is_near_nominal():
    """Simulated paired outcomes with a known difference: the 90% interval covers it ~90% of the time."""
    rng = random.Random(7)
    for p_b, p_c, n in ((0.03, 0.02, 300), (0.10, 0.10, 100), (0.01, 0.005, 2000)):
        covered, trials = 0, 1500
        for _ in range(trials):
            draws = [rng.random() for _ in range(n)]
            b = sum(1 for u in draws if u < p_b)
            c = sum(1 for u in draws if p_b <= u < p_b + p_c)
            a = (n - b - c) * 3 // 4
            ci = paired_difference_ci(a, b, c, n - a - b - c, confidence=0.90)
            covered += ci.low <= p_c - p_b <= ci.high
        assert 0.87 <= covered / trials <= 0.97, (p_b, p_c, n, covered / trials)


def test_items_needed_are_enough_and_not_wildly_too_many():
    # observed 1,000 items: 22 lost, 19 gained (-0.3 pp); the items needed at those rates
    eq = equivalence(700, 22, 19, 259, margin_pp=1)
    assert eq.verdict == "undecided" and eq.more_items == eq.items_needed - 1000
    n = eq.items_needed
    scaled = lambda m: (round(700 * m / 1000), round(22 * m / 1000), round(19 * m / 1000))  # noqa: E731
    a, b, c = scaled(n)
    assert equivalence(a, b, c, n - a - b - c, margin_pp=1).verdict == "equivalent"
    a, b, c = scaled(n // 3)   # 80% power asks for ~2.3x the items at which the expected interval just fits
    assert equivalence(a, b, c, n // 3 - a - b - c, margin_pp=1).verdict == "undecided"


def test_items_needed_formula():
    # (z_.95 + z_.80)^2 * (0.041 - 0.003^2) / (0.01 - 0.003)^2
    z = 1.6448536269514722 + 0.8416212335729143
    assert equivalence_items_needed(0.041, -0.003, 0.01, 0.05) == math.ceil(z * z * (0.041 - 0.000009) / 0.007 ** 2)
    assert equivalence_items_needed(0.04, 0.011, 0.01, 0.05) is None   # beyond the margin: never
    z0 = 1.6448536269514722 + 1.2815515655446004   # δ = 0: z_{1-β/2}
    assert equivalence_items_needed(0.04, 0.0, 0.01, 0.05) == math.ceil(z0 * z0 * 0.04 / 0.0001)


def test_no_discordant_pair_still_needs_items():
    eq = equivalence(50, 0, 0, 0, margin_pp=1)
    assert eq.verdict == "undecided" and eq.more_items >= 1
    assert equivalence(5000, 0, 0, 0, margin_pp=1).verdict == "equivalent"


@pytest.mark.parametrize("p_b,p_c", [(0.022, 0.019), (0.02, 0.02), (0.05, 0.045)])
def test_items_needed_give_the_promised_power(p_b, p_c):
    """Simulated at the items needed, the gate's own TOST (Newcombe interval) shows equivalence
    about 80% of the time: the sample size and the interval agree."""
    import numpy as np

    n = equivalence_items_needed(p_b + p_c, p_c - p_b, 0.01, 0.05)
    draws = np.random.default_rng(3).multinomial(n, [0.7, p_b, p_c, 0.3 - p_b - p_c], size=1000)
    power = sum(equivalence(int(a), int(b), int(c), int(d), 1).verdict == "equivalent" for a, b, c, d in draws) / 1000
    assert 0.75 <= power <= 0.86, (n, power)
    # and at half the items, clearly less
    half = np.random.default_rng(4).multinomial(n // 2, [0.7, p_b, p_c, 0.3 - p_b - p_c], size=1000)
    assert sum(equivalence(int(a), int(b), int(c), int(d), 1).verdict == "equivalent" for a, b, c, d in half) / 1000 < 0.6
