"""Bradley–Terry ratings: the maximum-likelihood fit, ties as half a win, bootstrap intervals and shared ranks."""

import math

import numpy as np
import pytest
from scipy.optimize import least_squares

from voting.stats.ratings import (
    MIN_RESAMPLES,
    Match,
    bradley_terry,
    fit_bradley_terry,
    match_table,
    matches_from_vote,
    shared_ranks,
)
from voting.stats.votes import ALL_BAD, TIE, RoundVote


def games(a: str, b: str, a_wins: int = 0, b_wins: int = 0, ties: int = 0) -> list[RoundVote]:
    return [RoundVote((a, b), a)] * a_wins + [RoundVote((a, b), b)] * b_wins + [RoundVote((a, b), TIE)] * ties


def mle_of(votes: list[RoundVote]) -> dict[str, float]:
    """The exact maximum-likelihood ratings (no penalty) of the votes, by entity."""
    table = match_table(votes)
    return dict(zip(table.keys, fit_bradley_terry(table.points(), l2=0), strict=True))


def test_a_chain_of_three_recovers_the_closed_form_mle():
    # Only a–b and b–c play, so each gap is fitted on its own: P(a beats b) = 3/4 gives a 10-based odds of 3,
    # a gap of 400·log₁₀(3); b scores 2 of 3 against c (1 win, 2 ties as half a win each): gap 400·log₁₀(2).
    votes = games("a", "b", a_wins=3, b_wins=1) + games("b", "c", b_wins=0, a_wins=1, ties=2)
    ab, bc = 400 * math.log10(3), 400 * math.log10(2)
    # Centred on 1000: a = 1000 + (2·ab + bc)/3, b = a − ab, c = b − bc.
    a = 1000 + (2 * ab + bc) / 3
    expected = {"a": a, "b": a - ab, "c": a - ab - bc}
    assert mle_of(votes) == pytest.approx(expected, abs=1e-6)


def score_equations(ratings: np.ndarray, points: np.ndarray) -> np.ndarray:
    """The MLE's first-order conditions, written independently on the 400-point scale: each player's expected score
    equals its actual score; the mean-1000 constraint replaces the last (redundant) equation."""
    expected = 1 / (1 + 10 ** ((ratings[None, :] - ratings[:, None]) / 400))
    equations = ((points + points.T) * expected).sum(axis=1) - points.sum(axis=1)
    return np.append(equations[:-1], ratings.mean() - 1000)


def test_a_full_round_robin_matches_an_independent_fit():
    votes = (
        games("a", "b", a_wins=6, b_wins=3, ties=1)
        + games("a", "c", a_wins=7, b_wins=2, ties=2)
        + games("b", "c", a_wins=5, b_wins=4, ties=3)
        + [RoundVote(("a", "b", "c"), "c")] * 2
    )
    # Points scored, rows against columns, by hand: ties half each, and the two 3-way votes c won beat a and b.
    points = np.array([[0, 6.5, 8.0], [3.5, 0, 6.5], [5.0, 7.5, 0]])
    reference = least_squares(score_equations, np.full(3, 1000.0), args=(points,), xtol=1e-15, ftol=1e-15, gtol=1e-15)
    fitted = mle_of(votes)
    assert [fitted[key] for key in "abc"] == pytest.approx(reference.x.tolist(), abs=1e-6)
    assert sum(fitted.values()) / 3 == pytest.approx(1000, abs=1e-9)


def test_a_tie_counts_as_half_a_win_for_each_side():
    with_ties = games("a", "b", a_wins=4, b_wins=2, ties=2) + games("b", "c", a_wins=3, b_wins=3)
    as_split = games("a", "b", a_wins=5, b_wins=3) + games("b", "c", a_wins=3, b_wins=3)
    assert mle_of(with_ties) == pytest.approx(mle_of(as_split), abs=1e-6)
    # An all-bad vote is a tie too.
    all_bad = games("a", "b", a_wins=4, b_wins=2) + [RoundVote(("a", "b"), ALL_BAD)] * 2 + games("b", "c", 3, 3)
    assert mle_of(all_bad) == pytest.approx(mle_of(as_split), abs=1e-6)


def test_the_reported_rating_is_the_fit_with_the_default_penalty_close_to_the_exact_mle():
    votes = games("a", "b", 30, 20, 5) + games("b", "c", 25, 25) + games("a", "c", 35, 15)
    reported = {rating.key: rating.rating for rating in bradley_terry(votes, n_resamples=MIN_RESAMPLES)}
    table = match_table(votes)
    assert reported == pytest.approx(dict(zip(table.keys, fit_bradley_terry(table.points()), strict=True)))
    assert reported == pytest.approx(mle_of(votes), abs=0.5)


