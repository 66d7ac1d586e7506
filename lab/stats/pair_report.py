"""The report's entry for one pair of variants: counts, intervals, both p-values, verdict, guidance and a sentence."""

import math
from collections.abc import Mapping
from dataclasses import dataclass

from lab.stats.pairwise import PairOutcomes, PairTest
from lab.stats.sample_size import (
    ALPHA,
    MIN_DECISIVE_PER_PAIR,
    NOT_ENOUGH_DATA,
    SIGNIFICANT,
    TARGET_POWER,
    more_needed,
    more_to_reach_minimum,
    sign_test_sample_size,
    verdict_of,
)
from lab.stats.sequential import always_valid_interval
from lab.stats.wording import (
    adjusted_for,
    before_adjustment,
    count_of,
    p_text,
    percent,
    percent_interval,
    power_level,
)


@dataclass(frozen=True, slots=True)
class PairReport:
    """One pair as the report shows it. Below the minimum every p-value is None and nothing is significant.

    `p_value` is the exact sign test and `p_holm` the same Holm-adjusted across all the comparison's pairs;
    `ci_low`/`ci_high` its Clopper–Pearson interval for a's share, which excludes 50% exactly when `p_value` is
    below α. `p_always_valid` is the peek-safe mSPRT p-value (`p_always_valid_holm` adjusted alike) and
    `always_valid_low`/`always_valid_high` its always-valid interval for a's share, which excludes 50% exactly when
    `p_always_valid` is below α. `more_decisive_votes` is how many more decisive votes are needed (to reach the
    minimum, or for the exact sign test to have 80% power at the share seen so far; None once significant or when
    the pair is exactly level); `more_votes` scales it by the share of votes showing both that picked one of the
    two (None until one did). `other_wins` counts votes showing both that a third variant won.
    """

    a: str
    b: str
    a_label: str
    b_label: str
    together: int
    a_wins: int
    b_wins: int
    ties: int
    decisive: int
    a_share: float | None
    ci_low: float | None
    ci_high: float | None
    verdict: str
    significant: bool
    significant_always_valid: bool
    p_value: float | None
    p_holm: float | None
    p_always_valid: float | None
    p_always_valid_holm: float | None
    more_decisive_votes: int | None
    more_votes: int | None
    always_valid_low: float | None
    always_valid_high: float | None
    other_wins: int
    holm_divisor: int = 1


def pair_report(
    outcomes: PairOutcomes,
    test: PairTest,
    *,
    p_always_valid: float,
    p_always_valid_holm: float,
    pairs_in_family: int,
    labels: Mapping[str, str],
    holm_divisor: int | None = None,
) -> PairReport:
    """Combine one pair's counts, tests and guidance. The verdict uses the Holm-adjusted fixed-sample p-value;
    `holm_divisor` (default: the whole family) is where Holm's method would test this pair (pairwise.holm_divisors)."""
    decisive = test.decisive
    enough = decisive >= MIN_DECISIVE_PER_PAIR
    significant = enough and test.p_holm is not None and test.p_holm < ALPHA
    divisor = pairs_in_family if holm_divisor is None else holm_divisor
    more_decisive = _more_decisive(test, enough=enough, significant=significant, divisor=divisor)
    decisive_rate = decisive / outcomes.together if decisive else None
    av_low, av_high = always_valid_interval(test.a_wins, decisive) if decisive else (None, None)
    return PairReport(
        a=test.a,
        b=test.b,
        a_label=labels.get(test.a, test.a),
        b_label=labels.get(test.b, test.b),
        together=outcomes.together,
        a_wins=test.a_wins,
        b_wins=test.b_wins,
        ties=test.ties,
        decisive=decisive,
        a_share=test.a_share,
        ci_low=test.ci_low,
        ci_high=test.ci_high,
        verdict=verdict_of(enough=enough, significant=significant),
        significant=significant,
        significant_always_valid=enough and p_always_valid_holm < ALPHA,
        p_value=test.p_value if enough else None,
        p_holm=test.p_holm if enough else None,
        p_always_valid=p_always_valid if enough else None,
        p_always_valid_holm=p_always_valid_holm if enough else None,
        more_decisive_votes=more_decisive,
        more_votes=math.ceil(more_decisive / decisive_rate) if more_decisive and decisive_rate else None,
        always_valid_low=av_low,
        always_valid_high=av_high,
        other_wins=outcomes.together - decisive - test.ties,
        holm_divisor=divisor,
    )


def _more_decisive(test: PairTest, *, enough: bool, significant: bool, divisor: int) -> int | None:
    if not enough:
        return more_to_reach_minimum(test.decisive)
    if significant:
        return None
    required = sign_test_sample_size(test.a_share, alpha=ALPHA / divisor)
    return None if required is None else more_needed(required, test.decisive)


