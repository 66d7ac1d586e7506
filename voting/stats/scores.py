"""Judge scores: mean with a seeded bootstrap interval per variant, and a paired Wilcoxon test between two variants."""

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import bootstrap, wilcoxon

from voting.stats.sample_size import CONFIDENCE

DEFAULT_RESAMPLES = 2000
# BCa needs a jackknife over every score (quadratic work); past this size its correction is negligible anyway,
# so the plain percentile interval is used.
BCA_MAX_SCORES = 5000
# scipy's limit for the exact signed-rank distribution; beyond it the normal approximation is excellent.
EXACT_MAX_DIFFERENCES = 50
# Keep each bootstrap batch near this many resampled values so memory stays bounded for long score lists.
BATCH_VALUES = 2_000_000


@dataclass(frozen=True, slots=True)
class ScoreSummary:
    """Mean judge score of one variant with its bootstrap interval (None with fewer than two scores)."""

    variant: str
    n: int
    mean: float | None
    ci_low: float | None
    ci_high: float | None


@dataclass(frozen=True, slots=True)
class PairedScoreTest:
    """Wilcoxon signed-rank test of A − B over the rounds both were scored in. p_value None: no non-zero difference."""

    a: str
    b: str
    n_pairs: int
    n_nonzero: int
    mean_difference: float | None
    statistic: float | None
    p_value: float | None


def score_summary(
    variant: str,
    scores: Sequence[float],
    *,
    seed: int = 0,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = CONFIDENCE,
) -> ScoreSummary:
    """Mean with a bootstrap interval (scipy `bootstrap`, BCa, seeded numpy Generator: reruns give the same interval).

    With all scores equal every resample has that mean, so the interval is that single value.
    """
    values = np.asarray(scores, dtype=float)
    if len(values) == 0:
        return ScoreSummary(variant=variant, n=0, mean=None, ci_low=None, ci_high=None)
    mean = float(values.mean())
    if len(values) < 2:
        return ScoreSummary(variant=variant, n=1, mean=mean, ci_low=None, ci_high=None)
    if np.all(values == values[0]):
        return ScoreSummary(variant=variant, n=len(values), mean=mean, ci_low=mean, ci_high=mean)
    result = bootstrap(
        (values,),
        np.mean,
        n_resamples=n_resamples,
        batch=max(1, BATCH_VALUES // len(values)),
        confidence_level=confidence,
        method="BCa" if len(values) <= BCA_MAX_SCORES else "percentile",
        rng=np.random.default_rng(seed),
    )
    interval = result.confidence_interval
    return ScoreSummary(
        variant=variant, n=len(values), mean=mean, ci_low=float(interval.low), ci_high=float(interval.high)
    )


def paired_differences(scores_a: Mapping[Hashable, float], scores_b: Mapping[Hashable, float]) -> np.ndarray:
    """A − B for every round scored for both variants (rounds keyed by any id), in A's round order."""
    return np.array([scores_a[round_id] - scores_b[round_id] for round_id in scores_a if round_id in scores_b])


def paired_score_test(
    a: str, b: str, scores_a: Mapping[Hashable, float], scores_b: Mapping[Hashable, float]
) -> PairedScoreTest:
    """Two-sided Wilcoxon signed-rank test (scipy `wilcoxon`) on the per-round score differences A − B.

    Rounds where both scored the same are dropped first (Wilcoxon's own rule, as the sign test drops tied votes).
    The p-value uses the exact null distribution when the remaining differences have no tied sizes (up to 50 of
    them), otherwise the normal approximation with the tie correction. scipy's own choice for up to 13 tied
    differences, a full permutation test, takes seconds: too slow for a report that is rebuilt on every vote.
    """
    differences = paired_differences(scores_a, scores_b)
    nonzero = differences[differences != 0]
    mean = float(differences.mean()) if len(differences) else None
    if len(nonzero) == 0:
        return PairedScoreTest(
            a=a, b=b, n_pairs=len(differences), n_nonzero=0, mean_difference=mean, statistic=None, p_value=None
        )
    tied = len(np.unique(np.abs(nonzero))) < len(nonzero)
    method = "exact" if not tied and len(nonzero) <= EXACT_MAX_DIFFERENCES else "asymptotic"
    result = wilcoxon(nonzero, alternative="two-sided", method=method)
    return PairedScoreTest(
        a=a,
        b=b,
        n_pairs=len(differences),
        n_nonzero=len(nonzero),
        mean_difference=mean,
        statistic=float(result.statistic),
        p_value=float(result.pvalue),
    )
