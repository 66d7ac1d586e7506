"""Success-rate A/B between two variants: z-test or Fisher's exact test, and Newcombe's interval for the difference."""

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.stats.ab import FISHER, Z_TEST, ab_test, expected_counts
from tests.lab.test_stats_winrate import wilson_by_hand


def test_z_test_matches_hand_computation():
    # 45/100 vs 30/100: pooled p = 0.375, SE = √(0.375 · 0.625 · (1/100 + 1/100)), z = 0.15 / SE.
    z = 0.15 / math.sqrt(0.375 * 0.625 * 0.02)
    result = ab_test(45, 100, 30, 100)
    assert result.test == Z_TEST
    assert result.statistic == pytest.approx(z, rel=1e-12)
    assert result.statistic == pytest.approx(2.190890, abs=1e-6)
    # Two-sided normal tail from the standard library: P(|Z| > z) = erfc(z / √2). R: prop.test(c(45, 30),
    # c(100, 100), correct = FALSE) gives X-squared = 4.8 (= z²), p-value = 0.02846.
    assert result.p_value == pytest.approx(math.erfc(z / math.sqrt(2)), rel=1e-9)
    assert result.statistic**2 == pytest.approx(4.8, rel=1e-12)


def test_fishers_exact_test_matches_the_tea_tasting_example():
    # Fisher's lady tasting tea: 3 of 4 cups right each way. Hypergeometric probabilities of 0..4 right are
    # 1, 16, 36, 16, 1 out of 70; the two-sided p sums those no likelier than 16/70: 34/70. R fisher.test: 0.4857.
    result = ab_test(3, 4, 1, 4)
    assert result.test == FISHER
    assert result.statistic is None
    assert result.p_value == pytest.approx(float(Fraction(34, 70)), rel=1e-12)


def test_it_switches_to_fisher_when_an_expected_count_is_under_five():
    # 2 of 40 vs 6 of 40: 8 successes overall, so each row expects 4 successes.
    assert expected_counts(2, 40, 6, 40).tolist() == [[4.0, 36.0], [4.0, 36.0]]
    assert ab_test(2, 40, 6, 40).test == FISHER
    # 3 of 40 vs 7 of 40: each row expects 5 successes, enough for the z-test.
    assert ab_test(3, 40, 7, 40).test == Z_TEST


@pytest.mark.parametrize(
    ("counts", "published"),
    [
        # Newcombe (1998), Stat Med 17:873, Table II, method 10 (hybrid score, no continuity correction).
        ((56, 70, 48, 80), (0.0524, 0.3339)),
        ((9, 10, 3, 10), (0.1705, 0.8090)),
        ((5, 56, 0, 29), (-0.0381, 0.1926)),
        ((10, 10, 0, 10), (0.6075, 1.0)),
    ],
)
def test_difference_interval_matches_newcombes_published_table(counts, published):
    result = ab_test(*counts)
    assert (result.ci_low, result.ci_high) == pytest.approx(published, abs=5e-5)
    assert (result.ci_low, result.ci_high) == pytest.approx(newcombe_by_hand(*counts), abs=1e-9)
    assert result.difference == pytest.approx(counts[0] / counts[1] - counts[2] / counts[3])


def newcombe_by_hand(successes_a: int, trials_a: int, successes_b: int, trials_b: int) -> tuple[float, float]:
    """Newcombe's method 10 from the two Wilson intervals: d ∓ √((p₁ − l₁)² + (u₂ − p₂)²) and its mirror."""
    p1, p2 = successes_a / trials_a, successes_b / trials_b
    (l1, u1), (l2, u2) = wilson_by_hand(successes_a, trials_a), wilson_by_hand(successes_b, trials_b)
    d = p1 - p2
    return d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2), d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)


def test_it_refuses_impossible_counts():
    with pytest.raises(ValueError, match="at least one trial"):
        ab_test(0, 0, 1, 2)
    with pytest.raises(ValueError, match="between 0 and the number of trials"):
        ab_test(3, 2, 1, 2)


counts = st.integers(1, 300).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n)))


@settings(max_examples=80, deadline=None)
@given(counts, counts)
def test_swapping_the_variants_mirrors_the_result(a, b):
    forward, backward = ab_test(*a, *b), ab_test(*b, *a)
    assert backward.test == forward.test
    assert backward.p_value == pytest.approx(forward.p_value, rel=1e-9, abs=1e-15)
    assert backward.difference == pytest.approx(-forward.difference)
    assert (backward.ci_low, backward.ci_high) == pytest.approx((-forward.ci_high, -forward.ci_low), abs=1e-12)


@settings(max_examples=80, deadline=None)
@given(counts, counts)
def test_interval_contains_the_difference_and_p_is_a_probability(a, b):
    result = ab_test(*a, *b)
    assert -1 <= result.ci_low <= result.difference + 1e-12
    assert result.difference - 1e-12 <= result.ci_high <= 1
    assert 0 <= result.p_value <= 1
