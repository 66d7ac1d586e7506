"""A well-formed verdict: scores per metric scaled to 0–1 and weighted, reasons, the winner, tokens and cost of
judging kept apart from the cost of the answers, and `verdict.done` on the comparison's channel."""

from decimal import Decimal

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from judging.models import VerdictStatus
from judging.rubric import Metric
from judging.services import verdict_request
from judging.verdicts import verdict_execute
from lab.providers.answer import cost_of
from lab.providers.base import ModelInfo
from lab.realtime import group_channel
from tests.fixtures.judging_factories import answered_round, judged_group, make_judge
from tests.judging.scripts import relative

ACCURACY = Metric("Accuracy", 3, "Wrong.", "Right.")
STYLE = Metric("Style", 1, "Clumsy.", "Elegant.")
RUBRIC = [ACCURACY.as_dict(), STYLE.as_dict()]
FAKE_PRICES = ModelInfo(id="fake", input_price_per_mtok=1.0, output_price_per_mtok=2.0)  # the fake catalog's


@pytest.fixture
def judged(workspace, owner, fake_llm, connections, django_capture_on_commit_callbacks):
    group = judged_group(workspace, owner, count=3)
    round_ = answered_round(group, owner, ["alpha: tea is a drink", "beta: tea grows", "gamma: no idea"])
    judge, scenario = make_judge(workspace, owner, fake_llm, metrics=RUBRIC, seed=7)
    fake_llm.script(
        scenario,
        relative({"alpha": (5, "all correct"), "beta": (3, "half right"), "gamma": (1, "wrong")}, metric=ACCURACY),
        relative({"alpha": (4, "plain"), "beta": (5, "lovely"), "gamma": (2, "terse")}, metric=STYLE),
    )
    with django_capture_on_commit_callbacks() as enqueued:
        verdict = verdict_request(round=round_, user=owner, judge=judge)
    assert len(enqueued) == 1 and verdict.status == VerdictStatus.QUEUED
    return round_, verdict, scenario


def by_text(verdict) -> dict:
    return {entry.output.text.split(":")[0]: entry for entry in verdict.outputs.select_related("output")}


def test_scores_are_scaled_weighted_and_the_best_answer_wins(judged):
    round_, verdict, _ = judged
    verdict = verdict_execute(verdict_id=verdict.pk)

    assert verdict.status == VerdictStatus.DONE, verdict.error
    entries = by_text(verdict)
    # Accuracy weighs 3, style 1: alpha = .75 × 1 + .25 × .75; beta = .75 × .5 + .25 × 1; gamma = .25 × .25.
    assert entries["alpha"].score == pytest.approx(0.9375)
    assert entries["beta"].score == pytest.approx(0.625)
    assert entries["gamma"].score == pytest.approx(0.0625)
    assert [entries[name].rank for name in ("alpha", "beta", "gamma")] == [1, 2, 3]
    assert entries["beta"].scores["Style"] == {"raw": 5, "scaled": 1.0, "reason": "lovely"}
    assert entries["gamma"].scores["Accuracy"] == {"raw": 1, "scaled": 0.0, "reason": "wrong"}
    assert verdict.winner_id == entries["alpha"].output_id and not verdict.tie
    assert verdict.decided_by == "scores"  # a gap of 0.31 needs no head-to-head
    assert verdict.weights == {"Accuracy": 0.75, "Style": 0.25} and verdict.missing_metrics == []
    assert sorted(verdict.letters) == ["A", "B", "C"]
    assert sorted(verdict.letters.values()) == sorted(o.pk for o in round_.outputs.all())


def test_tokens_and_cost_of_judging_are_recorded_apart_from_the_answers(judged, fake_llm):
    _, verdict, scenario = judged
    verdict = verdict_execute(verdict_id=verdict.pk)

    sent = fake_llm.requests(scenario)
    assert verdict.judge_calls == len(sent) == 2
    assert verdict.input_tokens > 100 and verdict.output_tokens > 10
    expected = cost_of(FAKE_PRICES, verdict.input_tokens, verdict.output_tokens)
    assert verdict.cost == Decimal(f"{expected:.8f}")
    assert all(body["temperature"] == 0 for body in sent)
    assert all(body["response_format"]["type"] == "json_schema" for body in sent)  # strict JSON mode


def test_verdict_done_is_pushed_to_the_comparisons_channel(judged, django_capture_on_commit_callbacks):
    round_, verdict, _ = judged
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(group_channel(round_.group_id), channel)

    with django_capture_on_commit_callbacks(execute=True):
        verdict = verdict_execute(verdict_id=verdict.pk)
    event = async_to_sync(layer.receive)(channel)["event"]

    assert event == {
        "type": "verdict.done",
        "round": round_.pk,
        "verdict": verdict.pk,
        "status": "done",
        "winner": verdict.winner_id,
        "tie": False,
        "error": "",
    }


def test_a_redelivered_task_does_not_judge_twice(judged, fake_llm):
    _, verdict, scenario = judged
    verdict_execute(verdict_id=verdict.pk)

    assert verdict_execute(verdict_id=verdict.pk) is None
    assert len(fake_llm.requests(scenario)) == 2
    assert verdict.round.verdicts.count() == 1
