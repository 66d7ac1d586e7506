"""Sample-size guidance: the minimum before a verdict, and how many more votes or runs give 80% power."""

import math

import numpy as np
import pytest

from voting.stats.sample_size import (
    MIN_DECISIVE_PER_PAIR,
    more_needed,
    more_to_reach_minimum,
    paired_scores_sample_size,
    sign_test_sample_size,
    two_proportion_sample_size,
)

Z_975 = 1.959963984540054  # standard normal quantiles from tables
Z_80 = 0.8416212335729143


def arcsine_effect(p1: float, p2: float) -> float:
    """Cohen's h (Cohen 1988, ch. 6)."""
    return 2 * math.asin(math.sqrt(p1)) - 2 * math.asin(math.sqrt(p2))


def test_the_minimum_is_ten_decisive_outcomes_per_pair():
    assert MIN_DECISIVE_PER_PAIR == 10
    assert [more_to_reach_minimum(n) for n in (0, 3, 9, 10, 25)] == [10, 7, 1, 0, 0]


def normal_cdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2))


def size_for_power_by_hand(h: float, groups: int) -> float:
    """n (per group) where the two-sided normal test reaches 80% power at α = 0.05, both tails counted:
    Φ(|h|·√(n/groups) − z₀.₉₇₅) + Φ(−|h|·√(n/groups) − z₀.₉₇₅) = 0.8, solved by bisection."""
    low, high = 1e-6, 1e9
    for _ in range(200):
        n = (low + high) / 2
        shift = abs(h) * math.sqrt(n / groups)
        power = normal_cdf(shift - Z_975) + normal_cdf(-shift - Z_975)
        low, high = (n, high) if power < 0.8 else (low, n)
    return (low + high) / 2


@pytest.mark.parametrize("share", [0.6, 0.64, 0.3, 0.9])
def test_sign_test_sample_size_matches_the_arcsine_power_by_hand(share):
    h = arcsine_effect(share, 0.5)
    assert sign_test_sample_size(share) == pytest.approx(size_for_power_by_hand(h, groups=1), rel=1e-6)
    # The textbook shortcut n = ((z₀.₉₇₅ + z₀.₈) / h)² ignores the far tail: nearly the same.
    assert sign_test_sample_size(share) == pytest.approx(((Z_975 + Z_80) / h) ** 2, rel=1e-3)


@pytest.mark.parametrize(("rate_a", "rate_b"), [(0.8, 0.6), (0.3, 0.5), (0.05, 0.15)])
def test_two_proportion_sample_size_matches_the_arcsine_power_by_hand(rate_a, rate_b):
    h = arcsine_effect(rate_a, rate_b)
    assert two_proportion_sample_size(rate_a, rate_b) == pytest.approx(size_for_power_by_hand(h, groups=2), rel=1e-6)


def test_paired_scores_sample_size_is_the_t_test_size_over_wilcoxons_efficiency():
    # Differences 1 ± √2 have mean 1 and standard deviation 2, so d = 0.5.
    # R pwr::pwr.t.test(d = 0.5, power = 0.8, type = "one.sample") -> n = 33.36713; divided by 3/π.
    differences = np.array([1 - math.sqrt(2), 1 + math.sqrt(2)])
    assert paired_scores_sample_size(differences) == pytest.approx(33.36713 / (3 / math.pi), abs=1e-4)


def test_a_zero_difference_needs_no_more_data_rather_than_infinitely_much():
    assert sign_test_sample_size(0.5) is None
    assert two_proportion_sample_size(0.4, 0.4) is None
    assert paired_scores_sample_size(np.array([1.0, -1.0, 2.0, -2.0])) is None


def test_a_smaller_significance_level_asks_for_more_votes():
    assert sign_test_sample_size(0.6, alpha=0.05 / 3) > sign_test_sample_size(0.6)


def test_more_needed_is_whole_and_at_least_one():
    assert more_needed(193.2, 20) == 174
    assert more_needed(15.0, 20) == 1
