"""Bradley–Terry ratings: the maximum-likelihood fit, ties as half a win, bootstrap intervals and shared ranks."""

import math
from collections import Counter

import numpy as np
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import least_squares
from scipy.special import expit

from lab.stats.ratings import (
    MIN_RESAMPLES,
    Match,
    bradley_terry,
    difference_variance,
    fit_bradley_terry,
    fit_many,
    match_table,
    matches_from_vote,
    ranks_from_differences,
)
from lab.stats.votes import ALL_BAD, TIE, RoundVote


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


def penalised_score_equations(strength: np.ndarray, points: np.ndarray, l2: float) -> np.ndarray:
    """The penalised fit's first-order conditions on natural-log strengths, written independently: each player's
    expected score less its actual score, plus the penalty's pull l2·s; with l2 > 0 they fix every strength."""
    expected = expit(strength[:, None] - strength[None, :])
    return ((points + points.T) * expected).sum(axis=1) - points.sum(axis=1) + l2 * strength


def test_a_penalised_fit_solves_its_score_equations_where_no_exact_fit_exists():
    # a is unbeaten (5–0 against b), so only the penalty keeps its rating finite, far above the rest.
    points = np.array([[0, 5.0, 0], [0, 0, 3.0], [0, 3.0, 0]])
    reference = least_squares(
        penalised_score_equations, np.zeros(3), args=(points, 1e-3), xtol=1e-15, ftol=1e-15, gtol=1e-15
    )
    expected = 1000 + 400 / math.log(10) * (reference.x - reference.x.mean())
    assert fit_bradley_terry(points, l2=1e-3) == pytest.approx(expected, abs=1e-6)
    assert expected[0] - expected[1] > 1000


def test_fits_in_a_batch_equal_each_fit_alone_whatever_the_start():
    connected = np.array([[0, 6.5, 8.0], [3.5, 0, 6.5], [5.0, 7.5, 0]])
    one_sided = np.array([[0, 5.0, 0], [0, 0, 3.0], [0, 3.0, 0]])
    together = fit_many(np.stack([connected, one_sided]), l2=np.array([0.0, 1e-3]), start=np.array([2.0, -1, -1]))
    assert together[0] == pytest.approx(fit_bradley_terry(connected, l2=0), abs=1e-9)
    assert together[1] == pytest.approx(fit_bradley_terry(one_sided, l2=1e-3), abs=1e-9)


def test_a_tie_counts_as_half_a_win_for_each_side():
    with_ties = games("a", "b", a_wins=4, b_wins=2, ties=2) + games("b", "c", a_wins=3, b_wins=3)
    as_split = games("a", "b", a_wins=5, b_wins=3) + games("b", "c", a_wins=3, b_wins=3)
    assert mle_of(with_ties) == pytest.approx(mle_of(as_split), abs=1e-6)
    # An all-bad vote is a tie too.
    all_bad = games("a", "b", a_wins=4, b_wins=2) + [RoundVote(("a", "b"), ALL_BAD)] * 2 + games("b", "c", 3, 3)
    assert mle_of(all_bad) == pytest.approx(mle_of(as_split), abs=1e-6)


def test_the_reported_rating_is_the_exact_mle_where_one_exists():
    # F6: the default penalty moved ratings from the exact MLE; now it is used only where no MLE exists.
    votes = games("a", "b", 30, 20, 5) + games("b", "c", 25, 25) + games("a", "c", 35, 15) + games("c", "d", 9, 1)
    ratings = bradley_terry(votes, n_resamples=MIN_RESAMPLES)
    assert {rating.key: rating.rating for rating in ratings} == pytest.approx(mle_of(votes), abs=1e-6)
    table = match_table(votes)
    penalised = dict(zip(table.keys, fit_bradley_terry(table.points(), l2=1e-3), strict=True))
    assert max(abs(penalised[key] - value) for key, value in mle_of(votes).items()) > 0.01
    assert not any(rating.one_sided for rating in ratings)


def test_an_unbeaten_model_gets_a_finite_rating_flagged_as_one_sided():
    votes = games("a", "b", a_wins=5) + games("b", "c", a_wins=3, b_wins=3)
    ratings = {rating.key: rating for rating in bradley_terry(votes, n_resamples=MIN_RESAMPLES)}
    assert all(math.isfinite(value) for rating in ratings.values() for value in (rating.ci_low, rating.ci_high))
    assert ratings["a"].rating > ratings["b"].rating
    assert (ratings["a"].one_sided, ratings["b"].one_sided, ratings["c"].one_sided) == (True, False, False)


@pytest.mark.parametrize(
    "votes",
    [games("gpt", "claude", a_wins=1), games("a", "b", a_wins=11) + games("b", "c", a_wins=11)],
    ids=["one vote", "11-0 chain"],
)
def test_one_sided_votes_are_flagged_and_never_ranked_apart(votes):
    # F3: one vote gpt > claude gave gpt 1506.8 with interval [1506.8, 1506.8]; an 11–0 chain 2271 and −271.
    ratings = bradley_terry(votes, n_resamples=MIN_RESAMPLES)
    assert all(rating.one_sided for rating in ratings)
    assert {rating.rank for rating in ratings} == {1}


