"""Pairwise mode: every pair asked in both orders; a win counts only when both orders agree, a flip under
swapping counts as a tie, and the judge's diagnostics report the share of judgements that flipped."""

import pytest
from scipy.stats import binomtest

from judging.models import VerdictStatus
from judging.rubric import Metric
from judging.selectors import judge_diagnostics, position_bias
from judging.services import verdict_request
from judging.verdicts import verdict_execute
from tests.fixtures.judging_factories import answered_round, judged_group, make_judge
from tests.judging.scripts import pairwise

QUALITY = Metric("Quality", 1, "Poor.", "Excellent.")


@pytest.fixture
def group(workspace, owner, connections):
    return judged_group(workspace, owner, count=2)


def judge_round(judge, round_, owner):
    return verdict_execute(verdict_id=verdict_request(round=round_, user=owner, judge=judge).pk)


@pytest.fixture
def judge(workspace, owner, fake_llm, connections):
    return make_judge(workspace, owner, fake_llm, mode="pairwise", metrics=[QUALITY.as_dict()])


def test_a_win_in_both_orders_counts(group, owner, fake_llm, judge):
    judge, scenario = judge
    round_ = answered_round(group, owner, ["alpha on tea", "beta on tea"])
    fake_llm.script(scenario, pairwise({"Quality": "letter:alpha"}), pairwise({"Quality": "letter:alpha"}))

    verdict = judge_round(judge, round_, owner)

    assert verdict.status == VerdictStatus.DONE
    assert verdict.winner.text == "alpha on tea" and not verdict.tie
    sent = [body["messages"][1]["content"] for body in fake_llm.requests(scenario)]
    assert sorted(text.index("alpha") < text.index("beta") for text in sent) == [False, True]
    scores = {entry.output.text: entry.score for entry in verdict.outputs.select_related("output")}
    assert scores == {"alpha on tea": 1.0, "beta on tea": 0.0}


def test_a_pairwise_flip_under_swapping_counts_as_a_tie(group, owner, fake_llm, judge):
    judge, scenario = judge
    round_ = answered_round(group, owner, ["alpha on tea", "beta on tea"])
    # A judge that always prefers whatever it reads first: position bias, not quality.
    fake_llm.script(scenario, pairwise({"Quality": "shown:1"}), pairwise({"Quality": "shown:1"}))

    verdict = judge_round(judge, round_, owner)

    assert verdict.status == VerdictStatus.DONE
    assert verdict.tie and verdict.winner is None
    [record] = verdict.pairs
    assert record["call_1"] == record["first"] and record["call_2"] == record["second"]
    assert record["outcome"] == "tie"
    assert {entry.score for entry in verdict.outputs.all()} == {0.5}


def test_diagnostics_report_the_share_of_judgements_that_flipped(group, owner, fake_llm, judge, client):
    judge, scenario = judge
    for replies in (["shown:1", "shown:1"], ["letter:alpha", "letter:alpha"], ["letter:beta", "letter:beta"]):
        round_ = answered_round(group, owner, ["alpha on tea", "beta on tea"])
        fake_llm.script(scenario, *(pairwise({"Quality": choice}) for choice in replies))
        judge_round(judge, round_, owner)

    bias = judge_diagnostics(judge).position_bias

    assert (bias.judgements, bias.flipped) == (3, 1)
    assert bias.share == pytest.approx(1 / 3)
    # The flip picked whatever was read first both times: a first-position flip, not a tie change.
    assert (bias.first_favoured, bias.second_favoured, bias.tie_changes) == (1, 0, 0)
    client.force_login(owner)
    page = client.get(f"/judges/{judge.pk}/").content.decode()
    assert "1 picked the answer shown first both times, 0 the answer shown second both times" in page
    assert "No significant lean towards either position (exact sign test, p = 1.000)" in page


def record(first: int, second: int, call_1, call_2) -> dict:
    return {"first": first, "second": second, "call_1": call_1, "call_2": call_2}


def test_position_bias_reports_which_position_the_flips_favour_with_a_sign_test():
    # A judge with a strong first-position preference: 62 first-position flips, none the other way, 100 steady.
    records = [record(1, 2, 1, 2)] * 62 + [record(1, 2, 1, 1)] * 100
    bias = position_bias(records)
    assert (bias.judgements, bias.flipped, bias.first_favoured, bias.second_favoured) == (162, 62, 62, 0)
    assert bias.p_value == pytest.approx(binomtest(62, 62, 0.5).pvalue, rel=1e-12)
    assert bias.p_value < 1e-18 and bias.favoured == "first"


def test_changes_to_or_from_a_tie_are_kept_apart_from_directed_flips():
    records = [record(1, 2, "tie", 2), record(1, 2, 1, "tie"), record(1, 2, 2, 1), record(1, 2, None, 1)]
    bias = position_bias(records)
    assert (bias.judgements, bias.flipped, bias.tie_changes) == (3, 3, 2)
    assert (bias.first_favoured, bias.second_favoured) == (0, 1)
    assert bias.p_value == pytest.approx(binomtest(0, 1, 0.5).pvalue) and bias.favoured is None


def test_three_answers_are_judged_pair_by_pair(workspace, owner, fake_llm, judge):
    judge, scenario = judge
    group = judged_group(workspace, owner, count=3)
    round_ = answered_round(group, owner, ["alpha on tea", "beta on tea", "gamma on tea"])
    # alpha beats both, beta beats gamma, in both orders. The four calls showing alpha take the alpha replies
    # (queued first); the two of beta against gamma cannot, and take the beta ones.
    fake_llm.script(scenario, *(pairwise({"Quality": "letter:alpha"}, match="alpha on tea") for _ in range(4)))
    fake_llm.script(scenario, *(pairwise({"Quality": "letter:beta"}, match="beta on tea") for _ in range(2)))

    verdict = judge_round(judge, round_, owner)

    assert verdict.status == VerdictStatus.DONE
    scores = {entry.output.text: entry.score for entry in verdict.outputs.select_related("output")}
    assert scores == {"alpha on tea": 1.0, "beta on tea": 0.5, "gamma on tea": 0.0}
    assert verdict.winner.text == "alpha on tea" and verdict.judge_calls == 6
