"""When there is enough data for a verdict, and how many more votes or runs would settle a difference.

Each "more needed" figure is the power of the test the report actually runs, at the effect seen so far: the exact
sign test's power by its binomial distribution, the pooled two-proportion z-test's by statsmodels, the Wilcoxon
test's by the t-test's power over its efficiency. They are guidance for planning ("about N"), not promises.
"""

import math
import warnings

import numpy as np
from scipy.stats import binom, norm
from statsmodels.stats.power import TTestPower
from statsmodels.stats.proportion import samplesize_proportions_2indep_onetail
from statsmodels.tools.sm_exceptions import ConvergenceWarning

from lab.stats.intervals import ALPHA, CONFIDENCE  # noqa: F401  (re-exported: one significance level for the whole lab)

TARGET_POWER = 0.8
# Below this many decisive outcomes for a pair (or runs per variant, or non-zero score differences) the lab shows
# counts and intervals only. With fewer, even a clean sweep is fragile evidence and exact p-values jump around.
MIN_DECISIVE_PER_PAIR = 10
# The usual rule for trusting the normal approximation of a 2×2 table (Cochran 1954).
MIN_EXPECTED_CELL = 5
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


def sign_test_power(share: float, decisive: np.ndarray | int, *, alpha: float = ALPHA) -> np.ndarray:
    """Power of the two-sided exact sign test (scipy `binomtest` against 0.5, significant when p < alpha) with
    `decisive` outcomes when the true win share is `share`.

    At 0.5 the test's p-value is twice the smaller binomial tail, so it rejects k wins exactly when k ≤ c or
    k ≥ n − c, with c the largest count whose lower tail is below alpha / 2; power is the chance of those counts.
    """
    n = np.atleast_1d(np.asarray(decisive, dtype=np.int64))
    critical = binom.ppf(alpha / 2, n, 0.5).astype(np.int64)
    # ppf gives the smallest count whose tail reaches alpha / 2; the rejection region needs the tail below it.
    critical = np.where(2 * binom.cdf(critical, n, 0.5) < alpha, critical, critical - 1)
    return np.where(critical >= 0, binom.cdf(critical, n, share) + binom.sf(n - critical - 1, n, share), 0.0)


# Below this normal-approximation total every total from 1 on is checked (the saw-tooth is widest there).
FULL_SEARCH_BELOW = 2000


def sign_test_sample_size(share: float, *, alpha: float = ALPHA, power: float = TARGET_POWER) -> float | None:
    """Decisive outcomes needed in total for the exact sign test to reach `power` when the win share is `share`.

    The exact test's power rises in a saw-tooth (it dips each time the discrete rejection region has to wait for
    one more outcome), so this is the smallest total from which the power stays at or above `power`, checked up
    to well past the normal approximation's answer (Cohen's arcsine h, n = ((z₁₋α/₂ + z_power) / h)²). Large
    totals are searched from 80% of that answer on, where the exact power is still well short (about 0.7): it
    keeps the search to a few thousand totals. None when the share is exactly 0.5: nothing to detect.
    """
    if share == 0.5:
        return None
    effect = 2 * math.asin(math.sqrt(share)) - 2 * math.asin(math.sqrt(0.5))
    normal = ((_z(1 - alpha / 2) + _z(power)) / effect) ** 2
    first = 1 if normal < FULL_SEARCH_BELOW else int(0.8 * normal)
    totals = np.arange(first, int(1.25 * normal) + 60)
    short = np.flatnonzero(sign_test_power(share, totals, alpha=alpha) < power)
    return float(totals[short[-1]] + 1) if len(short) else float(first)


def _z(quantile: float) -> float:
    return float(norm.ppf(quantile))


def two_proportion_sample_size(
    rate_a: float, rate_b: float, *, alpha: float = ALPHA, power: float = TARGET_POWER
) -> float | None:
    """Runs needed per variant for the pooled two-proportion z-test to detect rates `rate_a` vs `rate_b`.

    Method: statsmodels `samplesize_proportions_2indep_onetail` (pooled variance under the null, unpooled under
    the alternative, two-sided alpha; the far tail's tiny share of power is left out), equal group sizes. Where
    the counts are so small that the report uses Fisher's exact test instead (`uses_fisher`), Fisher needs more
    than this. None when the rates are equal, or when the formula gives no finite size.
    """
    if rate_a == rate_b:
        return None
    runs = float(
        samplesize_proportions_2indep_onetail(
            rate_a - rate_b, rate_b, power, ratio=1, alpha=alpha, alternative="two-sided"
        )
    )
    return runs if math.isfinite(runs) else None


def uses_fisher(rate_a: float, rate_b: float, runs_each: float) -> bool:
    """Whether a 2×2 table of `runs_each` runs per variant at these rates expects a cell under 5 (Cochran's rule,
    as `ab.ab_test` applies it), so that the report would run Fisher's exact test rather than the z-test."""
    pooled = (rate_a + rate_b) / 2
    return runs_each * min(pooled, 1 - pooled) < MIN_EXPECTED_CELL


def paired_scores_sample_size(
    differences: np.ndarray, *, mean: float, alpha: float = ALPHA, power: float = TARGET_POWER
) -> float | None:
    """Paired rounds needed for the Wilcoxon signed-rank test to detect the mean score difference `mean` (computed
    by the caller so that equal score multisets give exactly 0: `scores.mean_difference`).

    Method: paired t-test power (statsmodels `TTestPower`, effect size d = mean / sd of the differences), divided
    by the Wilcoxon test's asymptotic relative efficiency 3/π. None when the mean difference is zero, when every
    difference is the same non-zero value (no spread: any sample already shows it), or when the solver finds no
    finite size for an effect so small that no practical number of rounds would show it (where it finds none for a
    large effect, the smallest sample, two rounds, already has the power).
    """
    spread = float(np.std(np.sort(differences), ddof=1)) if len(differences) > 1 else 0.0
    if mean == 0 or spread == 0:
        return None
    effect = abs(mean) / spread
    with warnings.catch_warnings():
        # The solver warns and answers NaN when it cannot bracket a size; that answer is handled below.
        warnings.simplefilter("ignore", ConvergenceWarning)
        rounds = float(TTestPower().solve_power(effect_size=effect, alpha=alpha, power=power))
    if not math.isfinite(rounds):
        # It fails at both ends (statsmodels 0.14: below d ≈ 1e-7 no size it tries reaches the power; from d ≈ 10
        # the answer lies below its smallest sample of 2, where even its power function answers NaN). It solves
        # everything in between, so the effect says which end this is.
        if effect < 1:
            return None
        rounds = 2.0
    return rounds / WILCOXON_ARE


def more_needed(required_total: float, have: int) -> int:
    """Whole extra observations to reach `required_total`, at least one.

    At least one because this is only asked when a test was not significant: the exact tests are a little more
    conservative than the normal approximation, so "already enough" would mislead.
    """
    if not math.isfinite(required_total):
        raise ValueError(f"no finite sample size to reach: {required_total!r}")
    return max(1, math.ceil(required_total) - have)
