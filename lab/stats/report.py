"""One comparison's statistics report as plain JSON-serialisable data, with sentences a non-statistician can read.

This is the single entry point the API and pages use; everything in it is computed by the modules beside it.
"""

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import asdict

from lab.stats.overall_report import overall_report
from lab.stats.pair_report import PairReport, pair_report, pair_sentence
from lab.stats.pairwise import holm, holm_divisors, overall_test, pair_outcomes, pairwise_tests
from lab.stats.sample_size import ALPHA, CONFIDENCE, MIN_DECISIVE_PER_PAIR, MIN_EXPECTED_WINS
from lab.stats.score_report import score_section
from lab.stats.scores import DEFAULT_RESAMPLES
from lab.stats.sequential import WHICH_P_TO_TRUST, always_valid_p
from lab.stats.success_report import success_section
from lab.stats.votes import RoundVote, VoteCounts, encode_vote_counts, encode_votes
from lab.stats.winrate import WinRate, win_rates
from lab.stats.wording import count_of, percent, percent_interval, with_sentences


def build_report(
    *,
    variants: Sequence[str],
    votes: Sequence[RoundVote] | VoteCounts,
    labels: Mapping[str, str] | None = None,
    scores: Mapping[str, Mapping[Hashable, float]] | None = None,
    pass_threshold: float | None = None,
    seed: int = 0,
    score_resamples: int = DEFAULT_RESAMPLES,
) -> dict:
    """The report for one comparison.

    variants: the comparison's variant keys in display order; labels: key → label for the sentences.
    votes: every vote, in any order, or how many votes of each kind there were (`VoteCounts`, as a report reads
    them): every figure depends only on the set of votes (the peek-safe figures are read from the current counts),
    so the same votes stored in another order, or counted, give the same report.
    scores: judge scores as variant key → {round id: score}; adds the "scores" section. With `pass_threshold`
    (a score at or above it counts as a pass) it also adds the "success" A/B section.
    seed, score_resamples: the bootstrap of the mean scores, seeded and run on the scores in sorted order, so the
    same scores give the same interval whatever order they are stored in.

    Returns {"alpha", "confidence", "minimum_decisive_per_pair", "minimum_expected_wins", "votes", "decisive_votes",
    "variants": [WinRate fields + "label"], "pairs": [PairReport fields + "sentence"], "overall": OverallReport
    fields, "scores": None | {"variants", "pairs"}, "success": None | {"threshold", "variants", "pairs"},
    "which_p_to_trust": str, "summary": str}. Below the minimum a pair's p-values are None and its verdict is
    "not enough data": the report never calls such a difference significant.
    """
    labels = dict(labels or {})
    encoded = encode_vote_counts(votes, variants) if isinstance(votes, Mapping) else encode_votes(votes, variants)
    rates = win_rates(encoded)
    outcomes = pair_outcomes(encoded)
    tests = pairwise_tests(outcomes)
    always_valid = [always_valid_p(pair.a_wins, pair.decisive) for pair in outcomes]
    divisors = holm_divisors([test.p_holm for test in tests])
    pairs = [
        pair_report(
            pair,
            test,
            p_always_valid=p_always_valid,
            p_always_valid_holm=p_always_valid_holm,
            pairs_in_family=len(outcomes),
            labels=labels,
            holm_divisor=divisor,
        )
        for pair, test, p_always_valid, p_always_valid_holm, divisor in zip(
            outcomes, tests, always_valid, holm(always_valid), divisors, strict=True
        )
    ]
    overall = overall_report(overall_test(encoded), labels)
    return {
        "alpha": ALPHA,
        "confidence": CONFIDENCE,
        "minimum_decisive_per_pair": MIN_DECISIVE_PER_PAIR,
        "minimum_expected_wins": MIN_EXPECTED_WINS,
        "votes": encoded.votes,
        "decisive_votes": encoded.decisive_votes,
        "variants": [{**asdict(rate), "label": labels.get(rate.variant, rate.variant)} for rate in rates],
        "pairs": with_sentences(pairs, pair_sentence),
        "overall": asdict(overall),
        "scores": None
        if scores is None
        else score_section(scores, variants, labels, seed=seed, n_resamples=score_resamples),
        "success": None
        if scores is None or pass_threshold is None
        else success_section(scores, variants, labels, threshold=pass_threshold),
        "which_p_to_trust": WHICH_P_TO_TRUST,
        "summary": summary(rates, pairs, overall.sentence, labels),
    }


def summary(rates: list[WinRate], pairs: list[PairReport], overall_sentence: str, labels: Mapping[str, str]) -> str:
    """A short paragraph: with two variants the pair's sentence; with more, the leader, its closest rival and the
    overall test."""
    ranked = sorted((rate for rate in rates if rate.decisive), key=lambda rate: rate.win_rate, reverse=True)
    if not ranked:
        return (
            f"No decisive votes yet. Each pair of variants needs {MIN_DECISIVE_PER_PAIR} decisive votes before the "
            "lab gives a verdict."
        )
    if len(pairs) == 1:
        return pair_sentence(pairs[0], 1)
    leader = ranked[0]
    parts = [
        f"{labels.get(leader.variant, leader.variant)} has the highest win rate: it won {percent(leader.win_rate)} of "
        f"the {count_of(leader.decisive, 'decisive vote')} it was in (95% exact interval "
        f"{percent_interval(leader.ci_low, leader.ci_high)})."
    ]
    if len(ranked) > 1:
        rival = {leader.variant, ranked[1].variant}
        parts.append(pair_sentence(next(pair for pair in pairs if {pair.a, pair.b} == rival), len(pairs)))
    parts.append(overall_sentence)
    return " ".join(parts)
