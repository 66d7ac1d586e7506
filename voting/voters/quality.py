"""How one person (or a whole workspace) votes, as figures with their tests, and the flags an owner is shown.

Agreement reuses the judge's agreement statistics (lab.stats.agreement): the person takes the judge's seat, so
"agreement with the majority of others" is Cohen's kappa of their choice against the others' majority on the same
rounds, with its large-sample interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from scipy.stats import binomtest, combine_pvalues

from lab.stats.agreement import Agreement, JudgedRound, judge_agreement

# Faster than this many words of the answers per second, nobody read them: fast skimming is about 10 words a
# second for one text, and a vote compares several.
READING_WPS = 12.0
MIN_TIMED = 5  # flag "too fast" only with at least this many timed votes…
FAST_SHARE = 0.25  # …of which at least this share came faster than READING_WPS
MIN_POSITION_PICKS = 10  # first- or last-column picks before a position preference can be flagged
POSITION_P = 0.01  # binomial test level for a position preference flag
MIN_AGREEMENT_ROUNDS = 10  # rounds with a majority of others before disagreement can be flagged
KAPPA_FLOOR = 0.2  # a kappa interval wholly below this is "slight agreement" or worse (Landis & Koch 1977)
OUTLIER_P = 0.01  # Chatbot Arena's outlier rule: Fisher's combined p below this, Bonferroni-divided by the voters
MIN_OUTLIER_VOTES = 10


@dataclass(frozen=True, slots=True)
class PositionPreference:
    """Blind winner picks: how many named the first and the last column, out of `picks`; `p_value` is the exact
    binomial test of first against last picks at 50/50 (with no position preference each is as likely as the other,
    whatever the number of columns); `chance_first` is the first column's expected share, the mean of 1/columns."""

    picks: int
    first: int
    last: int
    chance_first: float | None
    p_value: float | None


@dataclass(frozen=True, slots=True)
class Speed:
    """Votes timed from the moment the inbox showed the round: `fast` of `timed` came faster than `threshold_wps`."""

    timed: int
    fast: int
    threshold_wps: float
    median_wps: float | None


def position_preference(picks: Sequence[tuple[int, int]]) -> PositionPreference:
    """`picks`: (column picked, counted from 0; number of columns) for each blind vote that named a winner."""
    first = sum(1 for column, _ in picks if column == 0)
    last = sum(1 for column, columns in picks if column == columns - 1)
    p_value = float(binomtest(first, first + last, 0.5).pvalue) if first + last else None
    chance = sum(1 / columns for _, columns in picks) / len(picks) if picks else None
    return PositionPreference(picks=len(picks), first=first, last=last, chance_first=chance, p_value=p_value)


def speed(timed: Sequence[tuple[int, float]], threshold_wps: float = READING_WPS) -> Speed:
    """`timed`: (words in the round's answers, seconds from serve to vote) per vote."""
    rates = sorted(words / max(seconds, 1e-3) for words, seconds in timed)
    median = None
    if rates:
        middle = len(rates) // 2
        median = rates[middle] if len(rates) % 2 else (rates[middle - 1] + rates[middle]) / 2
    return Speed(
        timed=len(rates),
        fast=sum(1 for rate in rates if rate > threshold_wps),
        threshold_wps=threshold_wps,
        median_wps=median,
    )


def agreement_with_majority(rounds: Sequence[tuple[tuple[str, ...], str, tuple[str, ...]]]) -> Agreement:
    """(shown, the person's choice, the others' choices) per round; rounds where the others split evenly count
    apart (no majority), as in the judge's agreement."""
    return judge_agreement([JudgedRound(shown, mine, others) for shown, mine, others in rounds if others]).with_ties


def agreement_with_judge(rounds: Sequence[tuple[tuple[str, ...], str, str]]) -> Agreement:
    """(shown, the person's choice, the judge's choice) per round the judge decided."""
    return judge_agreement([JudgedRound(shown, judge, (mine,)) for shown, mine, judge in rounds]).with_ties


@dataclass(frozen=True, slots=True)
class Outlier:
    """Chatbot Arena's anomalous-user test (Chiang et al. 2024, "Chatbot Arena", section 5): each vote's p-value is
    how common its choice is among the others' votes on the same comparison, (same + 1) / (others + choices), the
    +1 so that a choice nobody else made is rare rather than impossible; Fisher's method combines them. `p_value`
    is None without such votes; `threshold` is OUTLIER_P divided by the number of voters tested (Bonferroni)."""

    votes: int
    statistic: float | None
    p_value: float | None
    threshold: float


def outlier_test(shares: Sequence[tuple[int, int, int]], voters: int) -> Outlier:
    """`shares`: per vote (others who chose the same, others who voted on the comparison, possible choices)."""
    p_values = [(same + 1) / (others + choices) for same, others, choices in shares if others]
    threshold = OUTLIER_P / max(voters, 1)
    if not p_values:
        return Outlier(votes=0, statistic=None, p_value=None, threshold=threshold)
    result = combine_pvalues(p_values, method="fisher")
    return Outlier(
        votes=len(p_values), statistic=float(result.statistic), p_value=float(result.pvalue), threshold=threshold
    )


@dataclass(frozen=True, slots=True)
class Flag:
    kind: str
    evidence: str


def flags(*, majority: Agreement, position: PositionPreference, pace: Speed, outlier: Outlier) -> list[Flag]:
    """What an owner should look at, each with the figures behind it."""
    found = []
    if outlier.votes >= MIN_OUTLIER_VOTES and outlier.p_value < outlier.threshold:
        found.append(
            Flag(
                "outlier",
                f"Their {outlier.votes} votes are unlike the others' on the same comparisons: Fisher's combined "
                f"p = {outlier.p_value:.2g}, below {outlier.threshold:.2g} (Chatbot Arena's outlier rule).",
            )
        )
    if pace.timed >= MIN_TIMED and pace.fast / pace.timed >= FAST_SHARE:
        found.append(
            Flag(
                "too_fast",
                f"{pace.fast} of {pace.timed} timed votes came faster than {pace.threshold_wps:g} words a second "
                f"(median {pace.median_wps:.1f}).",
            )
        )
    if position.first + position.last >= MIN_POSITION_PICKS and position.p_value < POSITION_P:
        side = "first" if position.first > position.last else "last"
        found.append(
            Flag(
                "position",
                f"Picked the {side} column {max(position.first, position.last)} times and the other end "
                f"{min(position.first, position.last)} times in blind votes "
                f"(binomial test p = {position.p_value:.2g}).",
            )
        )
    # The interval's upper end must be below the floor; where kappa has no interval (its standard error is zero,
    # e.g. a voter who disagreed every time), kappa itself is the evidence.
    upper = majority.kappa_high if majority.kappa_high is not None else majority.kappa
    if majority.rounds >= MIN_AGREEMENT_ROUNDS and upper is not None and upper < KAPPA_FLOOR:
        interval = (
            f"95% CI {majority.kappa_low:.2f} to {majority.kappa_high:.2f}"
            if majority.kappa_high is not None
            else "no interval: its standard error is zero"
        )
        found.append(
            Flag(
                "disagrees",
                f"Agreed with the majority of others on {majority.agreed} of {majority.rounds} rounds; kappa "
                f"{majority.kappa:.2f} ({interval}) is below {KAPPA_FLOOR:g}.",
            )
        )
    return found
