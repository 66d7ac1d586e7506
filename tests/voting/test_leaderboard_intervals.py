"""Leaderboard intervals say what they measure: none from one-sided votes or from resamples without spread (the API,
the CSV and the chart leave them out and say why), and the page gives the size of the bounds' seed noise."""

import random

import numpy as np
from scipy.stats import binom

from lab.stats.ratings import MIN_RESAMPLES, NO_SPREAD, ONE_SIDED, bound_errors, bradley_terry
from lab.stats.votes import TIE, RoundVote
from voting.api.csv_export import leaderboard_rows
from voting.page_selectors import leaderboard_chart
from voting.reports.leaderboard import By, Entity, board_figures


def board(votes: list[RoundVote], seed: int = 0) -> dict:
    ratings = bradley_terry(votes, n_resamples=MIN_RESAMPLES, seed=seed)
    described = {rating.key: Entity(label=rating.key) for rating in ratings}
    return board_figures(ratings, described, by=By.MODEL, votes=len(votes))


def test_a_single_tie_has_no_interval_rather_than_a_zero_width_one():
    figures = board([RoundVote(("gpt", "claude"), TIE)])

    for rating in figures["ratings"]:
        assert (rating["ci_low"], rating["ci_high"], rating["not_measured"]) == (None, None, NO_SPREAD)
    assert "1,000–1,000" not in figures["summary"]
    assert f"no interval: {NO_SPREAD}" in figures["summary"]
    assert leaderboard_chart(figures) == []
    assert figures["bound_error"] is None


def test_only_ties_between_two_models_are_not_measured_either():
    figures = board([RoundVote(("gpt", "claude"), TIE)] * 12)
    assert {rating["not_measured"] for rating in figures["ratings"]} == {NO_SPREAD}


def test_one_sided_ratings_have_null_intervals_with_the_reason_in_the_api_csv_and_chart():
    figures = board([RoundVote(("gpt", "claude"), "gpt")] * 3)

    assert [(r["ci_low"], r["ci_high"], r["not_measured"]) for r in figures["ratings"]] == [(None, None, ONE_SIDED)] * 2
    rows = leaderboard_rows(figures | {"ratings": [r | {"groups": 1} for r in figures["ratings"]]})
    assert [(row["ci_low"], row["ci_high"], row["not_measured"]) for row in rows] == [(None, None, ONE_SIDED)] * 2
    assert leaderboard_chart(figures) == []


def test_a_measured_rating_keeps_its_interval_beside_an_unmeasured_one():
    votes = [RoundVote(("a", "b"), "a")] * 6 + [RoundVote(("a", "b"), "b")] * 4 + [RoundVote(("b", "c"), "b")] * 3
    figures = board(votes)
    measured = {r["key"] for r in figures["ratings"] if r["not_measured"] is None}
    assert measured == {"a", "b"}
    assert {point["label"] for point in leaderboard_chart(figures)} == {"a", "b"}


def arena_votes() -> list[RoundVote]:
    rng = random.Random(2)
    strength = {"m1": 0.0, "m2": 0.4, "m3": 0.8, "m4": 1.2}
    votes = []
    for _ in range(150):
        a, b = rng.sample(sorted(strength), 2)
        p = 1 / (1 + np.exp(strength[b] - strength[a]))
        r = rng.random()
        votes.append(RoundVote((a, b), a if r < p * 0.85 else b if r < 0.85 else TIE))
    return votes


def test_bound_errors_are_the_order_statistic_range_of_each_quantile():
    resampled = np.random.default_rng(0).normal(size=(200, 3))
    bounds = np.quantile(resampled, 0.025, axis=0)
    low, high = binom.ppf(0.025, 200, 0.025), binom.ppf(0.975, 200, 0.025)  # order statistics 1 and 9 (0-based)
    ordered = np.sort(resampled, axis=0)
    expected = np.maximum(bounds - ordered[int(low)], ordered[int(high)] - bounds)
    assert np.allclose(bound_errors(resampled, 0.025, bounds), expected)


def test_the_stated_seed_noise_covers_how_far_other_seeds_move_the_bounds():
    votes = arena_votes()
    first = {r["key"]: r for r in board(votes)["ratings"]}
    moved, within = 0, 0
    for seed in range(1, 21):
        for rating in board(votes, seed)["ratings"]:
            for bound in ("ci_low", "ci_high"):
                moved += 1
                within += abs(rating[bound] - first[rating["key"]][bound]) <= 2 * first[rating["key"]]["bound_error"]
    # Both runs' bounds are noisy, so their difference is compared with twice one bound's 95% range.
    assert within / moved >= 0.95
    assert max(r["bound_error"] for r in first.values()) > 10  # at 200 resamples the noise is far from "a little"
