"""Assertion pass rates per variant (Wilson intervals) and the paired difference between two variants: the exact
McNemar test on the rounds both answered, Holm-adjusted over every pair, with the votes' "not enough data" rule.

The exact McNemar test is the exact binomial (sign) test on the discordant pairs — rounds where one variant passed
and the other failed — against 1/2 (McNemar 1947; the exact form, e.g. Fagerland, Lydersen & Laake 2013, BMC Med
Res Methodol 13:91), so it reuses the votes' `sign_test`, `holm` and MIN_DECISIVE_PER_PAIR: below ten discordant
rounds a pair gets counts only, as a pair of variants with fewer than ten decisive votes does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import combinations

from lab.stats.intervals import ALPHA, wilson_interval
from lab.stats.pairwise import holm, sign_test
from lab.stats.sample_size import MIN_DECISIVE_PER_PAIR, more_to_reach_minimum, verdict_of


@dataclass(frozen=True, slots=True)
class PassRate:
    key: str
    passed: int
    graded: int
    rate: float | None
    ci_low: float | None
    ci_high: float | None


@dataclass(frozen=True, slots=True)
class PairedPassTest:
    """Rounds both variants answered (`paired`); `a_only` rounds where only A passed, `b_only` only B; the exact
    McNemar p-value and its Holm adjustment once there are MIN_DECISIVE_PER_PAIR discordant rounds (None before)."""

    a: str
    b: str
    paired: int
    both: int
    a_only: int
    b_only: int
    neither: int
    difference: float | None  # A's pass rate − B's on the paired rounds
    p_value: float | None
    p_holm: float | None
    verdict: str
    more_needed: int


def pass_rate(key: str, passed: int, graded: int) -> PassRate:
    low, high = wilson_interval(passed, graded) if graded else (None, None)
    return PassRate(key, passed, graded, passed / graded if graded else None, low, high)


def exact_mcnemar(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value: the exact binomial test of a_only out of the discordant rounds at 1/2."""
    return sign_test(a_only, b_only)


def paired_pass_tests(outcomes: Mapping[str, Mapping[object, bool]]) -> list[PairedPassTest]:
    """Every pair of variants (in the mapping's order): `outcomes` maps a variant to {round: passed}; only rounds
    both were graded on count. Holm's family is every pair, tested or not, as in the votes' report."""
    pairs = []
    for a, b in combinations(outcomes, 2):
        shared = outcomes[a].keys() & outcomes[b].keys()
        cells = [(outcomes[a][r], outcomes[b][r]) for r in shared]
        pairs.append(
            (
                a,
                b,
                sum(x and y for x, y in cells),
                sum(x and not y for x, y in cells),
                sum(y and not x for x, y in cells),
                sum(not x and not y for x, y in cells),
            )
        )
    raw = [exact_mcnemar(a_only, b_only) if a_only + b_only else None for _, _, _, a_only, b_only, _ in pairs]
    adjusted = holm(raw)
    tests = []
    for (a, b, both, a_only, b_only, neither), p, p_holm in zip(pairs, raw, adjusted, strict=True):
        paired = both + a_only + b_only + neither
        discordant = a_only + b_only
        enough = discordant >= MIN_DECISIVE_PER_PAIR
        tests.append(
            PairedPassTest(
                a=a,
                b=b,
                paired=paired,
                both=both,
                a_only=a_only,
                b_only=b_only,
                neither=neither,
                difference=(a_only - b_only) / paired if paired else None,
                p_value=p if enough else None,
                p_holm=p_holm if enough else None,
                verdict=verdict_of(enough=enough, significant=enough and p_holm is not None and p_holm < ALPHA),
                more_needed=more_to_reach_minimum(discordant),
            )
        )
    return tests
