"""Pairwise outcomes from N-way votes, exact sign tests with Holm's adjustment, and the overall chi-square test."""

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from lab.stats.pairwise import holm, overall_test, pair_outcomes, pairwise_tests, sign_test
from lab.stats.votes import ALL_BAD, TIE, RoundVote, encode_votes


def two_sided_sign_test_by_hand(wins: int, decisive: int) -> Fraction:
    """Exact two-sided binomial p at 0.5: twice the smaller tail, capped at 1 (symmetric, so no ambiguity)."""
    tail = sum(math.comb(decisive, k) for k in range(min(wins, decisive - wins) + 1))
    return min(Fraction(1), 2 * Fraction(tail, 2**decisive))


def votes_between(a: str, b: str, a_wins: int, b_wins: int, ties: int = 0) -> list[RoundVote]:
    return [RoundVote((a, b), a)] * a_wins + [RoundVote((a, b), b)] * b_wins + [RoundVote((a, b), TIE)] * ties


def test_sign_test_matches_reference():
    # R: binom.test(7, 9)$p.value -> 0.1796875 (= 2 · (36 + 9 + 1) / 512)
    assert sign_test(7, 2) == pytest.approx(0.1796875, abs=1e-12)
    assert sign_test(2, 7) == pytest.approx(0.1796875, abs=1e-12)
    assert sign_test(10, 0) == pytest.approx(2 / 1024, abs=1e-15)
    assert sign_test(5, 5) == 1.0
    assert sign_test(0, 0) == 1.0


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 60), st.integers(0, 60))
def test_sign_test_matches_the_exact_binomial_by_hand(a_wins, b_wins):
    expected = two_sided_sign_test_by_hand(a_wins, a_wins + b_wins) if a_wins + b_wins else 1
    assert sign_test(a_wins, b_wins) == pytest.approx(float(expected), rel=1e-9, abs=1e-15)


def test_holm_adjustment_matches_hand_computation():
    # The untested fourth pair counts as p = 1, so the family is all four pairs: sorted 0.01, 0.03, 0.04, 1 times
    # 4, 3, 2, 1 -> 0.04, 0.09, 0.08, 1; step-down keeps them non-decreasing -> 0.04, 0.09, 0.09.
    assert holm([0.01, 0.04, 0.03, None]) == pytest.approx([0.04, 0.09, 0.09, None])
    assert holm([None]) == [None]


def test_a_winner_beats_every_other_shown_variant_and_a_tie_ties_them_all():
    votes = [
        RoundVote(("a", "b", "c"), "c"),
        RoundVote(("a", "b", "c"), "a"),
        RoundVote(("a", "b", "c"), TIE),
        RoundVote(("b", "c"), ALL_BAD),
    ]
    pairs = {(pair.a, pair.b): pair for pair in pair_outcomes(encode_votes(votes, ["a", "b", "c"]))}
    ab, ac, bc = pairs[("a", "b")], pairs[("a", "c")], pairs[("b", "c")]
    # "c" won vote 1, so b vs a says nothing there; "a" won vote 2, beating b and c.
    assert (ab.together, ab.a_wins, ab.b_wins, ab.ties) == (3, 1, 0, 1)
    assert (ac.together, ac.a_wins, ac.b_wins, ac.ties) == (3, 1, 1, 1)
    assert ac.a_won.tolist() == [False, True]
    assert (bc.together, bc.a_wins, bc.b_wins, bc.ties) == (4, 0, 1, 2)


def test_pairwise_tests_report_share_interval_and_holm_adjusted_p():
    votes = votes_between("a", "b", 7, 2, ties=3) + votes_between("a", "c", 5, 5) + votes_between("b", "c", 10, 0)
    tests = {(test.a, test.b): test for test in pairwise_tests(pair_outcomes(encode_votes(votes)))}
    ab = tests[("a", "b")]
    assert (ab.a_wins, ab.b_wins, ab.ties, ab.decisive) == (7, 2, 3, 9)
    assert ab.a_share == pytest.approx(7 / 9)
    assert ab.p_value == pytest.approx(0.1796875, abs=1e-12)
    # Holm over three pairs: 2/1024·3, then 0.1796875·2, then max(that, 1.0).
    assert tests[("b", "c")].p_holm == pytest.approx(6 / 1024, abs=1e-12)
    assert ab.p_holm == pytest.approx(0.359375, abs=1e-12)
    assert tests[("a", "c")].p_holm == 1.0


def test_a_pair_without_decisive_votes_has_counts_but_no_p_value():
    test = pairwise_tests(pair_outcomes(encode_votes(votes_between("a", "b", 0, 0, ties=4))))[0]
    assert (test.ties, test.decisive, test.a_share, test.ci_low, test.p_value, test.p_holm) == (
        4, 0, None, None, None, None,
    )  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 40), st.integers(0, 40), st.integers(0, 20))
