"""Pairwise mode: every pair asked in both orders; a win counts only when both orders agree, a flip under
swapping counts as a tie, and the judge's diagnostics report the share of judgements that flipped."""

import pytest

from judging.models import VerdictStatus
from judging.rubric import Metric
from judging.selectors import judge_diagnostics
from judging.services import verdict_request
from judging.verdicts import verdict_execute
from tests.fixtures.judging_factories import answered_round, judged_group, make_judge
from tests.judging.scripts import pairwise

QUALITY = Metric("Quality", 1, "Poor.", "Excellent.")


@pytest.fixture
def group(workspace, owner, connections):
    return judged_group(workspace, owner, count=2)


def judge_round(judge, round_, owner):
    return verdict_execute(verdict_id=verdict_request(round_=round_, user=owner, judge=judge).pk)


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


def test_diagnostics_report_the_share_of_judgements_that_flipped(group, owner, fake_llm, judge):
    judge, scenario = judge
    for replies in (["shown:1", "shown:1"], ["letter:alpha", "letter:alpha"], ["letter:beta", "letter:beta"]):
        round_ = answered_round(group, owner, ["alpha on tea", "beta on tea"])
        fake_llm.script(scenario, *(pairwise({"Quality": choice}) for choice in replies))
        judge_round(judge, round_, owner)

    bias = judge_diagnostics(judge).position_bias

    assert (bias.judgements, bias.flipped) == (3, 1)
    assert bias.share == pytest.approx(1 / 3)


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
