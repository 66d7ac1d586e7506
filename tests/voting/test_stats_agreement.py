"""Judge–human agreement: share of rounds where the judge picked the humans' majority choice, and Cohen's kappa."""

import math

import pytest
from sklearn.metrics import cohen_kappa_score

from lab.stats.agreement import JudgedRound, human_majority, judge_agreement
from lab.stats.votes import ALL_BAD, TIE
from voting.judge_agreement import pooled_sizes

Z_975 = 1.959963984540054
SHOWN = ("x", "y")


def rounds_from_table(table: list[list[int]]) -> list[JudgedRound]:
    """Rounds realising a 2×2 judge × human table over the first and second shown variant (one human each)."""
    return [
        JudgedRound(SHOWN, judge=SHOWN[judge], human_votes=(SHOWN[human],))
        for judge in range(2)
        for human in range(2)
        for _ in range(table[judge][human])
    ]


def kappa_variance_by_hand(table: list[list[int]]) -> tuple[float, float]:
    """Cohen's kappa and its large-sample variance (Fleiss, Cohen & Everitt 1969), written out from the formula."""
    n = sum(map(sum, table))
    p = [[cell / n for cell in row] for row in table]
    rows = [sum(row) for row in p]
    cols = [sum(p[i][j] for i in range(2)) for j in range(2)]
    p_o = p[0][0] + p[1][1]
    p_e = rows[0] * cols[0] + rows[1] * cols[1]
    kappa = (p_o - p_e) / (1 - p_e)
    a = sum(p[i][i] * (1 - (rows[i] + cols[i]) * (1 - kappa)) ** 2 for i in range(2))
    b = (1 - kappa) ** 2 * sum(p[i][j] * (cols[i] + rows[j]) ** 2 for i in range(2) for j in range(2) if i != j)
    c = (kappa - p_e * (1 - kappa)) ** 2
    return kappa, (a + b - c) / (n * (1 - p_e) ** 2)


def test_kappa_matches_the_textbook_example():
    # 50 rounds: both chose the first variant 20 times, the second 15 times; they disagree 5 + 10 times.
    # p_o = 0.7, p_e = 0.5·0.6 + 0.5·0.4 = 0.5, so κ = (0.7 − 0.5) / (1 − 0.5) = 0.4.
    table = [[20, 5], [10, 15]]
    result = judge_agreement(rounds_from_table(table)).with_ties
    assert (result.rounds, result.agreed, result.share) == (50, 35, 0.7)
    assert result.kappa == pytest.approx(0.4, abs=1e-12)
    kappa, variance = kappa_variance_by_hand(table)
    assert kappa == pytest.approx(0.4)
    assert math.sqrt(variance) == pytest.approx(0.126996, abs=1e-6)
    half = Z_975 * math.sqrt(variance)
    assert (result.kappa_low, result.kappa_high) == pytest.approx((0.4 - half, 0.4 + half), abs=1e-9)


def test_kappa_matches_a_second_textbook_example():
    # p_o = 0.6, p_e = 0.6·0.7 + 0.4·0.3 = 0.54, κ = 0.06 / 0.46 = 0.1304…
    result = judge_agreement(rounds_from_table([[45, 15], [25, 15]])).with_ties
    assert result.kappa == pytest.approx(0.06 / 0.46, abs=1e-12)


def test_the_human_majority_is_the_single_most_common_choice():
    assert human_majority(JudgedRound(SHOWN, "x", ("x", "y", "x"))) == 0
    assert human_majority(JudgedRound(SHOWN, "x", ("y",))) == 1
    # A tie and an all-bad vote both mean "no winner" and pool together.
    assert human_majority(JudgedRound(SHOWN, "x", (TIE, ALL_BAD, "x"))) == -1
    assert human_majority(JudgedRound(SHOWN, "x", ("x", "y"))) is None
    assert human_majority(JudgedRound(SHOWN, "x", ())) is None


