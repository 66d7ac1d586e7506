"""The peek-safe (always-valid) p-value: exact values by hand, and that peeking after every vote stays honest."""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.special import betaln
from scipy.stats import binom, binomtest

from lab.stats.pairwise import sign_test
from lab.stats.sequential import always_valid_interval, always_valid_p, always_valid_p_values, log_mixture_ratio


def beta_function(a: int, b: int) -> Fraction:
    """B(a, b) for whole numbers: (a − 1)! (b − 1)! / (a + b − 1)!."""
    return Fraction(math.factorial(a - 1) * math.factorial(b - 1), math.factorial(a + b - 1))


def inverse_ratio_by_hand(a_wins: int, n: int, c: int) -> Fraction:
    """1 / Λ with Λ = B(c + s, c + n − s) / B(c, c) / 0.5ⁿ, exactly."""
    return beta_function(c, c) / (beta_function(c + a_wins, c + n - a_wins) * 2**n)


def test_always_valid_p_matches_exact_fractions():
    # Uniform prior, 10 wins of 10: Λ = 2¹⁰ · 10! 0! / 11! = 1024 / 11, so 1/Λ = 11/1024.
    assert inverse_ratio_by_hand(10, 10, 1) == Fraction(11, 1024)
    assert always_valid_p(10, 10, prior_strength=1) == pytest.approx(11 / 1024, rel=1e-12)
    # Default Beta(5, 5) prior: B(5, 5) = 1/630, B(15, 5) = 1/58140, so 1/Λ = 58140 / (630 · 1024).
    assert inverse_ratio_by_hand(10, 10, 5) == Fraction(58140, 630 * 1024)
    assert always_valid_p(10, 10) == pytest.approx(58140 / (630 * 1024), rel=1e-12)


def test_the_path_is_the_inverse_ratio_after_each_outcome_capped_at_one():
    outcomes = [True, True, True, True, True, True, True, False, False, False, False, False]
    path = always_valid_p_values(outcomes, prior_strength=1)
    by_hand = [float(min(1, inverse_ratio_by_hand(sum(outcomes[:n]), n, 1))) for n in range(1, len(outcomes) + 1)]
    assert path.tolist() == pytest.approx(by_hand, rel=1e-12)
    assert always_valid_p(0, 0) == 1.0


def test_ten_wins_then_ten_losses_the_peek_safe_p_can_be_below_the_fixed_sample_one():
    # W1: the peek-safe p is not always the larger. After 10 straight wins it is 0.090; after 10 losses more the
    # fixed-sample p is 1.0, and the path's lowest point stays below it.
    path = always_valid_p_values([True] * 10 + [False] * 10)
    assert path[9] == pytest.approx(0.090, abs=5e-4)
    assert binomtest(10, 20, 0.5).pvalue == 1.0 and path.min() < 1.0


@pytest.mark.parametrize(("a_wins", "decisive"), [(9, 11), (10, 10), (0, 7), (31, 50), (500, 1000), (14, 23)])
def test_the_always_valid_interval_is_the_set_where_the_mixture_ratio_stays_below_one_over_alpha(a_wins, decisive):
    low, high = always_valid_interval(a_wins, decisive)
    assert 0 <= low <= a_wins / decisive <= high <= 1

    def inverse_ratio(share: float) -> float:
        # 1/Λₙ(q) = qˢ (1 − q)ⁿ⁻ˢ B(c, c) / B(c + s, c + n − s), with scipy's binomial pmf and beta function.
        binomial = binom.pmf(a_wins, decisive, share) / math.comb(decisive, a_wins)
        return binomial * math.exp(betaln(5, 5) - betaln(5 + a_wins, 5 + decisive - a_wins))

    for bound in (low, high):
        if 0 < bound < 1:
            assert inverse_ratio(bound) == pytest.approx(0.05, rel=1e-6)
    inside = np.linspace(low, high, 7)[1:-1]
    assert all(inverse_ratio(share) > 0.05 for share in inside)
    # The interval and the peek-safe p-value agree: 50% lies outside exactly when p < 0.05.
    assert (not low <= 0.5 <= high) == (always_valid_p(a_wins, decisive) < 0.05)


def test_the_always_valid_interval_covers_the_true_share_at_every_look():
    """500 simulated comparisons with a true share of 0.65, 300 decisive votes each: the interval, checked after
    every vote, ever misses 0.65 in at most about 5% of them."""
    rng = np.random.default_rng(11)
    missed = 0
    for _ in range(500):
        a_wins = np.cumsum(rng.random(300) < 0.65)
        ratios = log_mixture_ratio(a_wins, np.arange(1, 301), 0.65)
        missed += bool((ratios >= math.log(20)).any())
    assert missed / 500 <= 0.06


def test_it_refuses_a_non_positive_prior():
    with pytest.raises(ValueError, match="positive"):
        always_valid_p(1, 1, prior_strength=0)


def test_peeking_after_every_vote_stays_honest_only_with_the_always_valid_p():
    """1,000 simulated comparisons of two equally good variants, 500 decisive votes each, checked after every vote
    from the 10th on: the always-valid p-value may drop below 0.05 in at most about 5% of them (Ville's
    inequality), while the fixed-sample p-value, checked the same way, is fooled far more often."""
    rng = np.random.default_rng(20240601)
    comparisons, votes = 1000, 500
    outcomes = rng.random((comparisons, votes)) < 0.5
    n = np.arange(1, votes + 1)
    a_wins = np.cumsum(outcomes, axis=1)
    # The exact two-sided sign test at 0.5 is twice the smaller binomial tail (symmetric null).
    fixed = np.minimum(1, 2 * binom.cdf(np.minimum(a_wins, n - a_wins), n, 0.5))
    assert fixed[0, 40] == pytest.approx(sign_test(int(a_wins[0, 40]), 41 - int(a_wins[0, 40])), rel=1e-9)
    fooled_fixed = (fixed[:, 9:] < 0.05).any(axis=1).mean()
    fooled_always_valid = np.mean([always_valid_p_values(row).min() < 0.05 for row in outcomes])
    assert fooled_always_valid <= 0.06
    assert fooled_fixed >= 3 * max(fooled_always_valid, 0.05)


def test_the_always_valid_p_finds_a_real_difference():
    rng = np.random.default_rng(7)
    found = [always_valid_p(int((rng.random(200) < 0.7).sum()), 200) < 0.05 for _ in range(200)]
    assert np.mean(found) > 0.9
