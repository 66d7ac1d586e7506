"""How well an LLM judge agrees with the humans: share of rounds where it picked the humans' majority choice, and
Cohen's kappa, counted with and without the rounds where either side named no winner.

Choices are compared by position in the round's shown order (first shown, second shown, …) plus "no winner"
(a tie or all-bad), so rounds of different comparisons share one set of categories and kappa can pool them. Kappa's
chance term then comes from the pooled table: rounds that showed two answers and rounds that showed five share one
set of marginal shares. `Agreement.sizes` says which sizes were pooled, and the page says so.
"""

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm
from statsmodels.stats.inter_rater import cohens_kappa

from lab.stats.sample_size import CONFIDENCE
from lab.stats.votes import NO_WINNER, RoundVote
from lab.stats.winrate import wilson_interval

NO_WINNER_CATEGORY = -1


@dataclass(frozen=True, slots=True)
class JudgedRound:
    """One round: the variants shown, the judge's choice and every human vote (winner keys, TIE or ALL_BAD)."""

    shown: tuple[str, ...]
    judge: str
    human_votes: tuple[str, ...]

    def __post_init__(self) -> None:
        # Reuse the vote record's checks for the judge's and each human's choice.
        for choice in (self.judge, *self.human_votes):
            RoundVote(self.shown, choice)


@dataclass(frozen=True, slots=True)
class Agreement:
    """Agreement over `rounds` rounds: `agreed` of them matched; share with a Wilson interval; kappa with its
    large-sample interval (Fleiss, Cohen & Everitt 1969 variance), clipped to kappa's range [−1, 1].

    `kappa` is None where it is undefined (one category only); the interval is None where the large-sample variance
    is zero (perfect agreement, or one side always giving the same answer): a zero-width interval there would claim
    certainty the data do not give. `sizes` lists how many answers the pooled rounds showed.
    """

    rounds: int
    agreed: int
    share: float | None
    share_low: float | None
    share_high: float | None
    kappa: float | None
    kappa_low: float | None
    kappa_high: float | None
    sizes: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class AgreementReport:
    """`with_ties` counts every round with a human majority; `without_ties` only those where both named a winner.

    Rounds whose human votes split evenly between the top choices have no majority and are counted apart.
    """

    with_ties: Agreement
    without_ties: Agreement
    rounds_without_majority: int


def human_majority(judged: JudgedRound) -> int | None:
    """The humans' most common choice as a category, or None when nobody voted or the top choices are level."""
    ranked = Counter(_category(judged.shown, vote) for vote in judged.human_votes).most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


def judge_agreement(rounds: Sequence[JudgedRound], *, confidence: float = CONFIDENCE) -> AgreementReport:
    """Agreement of the judge with the human majority (statsmodels `cohens_kappa` on the judge × human table)."""
    pairs, sizes, without_majority = [], [], 0
    for judged in rounds:
        majority = human_majority(judged)
        if majority is None:
            without_majority += 1
        else:
            pairs.append((_category(judged.shown, judged.judge), majority))
            sizes.append(len(judged.shown))
    decisive = [index for index, pair in enumerate(pairs) if NO_WINNER_CATEGORY not in pair]
    return AgreementReport(
        with_ties=_agreement(pairs, sizes, confidence),
        without_ties=_agreement([pairs[i] for i in decisive], [sizes[i] for i in decisive], confidence),
        rounds_without_majority=without_majority,
    )


def _category(shown: tuple[str, ...], choice: str) -> int:
    return NO_WINNER_CATEGORY if choice in NO_WINNER else shown.index(choice)


def _agreement(pairs: list[tuple[int, int]], sizes: list[int], confidence: float) -> Agreement:
    if not pairs:
        return Agreement(0, 0, None, None, None, None, None, None)
    agreed = sum(judge == human for judge, human in pairs)
    share_low, share_high = wilson_interval(agreed, len(pairs), confidence=confidence)
    categories = sorted({category for pair in pairs for category in pair})
    kappa = kappa_low = kappa_high = None
    # Kappa is 0/0 when judge and humans only ever used one and the same category.
    if len(categories) > 1:
        index = {category: position for position, category in enumerate(categories)}
        table = np.zeros((len(categories), len(categories)))
        for judge, human in pairs:
            table[index[judge], index[human]] += 1
        # statsmodels also computes a z-test against kappa = 0 that divides by zero for some small tables; that
        # figure is not used here, so its warning is noise.
        with np.errstate(divide="ignore", invalid="ignore"):
            result = cohens_kappa(table)
        # statsmodels' own bounds are fixed at 95%; these are the same normal bounds at the requested level.
        half_width = norm.ppf(0.5 + confidence / 2) * result.std_kappa
        kappa = float(result.kappa)
        if np.isfinite(half_width) and half_width > 0:
            kappa_low, kappa_high = max(-1.0, kappa - half_width), min(1.0, kappa + half_width)
    return Agreement(
        rounds=len(pairs),
        agreed=agreed,
        share=agreed / len(pairs),
        share_low=share_low,
        share_high=share_high,
        kappa=kappa,
        kappa_low=kappa_low,
        kappa_high=kappa_high,
        sizes=tuple(sorted(set(sizes))),
    )
