"""The report's judge-score section: each variant's mean score with its interval, and paired tests between variants."""

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import combinations

from lab.numbers import nonzero_decimal
from lab.stats.pairwise import holm, holm_divisors
from lab.stats.sample_size import (
    ALPHA,
    MIN_DECISIVE_PER_PAIR,
    NOT_ENOUGH_DATA,
    more_needed,
    more_to_reach_minimum,
    paired_scores_sample_size,
    verdict_of,
)
from lab.stats.scores import PairedScoreTest, paired_differences, paired_score_test, score_summary
from lab.stats.wording import adjusted_for, count_of, p_text, power_level, with_sentences


@dataclass(frozen=True, slots=True)
class ScorePairReport:
    """Wilcoxon test of A − B judge scores over shared rounds; p-values only from the minimum of non-zero
    differences on. `more_rounds` is how many more rounds scored for both are needed (None once significant, and
    None below the minimum when no round scored for both has differed: at that rate none would)."""

    a: str
    b: str
    a_label: str
    b_label: str
    n_pairs: int
    n_nonzero: int
    mean_difference: float | None
    verdict: str
    significant: bool
    p_value: float | None
    p_holm: float | None
    more_rounds: int | None
    holm_divisor: int = 1


def score_section(
    scores: Mapping[str, Mapping[Hashable, float]],
    variants: Sequence[str],
    labels: Mapping[str, str],
    *,
    seed: int,
    n_resamples: int,
) -> dict:
    """{"variants": [mean and interval per variant], "pairs": [paired test per pair, with a sentence]}."""
    summaries = [
        {
            # Sorted, so the seeded bootstrap draws from the same list however the scores were stored.
            **asdict(score_summary(key, sorted(scores.get(key, {}).values()), seed=seed, n_resamples=n_resamples)),
            "label": labels.get(key, key),
        }
        for key in variants
    ]
    pairs = list(combinations(variants, 2))
    tests = [paired_score_test(a, b, scores.get(a, {}), scores.get(b, {})) for a, b in pairs]
    adjusted = holm([test.p_value for test in tests])
    entries = [
        _pair_entry(test, p_holm, scores.get(a, {}), scores.get(b, {}), labels, divisor)
        for (a, b), test, p_holm, divisor in zip(pairs, tests, adjusted, holm_divisors(adjusted), strict=True)
    ]
    return {"variants": summaries, "pairs": with_sentences(entries, score_sentence)}


def _pair_entry(
    test: PairedScoreTest,
    p_holm: float | None,
    scores_a: Mapping[Hashable, float],
    scores_b: Mapping[Hashable, float],
    labels: Mapping[str, str],
    holm_divisor: int,
) -> ScorePairReport:
    enough = test.n_nonzero >= MIN_DECISIVE_PER_PAIR
    significant = enough and p_holm is not None and p_holm < ALPHA
    if not enough:
        more = more_to_reach_minimum(test.n_nonzero)
        # Scale missing non-zero differences to rounds by the share of rounds that differed so far. When rounds were
        # scored for both and none differed, that share is 0: no number of such rounds gets there (None).
        if test.n_nonzero:
            more_rounds = math.ceil(more * test.n_pairs / test.n_nonzero)
        else:
            more_rounds = None if test.n_pairs else more
    elif significant:
        more_rounds = None
    else:
        required = paired_scores_sample_size(
            paired_differences(scores_a, scores_b), mean=test.mean_difference, alpha=ALPHA / holm_divisor
        )
        more_rounds = None if required is None else more_needed(required, test.n_pairs)
    return ScorePairReport(
        a=test.a,
        b=test.b,
        a_label=labels.get(test.a, test.a),
        b_label=labels.get(test.b, test.b),
        n_pairs=test.n_pairs,
        n_nonzero=test.n_nonzero,
        mean_difference=test.mean_difference,
        verdict=verdict_of(enough=enough, significant=significant),
        significant=significant,
        p_value=test.p_value if enough else None,
        p_holm=p_holm if enough else None,
        more_rounds=more_rounds,
        holm_divisor=holm_divisor,
    )


def score_sentence(entry: ScorePairReport, pairs_in_family: int) -> str:
    """Plain words for one pair of judge-score columns. Below the minimum it never mentions significance."""
    if entry.n_pairs == 0:
        return f"No round has judge scores for both {entry.a_label} and {entry.b_label} yet."
    higher, lower = (entry.a_label, entry.b_label) if entry.mean_difference >= 0 else (entry.b_label, entry.a_label)
    result = f"Over {count_of(entry.n_pairs, 'round')} scored for both, " + (
        f"{higher} averages {nonzero_decimal(abs(entry.mean_difference))} points more than {lower}"
        if entry.mean_difference
        else f"{entry.a_label} and {entry.b_label} average the same score"
    )
    if entry.verdict == NOT_ENOUGH_DATA and entry.more_rounds is None:
        return (
            f"{result}. Not enough data for a verdict yet: the scores are the same in every one of these rounds, and "
            f"{MIN_DECISIVE_PER_PAIR} rounds where they differ are needed; at the rate so far no number of such rounds "
            "gets there, so it takes rounds on which the two answer differently."
        )
    if entry.verdict == NOT_ENOUGH_DATA:
        return (
            f"{result}. Not enough data for a verdict yet: the scores differ in {entry.n_nonzero} of these rounds and "
            f"{MIN_DECISIVE_PER_PAIR} are needed (about {count_of(entry.more_rounds, 'more round')})."
        )
    adjusted = adjusted_for(pairs_in_family)
    if entry.significant:
        return f"{result}; a significant difference (Wilcoxon signed-rank {p_text(entry.p_holm)}{adjusted})."
    verdict = f"{result}; not yet significant (Wilcoxon signed-rank {p_text(entry.p_holm)}{adjusted})."
    if entry.more_rounds is None and entry.mean_difference == 0:
        return f"{verdict} On average they are level, so there is no difference for more rounds to confirm."
    if entry.more_rounds is None:
        return (
            f"{verdict} The difference is so small beside its spread that no practical number of rounds would "
            "confirm it."
        )
    level = power_level(pairs_in_family, entry.holm_divisor)
    return (
        f"{verdict} About {count_of(entry.more_rounds, 'more round')} would give the Wilcoxon test about an 80% "
        f"chance of a significant result at {level}, if the true mean difference and its "
        "spread are as so far (from the paired t-test's power, over Wilcoxon's efficiency of 95%)."
    )
