"""Judge scores: mean with a seeded bootstrap interval, and the paired Wilcoxon signed-rank test."""

import statistics

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats
from scipy.stats import t

from lab.stats.scores import paired_score_test, score_summary

# Darwin's Zea mays data (cross- minus self-fertilised height, eighths of an inch), as in Hollander & Wolfe and
# the scipy.stats.wilcoxon documentation.
DARWIN = [6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75]


def subsets_of_ranks_with_sum_at_most(n: int, limit: int) -> int:
    """How many of the 2ⁿ sign patterns of ranks 1..n give a positive-rank sum ≤ limit (subset-sum counting)."""
    ways = [1] + [0] * limit
    for rank in range(1, n + 1):
        for total in range(limit, rank - 1, -1):
            ways[total] += ways[total - rank]
    return sum(ways)


def test_wilcoxon_matches_the_exact_null_distribution_for_darwins_data():
    scores_a = {round_id: 100 + difference for round_id, difference in enumerate(DARWIN)}
    scores_b = dict.fromkeys(range(len(DARWIN)), 100)
    result = paired_score_test("cross", "self", scores_a, scores_b)
    # Sorted by size, |−48| is the 10th difference and |−67| the 14th, so W⁻ = 10 + 14 = 24.
    # Exact two-sided p = 2 · #{subsets of 1..15 with sum ≤ 24} / 2¹⁵ = 2 · 676 / 32768.
    assert subsets_of_ranks_with_sum_at_most(15, 24) == 676
    assert result.statistic == 24
    assert result.p_value == pytest.approx(2 * 676 / 2**15, rel=1e-12)  # R wilcox.test: V = 96, p = 0.04126
    assert (result.n_pairs, result.n_nonzero) == (15, 15)
    assert result.mean_difference == pytest.approx(sum(DARWIN) / 15)


def test_rounds_scored_equal_are_dropped_and_unshared_rounds_ignored():
    scores_a = {1: 5, 2: 4, 3: 3, 4: 5, "only-a": 1}
    scores_b = {1: 5, 2: 3, 3: 1, 4: 2, "only-b": 9}
    result = paired_score_test("a", "b", scores_a, scores_b)
    # Differences 0, 1, 2, 3: the zero is dropped, all three others favour a, so W⁻ = 0 and the exact
    # two-sided p = 2 · 1 / 2³ = 0.25.
    assert (result.n_pairs, result.n_nonzero) == (4, 3)
    assert result.mean_difference == pytest.approx(1.5)
    assert result.statistic == 0
    assert result.p_value == pytest.approx(0.25)


def test_identical_scores_give_no_test():
    result = paired_score_test("a", "b", {1: 3, 2: 4}, {1: 3, 2: 4})
    assert (result.n_pairs, result.n_nonzero, result.mean_difference, result.p_value) == (2, 0, 0.0, None)
    assert paired_score_test("a", "b", {1: 3}, {2: 4}).n_pairs == 0


def test_bootstrap_interval_is_reproducible_with_a_seed():
    scores = [3, 4, 4, 5, 2, 5, 4, 3, 5, 1, 4, 4]
    first = score_summary("a", scores, seed=7, n_resamples=999)
    again = score_summary("a", scores, seed=7, n_resamples=999)
    other = score_summary("a", scores, seed=8, n_resamples=999)
    assert first == again
    assert (other.ci_low, other.ci_high) != (first.ci_low, first.ci_high)
    assert first.mean == pytest.approx(statistics.mean(scores))
    assert first.ci_low < first.mean < first.ci_high


def test_bootstrap_interval_agrees_with_the_t_interval_for_a_symmetric_sample():
    # For a large, symmetric sample the bootstrap interval of a mean approaches the classical t interval
    # x̄ ± t₀.₉₇₅,ₙ₋₁ · s/√n; the tolerance covers bootstrap noise and the bootstrap's slight narrowness (√((n−1)/n)).
    scores = np.tile(np.arange(1.0, 11.0), 20)  # 200 scores, mean 5.5
    half = t.ppf(0.975, len(scores) - 1) * scores.std(ddof=1) / np.sqrt(len(scores))
    summary = score_summary("a", scores, seed=1, n_resamples=2000)
    assert summary.mean == 5.5
    assert (summary.ci_low, summary.ci_high) == pytest.approx((5.5 - half, 5.5 + half), abs=0.04)


