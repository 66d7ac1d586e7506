"""Bootstrap draws of whole votes: each resample is Multinomial(total, counts / total), drawn through Poisson
counts and a correction, and matches the multinomial's mean and covariance."""

import numpy as np
import pytest

from lab.stats.resampling import multinomial_draws

COUNTS = np.array([5, 1, 3, 0, 11])


def test_every_resample_draws_exactly_the_total_and_never_a_kind_counted_zero_times():
    draws = multinomial_draws(np.random.default_rng(1), COUNTS, 5000)
    assert draws.shape == (5000, 5)
    assert (draws.sum(axis=1) == COUNTS.sum()).all()
    assert (draws >= 0).all()
    assert (draws[:, 3] == 0).all()


def test_resamples_have_the_multinomials_mean_and_covariance():
    # Poisson sums below and above the total both occur at this size, so both corrections are exercised.
    draws = multinomial_draws(np.random.default_rng(2), COUNTS, 40_000)
    total, share = COUNTS.sum(), COUNTS / COUNTS.sum()
    mean, covariance = total * share, total * (np.diag(share) - np.outer(share, share))
    standard_error = np.sqrt(np.diag(covariance) / len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - mean) <= 5 * standard_error + 1e-12)
    assert np.cov(draws, rowvar=False) == pytest.approx(covariance, abs=0.1)


def test_it_matches_numpys_multinomial_in_distribution_on_a_small_case():
    # Two kinds, 3 and 1 votes: the first kind's count is Binomial(4, 3/4): P(0..4) = 1, 12, 54, 108, 81 / 256.
    draws = multinomial_draws(np.random.default_rng(3), np.array([3, 1]), 64_000)
    frequencies = np.bincount(draws[:, 0], minlength=5) / len(draws)
    assert frequencies == pytest.approx(np.array([1, 12, 54, 108, 81]) / 256, abs=0.006)


def test_the_same_seed_gives_the_same_resamples():
    first = multinomial_draws(np.random.default_rng(7), COUNTS, 50)
    assert np.array_equal(multinomial_draws(np.random.default_rng(7), COUNTS, 50), first)
