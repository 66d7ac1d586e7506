"""Win rate per variant from N-way votes, with the exact (Clopper–Pearson) 95% interval the pair tests use."""

from dataclasses import dataclass

import numpy as np
from statsmodels.stats.proportion import proportion_confint

from lab.stats.intervals import CONFIDENCE, wilson_interval  # noqa: F401  (re-exported: the report and its tests name it here)
from lab.stats.votes import ALL_BAD_CODE, TIE_CODE, EncodedVotes


@dataclass(frozen=True, slots=True)
class WinRate:
    """How one variant fared in the votes that showed it. `win_rate` is wins / decisive (None when decisive is 0)."""

    variant: str
    appearances: int
    wins: int
    losses: int
    ties: int
    all_bad: int
    decisive: int
    win_rate: float | None
    ci_low: float | None
    ci_high: float | None


def exact_interval(successes: int, trials: int, *, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Clopper–Pearson ("exact") interval for a proportion (statsmodels `proportion_confint`, method="beta").

    It is the inversion of the exact binomial test with equal tails, so for a share tested against 50% (where the
    two-sided exact test's p-value is twice the smaller tail) it excludes 50% exactly when the sign test's p is
    below 1 − confidence: the interval beside the sign test never disagrees with it (Wilson's can).
    """
    if trials <= 0:
        raise ValueError("an interval needs at least one trial")
    low, high = proportion_confint(successes, trials, alpha=1 - confidence, method="beta")
    return (0.0 if successes == 0 else float(low)), (1.0 if successes == trials else float(high))


def win_rates(votes: EncodedVotes) -> list[WinRate]:
    """Per variant: appearances, wins, losses, ties, all-bad votes, decisive votes and the win rate with its interval.

    A vote is decisive for a variant when it was shown and somebody won (it or another variant).
    """
    winner = votes.winner
    appearances = votes.shown_count()
    decisive = votes.shown_count(votes.decisive)
    wins = wins_of(votes)
    ties = votes.shown_count(winner == TIE_CODE)
    all_bad = votes.shown_count(winner == ALL_BAD_CODE)
    return [
        _win_rate(key, int(appearances[i]), int(wins[i]), int(decisive[i]), int(ties[i]), int(all_bad[i]))
        for i, key in enumerate(votes.variants)
    ]


def wins_of(votes: EncodedVotes) -> np.ndarray:
    """Per variant, the votes it won (whole numbers: the weights are counts)."""
    decisive = votes.decisive
    weights = votes.count[decisive]
    return np.bincount(votes.winner[decisive], weights=weights, minlength=len(votes.variants)).astype(np.int64)


def _win_rate(key: str, appearances: int, wins: int, decisive: int, ties: int, all_bad: int) -> WinRate:
    # The exact interval, as beside every pair's sign test: a share of votes has one interval wherever it is shown
    # (with two variants a win rate is the pair's share; Wilson's interval would disagree with the test beside it).
    low, high = exact_interval(wins, decisive) if decisive else (None, None)
    return WinRate(
        variant=key,
        appearances=appearances,
        wins=wins,
        losses=decisive - wins,
        ties=ties,
        all_bad=all_bad,
        decisive=decisive,
        win_rate=wins / decisive if decisive else None,
        ci_low=low,
        ci_high=high,
    )
