"""Properties of every figure the report and the leaderboard show, over generated votes: the same set of votes gives
the same figures whatever order they are stored in, nothing is NaN or infinite, and every interval lies within its
parameter's range."""

import json
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from voting.stats.agreement import JudgedRound, judge_agreement
from voting.stats.ratings import MIN_RESAMPLES, bradley_terry
from voting.stats.report import build_report
from voting.stats.votes import ALL_BAD, TIE, RoundVote

VARIANTS = ["a", "b", "c"]
SHOWN = st.sampled_from([("a", "b"), ("a", "c"), ("b", "c"), ("a", "b", "c")])


@st.composite
def votes(draw, min_size: int = 0, max_size: int = 60) -> list[RoundVote]:
    shown = draw(st.lists(SHOWN, min_size=min_size, max_size=max_size))
    return [RoundVote(each, draw(st.sampled_from([*each, TIE, ALL_BAD]))) for each in shown]


@st.composite
def judge_scores(draw) -> dict[str, dict[int, float]]:
    rounds = draw(st.integers(0, 25))
    grid = st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0])
    return {key: {r: draw(grid) for r in range(rounds) if draw(st.booleans()) or r < 3} for key in VARIANTS}


def report_of(vote_list, scores):
    return build_report(variants=VARIANTS, votes=vote_list, scores=scores, pass_threshold=0.75, score_resamples=200)


def shuffled_scores(scores: dict[str, dict[int, float]], rng) -> dict[str, dict[int, float]]:
    result = {}
    for key, by_round in scores.items():
        rounds = list(by_round)
        rng.shuffle(rounds)
        result[key] = {r: by_round[r] for r in rounds}
    return result


@settings(max_examples=40, deadline=None)
@given(votes(), judge_scores(), st.randoms(use_true_random=False))
def test_the_report_is_a_function_of_the_set_of_votes_and_scores(vote_list, scores, rng):
    shuffled = list(vote_list)
    rng.shuffle(shuffled)
    assert report_of(shuffled, shuffled_scores(scores, rng)) == report_of(vote_list, scores)


@settings(max_examples=10, deadline=None)
@given(votes(min_size=1, max_size=40), st.randoms(use_true_random=False), st.integers(0, 3))
def test_the_leaderboard_is_a_function_of_the_set_of_votes(vote_list, rng, seed):
    shuffled = list(vote_list)
    rng.shuffle(shuffled)
    first = bradley_terry(vote_list, n_resamples=MIN_RESAMPLES, seed=seed)
    assert bradley_terry(shuffled, n_resamples=MIN_RESAMPLES, seed=seed) == first
    # Ranks do not use the resamples at all.
    other_seed = bradley_terry(vote_list, n_resamples=MIN_RESAMPLES, seed=seed + 1)
    assert [(r.key, r.rank, r.rating) for r in other_seed] == [(r.key, r.rank, r.rating) for r in first]


def intervals_in_range(report: dict) -> None:
    def within(low, high, lowest, highest, estimate=None):
        if low is None:
            assert high is None
            return
        assert lowest <= low <= high <= highest
        if estimate is not None:
            assert low - 1e-9 <= estimate <= high + 1e-9

    for rate in report["variants"]:
        within(rate["ci_low"], rate["ci_high"], 0, 1, rate["win_rate"])
    for pair in report["pairs"]:
        within(pair["ci_low"], pair["ci_high"], 0, 1, pair["a_share"])
        within(pair["always_valid_low"], pair["always_valid_high"], 0, 1, pair["a_share"])
        for name in ("p_value", "p_holm", "p_always_valid", "p_always_valid_holm"):
            assert pair[name] is None or 0 <= pair[name] <= 1
    if report["scores"]:
        for row in report["scores"]["variants"]:
            within(row["ci_low"], row["ci_high"], 0, 1, row["mean"])
        for pair in report["scores"]["pairs"]:
            assert pair["p_value"] is None or 0 <= pair["p_value"] <= pair["p_holm"] <= 1
    if report["success"]:
        for row in report["success"]["variants"]:
            within(row["ci_low"], row["ci_high"], 0, 1, row["rate"])
        for pair in report["success"]["pairs"]:
            within(pair["ci_low"], pair["ci_high"], -1, 1, pair["difference"])


@settings(max_examples=60, deadline=None)
@given(votes(), judge_scores())
def test_no_report_figure_is_nan_or_infinite_and_every_interval_is_in_range(vote_list, scores):
    report = report_of(vote_list, scores)
    json.dumps(report, allow_nan=False)
    intervals_in_range(report)


@settings(max_examples=15, deadline=None)
@given(votes(min_size=1, max_size=40))
def test_no_rating_is_nan_or_infinite(vote_list):
    for rating in bradley_terry(vote_list, n_resamples=MIN_RESAMPLES):
        assert all(math.isfinite(value) for value in (rating.rating, rating.ci_low, rating.ci_high))
        assert rating.ci_low <= rating.ci_high and rating.rank >= 1


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(SHOWN, st.integers(0, 3), st.lists(st.integers(0, 3), min_size=1, max_size=3))))
def test_agreement_figures_stay_within_their_ranges(rows):
    def choice(shown, index):
        return shown[index] if index < len(shown) else TIE

    rounds = [
        JudgedRound(shown, choice(shown, judge), tuple(choice(shown, h) for h in humans))
        for shown, judge, humans in rows
    ]
    report = judge_agreement(rounds)
    for agreement in (report.with_ties, report.without_ties):
        if agreement.share is not None:
            assert 0 <= agreement.share_low <= agreement.share <= agreement.share_high <= 1
        if agreement.kappa is not None:
            assert -1 <= agreement.kappa <= 1 and math.isfinite(agreement.kappa)
        if agreement.kappa_low is not None:
            assert -1 <= agreement.kappa_low <= agreement.kappa <= agreement.kappa_high <= 1
