"""The comparison report: plain JSON with honest verdicts, guidance and sentences built from the stats modules."""

import json
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest, fisher_exact
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint, proportions_ztest

from lab.stats.report import build_report
from lab.stats.sequential import WHICH_P_TO_TRUST
from lab.stats.votes import ALL_BAD, TIE, RoundVote
from lab.stats.wording import p_text, percent, percent_interval
from tests.lab.test_stats_sample_size import exact_sign_test_power

LABELS = {"a": "Prompt A", "b": "Prompt B", "c": "Prompt C"}


def votes_between(a: str, b: str, a_wins: int, b_wins: int, ties: int = 0) -> list[RoundVote]:
    return [RoundVote((a, b), a)] * a_wins + [RoundVote((a, b), b)] * b_wins + [RoundVote((a, b), TIE)] * ties


def all_sentences(report: dict) -> list[str]:
    sentences = [report["summary"], report["overall"]["sentence"]]
    sentences += [pair["sentence"] for pair in report["pairs"]]
    for section in ("scores", "success"):
        if report[section]:
            sentences += [pair["sentence"] for pair in report[section]["pairs"]]
    return sentences


def test_a_clean_sweep_below_the_minimum_is_never_called_significant():
    # 9–0 has an exact sign-test p of 2/512 ≈ 0.004, yet 9 decisive votes are below the minimum of 10.
    report = build_report(variants=["a", "b"], votes=votes_between("a", "b", 9, 0), labels=LABELS)
    pair = report["pairs"][0]
    assert pair["verdict"] == "not enough data"
    assert pair["significant"] is False and pair["significant_always_valid"] is False
    assert (pair["p_value"], pair["p_holm"], pair["p_always_valid"], pair["p_always_valid_holm"]) == (None,) * 4
    # Counts and intervals are still shown, with how many more decisive votes reach the minimum.
    assert (pair["a_wins"], pair["b_wins"], pair["more_decisive_votes"]) == (9, 0, 1)
    assert (pair["ci_low"], pair["ci_high"]) == pytest.approx((proportion_confint(9, 9, method="beta")[0], 1.0))
    assert report["overall"]["verdict"] == "not enough data" and report["overall"]["p_value"] is None
    assert not any("significant" in sentence for sentence in all_sentences(report))
    assert "Not enough data for a verdict yet: 1 more decisive vote needed" in pair["sentence"]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", "c", TIE, ALL_BAD]), max_size=40),
    st.booleans(),
)
def test_no_pair_below_the_minimum_ever_gets_a_verdict(outcomes, three_way):
    variants = ["a", "b", "c"] if three_way else ["a", "b"]
    allowed = [*variants, TIE, ALL_BAD]
    votes = [RoundVote(tuple(variants), outcome) for outcome in outcomes if outcome in allowed]
    report = build_report(variants=variants, votes=votes)
    json.dumps(report, allow_nan=False)
    for pair in report["pairs"]:
        if pair["decisive"] < report["minimum_decisive_per_pair"]:
            assert pair["verdict"] == "not enough data" and not pair["significant"]
            assert pair["p_value"] is None and "significant" not in pair["sentence"]
        else:
            assert 0 <= pair["p_value"] <= pair["p_holm"] <= 1
    if all(pair["decisive"] < 10 for pair in report["pairs"]):
        assert not any("significant" in sentence for sentence in all_sentences(report))


def test_ten_nil_is_significant_but_not_yet_for_someone_who_peeked():
    report = build_report(variants=["a", "b"], votes=votes_between("a", "b", 10, 0), labels=LABELS)
    pair = report["pairs"][0]
    assert pair["verdict"] == "significant"
    assert pair["p_value"] == pytest.approx(2 / 1024) and pair["p_holm"] == pytest.approx(2 / 1024)
    # Always-valid p after 10 straight wins with the Beta(5, 5) mixture: 58140 / (630 · 1024) ≈ 0.090.
    assert pair["p_always_valid"] == pytest.approx(58140 / (630 * 1024))
    assert pair["significant_always_valid"] is False
    assert pair["more_decisive_votes"] is None and pair["more_votes"] is None
    assert "Prompt A won 10 of 10 decisive votes against Prompt B" in pair["sentence"]
    assert (
        "treat it as not yet settled: the peek-safe test gives p = 0.090; 95% always-valid interval 47–100%"
        in (pair["sentence"])
    )
    assert report["summary"] == pair["sentence"]
    assert report["which_p_to_trust"] == WHICH_P_TO_TRUST