def test_agreement_is_counted_with_and_without_ties():
    rounds = [
        JudgedRound(("a", "b"), "a", ("a", "a", "b")),  # agree on a winner
        JudgedRound(("c", "d"), "d", ("c",)),  # disagree on a winner
        JudgedRound(("a", "b"), TIE, (TIE, ALL_BAD)),  # agree there is no winner
        JudgedRound(("a", "b"), "a", (TIE,)),  # judge picked, humans did not: only counts with ties
        JudgedRound(("a", "b"), "b", ("a", "b")),  # humans split evenly: no majority
    ]
    report = judge_agreement(rounds)
    assert report.rounds_without_majority == 1
    assert (report.with_ties.rounds, report.with_ties.agreed) == (4, 2)
    assert (report.without_ties.rounds, report.without_ties.agreed) == (2, 1)
    assert report.with_ties.share == 0.5
    assert report.with_ties.share_low < 0.5 < report.with_ties.share_high


def test_choices_compare_by_position_so_different_comparisons_pool():
    # Judge and humans both picked the first-shown variant, in two comparisons with different variants.
    rounds = [JudgedRound(("a", "b"), "a", ("a",)), JudgedRound(("c", "d"), "c", ("c",))]
    result = judge_agreement(rounds).with_ties
    assert (result.rounds, result.agreed) == (2, 2)
    # Both sides only ever used one category: chance agreement is 1 and kappa is undefined, not invented.
    assert (result.kappa, result.kappa_low, result.kappa_high) == (None, None, None)


def test_no_rounds_means_no_figures():
    report = judge_agreement([])
    assert report.with_ties.rounds == 0
    assert report.with_ties.share is None and report.without_ties.kappa is None


def test_it_refuses_a_choice_that_was_not_shown():
    with pytest.raises(ValueError, match="neither a shown variant"):
        JudgedRound(("a", "b"), "c", ())


def test_the_kappa_interval_stays_within_kappas_range():
    # 6×(a,a), 5×(b,b), 1×(b,a): κ = 0.833 and κ + 1.96·SE = 1.142, beyond the largest possible kappa.
    table = [[6, 0], [1, 5]]
    result = judge_agreement(rounds_from_table(table)).with_ties
    judge = [judge for judge in range(2) for human in range(2) for _ in range(table[judge][human])]
    human = [human for judge in range(2) for human in range(2) for _ in range(table[judge][human])]
    assert result.kappa == pytest.approx(cohen_kappa_score(judge, human), abs=1e-12)
    kappa, variance = kappa_variance_by_hand(table)
    assert result.kappa_low == pytest.approx(kappa - Z_975 * math.sqrt(variance), abs=1e-9)
    assert kappa + Z_975 * math.sqrt(variance) > 1
    assert result.kappa_high == 1.0


@pytest.mark.parametrize(
    "rounds",
    [
        rounds_from_table([[7, 0], [0, 5]]),  # perfect agreement
        [JudgedRound(SHOWN, judge=TIE, human_votes=(SHOWN[i % 2],)) for i in range(12)],  # a judge that always ties
    ],
    ids=["perfect agreement", "judge always ties"],
)
def test_a_zero_width_kappa_interval_is_not_shown(rounds):
    result = judge_agreement(rounds).with_ties
    assert result.kappa is not None
    assert (result.kappa_low, result.kappa_high) == (None, None)


def test_the_agreement_says_which_comparison_sizes_kappa_pools():
    rounds = [
        JudgedRound(("x", "y"), judge="x", human_votes=("x",)),
        JudgedRound(("x", "y", "z"), judge="z", human_votes=("y",)),
        JudgedRound(("x", "y", "z"), judge="y", human_votes=("y",)),
    ]
    assert judge_agreement(rounds).with_ties.sizes == (2, 3)
    assert pooled_sizes((2, 3)) == "rounds showing 2 and 3 answers"