def test_rating_differences_have_the_logistic_regressions_variance_robust_or_not():
    # Two-way votes without ties are a logistic regression on e_winner − e_loser; statsmodels gives both the model
    # covariance and the sandwich (HC0) one. The ranks use the larger of the two for each difference.
    rng = np.random.default_rng(5)
    strength = {"a": 0.6, "b": 0.1, "c": -0.2, "d": -0.5}
    votes = []
    for _ in range(400):
        first, second = rng.choice(list(strength), 2, replace=False)
        p_first = 1 / (1 + math.exp(strength[second] - strength[first]))
        votes.append(RoundVote((first, second), first if rng.random() < p_first else second))
    table = match_table(votes)
    ratings = fit_bradley_terry(table.points(), l2=0)
    variance = difference_variance(table, ratings, 0.0)
    keys = table.keys
    design = np.array([[(key == vote.shown[0]) - (key == vote.shown[1]) for key in keys[1:]] for vote in votes])
    outcome = np.array([vote.outcome == vote.shown[0] for vote in votes], dtype=float)
    model = sm.Logit(outcome, design)
    plain, robust = model.fit(disp=0), model.fit(disp=0, cov_type="HC0")
    scale = (400 / math.log(10)) ** 2
    for fit in (plain, robust):
        assert (ratings[1:] - 1000) / (400 / math.log(10)) - ((ratings[0] - 1000) / (400 / math.log(10))) == (
            pytest.approx(fit.params, abs=1e-5)
        )
    for i in range(1, len(keys)):
        for j in range(1, len(keys)):
            if i != j:
                contrast = np.zeros(len(keys) - 1)
                contrast[i - 1], contrast[j - 1] = 1, -1
                expected = max(contrast @ fit.cov_params() @ contrast for fit in (plain, robust)) * scale
                assert variance[i, j] == pytest.approx(expected, rel=1e-4)
        # Against the baseline entity (keys[0]) the difference is the coefficient itself.
        expected = max(fit.cov_params()[i - 1, i - 1] for fit in (plain, robust)) * scale
        assert variance[i, 0] == pytest.approx(expected, rel=1e-4)


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


def test_rank_is_one_plus_how_many_are_rated_clearly_higher():
    ratings = np.array([1200.0, 1150.0, 1000.0, 980.0])
    # Standard errors of the differences: 40 between a and b (50 apart: not clear), 30 elsewhere.
    spread = np.full((4, 4), 30.0**2)
    spread[0, 1] = spread[1, 0] = 40.0**2
    assert ranks_from_differences(ratings, spread) == [1, 1, 3, 3]


def many_models(seed: int = 0, models: int = 29, votes: int = 6000) -> list[RoundVote]:
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 0.6, models)
    keys = [f"model-{index:02d}" for index in range(models)]
    result = []
    for _ in range(votes):
        i, j = rng.choice(models, 2, replace=False)
        p_first = 1 / (1 + math.exp(strength[j] - strength[i]))
        draw = rng.random()
        outcome = TIE if draw > 0.9 else keys[i] if draw < 0.9 * p_first else keys[j]
        result.append(RoundVote((keys[i], keys[j]), outcome))
    return result


def test_ranks_do_not_move_with_the_seed():
    # Ranks from the bootstrap bounds changed for 19 of 29 models across seeds 0–9 at 200 resamples.
    votes = many_models()
    boards = [bradley_terry(votes, seed=seed) for seed in range(10)]
    ranks = [{rating.key: rating.rank for rating in board} for board in boards]
    assert all(other == ranks[0] for other in ranks[1:])
    assert len(set(ranks[0].values())) > 5  # the rule still separates clearly different models


def test_the_same_votes_in_another_order_give_the_same_ratings():
    votes = many_models(seed=1, models=12, votes=1500)
    shuffled = list(votes)
    np.random.default_rng(9).shuffle(shuffled)
    assert bradley_terry(shuffled, seed=3) == bradley_terry(votes, seed=3)


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


def rows_by_hand(votes: list[RoundVote], key_of: dict[str, str]) -> list[tuple[tuple, int]]:
    """The match table's rows written out: each vote's matches told from the side of the entity whose name comes
    first, as a sorted tuple; votes with the same tuple share a row, rows in the order of their tuples."""
    rows = Counter()
    for vote in votes:
        told = [
            (m.a, m.b, m.a_score) if m.a < m.b else (m.b, m.a, 1 - m.a_score) for m in matches_from_vote(vote, key_of)
        ]
        if told:
            rows[tuple(sorted(told))] += 1
    return sorted(rows.items())


SHOWN_SETS = [
    ("v1", "v2"),
    ("v2", "v3"),
    ("v1", "v4"),
    ("v1", "v2", "v3"),
    ("v2", "v4", "v5"),
    ("v1", "v3", "v4", "v5"),
]


@st.composite
def variant_votes(draw) -> list[RoundVote]:
    shown = draw(st.lists(st.sampled_from(SHOWN_SETS), max_size=60))
    return [RoundVote(each, draw(st.sampled_from([*each, TIE, ALL_BAD]))) for each in shown]


@settings(max_examples=60, deadline=None)
@given(variant_votes(), st.lists(st.sampled_from(["gpt", "claude", "llama"]), min_size=5, max_size=5))
def test_the_tables_rows_are_the_distinct_sets_of_matches_in_order_with_their_votes(votes, models):
    # The bootstrap draws counts for the rows in this order, so a seeded resample depends on it.
    key_of = dict(zip(["v1", "v2", "v3", "v4", "v5"], models, strict=True))
    table = match_table(votes, key_of)
    expected = rows_by_hand(votes, key_of)
    assert table.counts.tolist() == [count for _, count in expected]
    k = len(table.keys)
    assert table.keys == sorted({name for matches, _ in expected for a, b, _ in matches for name in (a, b)})
    for row, (matches, _) in zip(table.contributions.toarray(), expected, strict=True):
        points = np.zeros((k, k))
        for a, b, a_score in matches:
            points[table.keys.index(a), table.keys.index(b)] += a_score
            points[table.keys.index(b), table.keys.index(a)] += 1 - a_score
        assert row.reshape(k, k).tolist() == points.tolist()