def test_not_yet_significant_says_how_many_more_votes_would_settle_it():
    report = build_report(variants=["a", "b"], votes=votes_between("a", "b", 8, 12, ties=5), labels=LABELS)
    pair = report["pairs"][0]
    # Exact two-sided sign test for 12 of 20: 2 · Σ C(20, k) for k ≥ 12 / 2²⁰.
    p_by_hand = 2 * Fraction(sum(math.comb(20, k) for k in range(12, 21)), 2**20)
    assert pair["verdict"] == "not significant"
    assert pair["p_value"] == pytest.approx(float(p_by_hand), rel=1e-9)
    # 80% power of the exact sign test at α = 0.05 for a 60% share, held from then on; 20 decisive votes so far.
    powers = {n: exact_sign_test_power(0.6, n) for n in range(150, 260)}
    needed = 1 + max(n for n, power in powers.items() if power < 0.8) - 20
    assert pair["more_decisive_votes"] == needed
    # 20 of the 25 votes were decisive, so about needed / 0.8 more votes in all.
    assert pair["more_votes"] == math.ceil(needed / 0.8)
    low, high = proportion_confint(12, 20, method="beta")
    assert pair["sentence"] == (
        f"Prompt B won 12 of 20 decisive votes against Prompt A (60%; 95% CI {round(100 * low)}–{round(100 * high)}%, "
        f"exact sign test p = {float(p_by_hand):.3f}); not yet significant (p = {float(p_by_hand):.3f}; peek-safe "
        f"test p = 1.000; 95% always-valid interval 31–85%). About {needed} more decisive votes (about "
        f"{math.ceil(needed / 0.8)} votes showing both, since 20 of the 25 so far picked one of the two: 5 were ties "
        "or all bad) would give the exact sign test an 80% chance of a significant result at α = 0.05, if Prompt B's "
        "true share of these votes is 60%, as so far."
    )


def test_an_exactly_level_pair_says_so_instead_of_asking_for_infinitely_many_votes():
    pair = build_report(variants=["a", "b"], votes=votes_between("a", "b", 10, 10))["pairs"][0]
    assert pair["verdict"] == "not significant"
    assert pair["more_decisive_votes"] is None
    assert "exactly level" in pair["sentence"] and "inf" not in pair["sentence"]


def test_an_n_way_report_matches_the_hand_counts_and_adjusts_for_three_pairs():
    votes = [RoundVote(("a", "b", "c"), key) for key, wins in (("a", 30), ("b", 12), ("c", 8)) for _ in range(wins)]
    votes += [RoundVote(("a", "b", "c"), TIE)] * 5
    report = build_report(variants=["a", "b", "c"], votes=votes, labels=LABELS)
    assert (report["votes"], report["decisive_votes"]) == (55, 50)
    a = report["variants"][0]
    assert (a["label"], a["wins"], a["losses"], a["ties"], a["decisive"]) == ("Prompt A", 30, 20, 5, 50)
    assert a["win_rate"] == 0.6
    pairs = {(pair["a"], pair["b"]): pair for pair in report["pairs"]}
    assert (pairs[("a", "b")]["a_wins"], pairs[("a", "b")]["b_wins"], pairs[("a", "b")]["ties"]) == (30, 12, 5)
    assert all("Holm-adjusted for 3 pairs" in pair["sentence"] for pair in report["pairs"] if pair["p_holm"])
    # Chi-square on 30/12/8 against 50/3 each: Σ (o − e)² / e on 2 df, whose tail is exp(−X²/2).
    statistic = sum((wins - 50 / 3) ** 2 / (50 / 3) for wins in (30, 12, 8))
    assert report["overall"]["statistic"] == pytest.approx(statistic)
    assert report["overall"]["p_value"] == pytest.approx(math.exp(-statistic / 2))
    assert report["summary"].startswith("Prompt A has the highest win rate: it won 60% of the 50 decisive votes")
    assert pairs[("a", "b")]["sentence"] in report["summary"]
    assert report["summary"].endswith(report["overall"]["sentence"])