def pair_sentence(entry: PairReport, pairs_in_family: int) -> str:
    """Plain words for one pair, told from the leader's side. Below the minimum it never mentions significance."""
    if entry.decisive == 0:
        return (
            f"No decisive votes between {entry.a_label} and {entry.b_label} yet; "
            f"{MIN_DECISIVE_PER_PAIR} are needed before the lab gives a verdict."
        )
    a_leads = entry.a_share >= 0.5
    leader, other = (entry.a_label, entry.b_label) if a_leads else (entry.b_label, entry.a_label)
    leader_wins = entry.a_wins if a_leads else entry.b_wins
    low, high = _leader_side(entry.ci_low, entry.ci_high, a_leads)
    # The exact interval and the sign test agree with each other, not with the Holm-adjusted verdict: with several
    # pairs both are labelled as before adjustment, so an interval excluding 50% beside "not yet significant" is
    # not read as a contradiction.
    unadjusted = f"before adjustment for {pairs_in_family} pairs: " if pairs_in_family > 1 else ""
    counts = (
        f"{leader} won {leader_wins:,} of {count_of(entry.decisive, 'decisive vote')} against {other} "
        f"({percent(leader_wins / entry.decisive)}; {unadjusted}95% CI {percent_interval(low, high)}"
    )
    if entry.verdict == NOT_ENOUGH_DATA:
        return f"{counts}). Not enough data for a verdict yet: {_more_phrase(entry, exact=True)} needed."
    result = f"{counts}, exact sign test {p_text(entry.p_value)})"
    fixed = f"{p_text(entry.p_holm)}{adjusted_for(pairs_in_family)}"
    peek_safe = _peek_safe_clause(entry, a_leads, pairs_in_family)
    if entry.verdict == SIGNIFICANT:
        if entry.significant_always_valid:
            return f"{result}; a significant difference ({fixed}), confirmed by the peek-safe test ({peek_safe})."
        return (
            f"{result}; a significant difference ({fixed}) if you fixed the number of votes in advance and looked "
            f"once. If you have been checking as votes came in, treat it as not yet settled: the peek-safe test "
            f"gives {peek_safe}."
        )
    if entry.more_decisive_votes is None:
        return (
            f"{result}; they are exactly level, so there is no difference for more votes to confirm. "
            "The interval shows how large a real difference could still be."
        )
    if entry.significant_always_valid:
        return (
            f"{result}; not significant by the fixed-sample test ({fixed}), but the peek-safe test, which stays "
            f"valid however often you look, shows a difference ({peek_safe})."
        )
    level = power_level(pairs_in_family, entry.holm_divisor)
    return (
        f"{result}; not yet significant ({fixed}; peek-safe test {peek_safe}). "
        f"{_more_phrase(entry, exact=False).capitalize()} would give the exact sign test an "
        f"{percent(TARGET_POWER)} chance of a significant result at {level}, if {leader}'s "
        f"true share of these votes is {percent(leader_wins / entry.decisive)}, as so far."
    )


def _leader_side(low: float, high: float, a_leads: bool) -> tuple[float, float]:
    return (low, high) if a_leads else (1 - high, 1 - low)


def _peek_safe_clause(entry: PairReport, a_leads: bool, pairs_in_family: int) -> str:
    """ "p = 0.090, Holm-adjusted for 3 pairs; 95% always-valid interval 47–100%, before adjustment"."""
    low, high = _leader_side(entry.always_valid_low, entry.always_valid_high, a_leads)
    return (
        f"{p_text(entry.p_always_valid_holm)}{adjusted_for(pairs_in_family)}; 95% always-valid interval "
        f"{percent_interval(low, high)}{before_adjustment(pairs_in_family)}"
    )


def _more_phrase(entry: PairReport, *, exact: bool) -> str:
    decisive = count_of(entry.more_decisive_votes, "more decisive vote")
    prefix = "" if exact else "about "
    if entry.more_votes is None or entry.more_votes == entry.more_decisive_votes:
        return prefix + decisive
    return (
        f"{prefix}{decisive} (about {count_of(entry.more_votes, 'vote')} showing both, since "
        f"{entry.decisive:,} of the {entry.together:,} so far picked one of the two: {_not_decisive(entry)})"
    )


def _not_decisive(entry: PairReport) -> str:
    """What the other votes showing both were: "5 were ties or all bad", "14 went to another variant", or both."""
    parts = []
    if entry.ties:
        parts.append(f"{entry.ties:,} {'was a tie or all bad' if entry.ties == 1 else 'were ties or all bad'}")
    if entry.other_wins:
        parts.append(f"{entry.other_wins:,} went to another variant")
    return " and ".join(parts)