def test_too_few_or_identical_scores_get_honest_intervals():
    assert score_summary("a", []) == score_summary("a", []).__class__("a", 0, None, None, None)
    one = score_summary("a", [4])
    assert (one.n, one.mean, one.ci_low, one.ci_high) == (1, 4.0, None, None)
    # Identical scores: every resample has the same mean, which measures no precision, so no interval.
    same = score_summary("a", [3, 3, 3])
    assert (same.mean, same.ci_low, same.ci_high, same.not_measured) == (3.0, None, None, "every score is the same")


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 10), min_size=2, max_size=40))
def test_bootstrap_interval_contains_the_mean(scores):
    summary = score_summary("a", scores, n_resamples=500)
    if len(set(scores)) == 1:
        assert summary.ci_low is None and summary.not_measured
        return
    assert summary.ci_low <= summary.mean <= summary.ci_high
    assert min(scores) <= summary.ci_low and summary.ci_high <= max(scores)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 5), st.integers(1, 5)), min_size=1, max_size=30))
def test_swapping_the_variants_swaps_the_paired_test(pairs):
    scores_a = {index: a for index, (a, _) in enumerate(pairs)}
    scores_b = {index: b for index, (_, b) in enumerate(pairs)}
    forward = paired_score_test("a", "b", scores_a, scores_b)
    backward = paired_score_test("b", "a", scores_b, scores_a)
    assert backward.mean_difference == pytest.approx(-forward.mean_difference)
    assert backward.p_value == pytest.approx(forward.p_value)
    assert forward.p_value is None or 0 <= forward.p_value <= 1


def test_more_than_thirteen_tied_differences_use_the_normal_approximation_with_tie_correction():
    differences = [1, 1, 2, -1, 3, 2, -2, 1, 1, 1, 3, 2, 0, 2, -1]
    result = paired_score_test("a", "b", dict(enumerate(differences)), dict.fromkeys(range(len(differences)), 0))
    # 15 differences with ties and a zero: scipy's "auto" takes the normal approximation (tie correction, no
    # continuity correction), with the zero dropped.
    reference = scipy_stats.wilcoxon(differences)
    assert result.statistic == float(reference.statistic)
    assert result.p_value == pytest.approx(float(reference.pvalue), rel=1e-12)


def test_up_to_thirteen_tied_differences_get_the_exact_p_value_over_every_sign_flip():
    # The case: a = 0.5 + d, b = 0.5 over 10 rounds. The normal approximation gave p = 0.046.
    d = [0.5, 0.5, 0.25, 0.25, 0.25, -0.25, -0.25, 0.25, 0.25, 0.25]
    result = paired_score_test("a", "b", {i: 0.5 + x for i, x in enumerate(d)}, dict.fromkeys(range(10), 0.5))
    reference = scipy_stats.wilcoxon(d)
    assert reference.pvalue == pytest.approx(0.0723, abs=1e-4)
    assert result.p_value == pytest.approx(float(reference.pvalue), rel=1e-12)
    assert result.statistic == float(reference.statistic)


@pytest.mark.parametrize("seed", range(4))
def test_small_samples_with_ties_or_zeros_match_scipy_exactly(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 14))
    d = rng.choice([-0.5, -0.25, 0.0, 0.25, 0.5, 0.75], n)
    d[0] = 0.25  # at least one non-zero difference
    result = paired_score_test("a", "b", dict(enumerate(d)), dict.fromkeys(range(n), 0.0))
    assert result.p_value == pytest.approx(float(scipy_stats.wilcoxon(d).pvalue), rel=1e-12)