def test_adding_a_tie_never_changes_the_sign_test(a_wins, b_wins, ties):
    before = pairwise_tests(pair_outcomes(encode_votes(votes_between("a", "b", a_wins, b_wins, ties), ["a", "b"])))
    after = pairwise_tests(pair_outcomes(encode_votes(votes_between("a", "b", a_wins, b_wins, ties + 1), ["a", "b"])))
    assert (after[0].p_value, after[0].p_holm, after[0].a_share) == (
        before[0].p_value,
        before[0].p_holm,
        before[0].a_share,
    )


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 40), st.integers(0, 40), st.integers(0, 5))
def test_swapping_the_two_variants_swaps_the_results(a_wins, b_wins, ties):
    votes = votes_between("a", "b", a_wins, b_wins, ties)
    forward = pairwise_tests(pair_outcomes(encode_votes(votes, ["a", "b"])))[0]
    backward = pairwise_tests(pair_outcomes(encode_votes(votes, ["b", "a"])))[0]
    assert (backward.a, backward.a_wins, backward.b_wins) == ("b", forward.b_wins, forward.a_wins)
    assert backward.p_value == forward.p_value
    if forward.decisive:
        assert backward.a_share == pytest.approx(1 - forward.a_share)
        assert (backward.ci_low, backward.ci_high) == pytest.approx((1 - forward.ci_high, 1 - forward.ci_low))
        assert 0 <= forward.p_value <= 1 and forward.p_value <= forward.p_holm <= 1


def test_overall_test_matches_the_chi_square_by_hand():
    votes = [RoundVote(("a", "b", "c"), key) for key, wins in (("a", 10), ("b", 20), ("c", 30)) for _ in range(wins)]
    votes += [RoundVote(("a", "b", "c"), TIE)] * 7
    result = overall_test(encode_votes(votes))
    # Expected 20 wins each: X² = (100 + 0 + 100) / 20 = 10 on 2 df, whose upper tail is exp(−X²/2) = e⁻⁵.
    assert result.expected == pytest.approx({"a": 20, "b": 20, "c": 20})
    assert (result.statistic, result.df) == (pytest.approx(10.0), 2)
    assert result.p_value == pytest.approx(math.exp(-5), rel=1e-9)


def test_overall_test_expects_wins_in_proportion_to_how_often_a_variant_was_shown():
    # Two 3-way votes (1/3 each) and two 2-way a–b votes (1/2 each): a and b expect 5/3, c expects 2/3.
    votes = [RoundVote(("a", "b", "c"), "a")] * 2 + [RoundVote(("a", "b"), "b")] * 2
    result = overall_test(encode_votes(votes))
    assert result.expected == pytest.approx({"a": 5 / 3, "b": 5 / 3, "c": 2 / 3})
    statistic = (2 - 5 / 3) ** 2 / (5 / 3) * 2 + (2 / 3) ** 2 / (2 / 3)
    assert result.statistic == pytest.approx(statistic)
    assert result.p_value == pytest.approx(math.exp(-statistic / 2))


def test_overall_test_needs_two_variants_in_decisive_votes():
    result = overall_test(encode_votes([RoundVote(("a", "b"), TIE)]))
    assert (result.statistic, result.p_value, result.df) == (None, None, 0)


@pytest.mark.parametrize(
    "p_values",
    [
        [0.01, 0.04, 0.03, 0.005, 0.5, 0.2],
        [0.02, 0.02, 0.02],
        [0.3, None, 0.001, None, 0.04],
        [0.9],
    ],
)
def test_holm_adjustment_matches_statsmodels(p_values):
    # Few cases on purpose: statsmodels' Holm runs gc.collect() on every call, which is slow inside pytest.
    # One rule everywhere: an untested pair stays in the family as p = 1.
    reference = multipletests([1.0 if p is None else p for p in p_values], method="holm")[1]
    expected = [None if p is None else adjusted for p, adjusted in zip(p_values, reference, strict=True)]
    assert holm(p_values) == pytest.approx(expected, abs=1e-15)


def test_the_pair_interval_agrees_with_the_sign_test_where_wilsons_does_not():
    # W4: 9 of 11 — Wilson's 52–95% excludes 50% while the exact sign test gives p = 0.065.
    [test] = pairwise_tests(pair_outcomes(encode_votes(votes_between("a", "b", 9, 2))))
    assert proportion_confint(9, 11, method="wilson")[0] > 0.5
    assert test.p_value == pytest.approx(binomtest(9, 11).pvalue) and test.p_value > 0.05
    assert (test.ci_low, test.ci_high) == pytest.approx(proportion_confint(9, 11, alpha=0.05, method="beta"))
    assert test.ci_low < 0.5


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 80), st.integers(0, 80))
def test_the_pair_interval_excludes_half_exactly_when_the_sign_test_is_significant(a_wins, b_wins):
    if a_wins + b_wins == 0:
        return
    [test] = pairwise_tests(pair_outcomes(encode_votes(votes_between("a", "b", a_wins, b_wins))))
    assert (not test.ci_low <= 0.5 <= test.ci_high) == (binomtest(a_wins, a_wins + b_wins).pvalue < 0.05)
