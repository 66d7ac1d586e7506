"""The report's success-rate section: per variant the share of runs that passed, and A/B tests between variants.

A run passes when its judge score is at or above the threshold the caller gives.
"""

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

from lab.stats.ab import ABTest, ab_test
from lab.stats.pairwise import holm, holm_divisors
from lab.stats.sample_size import (
    ALPHA,
    MIN_DECISIVE_PER_PAIR,
    more_needed,
    more_to_reach_minimum,
    two_proportion_sample_size,
    uses_fisher,
    verdict_of,
)
from lab.stats.winrate import wilson_interval
from lab.stats.wording import adjusted_for, count_of, p_text, percent, points, power_level, with_sentences


@dataclass(frozen=True, slots=True)
class SuccessPairReport:
    """A/B comparison of pass rates. Difference A − B with Newcombe's interval whenever both have runs; test, p-value
    and verdict only once each has the minimum number of runs. `more_runs`: further runs of each needed, for the
    pooled z-test; `more_runs_at_least` when at that size the counts would still be small enough for the report
    to use Fisher's exact test, which needs more."""

    a: str
    b: str
    a_label: str
    b_label: str
    successes_a: int
    trials_a: int
    successes_b: int
    trials_b: int
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    test: str | None
    verdict: str
    significant: bool
    p_value: float | None
    p_holm: float | None
    more_runs: int | None
    more_runs_at_least: bool = False
    holm_divisor: int = 1


def success_section(
    scores: Mapping[str, Mapping[Hashable, float]],
    variants: Sequence[str],
    labels: Mapping[str, str],
    *,
    threshold: float,
) -> dict:
    """{"threshold", "variants": [pass counts and Wilson interval], "pairs": [A/B per pair, with a sentence]}."""
    counts = {key: _passes(scores.get(key, {}).values(), threshold) for key in variants}
    summaries = []
    for key in variants:
        successes, trials = counts[key]
        low, high = wilson_interval(successes, trials) if trials else (None, None)
        rate = successes / trials if trials else None
        summaries.append(
            {
                "variant": key,
                "label": labels.get(key, key),
                "successes": successes,
                "trials": trials,
                "rate": rate,
                "ci_low": low,
                "ci_high": high,
            }
        )
    pairs = list(combinations(variants, 2))
    tests = [_test(*counts[a], *counts[b]) for a, b in pairs]
    # Every pair that has runs on both sides is in the family with its p-value, even below the minimum (where no
    # verdict is shown), and a pair without runs counts as p = 1: the same family as the vote and score sections.
    adjusted = holm([_any_test(*counts[a], *counts[b]) for a, b in pairs])
    entries = [
        _pair_entry(a, b, counts, test, p_holm, labels, divisor)
        for (a, b), test, p_holm, divisor in zip(pairs, tests, adjusted, holm_divisors(adjusted), strict=True)
    ]
    return {"threshold": threshold, "variants": summaries, "pairs": with_sentences(entries, success_sentence)}


def _passes(values: Iterable[float], threshold: float) -> tuple[int, int]:
    values = list(values)
    return sum(value >= threshold for value in values), len(values)


def _test(successes_a: int, trials_a: int, successes_b: int, trials_b: int) -> ABTest | None:
    """The A/B test, or None while either variant is below the minimum number of runs."""
    if min(trials_a, trials_b) < MIN_DECISIVE_PER_PAIR:
        return None
    return ab_test(successes_a, trials_a, successes_b, trials_b)


def _any_test(successes_a: int, trials_a: int, successes_b: int, trials_b: int) -> float | None:
    """The A/B test's p-value whenever both variants have runs, for the Holm family."""
    if not (trials_a and trials_b):
        return None
    return ab_test(successes_a, trials_a, successes_b, trials_b).p_value


def _pair_entry(
    a: str,
    b: str,
    counts: dict[str, tuple[int, int]],
    test: ABTest | None,
    p_holm: float | None,
    labels: Mapping[str, str],
    holm_divisor: int,
) -> SuccessPairReport:
    (successes_a, trials_a), (successes_b, trials_b) = counts[a], counts[b]
    # Counts and intervals are shown below the minimum too; only the test waits for enough runs.
    interval = test or (ab_test(successes_a, trials_a, successes_b, trials_b) if trials_a and trials_b else None)
    significant = test is not None and p_holm < ALPHA
    at_least = False
    if test is None:
        more_runs = more_to_reach_minimum(min(trials_a, trials_b))
    elif significant:
        more_runs = None
    else:
        required = two_proportion_sample_size(test.rate_a, test.rate_b, alpha=ALPHA / holm_divisor)
        more_runs = None if required is None else more_needed(required, min(trials_a, trials_b))
        at_least = required is not None and uses_fisher(test.rate_a, test.rate_b, required)
    return SuccessPairReport(
        a=a,
        b=b,
        a_label=labels.get(a, a),
        b_label=labels.get(b, b),
        successes_a=successes_a,
        trials_a=trials_a,
        successes_b=successes_b,
        trials_b=trials_b,
        difference=interval.difference if interval else None,
        ci_low=interval.ci_low if interval else None,
        ci_high=interval.ci_high if interval else None,
        test=test.test if test else None,
        verdict=verdict_of(enough=test is not None, significant=significant),
        significant=significant,
        p_value=test.p_value if test else None,
        p_holm=p_holm if test else None,
        more_runs=more_runs,
        more_runs_at_least=at_least,
        holm_divisor=holm_divisor,
    )


def success_sentence(entry: SuccessPairReport, pairs_in_family: int) -> str:
    """Plain words for one A/B pair of pass rates. Below the minimum it never mentions significance."""
    if entry.difference is None:
        return (
            f"{entry.a_label} and {entry.b_label} need judged runs before their pass rates can be compared; "
            f"{MIN_DECISIVE_PER_PAIR} each are needed for a verdict."
        )
    rates = (
        f"{entry.a_label} passed {entry.successes_a} of {count_of(entry.trials_a, 'run')} "
        f"({percent(entry.successes_a / entry.trials_a)}), {entry.b_label} {entry.successes_b} of "
        f"{entry.trials_b} ({percent(entry.successes_b / entry.trials_b)}); difference "
        f"{points(entry.difference)} (95% CI {points(entry.ci_low)} to {points(entry.ci_high)})"
    )
    if entry.test is None:
        return (
            f"{rates}. Not enough data for a verdict yet: {count_of(entry.more_runs, 'more run')} of the variant "
            f"with fewer runs needed, to reach {MIN_DECISIVE_PER_PAIR} each."
        )
    adjusted = adjusted_for(pairs_in_family)
    tested = f"{entry.test}, {p_text(entry.p_holm)}{adjusted}"
    if entry.significant:
        return f"{rates}; a significant difference ({tested})."
    if entry.more_runs is None:
        return f"{rates}; not significant ({tested}), and the pass rates are equal, so there is nothing to confirm."
    about = "At least" if entry.more_runs_at_least else "About"
    level = power_level(pairs_in_family, entry.holm_divisor)
    return (
        f"{rates}; not yet significant ({tested}). {about} {count_of(entry.more_runs, 'more run')} of each would "
        f"give the two-proportion z-test an 80% chance of a significant result at {level}, "
        f"if the true pass rates are {percent(entry.successes_a / entry.trials_a)} and "
        f"{percent(entry.successes_b / entry.trials_b)}, as so far"
        + (" (Fisher's exact test, used while counts are this small, needs more)." if entry.more_runs_at_least else ".")
    )
