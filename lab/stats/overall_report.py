"""The report's overall entry: are the variants all equally preferred? (chi-square on wins, with its guidance)."""

import math
from collections.abc import Mapping
from dataclasses import dataclass

from lab.stats.pairwise import OverallTest
from lab.stats.sample_size import ALPHA, MIN_EXPECTED_WINS, verdict_of
from lab.stats.wording import and_list, count_of, p_text


@dataclass(frozen=True, slots=True)
class OverallReport:
    """The chi-square test once every variant expects at least MIN_EXPECTED_WINS wins; before that counts only,
    and `more_decisive_votes` says how many more decisive votes that takes at the current mix of shown variants
    (None when some variant has not been in a decisive vote while others have: more votes of the same mix would
    never let the test run; `unseen` names those variants)."""

    wins: dict[str, int]
    expected: dict[str, float]
    verdict: str
    significant: bool
    statistic: float | None
    df: int | None
    p_value: float | None
    more_decisive_votes: int | None
    sentence: str
    unseen: list[str]


def overall_report(test: OverallTest, labels: Mapping[str, str] | None = None) -> OverallReport:
    """The overall test as the report shows it: a verdict only once the chi-square approximation can be trusted."""
    labels = labels or {}
    decisive = sum(test.wins.values())
    fewest = min(test.expected.values())
    enough = test.p_value is not None and fewest >= MIN_EXPECTED_WINS
    unseen = [key for key, expected in test.expected.items() if expected == 0] if decisive else []
    if enough or unseen:
        more = None
    elif fewest > 0:
        # Expected wins grow in proportion to decisive votes, so scale until the smallest reaches the rule.
        more = max(1, math.ceil(decisive * MIN_EXPECTED_WINS / fewest) - decisive)
    else:
        # No decisive vote yet: assume every vote shows every variant.
        more = MIN_EXPECTED_WINS * len(test.expected)
    significant = enough and test.p_value < ALPHA
    return OverallReport(
        wins=test.wins,
        expected=test.expected,
        verdict=verdict_of(enough=enough, significant=significant),
        significant=significant,
        statistic=test.statistic if enough else None,
        df=test.df if enough else None,
        p_value=test.p_value if enough else None,
        more_decisive_votes=more,
        sentence=_sentence(enough, significant, test.p_value, more, [labels.get(key, key) for key in unseen]),
        unseen=unseen,
    )


def _sentence(enough: bool, significant: bool, p_value: float | None, more: int | None, unseen: list[str]) -> str:
    if unseen:
        return (
            f"The overall test cannot run yet: {and_list(unseen)} {'has' if len(unseen) == 1 else 'have'} not been "
            f"in a decisive vote, and each variant should expect {MIN_EXPECTED_WINS} wins; it needs decisive votes "
            f"on rounds that show {'it' if len(unseen) == 1 else 'them'}."
        )
    if not enough:
        return (
            "Not enough decisive votes yet to test whether any variant is preferred overall: about "
            f"{count_of(more, 'more decisive vote')} needed (each variant should expect {MIN_EXPECTED_WINS} wins)."
        )
    if significant:
        return f"The variants are not all equally preferred (chi-square test, {p_text(p_value)})."
    return f"No clear evidence yet that any variant is preferred over the others (chi-square test, {p_text(p_value)})."
