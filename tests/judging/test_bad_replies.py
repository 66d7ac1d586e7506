"""Strict replies: a bad reply gets one retry; a metric that still fails is left out, its weight shared among the
others, and said so; a model refusing temperature 0 is asked again without a temperature."""

import json

import pytest

from judging.models import VerdictStatus
from judging.rubric import Metric
from judging.services import verdict_request
from judging.verdicts import verdict_execute
from tests.fixtures.judging_factories import answered_round, judged_group, make_judge
from tests.judging.scripts import metric_match, relative

ACCURACY = Metric("Accuracy", 2, "Wrong.", "Right.")
STYLE = Metric("Style", 1, "Clumsy.", "Elegant.")
DEPTH = Metric("Depth", 1, "Shallow.", "Deep.")
GOOD_ACCURACY = relative({"alpha": (5, "right"), "beta": (1, "wrong")}, metric=ACCURACY)


@pytest.fixture
def round_(workspace, owner, connections):
    return answered_round(judged_group(workspace, owner, count=2), owner, ["alpha says yes", "beta says no"])


def judge_with(workspace, owner, fake_llm, *replies, metrics=(ACCURACY,), **fields):
    judge, scenario = make_judge(workspace, owner, fake_llm, metrics=[m.as_dict() for m in metrics], **fields)
    fake_llm.script(scenario, *replies)
    return judge, scenario


def judged(round_, owner, judge):
    return verdict_execute(verdict_id=verdict_request(round=round_, user=owner, judge=judge).pk)


def test_malformed_json_then_a_good_retry_gives_a_whole_verdict(workspace, owner, fake_llm, round_):
    broken = {"text": '{"scores": {"A": {"reason": "cut off', "match": metric_match(ACCURACY)}
    judge, scenario = judge_with(workspace, owner, fake_llm, broken, GOOD_ACCURACY)

    verdict = judged(round_, owner, judge)

    assert verdict.status == VerdictStatus.DONE and verdict.missing_metrics == []
    assert verdict.judge_calls == 2 and len(fake_llm.requests(scenario)) == 2
    first, retry = verdict.calls
    assert first["outcome"].startswith("bad reply: The reply is not valid JSON")
    assert (first["attempt"], retry["attempt"], retry["outcome"]) == (1, 2, "ok")
    assert verdict.winner.text == "alpha says yes"


def test_a_letter_missing_twice_drops_the_metric_and_shares_out_its_weight(workspace, owner, fake_llm, round_):
    only_alpha = relative({"alpha": (2, "meh")}, metric=STYLE)  # beta's letter is missing
    judge, _ = judge_with(
        workspace,
        owner,
        fake_llm,
        GOOD_ACCURACY,
        only_alpha,
        only_alpha,
        relative({"alpha": (5, "deep"), "beta": (1, "shallow")}, metric=DEPTH),
        metrics=(ACCURACY, STYLE, DEPTH),
    )

    verdict = judged(round_, owner, judge)

    assert verdict.status == VerdictStatus.DONE
    [missing] = verdict.missing_metrics
    assert missing["name"] == "Style" and "is missing" in missing["reason"]
    # Style's weight of 1 (of 4) is shared out: accuracy 2/3, depth 1/3.
    assert verdict.weights == pytest.approx({"Accuracy": 2 / 3, "Depth": 1 / 3})
    scores = {entry.output.text: entry for entry in verdict.outputs.select_related("output")}
    assert scores["alpha says yes"].score == pytest.approx(1.0)
    assert "Style" not in scores["alpha says yes"].scores
    assert verdict.judge_calls == 4  # accuracy, style twice, depth


def test_a_verdict_with_every_metric_failing_fails_with_the_reasons(workspace, owner, fake_llm, round_):
    judge, _ = judge_with(workspace, owner, fake_llm, {"text": "I prefer A."}, {"text": "Really, A."})

    verdict = judged(round_, owner, judge)

    assert verdict.status == VerdictStatus.FAILED
    assert verdict.error.startswith("No metric could be judged: Accuracy: The reply is not valid JSON")
    assert verdict.winner is None


def test_a_refused_temperature_is_asked_again_without_one(workspace, owner, fake_llm, round_):
    judge, scenario = judge_with(
        workspace, owner, fake_llm, GOOD_ACCURACY, scenario=fake_llm.model(refuse="temperature")
    )

    verdict = judged(round_, owner, judge)

    assert verdict.status == VerdictStatus.DONE, verdict.error
    refused, accepted = fake_llm.requests(scenario)
    assert refused["temperature"] == 0 and "temperature" not in accepted
    assert "'temperature' is not supported" in verdict.calls[0]["temperature_refused"]
    assert verdict.judge_calls == 2


def test_once_refused_the_temperature_is_not_sent_again_in_the_same_verdict(workspace, owner, fake_llm, round_):
    judge, scenario = judge_with(
        workspace,
        owner,
        fake_llm,
        GOOD_ACCURACY,
        relative({"alpha": (4, "fine"), "beta": (2, "odd")}, metric=STYLE),
        metrics=(ACCURACY, STYLE),
        scenario=fake_llm.model(refuse="temperature"),
    )

    verdict = judged(round_, owner, judge)

    sent = fake_llm.requests(scenario)
    assert verdict.status == VerdictStatus.DONE
    assert sum("temperature" in body for body in sent) <= 2  # the calls already in flight, then never again
    assert len(sent) == verdict.judge_calls


def test_a_reply_naming_a_letter_it_was_not_shown_is_not_trusted(workspace, owner, fake_llm, round_):
    extra = {"A": {"reason": "x", "score": 5}, "B": {"reason": "y", "score": 1}, "C": {"reason": "z", "score": 3}}
    bad = {"text": json.dumps({"scores": extra})}
    judge, _ = judge_with(workspace, owner, fake_llm, bad, bad)

    verdict = judged(round_, owner, judge)

    assert verdict.status == VerdictStatus.FAILED
    assert "names letter C, which it was not given" in verdict.error


def test_a_duplicated_letter_is_a_bad_reply(workspace, owner, fake_llm, round_):
    duplicated = '{"scores": {"A": {"reason": "x", "score": 5}, "A": {"reason": "y", "score": 1}}}'
    judge, _ = judge_with(workspace, owner, fake_llm, {"text": duplicated}, GOOD_ACCURACY)

    verdict = judged(round_, owner, judge)

    assert verdict.calls[0]["outcome"] == 'bad reply: "A" appears more than once.'
    assert verdict.status == VerdictStatus.DONE
