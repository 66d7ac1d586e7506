"""Success-rate A/B test between two variants: z-test or Fisher's exact test, and an interval for the difference."""

from dataclasses import dataclass

import numpy as np
from scipy.stats import fisher_exact
from statsmodels.stats.proportion import confint_proportions_2indep, proportions_ztest

from lab.stats.sample_size import CONFIDENCE, MIN_EXPECTED_CELL

Z_TEST = "two-proportion z-test"
FISHER = "Fisher's exact test"


@dataclass(frozen=True, slots=True)
class ABTest:
    """Success rates of A and B, difference A − B with its Newcombe interval, and the test used with its p-value.

    `statistic` is the z value for the z-test and None for Fisher's exact test.
    """

    successes_a: int
    trials_a: int
    successes_b: int
    trials_b: int
    rate_a: float
    rate_b: float
    difference: float
    ci_low: float
    ci_high: float
    test: str
    statistic: float | None
    p_value: float


def expected_counts(successes_a: int, trials_a: int, successes_b: int, trials_b: int) -> np.ndarray:
    """Expected 2×2 cell counts (rows A, B; columns success, failure) if both variants shared one success rate."""
    table = np.array([[successes_a, trials_a - successes_a], [successes_b, trials_b - successes_b]], dtype=float)
    return np.outer(table.sum(axis=1), table.sum(axis=0)) / table.sum()


def ab_test(
    successes_a: int, trials_a: int, successes_b: int, trials_b: int, *, confidence: float = CONFIDENCE
) -> ABTest:
    """Compare two success rates.

    Test: the pooled two-proportion z-test (statsmodels `proportions_ztest`), or Fisher's exact test (scipy
    `fisher_exact`, two-sided) when any expected cell count is under 5, where the normal approximation is unreliable.
    Interval for A − B: Newcombe's hybrid score interval (Newcombe 1998, Stat Med 17:873, method 10; statsmodels
    `confint_proportions_2indep`, method="newcomb"), which stays within [−1, 1] and behaves well for small counts.
    """
    if trials_a <= 0 or trials_b <= 0:
        raise ValueError("each variant needs at least one trial")
    if not (0 <= successes_a <= trials_a and 0 <= successes_b <= trials_b):
        raise ValueError("successes must lie between 0 and the number of trials")
    low, high = confint_proportions_2indep(
        successes_a, trials_a, successes_b, trials_b, method="newcomb", compare="diff", alpha=1 - confidence
    )
    if expected_counts(successes_a, trials_a, successes_b, trials_b).min() < MIN_EXPECTED_CELL:
        table = [[successes_a, trials_a - successes_a], [successes_b, trials_b - successes_b]]
        test, statistic, p_value = FISHER, None, fisher_exact(table, alternative="two-sided").pvalue
    else:
        z, p_value = proportions_ztest([successes_a, successes_b], [trials_a, trials_b])
        test, statistic = Z_TEST, float(z)
    rate_a, rate_b = successes_a / trials_a, successes_b / trials_b
    return ABTest(
        successes_a=successes_a,
        trials_a=trials_a,
        successes_b=successes_b,
        trials_b=trials_b,
        rate_a=rate_a,
        rate_b=rate_b,
        difference=rate_a - rate_b,
        # Floating point can land a hair outside [−1, 1] at the extremes (−1.0000000000000002 for 0/3 vs 48/48).
        ci_low=max(-1.0, float(low)),
        ci_high=min(1.0, float(high)),
        test=test,
        statistic=statistic,
        p_value=min(1.0, float(p_value)),
    )
