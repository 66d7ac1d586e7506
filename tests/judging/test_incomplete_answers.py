"""A failed, timed-out, cancelled or cut-off answer is never judged as if it were whole: the round is judged on
the others, and the verdict says which answers were left out and why."""

import pytest

from compare.models import OutputStatus
from judging.models import VerdictStatus
from judging.rubric import Metric
from judging.services import verdict_request
from judging.verdicts import verdict_execute
from tests.fixtures.judging_factories import answered_round, judged_group, make_judge
from tests.judging.scripts import relative

QUALITY = Metric("Quality", 1, "Poor.", "Excellent.")


@pytest.fixture
def judge(workspace, owner, fake_llm, connections):
    return make_judge(workspace, owner, fake_llm, metrics=[QUALITY.as_dict()])


def test_a_round_with_a_failed_variant_is_judged_on_the_others_only(workspace, owner, fake_llm, judge):
    judge, scenario = judge
    group = judged_group(workspace, owner, count=3)
    round_ = answered_round(
        group,
        owner,
        ["alpha on tea", "broken half answer", "gamma on tea"],
        [OutputStatus.OK, OutputStatus.ERROR, OutputStatus.OK],
    )
    fake_llm.script(scenario, relative({"alpha": (2, "thin"), "gamma": (5, "rich")}))

    verdict = verdict_execute(verdict_id=verdict_request(round=round_, user=owner, judge=judge).pk)

    assert verdict.status == VerdictStatus.DONE, verdict.error
    [prompt] = [body["messages"][1]["content"] for body in fake_llm.requests(scenario)]
    assert "broken half answer" not in prompt
    assert sorted(verdict.letters) == ["A", "B"]
    failed = round_.outputs.get(status=OutputStatus.ERROR)
    assert verdict.skipped == [{"output": failed.pk, "reason": "Error: only complete answers are judged."}]
    entry = verdict.outputs.get(output=failed)
    assert (entry.judged, entry.score, entry.letter) == (False, None, "")
    assert verdict.winner.text == "gamma on tea"


@pytest.mark.parametrize(
    ("status", "reason"),
    [
        (OutputStatus.TIMEOUT, "Timed out: only complete answers are judged."),
        (OutputStatus.CANCELLED, "Cancelled: only complete answers are judged."),
    ],
)
def test_timed_out_and_cancelled_answers_are_left_out(workspace, owner, fake_llm, judge, status, reason):
    judge, scenario = judge
    round_ = answered_round(
        judged_group(workspace, owner, count=3), owner, ["a", "b", "c"], [OutputStatus.OK, status, OutputStatus.OK]
    )
    fake_llm.script(scenario, relative({"a": (3, "x"), "c": (4, "y")}))

    verdict = verdict_execute(verdict_id=verdict_request(round=round_, user=owner, judge=judge).pk)

    assert [item["reason"] for item in verdict.skipped] == [reason]


def test_an_answer_cut_off_at_the_token_limit_is_not_judged_as_whole(workspace, owner, fake_llm, judge):
    judge, _ = judge
    round_ = answered_round(judged_group(workspace, owner, count=2), owner, ["alpha", "beta"], finish="length")

    verdict = verdict_execute(verdict_id=verdict_request(round=round_, user=owner, judge=judge).pk)

    assert verdict.status == VerdictStatus.FAILED and verdict.error == "No complete answer to judge."
    assert {item["reason"] for item in verdict.skipped} == {
        "Cut off at the token limit: a partial answer is not judged as if it were whole."
    }


def test_a_single_complete_answer_wins_without_a_call(workspace, owner, fake_llm, judge):
    judge, scenario = judge
    round_ = answered_round(
        judged_group(workspace, owner, count=2), owner, ["alpha", "beta"], [OutputStatus.OK, OutputStatus.ERROR]
    )

    verdict = verdict_execute(verdict_id=verdict_request(round=round_, user=owner, judge=judge).pk)

    assert (verdict.status, verdict.decided_by, verdict.winner.text) == (VerdictStatus.DONE, "only_answer", "alpha")
    assert verdict.judge_calls == 0 and fake_llm.requests(scenario) == []


def test_a_round_without_a_complete_answer_cannot_be_judged(workspace, owner, judge):
    from django.core.exceptions import ValidationError

    judge, _ = judge
    round_ = answered_round(judged_group(workspace, owner, count=2), owner, ["a", "b"], [OutputStatus.ERROR] * 2)

    with pytest.raises(ValidationError, match="no complete answer"):
        verdict_request(round=round_, user=owner, judge=judge)
