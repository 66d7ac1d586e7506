"""When there is enough data for a verdict, and how many more votes or runs would settle a difference.

Every "more needed" figure comes from statsmodels' power module (normal approximations), stated per function.
They are guidance for planning ("about N"), not promises: the verdict itself always comes from the exact tests.
"""

import math

import numpy as np
from statsmodels.stats.power import NormalIndPower, TTestPower
from statsmodels.stats.proportion import proportion_effectsize

ALPHA = 0.05
CONFIDENCE = 1 - ALPHA
TARGET_POWER = 0.8
# Below this many decisive outcomes for a pair (or runs per variant, or non-zero score differences) the lab shows
# counts and intervals only. With fewer, even a clean sweep is fragile evidence and exact p-values jump around.
MIN_DECISIVE_PER_PAIR = 10
# The chi-square approximation is trusted only when every variant expects at least this many wins (textbook rule).
MIN_EXPECTED_WINS = 5
# A report's verdict for any test: below its minimum there is no verdict, only counts and intervals.
NOT_ENOUGH_DATA = "not enough data"
SIGNIFICANT = "significant"
NOT_SIGNIFICANT = "not significant"
# Asymptotic relative efficiency of the Wilcoxon signed-rank test against the t-test under normality (3/pi):
# Wilcoxon needs about 1/0.955 times the t-test's sample size (Lehmann & D'Abrera, Nonparametrics, ch. 4).
WILCOXON_ARE = 3 / math.pi


def verdict_of(*, enough: bool, significant: bool) -> str:
    """The verdict a report states: none below the minimum, else whether the test was significant."""
    if not enough:
        return NOT_ENOUGH_DATA
    return SIGNIFICANT if significant else NOT_SIGNIFICANT


def more_to_reach_minimum(decisive: int) -> int:
    """Decisive outcomes still missing before a pair may get a verdict."""
    return max(0, MIN_DECISIVE_PER_PAIR - decisive)


def sign_test_sample_size(share: float, *, alpha: float = ALPHA, power: float = TARGET_POWER) -> float | None:
    """Decisive outcomes needed in total to detect a win share of `share` against 50/50.

    Method: one-sample normal power with Cohen's arcsine effect size h = 2·asin(√share) − 2·asin(√0.5)
    (statsmodels `proportion_effectsize` + `NormalIndPower` with ratio=0, i.e. n = ((z₁₋α/₂ + z_power) / h)²).
    None when the share is exactly 0.5: there is no difference to detect.
    """
    effect = proportion_effectsize(share, 0.5)
    if effect == 0:
        return None
    return float(NormalIndPower().solve_power(effect_size=abs(effect), alpha=alpha, power=power, ratio=0))


def two_proportion_sample_size(
    rate_a: float, rate_b: float, *, alpha: float = ALPHA, power: float = TARGET_POWER
) -> float | None:
    """Runs needed per variant to detect success rates `rate_a` vs `rate_b` with equal group sizes.

    Method: two-sample normal power with Cohen's arcsine effect size h (statsmodels `proportion_effectsize` +
    `NormalIndPower` with ratio=1, i.e. n per group = 2·((z₁₋α/₂ + z_power) / h)²). None when the rates are equal.
    """
    effect = proportion_effectsize(rate_a, rate_b)
    if effect == 0:
        return None
    return float(NormalIndPower().solve_power(effect_size=abs(effect), alpha=alpha, power=power, ratio=1))


def paired_scores_sample_size(
    differences: np.ndarray, *, alpha: float = ALPHA, power: float = TARGET_POWER
) -> float | None:
    """Paired rounds needed for the Wilcoxon signed-rank test to detect the current mean score difference.

    Method: paired t-test power (statsmodels `TTestPower`, effect size d = mean / sd of the differences), divided
    by the Wilcoxon test's asymptotic relative efficiency 3/π. None when the mean difference is zero, or when
    every difference is the same non-zero value (no spread: any sample already shows it).
    """
    mean = float(np.mean(differences))
    spread = float(np.std(differences, ddof=1)) if len(differences) > 1 else 0.0
    if mean == 0 or spread == 0:
        return None
    rounds = TTestPower().solve_power(effect_size=abs(mean) / spread, alpha=alpha, power=power)
    return float(rounds) / WILCOXON_ARE


def more_needed(required_total: float, have: int) -> int:
    """Whole extra observations to reach `required_total`, at least one.

    At least one because this is only asked when a test was not significant: the exact tests are a little more
    conservative than the normal approximation, so "already enough" would mislead.
    """
    return max(1, math.ceil(required_total) - have)
