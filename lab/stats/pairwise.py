"""Pairwise outcomes from N-way votes, exact sign tests with Holm's adjustment, and the overall chi-square test.

Expansion rule: a vote's winner beats every other variant shown with it; a tie or an all-bad vote is a tie between
every pair shown. Ties carry no information about which of two variants is preferred, so the sign test drops them.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from scipy.stats import binomtest, chisquare

from lab.stats.sample_size import ALPHA
from lab.stats.votes import EncodedVotes
from lab.stats.winrate import exact_interval, wins_of


@dataclass(frozen=True)
class PairOutcomes:
    """What the votes say about variants `a` and `b`: `together` votes showed both; `a_won` holds the decisive
    outcomes for this pair in row order, each row repeated for the votes it stands for (in vote order when encoded
    vote by vote; True where a won)."""

    a: str
    b: str
    together: int
    a_wins: int
    b_wins: int
    ties: int
    a_won: np.ndarray

    @property
    def decisive(self) -> int:
        return self.a_wins + self.b_wins


@dataclass(frozen=True, slots=True)
class PairTest:
    """Sign test for one pair. `a_share` = a_wins / decisive with its Clopper–Pearson interval, which agrees with
    the sign test (see `exact_interval`); p-values None without data."""

    a: str
    b: str
    a_wins: int
    b_wins: int
    ties: int
    decisive: int
    a_share: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    p_holm: float | None


@dataclass(frozen=True, slots=True)
class OverallTest:
    """Chi-square goodness of fit of wins against "all variants equally preferred". None fields: nothing to test."""

    wins: dict[str, int]
    expected: dict[str, float]
    statistic: float | None
    df: int
    p_value: float | None


def pair_outcomes(votes: EncodedVotes) -> list[PairOutcomes]:
    """Every pair of variants (in variant order) with its wins, ties and the order of its decisive outcomes."""
    result = []
    for a, b in combinations(range(len(votes.variants)), 2):
        together = votes.shown[:, a] & votes.shown[:, b]
        winners, counts = votes.winner[together], votes.count[together]
        decided = (winners == a) | (winners == b)
        a_won = np.repeat(winners[decided] == a, counts[decided])
        a_wins = int(counts[winners == a].sum())
        result.append(
            PairOutcomes(
                a=votes.variants[a],
                b=votes.variants[b],
                together=int(counts.sum()),
                a_wins=a_wins,
                b_wins=int(counts[decided].sum()) - a_wins,
                ties=int(counts[winners < 0].sum()),
                a_won=a_won,
            )
        )
    return result


def sign_test(a_wins: int, b_wins: int) -> float:
    """Two-sided exact sign test (scipy `binomtest` against 0.5) on decisive outcomes; 1.0 when there are none."""
    decisive = a_wins + b_wins
    if decisive == 0:
        return 1.0
    return float(binomtest(a_wins, decisive, 0.5, alternative="two-sided").pvalue)


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjusted p-values over the whole family; None entries (nothing tested) stay None.

    The family is every entry: a None counts as p = 1, so a report's "adjusted for 3 pairs" means all 3 pairs
    of the comparison, tested or not, in every section (votes, judge scores, pass rates), and the family never
    shrinks as data arrive. Sorted ascending, the i-th smallest of m p-values becomes max over j ≤ i of
    (m − j + 1)·p₍ⱼ₎, capped at 1 (Holm 1979). Written out rather than calling statsmodels'
    `multipletests(method="holm")`, which gives the same numbers (the tests check it) but runs a full
    `gc.collect()` on every call: about 0.1 s in a busy web process.
    """
    family = [1.0 if p is None else p for p in p_values]
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, index in enumerate(sorted(range(len(family)), key=lambda index: family[index])):
        running = max(running, min(1.0, (len(family) - rank) * family[index]))
        adjusted[index] = None if p_values[index] is None else running
    return adjusted


def holm_divisors(p_holm: Sequence[float | None], *, alpha: float = ALPHA) -> list[int]:
    """Per pair, the divisor of α at which Holm's method would test it, given the other pairs: m − k, with k the
    other pairs already significant (Holm-adjusted p below α). While they stay significant they are rejected
    first, and this pair is significant exactly when its own p is below α / (m − k): that is the level its power
    guidance is computed at (α/m, Holm's first step, would ask for more than needed)."""
    significant = [p is not None and p < alpha for p in p_holm]
    total = sum(significant)
    return [len(p_holm) - (total - own) for own in significant]


def pairwise_tests(outcomes: Sequence[PairOutcomes]) -> list[PairTest]:
    """A sign test per pair, Holm-adjusted across all pairs.

    A pair without decisive outcomes counts as p = 1, so the family is always every pair of the comparison and
    adding votes never shrinks it.
    """
    raw = [sign_test(pair.a_wins, pair.b_wins) for pair in outcomes]
    adjusted = holm(raw)
    return [_pair_test(pair, p, p_holm) for pair, p, p_holm in zip(outcomes, raw, adjusted, strict=True)]


def _pair_test(pair: PairOutcomes, p_value: float, p_holm: float | None) -> PairTest:
    decisive = pair.decisive
    low, high = exact_interval(pair.a_wins, decisive) if decisive else (None, None)
    return PairTest(
        a=pair.a,
        b=pair.b,
        a_wins=pair.a_wins,
        b_wins=pair.b_wins,
        ties=pair.ties,
        decisive=decisive,
        a_share=pair.a_wins / decisive if decisive else None,
        ci_low=low,
        ci_high=high,
        p_value=p_value if decisive else None,
        p_holm=p_holm if decisive else None,
    )


def overall_test(votes: EncodedVotes) -> OverallTest:
    """Chi-square goodness of fit (scipy `chisquare`) of each variant's wins against equal preference.

    Under "all equally preferred" a decisive vote is won by each shown variant with probability 1 / (number shown),
    so a variant's expected wins are the sum of 1/k over the decisive votes that showed it. When every vote shows
    every variant this is the familiar "decisive votes / k". Variants never in a decisive vote cannot be tested and
    are left out; df = (variants tested) − 1.
    """
    observed = wins_of(votes)
    # Whole counts per number shown, divided once: summing 1/k vote by vote would make the last digits depend on
    # the order the votes are stored in.
    sizes = np.where(votes.decisive, votes.shown.sum(axis=1), 0)
    expected = sum(
        (votes.shown_count(sizes == k) / k for k in np.unique(sizes[votes.decisive])), np.zeros(len(votes.variants))
    )
    wins = {key: int(observed[i]) for i, key in enumerate(votes.variants)}
    expected_wins = {key: float(expected[i]) for i, key in enumerate(votes.variants)}
    tested = expected > 0
    if tested.sum() < 2:
        return OverallTest(wins=wins, expected=expected_wins, statistic=None, df=0, p_value=None)
    result = chisquare(observed[tested], expected[tested])
    return OverallTest(
        wins=wins,
        expected=expected_wins,
        statistic=float(result.statistic),
        df=int(tested.sum()) - 1,
        p_value=float(result.pvalue),
    )