def test_a_report_without_votes_explains_what_is_needed():
    report = build_report(variants=["a", "b", "c"], votes=[])
    assert report["summary"].startswith("No decisive votes yet.")
    assert report["overall"]["more_decisive_votes"] == 15  # 5 expected wins for each of 3 variants
    assert all(pair["more_decisive_votes"] == 10 for pair in report["pairs"])


def test_judge_scores_and_pass_rates_are_summarised_with_their_own_minimum():
    scores = {
        "a": {round_id: 4 + round_id % 2 for round_id in range(30)},
        "b": {round_id: 3 + (round_id % 3 == 0) for round_id in range(30)},
    }
    report = build_report(variants=["a", "b"], votes=[], scores=scores, pass_threshold=4, labels=LABELS)
    a_scores = report["scores"]["variants"][0]
    assert (a_scores["n"], a_scores["mean"]) == (30, 4.5)
    assert a_scores["ci_low"] < 4.5 < a_scores["ci_high"]
    score_pair = report["scores"]["pairs"][0]
    # a scores 4, 5, 4, 5, …; b scores 4 every third round, else 3: equal only in rounds 0, 6, 12, 18 and 24.
    assert (score_pair["n_pairs"], score_pair["n_nonzero"], score_pair["verdict"]) == (30, 25, "significant")
    success = report["success"]
    assert [(v["successes"], v["trials"]) for v in success["variants"]] == [(30, 30), (10, 30)]
    ab = success["pairs"][0]
    # 30/30 vs 10/30: a failure column of 0 + 20 gives expected failures of 10 per row — z-test territory.
    assert (ab["test"], ab["verdict"]) == ("two-proportion z-test", "significant")
    assert ab["difference"] == pytest.approx(2 / 3)
    json.dumps(report, allow_nan=False)


def test_few_judge_scores_get_counts_and_intervals_only():
    scores = {"a": {1: 5, 2: 5, 3: 4}, "b": {1: 1, 2: 2, 3: 1}}
    report = build_report(variants=["a", "b"], votes=[], scores=scores, pass_threshold=4)
    assert report["scores"]["pairs"][0]["verdict"] == "not enough data"
    assert report["scores"]["pairs"][0]["p_value"] is None
    assert report["success"]["pairs"][0]["verdict"] == "not enough data"
    assert report["success"]["pairs"][0]["difference"] == 1.0
    assert not any("significant" in sentence for sentence in all_sentences(report))


def test_swapping_the_variant_order_swaps_the_pair():
    votes = votes_between("a", "b", 14, 6, ties=2)
    forward = build_report(variants=["a", "b"], votes=votes)["pairs"][0]
    backward = build_report(variants=["b", "a"], votes=votes)["pairs"][0]
    assert (backward["a_wins"], backward["b_wins"]) == (forward["b_wins"], forward["a_wins"])
    assert backward["p_value"] == forward["p_value"]
    assert backward["p_always_valid"] == pytest.approx(forward["p_always_valid"])
    assert backward["sentence"] == forward["sentence"]


@pytest.mark.parametrize(
    ("p_value", "text"),
    [(0.0123, "p = 0.012"), (0.0498, "p = 0.0498"), (0.0501, "p = 0.050"), (0.0004, "p < 0.001"), (1.0, "p = 1.000")],
)
def test_p_values_are_never_rounded_across_the_significance_level(p_value, text):
    assert p_text(p_value) == text


