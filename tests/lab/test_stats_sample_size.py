"""Sample-size guidance: the minimum before a verdict, and how many more votes or runs give 80% power."""

import math

import numpy as np
import pytest
from scipy.stats import binom, binomtest
from statsmodels.stats.proportion import power_proportions_2indep

from lab.stats.sample_size import (
    MIN_DECISIVE_PER_PAIR,
    more_needed,
    more_to_reach_minimum,
    paired_scores_sample_size,
    sign_test_power,
    sign_test_sample_size,
    two_proportion_sample_size,
    uses_fisher,
)

Z_975 = 1.959963984540054  # standard normal quantiles from tables
Z_80 = 0.8416212335729143


def test_the_minimum_is_ten_decisive_outcomes_per_pair():
    assert MIN_DECISIVE_PER_PAIR == 10
    assert [more_to_reach_minimum(n) for n in (0, 3, 9, 10, 25)] == [10, 7, 1, 0, 0]


def exact_sign_test_power(share: float, n: int, alpha: float = 0.05) -> float:
    """Power of scipy's exact binomial test against 0.5, by summing the chance of every count it rejects."""
    return sum(binom.pmf(k, n, share) for k in range(n + 1) if binomtest(k, n, 0.5).pvalue < alpha)


def test_the_sign_test_guidance_is_for_the_exact_test_that_decides_the_verdict():
    # 8 of 10 decisive votes, one pair: the normal approximation says 19 in all, where the exact test has 67% power.
    share = 0.8
    assert exact_sign_test_power(share, 19) == pytest.approx(0.673, abs=1e-3)
    powers = {n: exact_sign_test_power(share, n) for n in range(1, 80)}
    held_from = 1 + max(n for n, power in powers.items() if power < 0.8)
    assert min(n for n, power in powers.items() if power >= 0.8) == 20 and held_from == 23
    assert sign_test_sample_size(share) == held_from
    assert sign_test_power(share, np.arange(19, 24)) == pytest.approx([powers[n] for n in range(19, 24)], abs=1e-9)


@pytest.mark.parametrize(("share", "alpha"), [(0.65, 0.05), (0.3, 0.05 / 3), (0.9, 0.05 / 10), (0.6, 0.05)])
def test_from_the_recommended_total_on_the_exact_test_keeps_its_power(share, alpha):
    total = int(sign_test_sample_size(share, alpha=alpha))
    assert all(exact_sign_test_power(share, n, alpha) >= 0.8 for n in range(total, total + 15))
    assert exact_sign_test_power(share, total - 1, alpha) < 0.8


@pytest.mark.parametrize(("rate_a", "rate_b"), [(0.8, 0.6), (0.3, 0.5), (0.05, 0.15)])
def test_two_proportion_sample_size_is_for_the_pooled_z_test(rate_a, rate_b):
    per_group = two_proportion_sample_size(rate_a, rate_b)
    # statsmodels' power of the pooled z-test (pooled variance under the null) is 80% there.
    power = power_proportions_2indep(rate_a - rate_b, rate_b, per_group, alpha=0.05, alternative="two-sided").power
    assert power == pytest.approx(0.8, abs=1e-3)
    # Fleiss' formula for the pooled test, by hand.
    pooled = (rate_a + rate_b) / 2
    spread = math.sqrt(rate_a * (1 - rate_a) + rate_b * (1 - rate_b))
    fleiss = (Z_975 * math.sqrt(2 * pooled * (1 - pooled)) + Z_80 * spread) ** 2 / (rate_a - rate_b) ** 2
    assert per_group == pytest.approx(fleiss, rel=1e-6)


def test_five_against_fifteen_percent_needs_140_runs_each_not_132():
    assert two_proportion_sample_size(0.05, 0.15) == pytest.approx(140.1, abs=0.05)
    assert uses_fisher(0.05, 0.15, 40) and not uses_fisher(0.05, 0.15, 141)


def test_paired_scores_sample_size_is_the_t_test_size_over_wilcoxons_efficiency():
    # Differences 1 ± √2 have mean 1 and standard deviation 2, so d = 0.5.
    # R pwr::pwr.t.test(d = 0.5, power = 0.8, type = "one.sample") -> n = 33.36713; divided by 3/π.
    differences = np.array([1 - math.sqrt(2), 1 + math.sqrt(2)])
    assert paired_scores_sample_size(differences, mean=1.0) == pytest.approx(33.36713 / (3 / math.pi), abs=1e-4)


def test_a_zero_difference_needs_no_more_data_rather_than_infinitely_much():
    assert sign_test_sample_size(0.5) is None
    assert two_proportion_sample_size(0.4, 0.4) is None
    assert paired_scores_sample_size(np.array([1.0, -1.0, 2.0, -2.0]), mean=0.0) is None


def test_a_smaller_significance_level_asks_for_more_votes():
    assert sign_test_sample_size(0.6, alpha=0.05 / 3) > sign_test_sample_size(0.6)


def test_more_needed_is_whole_and_at_least_one():
    assert more_needed(193.2, 20) == 174
    assert more_needed(15.0, 20) == 1