def test_an_unbeaten_model_gets_a_finite_rating():
    votes = games("a", "b", a_wins=5) + games("b", "c", a_wins=3, b_wins=3)
    ratings = {rating.key: rating for rating in bradley_terry(votes, n_resamples=MIN_RESAMPLES)}
    assert all(math.isfinite(value) for rating in ratings.values() for value in (rating.ci_low, rating.ci_high))
    assert ratings["a"].rating > ratings["b"].rating


def test_synthetic_data_recover_the_true_strengths_within_their_intervals():
    true = {"a": 1200.0, "b": 1000.0, "c": 800.0}
    rng = np.random.default_rng(3)
    votes = []
    for first, second in (("a", "b"), ("b", "c"), ("a", "c")):
        p_first = 1 / (1 + 10 ** ((true[second] - true[first]) / 400))
        wins = int(rng.binomial(2000, p_first))
        votes += games(first, second, a_wins=wins, b_wins=2000 - wins)
    ratings = {rating.key: rating for rating in bradley_terry(votes, n_resamples=MIN_RESAMPLES, seed=1)}
    for key, value in true.items():
        assert ratings[key].ci_low < value < ratings[key].ci_high
        assert ratings[key].rating == pytest.approx(value, abs=25)
    assert [ratings[key].rank for key in "abc"] == [1, 2, 3]


def test_bootstrap_intervals_are_reproducible_with_a_seed():
    votes = games("a", "b", 6, 4, 2) + games("b", "c", 5, 3) + games("a", "c", 4, 4, 1)
    first = bradley_terry(votes, n_resamples=MIN_RESAMPLES, seed=11)
    assert bradley_terry(votes, n_resamples=MIN_RESAMPLES, seed=11) == first
    other = bradley_terry(votes, n_resamples=MIN_RESAMPLES, seed=12)
    assert [(r.ci_low, r.ci_high) for r in other] != [(r.ci_low, r.ci_high) for r in first]
    for rating in first:
        assert rating.ci_low <= rating.rating <= rating.ci_high


def test_it_refuses_fewer_than_two_hundred_resamples():
    with pytest.raises(ValueError, match="at least 200"):
        bradley_terry(games("a", "b", 1, 1), n_resamples=199)


def test_ranks_are_shared_with_every_overlapping_interval():
    # a is clearly above c and d; b overlaps a and c; c and d overlap.
    lows = [1100, 1040, 980, 950]
    highs = [1200, 1110, 1050, 990]
    # Rank = 1 + how many intervals lie wholly above this one.
    assert shared_ranks(lows, highs) == [1, 1, 2, 3]


def test_ratings_report_counts_and_come_highest_first():
    votes = games("a", "b", 3, 1, 2) + [RoundVote(("a", "b", "c"), "c")]
    ratings = bradley_terry(votes, n_resamples=MIN_RESAMPLES)
    assert [rating.rating for rating in ratings] == sorted((rating.rating for rating in ratings), reverse=True)
    by_key = {rating.key: rating for rating in ratings}
    assert (by_key["a"].matches, by_key["a"].wins, by_key["a"].losses, by_key["a"].ties) == (7, 3, 2, 2)
    assert (by_key["c"].matches, by_key["c"].wins, by_key["c"].losses) == (2, 2, 0)
    assert bradley_terry([], n_resamples=MIN_RESAMPLES) == []


def test_matches_from_an_n_way_vote_rate_entities_and_skip_same_entity_pairs():
    vote = RoundVote(("v1", "v2", "v3"), "v2")
    assert matches_from_vote(vote) == [Match("v1", "v2", 0.0), Match("v2", "v3", 1.0)]
    # v1 and v2 run the same model: their pair says nothing about models.
    by_model = {"v1": "gpt", "v2": "gpt", "v3": "claude"}
    assert matches_from_vote(vote, by_model) == [Match("gpt", "claude", 1.0)]
    assert matches_from_vote(RoundVote(("v1", "v3"), TIE), by_model) == [Match("gpt", "claude", 0.5)]


def test_fit_accepts_a_points_matrix_directly():
    ratings = fit_bradley_terry(np.array([[0.0, 3.0], [1.0, 0.0]]), l2=0)
    assert ratings[0] - ratings[1] == pytest.approx(400 * math.log10(3), abs=1e-6)
    assert ratings.mean() == pytest.approx(1000)