def test_the_peek_safe_figures_depend_on_the_counts_not_the_vote_order():
    # 14 straight wins for a, then 9 for b, or the same votes interleaved: one report. The peek-safe p is 1/Λ at
    # the current counts, B(5, 5) / B(19, 14) / 2²³, valid however often it was looked at.
    early_streak = votes_between("a", "b", 14, 0) + votes_between("a", "b", 0, 9)
    interleaved = (votes_between("a", "b", 0, 1) + votes_between("a", "b", 1, 0)) * 9 + votes_between("a", "b", 5, 0)
    assert sorted(interleaved, key=str) == sorted(early_streak, key=str)
    inverse_ratio = Fraction(math.factorial(4) ** 2 * math.factorial(32), math.factorial(9) * math.factorial(18)
                             * math.factorial(13) * 2**23)  # fmt: skip
    first = build_report(variants=["a", "b"], votes=early_streak)
    assert first["pairs"][0]["p_always_valid"] == pytest.approx(min(1.0, float(inverse_ratio)), rel=1e-9)
    assert build_report(variants=["a", "b"], votes=interleaved) == first


def test_the_fixed_sample_interval_and_p_agree_and_say_when_they_are_unadjusted():
    # W4: 9 of 11 was "82%, 95% CI 52–95%; not yet significant (p = 0.065)" — an interval that excluded 50%.
    votes = votes_between("a", "b", 9, 2) + votes_between("a", "c", 3, 3) + votes_between("b", "c", 2, 2)
    report = build_report(variants=["a", "b", "c"], votes=votes, labels=LABELS)
    pair = report["pairs"][0]
    low, high = proportion_confint(9, 11, alpha=0.05, method="beta")
    assert (pair["ci_low"], pair["ci_high"]) == pytest.approx((low, high)) and low < 0.5
    raw = binomtest(9, 11).pvalue
    holm = multipletests([raw, binomtest(3, 6).pvalue, binomtest(2, 4).pvalue], method="holm")[1][0]
    assert pair["p_holm"] == pytest.approx(holm)
    assert (
        f"(82%; before adjustment for 3 pairs: 95% CI {round(100 * low)}–{round(100 * high)}%, exact sign test "
        f"p = {raw:.3f})" in pair["sentence"]
    )
    assert f"not yet significant (p = {holm:.3f}, Holm-adjusted for 3 pairs;" in pair["sentence"]


def test_a_peek_safe_rejection_is_shown_with_an_always_valid_interval_that_excludes_half():
    # W5: 30 of 40 — peek-safe p = 0.034 beside an always-valid interval that also excludes 50%.
    pair = build_report(variants=["a", "b"], votes=votes_between("a", "b", 30, 10), labels=LABELS)["pairs"][0]
    assert pair["significant_always_valid"] and pair["always_valid_low"] > 0.5
    assert pair["always_valid_low"] < proportion_confint(30, 40, method="beta")[0]  # wider than the fixed-sample one
    assert "confirmed by the peek-safe test (p = 0.034; 95% always-valid interval 51–92%)" in pair["sentence"]


def test_the_guidance_names_the_test_and_the_effect_it_assumes():
    # W7: "an 80% chance of detecting a difference this large" said neither which test nor what difference.
    pair = build_report(variants=["a", "b"], votes=votes_between("a", "b", 9, 2), labels=LABELS)["pairs"][0]
    assert (
        "would give the exact sign test an 80% chance of a significant result at α = 0.05, if Prompt A's true "
        "share of these votes is 82%, as so far." in pair["sentence"]
    )


def test_with_three_variants_and_no_ties_the_guidance_does_not_speak_of_ties():
    # F9: 14/10/12 wins of 36 three-way votes, no ties: what a pair's non-decisive votes were is a third variant.
    votes = [RoundVote(("a", "b", "c"), key) for key, wins in (("a", 14), ("b", 10), ("c", 12)) for _ in range(wins)]
    pairs = build_report(variants=["a", "b", "c"], votes=votes, labels=LABELS)["pairs"]
    assert not any("tie" in pair["sentence"] for pair in pairs)
    ab = pairs[0]
    assert (ab["together"], ab["decisive"], ab["ties"], ab["other_wins"]) == (36, 24, 0, 12)
    assert "since 24 of the 36 so far picked one of the two: 12 went to another variant)" in ab["sentence"]


