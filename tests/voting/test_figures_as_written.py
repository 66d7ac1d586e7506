"""Figures on the pages as people read them: one helper (lab.numbers, the `numbers` template library) writes every
percentage, interval, p-value and count, halves rounded up, counts with thousands separators, and the words beside
a figure claim only what it shows."""

import re
from pathlib import Path

import numpy as np
import pytest
from django.db.models import F
from django.template.loader import render_to_string
from django.urls import reverse
from scipy.stats import spearmanr

from judging.selectors import PositionBias, Verbosity
from lab.numbers import decimal_interval, nonzero_decimal, percent_interval
from lab.stats.report import build_report
from tests.fixtures.compare_factories import make_group
from tests.fixtures.voting_factories import finished_round
from voting.models import VoteCount
from voting.services import vote_cast

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


def test_a_bound_a_hair_above_fifty_percent_never_reads_as_fifty():
    text = percent_interval(0.5000001, 0.7)
    low = text.split("–")[0]
    assert not re.fullmatch(r"50(\.0+)?", low), text
    assert float(low) > 50
    # Closer than any decimals can show: said in words, never as 50.
    assert percent_interval(0.5 + 1e-16, 0.7) == "just above 50% to 70%"
    assert percent_interval(0.3, 0.5 - 1e-16) == "30% to just below 50%"


def test_no_template_computes_a_percentage_itself():
    offenders = [path.name for path in TEMPLATES.rglob("*.html") if "widthratio" in path.read_text()]
    assert offenders == []


def diagnostics_page(bias: PositionBias, verbosity: Verbosity) -> str:
    diagnostics = {
        "verdicts": 12_000,
        "failed": 0,
        "ties": 1_500,
        "position_bias": bias,
        "verbosity": verbosity,
        "calls": 24_000,
        "cost": None,
    }
    judge = {"name": "Judge", "model": "m", "pk": 1, "get_mode_display": "", "get_scale_display": "", "seed": None}
    return render_to_string(
        "judging/detail.html",
        {"judge": judge, "rubric": {"metrics": []}, "diagnostics": diagnostics, "workspace": {"pk": 1}},
    )


def bias_text(page: str) -> str:
    return " ".join(re.search(r'data-role="position-bias">(.*?)</dd>', page, re.S).group(1).split())


def verbosity_text(page: str) -> str:
    return " ".join(re.search(r'data-role="verbosity">(.*?)</dd>', page, re.S).group(1).split())


@pytest.mark.parametrize(("flipped", "judgements", "shown"), [(1, 8, "13%"), (5, 8, "63%"), (3, 8, "38%")])
def test_the_share_of_changed_judgements_rounds_halves_up(flipped, judgements, shown):
    page = diagnostics_page(
        PositionBias(judgements=judgements, flipped=flipped), Verbosity(answers=0, rho=None, p_value=None)
    )
    assert f"<strong>{shown}</strong> of {judgements} pairwise judgements ({flipped}) changed" in bias_text(page)
    assert "12,000 verdicts" in page and "1,500 ties" in page and "24,000 calls" in page


def test_a_correlation_that_is_not_significant_claims_no_tendency():
    lengths, scores = [10, 20, 30, 40, 50], [0.4, 0.2, 0.8, 1.0, 0.6]
    result = spearmanr(lengths, scores)
    assert result.statistic == pytest.approx(0.6) and result.pvalue > 0.05  # scipy: ρ = 0.60, p = 0.285
    page = diagnostics_page(
        PositionBias(judgements=0, flipped=0), Verbosity(answers=5, rho=float(result.statistic), p_value=result.pvalue)
    )
    text = verbosity_text(page)
    assert "over 5 answers (p = 0.285): no clear tendency either way yet." in text
    assert "tend to score higher" not in text


def test_a_tiny_p_value_reads_below_one_in_a_thousand_and_a_significant_correlation_says_which_way():
    lengths = list(range(1, 41))
    scores = [value / 40 for value in lengths]
    result = spearmanr(lengths, scores)
    assert result.pvalue < 0.0005
    page = diagnostics_page(
        PositionBias(judgements=0, flipped=0), Verbosity(answers=40, rho=float(result.statistic), p_value=result.pvalue)
    )
    text = verbosity_text(page)
    assert "(p &lt; 0.001): longer answers tend to score higher." in text
    assert "p = 0.000" not in page


@pytest.mark.django_db
def test_the_report_and_leaderboard_pages_write_counts_with_thousands_separators(client, owner, workspace):
    group = make_group(workspace, owner, models=["simulated::instant", "simulated::writer"])
    first, second = finished_round(group, owner), finished_round(group, owner)
    vote_cast(round=first, user=owner, output_id=first.outputs.get(variant__position=1).pk)
    vote_cast(round=second, user=owner, verdict="tie")
    # The kept counts are what reports read; scale them as if 11,000 votes had been cast.
    VoteCount.objects.filter(group=group, variant__isnull=False).update(votes=F("votes") + 9_999)
    VoteCount.objects.filter(group=group, variant__isnull=True).update(votes=F("votes") + 999)
    client.force_login(owner)

    report = client.get(f"/compare/{group.pk}/report/").content.decode()
    board = client.get(reverse("voting:leaderboard", args=[workspace.pk])).content.decode()

    assert "11,000 votes, 10,000 of them naming a winner" in report
    assert '<td class="num">10,000</td>' in report and '<td class="num">1,000</td>' in report
    assert "11,000 votes counted" in board
    # The bounds' seed noise is given as a size, not as "a little".
    assert "another seed could move a bound by up to about" in board and "a little" not in board
    assert not re.search(r"\b1[01]000\b", report + board)


def test_six_identical_scores_have_no_interval_and_close_scores_show_their_difference():
    scores = {"a": {r: 0.5 for r in range(6)}, "b": {r: 0.5 + 0.002 * (r % 2) for r in range(6)}}
    report = build_report(variants=["a", "b"], votes=[], scores=scores, score_resamples=200)
    same, close = report["scores"]["variants"]
    assert (same["ci_low"], same["ci_high"], same["not_measured"]) == (None, None, "every score is the same")
    low, high = decimal_interval(close["ci_low"], close["ci_high"]).split("–")
    assert low != high and low.startswith("0.500") and len(high) >= 5  # "0.50–0.50" showed no interval at all
    # The mean difference is −0.001 (scipy's/numpy's mean of the paired differences agrees).
    assert np.mean([0.5 - s for s in scores["b"].values()]) == pytest.approx(-0.001)
    assert "averages 0.001 points more than" in report["scores"]["pairs"][0]["sentence"]
    assert nonzero_decimal(4e-9) == "less than 0.000001"
