"""How many more votes a pair needs is computed at the level Holm's method would test it at, given the other pairs:
with the other pairs already significant, that is α itself, not α divided by the number of pairs."""

import pytest
from scipy.stats import binom, binomtest
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from lab.numbers import percent_interval
from lab.stats.pairwise import holm_divisors
from lab.stats.report import build_report
from tests.lab.test_stats_report import votes_between


def exact_required_total(share: float, alpha: float, *, start: int, up_to: int) -> int:
    """The smallest total from which the exact sign test's power (scipy `binomtest`) stays at or above 80%,
    searched from `start` (the test checks the power is short there, so nothing below matters)."""
    last_short = None
    for n in range(start, up_to):
        # The test rejects k ≤ c and k ≥ n − c; find c walking down from the middle (p falls as k leaves n/2).
        c = n // 2
        while c >= 0 and binomtest(c, n, 0.5).pvalue >= alpha:
            c -= 1
        power = binom.cdf(c, n, share) + binom.sf(n - c - 1, n, share) if c >= 0 else 0.0
        if power < 0.8:
            last_short = n
    assert last_short is not None and last_short > start
    return last_short + 1


def test_with_the_other_pairs_significant_the_guidance_is_at_alpha_itself():
    votes = votes_between("a", "b", 40, 5) + votes_between("a", "c", 40, 5) + votes_between("b", "c", 15, 10)
    report = build_report(variants=["a", "b", "c"], votes=votes)
    pair = next(pair for pair in report["pairs"] if (pair["a"], pair["b"]) == ("b", "c"))

    assert [p["verdict"] for p in report["pairs"]] == ["significant", "significant", "not significant"]
    required = exact_required_total(0.6, 0.05, start=150, up_to=260)
    assert pair["more_decisive_votes"] == required - 25
    assert (
        "at α = 0.05, the level Holm's method tests this pair at while the other 2 significant pairs"
        in (pair["sentence"])
    )


def test_with_no_pair_significant_the_guidance_is_at_holms_first_step():
    votes = votes_between("a", "b", 15, 10) + votes_between("a", "c", 12, 10) + votes_between("b", "c", 11, 10)
    report = build_report(variants=["a", "b", "c"], votes=votes)
    assert {pair["holm_divisor"] for pair in report["pairs"]} == {3}
    assert all("α/3 = 0.0167 (Holm's first step for 3 pairs)" in pair["sentence"] for pair in report["pairs"])


def test_holm_divisors_count_the_other_significant_pairs():
    assert holm_divisors([0.001, 0.02, 0.4]) == [2, 2, 1]
    assert holm_divisors([0.2, None, 0.4]) == [3, 3, 3]
    assert holm_divisors([0.01]) == [1]


def test_an_interval_that_excludes_half_beside_a_holm_verdict_is_labelled_unadjusted():
    # 15 of 20: the exact interval excludes 50% and the raw sign test is significant, yet Holm over 3 pairs is not.
    votes = votes_between("a", "b", 15, 5) + votes_between("a", "c", 5, 5) + votes_between("b", "c", 6, 5)
    pair = build_report(variants=["a", "b", "c"], votes=votes)["pairs"][0]
    low, high = proportion_confint(15, 20, method="beta")
    raw, holm = binomtest(15, 20).pvalue, multipletests([binomtest(15, 20).pvalue, 1.0, 1.0], method="holm")[1][0]
    assert low > 0.5 and raw < 0.05 and pair["p_holm"] == pytest.approx(holm) and holm > 0.05
    assert pair["verdict"] == "not significant"
    assert (
        f"(75%; before adjustment for 3 pairs: 95% CI {percent_interval(low, high)}, exact sign test p = {raw:.3f})"
        in (pair["sentence"])
    )


def test_a_share_has_one_interval_the_one_that_agrees_with_the_test_beside_it():
    # 9 of 11: Wilson 52–95% excludes 50% while the exact sign test gives p = 0.065 (not significant).
    report = build_report(variants=["a", "b"], votes=votes_between("a", "b", 9, 2))
    rate, pair = report["variants"][0], report["pairs"][0]
    low, high = proportion_confint(9, 11, alpha=0.05, method="beta")
    assert binomtest(9, 11).pvalue > 0.05 and low < 0.5
    assert (rate["ci_low"], rate["ci_high"]) == pytest.approx((low, high)) == (pair["ci_low"], pair["ci_high"])
    assert proportion_confint(9, 11, alpha=0.05, method="wilson")[0] > 0.5  # the interval it no longer shows