def test_the_overall_test_does_not_ask_for_votes_it_cannot_use():
    # F8: c never in a decisive vote — "about 1 more decisive vote needed" for a test that cannot run.
    votes = votes_between("a", "b", 10, 4)
    overall = build_report(variants=["a", "b", "c"], votes=votes, labels=LABELS)["overall"]
    assert overall["more_decisive_votes"] is None and overall["unseen"] == ["c"]
    assert overall["sentence"] == (
        "The overall test cannot run yet: Prompt C has not been in a decisive vote, and each variant should expect "
        "5 wins; it needs decisive votes on rounds that show it."
    )


def test_the_pass_rate_family_is_every_pair_as_the_sentence_says():
    # F7: a 17/20, b 8/20, c 3 runs: p_holm equalled the raw p while the sentence said "adjusted for 3 pairs".
    scores = {
        "a": {i: float(i < 17) for i in range(20)},
        "b": {i: float(i < 8) for i in range(20)},
        "c": {i: 1.0 for i in range(3)},
    }
    success = build_report(variants=["a", "b", "c"], votes=[], scores=scores, pass_threshold=0.75, labels=LABELS)[
        "success"
    ]
    ab = success["pairs"][0]
    raw = [
        proportions_ztest([17, 8], [20, 20])[1],
        fisher_exact([[17, 3], [3, 0]]).pvalue,
        fisher_exact([[8, 12], [3, 0]]).pvalue,
    ]
    assert ab["p_value"] == pytest.approx(raw[0])
    assert ab["p_holm"] == pytest.approx(multipletests(raw, method="holm")[1][0]) and ab["p_holm"] > ab["p_value"]
    assert f"p = {ab['p_holm']:.3f}, Holm-adjusted for 3 pairs" in ab["sentence"]


def test_an_untested_vote_pair_counts_as_p_one_in_the_same_family():
    votes = votes_between("a", "b", 10, 0) + votes_between("a", "c", 0, 0, ties=3)
    pairs = build_report(variants=["a", "b", "c"], votes=votes)["pairs"]
    expected = multipletests([binomtest(10, 10).pvalue, 1.0, 1.0], method="holm")[1][0]
    assert pairs[0]["p_holm"] == pytest.approx(expected)


def test_figures_in_words_round_halves_up_separate_thousands_and_never_collapse():
    # W9: 1/8 read "12%", the leader's wins had no thousands separator, intervals could read "29–29%".
    assert percent(1 / 8) == "13%"
    assert percent_interval(0.2855, 0.2945) == "28.6–29.5%"
    assert percent_interval(0.503, 0.95) == "50.3–95.0%"  # whole numbers would put the bound on 50%
    pair = build_report(variants=["a", "b"], votes=votes_between("a", "b", 1200, 1000), labels=LABELS)["pairs"][0]
    assert pair["sentence"].startswith("Prompt A won 1,200 of 2,200 decisive votes against Prompt B")


def test_pass_rate_guidance_names_the_z_test_and_says_at_least_where_fishers_test_would_run():
    scores = {"a": {i: float(i < 1) for i in range(12)}, "b": {i: 0.0 for i in range(12)}}
    success = build_report(variants=["a", "b"], votes=[], scores=scores, pass_threshold=0.75, labels=LABELS)["success"]
    [pair] = success["pairs"]
    assert pair["test"] == "Fisher's exact test" and pair["more_runs_at_least"]
    assert "At least" in pair["sentence"] and "give the two-proportion z-test an 80% chance" in pair["sentence"]
    assert "if the true pass rates are 8% and 0%, as so far" in pair["sentence"]
    assert pair["sentence"].endswith("as so far (Fisher's exact test, used while counts are this small, needs more).")


def test_judge_score_guidance_names_the_wilcoxon_test_and_its_approximation():
    scores = {
        "a": {i: 0.5 + 0.25 * (i % 3 == 0) - 0.25 * (i % 5 == 0) for i in range(30)},
        "b": dict.fromkeys(range(30), 0.5),
    }
    [pair] = build_report(variants=["a", "b"], votes=[], scores=scores, labels=LABELS)["scores"]["pairs"]
    assert pair["verdict"] == "not significant"
    assert "would give the Wilcoxon test about an 80% chance of a significant result at α = 0.05" in pair["sentence"]
    assert "if the true mean difference and its spread are as so far" in pair["sentence"]
