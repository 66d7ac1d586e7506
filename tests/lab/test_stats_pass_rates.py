"""Assertion pass rates (lab/stats/pass_rates.py): the exact McNemar test is scipy's exact binomial test on the
discordant rounds, Holm's adjustment is statsmodels' `multipletests`, the interval is Wilson's, and below ten
discordant rounds a pair has no verdict — each checked against the libraries inside the test."""

import pytest
from scipy.stats import binomtest
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from lab.stats.pass_rates import exact_mcnemar, paired_pass_tests, pass_rate
from lab.stats.sample_size import NOT_ENOUGH_DATA, NOT_SIGNIFICANT, SIGNIFICANT


def rounds(pattern: str) -> dict[int, bool]:
    """ "1101…" → {0: True, 1: True, 2: False, …}"""
    return {i: c == "1" for i, c in enumerate(pattern)}


def test_exact_mcnemar_is_the_binomial_test_on_discordant_rounds():
    for a_only, b_only in [(9, 1), (12, 3), (5, 5), (0, 10), (1, 0)]:
        expected = binomtest(a_only, a_only + b_only, 0.5, alternative="two-sided").pvalue
        assert exact_mcnemar(a_only, b_only) == pytest.approx(expected)


def test_pairs_count_only_shared_rounds_and_are_holm_adjusted_over_every_pair():
    # A passes everywhere, B fails 12 of 20, C fails 2 of 20 and has one round fewer.
    outcomes = {
        "A": rounds("1" * 20),
        "B": rounds("0" * 12 + "1" * 8),
        "C": {k: v for k, v in rounds("00" + "1" * 18).items() if k != 19},
    }
    ab, ac, bc = paired_pass_tests(outcomes)
    assert (ab.paired, ab.both, ab.a_only, ab.b_only, ab.neither) == (20, 8, 12, 0, 0)
    assert (ac.paired, ac.a_only, ac.b_only) == (19, 2, 0)
    assert (bc.paired, bc.both, bc.a_only, bc.b_only, bc.neither) == (19, 7, 0, 10, 2)
    raw = [
        binomtest(12, 12, 0.5).pvalue,
        binomtest(2, 2, 0.5).pvalue,
        binomtest(0, 10, 0.5).pvalue,
    ]
    adjusted = multipletests(raw, method="holm")[1]
    assert ab.p_value == pytest.approx(raw[0]) and ab.p_holm == pytest.approx(adjusted[0])
    assert bc.p_holm == pytest.approx(adjusted[2])
    assert ab.verdict == SIGNIFICANT and bc.verdict == SIGNIFICANT
    # Two discordant rounds: counts only, and how many more such rounds a verdict needs.
    assert ac.verdict == NOT_ENOUGH_DATA and ac.p_value is None and ac.more_needed == 8
    assert ab.difference == pytest.approx(12 / 20)


def test_a_balanced_pair_with_enough_rounds_is_not_significant():
    [pair] = paired_pass_tests({"A": rounds("10" * 10), "B": rounds("01" * 10)})
    assert (pair.a_only, pair.b_only) == (10, 10)
    assert pair.verdict == NOT_SIGNIFICANT and pair.p_value == pytest.approx(1.0)


def test_the_pass_rate_interval_is_wilsons():
    rate = pass_rate("A", 7, 10)
    low, high = proportion_confint(7, 10, alpha=0.05, method="wilson")
    assert (rate.rate, rate.ci_low, rate.ci_high) == (0.7, pytest.approx(low), pytest.approx(high))
    assert pass_rate("B", 0, 0).rate is None
