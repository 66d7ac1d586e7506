"""Two variants whose judge scores are the same multiset (B's a reshuffle of A's) have equal means: the report says so
and never crashes, however the scores are stored."""

import random
from fractions import Fraction

import numpy as np
import pytest
from statsmodels.stats.power import TTestPower

from lab.stats.report import build_report
from lab.stats.sample_size import more_needed, paired_scores_sample_size
from lab.stats.scores import mean_difference

# Weighted scores of three equal-weight metrics on a 1–5 scale, normalised to 0–1: thirds of fifths, which no
# binary float holds exactly, so a float mean of the differences came out as about −9e-18 instead of 0.
A_SCORES = [7 / 15, 4 / 15, 7 / 15, 8 / 15, 11 / 15, 1.0, 10 / 15, 3 / 15, 12 / 15, 9 / 15, 11 / 15, 10 / 15]
B_SCORES = [4 / 15, 1.0, 11 / 15, 9 / 15, 7 / 15, 10 / 15, 10 / 15, 12 / 15, 11 / 15, 7 / 15, 3 / 15, 8 / 15]


def scores_report(order: list[int]) -> dict:
    scores = {
        "a": {round_id: A_SCORES[round_id] for round_id in order},
        "b": {round_id: B_SCORES[round_id] for round_id in order},
    }
    return build_report(variants=["a", "b"], votes=[], scores=scores, score_resamples=200)


def test_equal_score_multisets_give_a_mean_difference_of_exactly_zero_and_a_level_sentence():
    rng = random.Random(43)
    orders = [list(range(len(A_SCORES)))] + [rng.sample(range(len(A_SCORES)), len(A_SCORES)) for _ in range(39)]
    reports = [scores_report(order) for order in orders]

    exact = sum(map(Fraction, A_SCORES)) - sum(map(Fraction, B_SCORES))  # the exact mean difference is 0
    assert exact == 0
    for report in reports:
        pair = report["scores"]["pairs"][0]
        assert pair["mean_difference"] == 0.0
        assert pair["more_rounds"] is None
        assert "average the same score" in pair["sentence"]
        assert "they are level" in pair["sentence"]
    assert all(report == reports[0] for report in reports)


def test_the_mean_difference_is_the_exact_mean_to_the_last_digit_or_so():
    rng = random.Random(7)
    a = {r: rng.random() for r in range(50)}
    b = {r: rng.random() for r in range(50)}
    exact = (sum(map(Fraction, a.values())) - sum(map(Fraction, b.values()))) / 50
    assert mean_difference(a, b) == pytest.approx(float(exact), rel=4e-16, abs=0)
    assert mean_difference(a, {}) is None


def test_a_power_solver_that_finds_no_size_gives_no_guidance_rather_than_a_crash():
    differences = np.array([-0.5, 0.25, 0.5, -0.25])
    tiny = 1e-17
    # statsmodels itself answers NaN here (it cannot bracket a size for an effect this small).
    assert np.isnan(TTestPower().solve_power(effect_size=tiny / np.std(differences, ddof=1), alpha=0.05, power=0.8))
    assert paired_scores_sample_size(differences, mean=tiny) is None
    # It answers NaN for a huge effect too, where the smallest sample already has the power (at d = 10 statsmodels
    # still solves it: 2.0 rounds).
    huge = 60 * np.std(differences, ddof=1)
    assert np.isnan(TTestPower().solve_power(effect_size=60, alpha=0.05, power=0.8))
    assert TTestPower().solve_power(effect_size=10, alpha=0.05, power=0.8) == pytest.approx(2, abs=1e-3)
    assert paired_scores_sample_size(differences, mean=huge) == pytest.approx(2 / (3 / np.pi))
    with pytest.raises(ValueError, match="no finite sample size"):
        more_needed(float("nan"), 10)


def test_rounds_that_never_differ_promise_no_number_of_rounds():
    scores = {"a": {r: 0.6 for r in range(10)}, "b": {r: 0.6 for r in range(10)}}
    pair = build_report(variants=["a", "b"], votes=[], scores=scores, score_resamples=200)["scores"]["pairs"][0]

    assert (pair["n_pairs"], pair["n_nonzero"], pair["more_rounds"]) == (10, 0, None)
    assert "more round" not in pair["sentence"]
    assert "no number of such rounds gets there" in pair["sentence"]


def test_rounds_that_sometimes_differ_scale_the_missing_ones_by_that_rate():
    scores = {"a": {r: 0.6 for r in range(8)}, "b": {r: 0.6 if r % 2 else 0.8 for r in range(8)}}
    pair = build_report(variants=["a", "b"], votes=[], scores=scores, score_resamples=200)["scores"]["pairs"][0]
    # 4 of 8 rounds differed; 6 more differing rounds at that rate take 12 rounds.
    assert (pair["n_nonzero"], pair["more_rounds"]) == (4, 12)
    assert "about 12 more rounds" in pair["sentence"]
