"""Properties of every figure the report and the leaderboard show, over generated votes: the same set of votes gives
the same figures whatever order they are stored in, nothing is NaN or infinite, and every interval lies within its
parameter's range."""

import json
import math
import random
from collections import Counter

from hypothesis import example, given, settings
from hypothesis import strategies as st

from lab.stats.agreement import JudgedRound, judge_agreement
from lab.stats.ratings import MIN_RESAMPLES, bradley_terry
from lab.stats.report import build_report
from lab.stats.votes import ALL_BAD, TIE, RoundVote
from tests.voting.test_report_equal_scores import A_SCORES, B_SCORES
from voting.reports.leaderboard import By, Entity, board_figures

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


# Weighted scores of three equal-weight 1–5 metrics, normalised to 0–1: fifteenths, which binary floats do not hold
# exactly, so sums of the same scores in another order can differ in the last digit.
FIFTEENTHS = st.integers(0, 15).map(lambda k: k / 15)


@st.composite
def data_sets(draw) -> tuple[list[RoundVote], dict[str, dict[int, float]]]:
    """Votes and judge scores, among them the hard cases: no vote, a single vote, all ties, a one-sided chain of
    wins, scores where one variant's are a reshuffle of another's (equal means), identical scores."""
    kind = draw(st.sampled_from(["mixed", "single", "ties", "chain"]))
    if kind == "single":
        vote_list = draw(votes(min_size=1, max_size=1))
    elif kind == "ties":
        vote_list = [RoundVote(shown, draw(st.sampled_from([TIE, ALL_BAD]))) for shown in draw(st.lists(SHOWN))]
    elif kind == "chain":
        vote_list = [RoundVote(("a", "b"), "a")] * draw(st.integers(1, 12))
        vote_list += [RoundVote(("b", "c"), "b")] * draw(st.integers(0, 12))
    else:
        vote_list = draw(votes())
    rounds = draw(st.integers(0, 25))
    a = {r: draw(FIFTEENTHS) for r in range(rounds)}
    shape = draw(st.sampled_from(["reshuffled", "identical", "independent"]))
    if shape == "reshuffled":
        b = dict(zip(a, draw(st.permutations(list(a.values()))), strict=True))
    elif shape == "identical":
        b = dict.fromkeys(a, draw(FIFTEENTHS))
    else:
        b = {r: draw(FIFTEENTHS) for r in range(rounds) if draw(st.booleans())}
    c = {r: draw(FIFTEENTHS) for r in range(rounds) if draw(st.booleans())}
    return vote_list, {"a": a, "b": b, "c": c}


def report_of(vote_list, scores):
    return build_report(variants=VARIANTS, votes=vote_list, scores=scores, pass_threshold=0.75, score_resamples=200)


def shuffled_scores(scores: dict[str, dict[int, float]], rng) -> dict[str, dict[int, float]]:
    result = {}
    for key, by_round in scores.items():
        rounds = list(by_round)
        rng.shuffle(rounds)
        result[key] = {r: by_round[r] for r in rounds}
    return result


def report_json(votes_or_counts, scores) -> str:
    return json.dumps(report_of(votes_or_counts, scores), allow_nan=False)


def leaderboard_json(votes_or_counts, seed: int = 0) -> str:
    ratings = bradley_terry(votes_or_counts, n_resamples=MIN_RESAMPLES, seed=seed)
    described = {key: Entity(label=f"model {key}") for key in VARIANTS}
    votes_total = sum(votes_or_counts.values()) if isinstance(votes_or_counts, Counter) else len(votes_or_counts)
    return json.dumps(board_figures(ratings, described, by=By.MODEL, votes=votes_total), allow_nan=False)


def counted_in_order(vote_list: list[RoundVote], rng) -> Counter:
    """The votes counted per kind, the kinds in a shuffled order (as a database may return them)."""
    counts = list(Counter(vote_list).items())
    rng.shuffle(counts)
    return Counter(dict(counts))


# B's scores a reshuffle of A's: equal means, which once crashed the report.
EQUAL_MEANS = {"a": dict(enumerate(A_SCORES)), "b": dict(enumerate(B_SCORES)), "c": {}}


@settings(max_examples=25, deadline=None)
@given(data_sets(), st.randoms(use_true_random=False))
@example(([], EQUAL_MEANS), random.Random(0))
@example(([RoundVote(("a", "b"), TIE)], EQUAL_MEANS), random.Random(1))
def test_permuting_the_stored_order_leaves_every_byte_of_the_report_and_leaderboard_json_unchanged(data, rng):
    vote_list, scores = data
    shuffled = list(vote_list)
    rng.shuffle(shuffled)
    other_scores = shuffled_scores(scores, rng)

    report = report_json(vote_list, scores)
    assert report_json(shuffled, other_scores) == report
    assert report_json(counted_in_order(vote_list, rng), other_scores) == report
    if vote_list:
        board = leaderboard_json(vote_list)
        assert leaderboard_json(shuffled) == board
        assert leaderboard_json(counted_in_order(vote_list, rng)) == board


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


@settings(max_examples=40, deadline=None)
@given(data_sets())
@example(([], EQUAL_MEANS))
def test_no_report_or_leaderboard_raises_for_any_data_set(data):
    vote_list, scores = data
    report = report_of(vote_list, scores)
    json.dumps(report, allow_nan=False)
    intervals_in_range(report)
    if vote_list:
        json.loads(leaderboard_json(vote_list))


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
