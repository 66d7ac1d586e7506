"""Judge scores: mean with a seeded bootstrap interval per variant, and a paired Wilcoxon test between two variants."""

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import bootstrap, rankdata, wilcoxon

from lab.stats.sample_size import CONFIDENCE

DEFAULT_RESAMPLES = 2000
# BCa needs a jackknife over every score (quadratic work); past this size its correction is negligible anyway,
# so the plain percentile interval is used.
BCA_MAX_SCORES = 5000
# scipy's `wilcoxon` (method="auto") runs an exhaustive sign-flip permutation test when the differences have ties
# or zeros and there are at most this many of them (2¹³ sign flips, below its 9,999 resamples): the exact p-value.
PERMUTATION_MAX_DIFFERENCES = 13
# scipy's own comparison tolerance in `permutation_test`, so a null value equal to the observed one counts as equal.
RELATIVE_TOLERANCE = 100 * np.finfo(float).eps
# Keep each bootstrap batch near this many resampled values so memory stays bounded for long score lists.
BATCH_VALUES = 2_000_000


@dataclass(frozen=True, slots=True)
class ScoreSummary:
    """Mean judge score of one variant with its bootstrap interval: None with fewer than two scores, and None when
    every score is the same (`not_measured` says so): every resample would have that mean, and a zero-width
    interval from no spread is no evidence of precision."""

    variant: str
    n: int
    mean: float | None
    ci_low: float | None
    ci_high: float | None
    not_measured: str | None = None


NO_SPREAD = "every score is the same"


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

    With all scores equal every resample has that mean: no interval, and `not_measured` says why. The mean is the
    correctly rounded sum over the count (`math.fsum`), the same in any order.
    """
    values = np.sort(np.asarray(scores, dtype=float))
    if len(values) == 0:
        return ScoreSummary(variant=variant, n=0, mean=None, ci_low=None, ci_high=None)
    mean = math.fsum(values) / len(values)
    if len(values) < 2:
        return ScoreSummary(variant=variant, n=1, mean=mean, ci_low=None, ci_high=None)
    if np.all(values == values[0]):
        return ScoreSummary(
            variant=variant, n=len(values), mean=mean, ci_low=None, ci_high=None, not_measured=NO_SPREAD
        )
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
    """A − B for every round scored for both variants (rounds keyed by any id), sorted: every figure computed from
    them is then the same however the scores were stored."""
    return np.sort([scores_a[round_id] - scores_b[round_id] for round_id in scores_a if round_id in scores_b])


def mean_difference(scores_a: Mapping[Hashable, float], scores_b: Mapping[Hashable, float]) -> float | None:
    """Mean of A − B over the rounds scored for both: the correctly rounded sum of A's scores minus B's (`math.fsum`)
    over their number, so it is exactly 0 when B's scores are a reshuffle of A's (a plain float mean of the
    differences can come out as −9e-18, which the power solver cannot take), and it never depends on storage order.
    None without such rounds."""
    shared = [round_id for round_id in scores_a if round_id in scores_b]
    if not shared:
        return None
    return math.fsum([*(scores_a[key] for key in shared), *(-scores_b[key] for key in shared)]) / len(shared)


def paired_score_test(
    a: str, b: str, scores_a: Mapping[Hashable, float], scores_b: Mapping[Hashable, float]
) -> PairedScoreTest:
    """Two-sided Wilcoxon signed-rank test on the per-round score differences A − B, with scipy's choice of method.

    Rounds where both scored the same are dropped (Wilcoxon's own rule, `zero_method="wilcox"`, as the sign test
    drops tied votes). The p-value is what `scipy.stats.wilcoxon(differences)` gives: the exact signed-rank
    distribution without ties or zeros (up to 50 differences); with ties or zeros and at most 13 differences, the
    exact distribution of the statistic over every sign flip (scipy runs that as a permutation test, about 0.6 s;
    `exact_signed_rank_p` enumerates the same 2ⁿ flips in a millisecond); otherwise the normal approximation with
    the tie correction and without continuity correction.
    """
    differences = paired_differences(scores_a, scores_b)
    nonzero = differences[differences != 0]
    mean = mean_difference(scores_a, scores_b)
    if len(nonzero) == 0:
        return PairedScoreTest(
            a=a, b=b, n_pairs=len(differences), n_nonzero=0, mean_difference=mean, statistic=None, p_value=None
        )
    tied = len(np.unique(np.abs(nonzero))) < len(nonzero) or len(nonzero) < len(differences)
    if tied and len(differences) <= PERMUTATION_MAX_DIFFERENCES:
        statistic, p_value = exact_signed_rank_p(nonzero)
    else:
        result = wilcoxon(differences, alternative="two-sided")
        statistic, p_value = float(result.statistic), float(result.pvalue)
    return PairedScoreTest(
        a=a,
        b=b,
        n_pairs=len(differences),
        n_nonzero=len(nonzero),
        mean_difference=mean,
        statistic=statistic,
        p_value=p_value,
    )


def exact_signed_rank_p(nonzero: np.ndarray) -> tuple[float, float]:
    """(min(R+, R−), two-sided p) for non-zero differences, by enumerating all 2ⁿ sign assignments of their
    mid-ranks: p = 2·min(P(R+ ≥ observed), P(R+ ≤ observed)), capped at 1, as scipy's permutation test computes it.
    """
    ranks = rankdata(np.abs(nonzero))
    observed = float(ranks[nonzero > 0].sum())
    flips = (np.arange(2 ** len(ranks))[:, None] >> np.arange(len(ranks))) & 1
    null = flips @ ranks
    tolerance = RELATIVE_TOLERANCE * abs(observed)
    at_least = np.mean(null >= observed - tolerance)
    at_most = np.mean(null <= observed + tolerance)
    return min(observed, float(ranks.sum()) - observed), float(min(1.0, 2 * min(at_least, at_most)))
