"""Pointwise scoring of one answer, as experiments call it: each scale, custom evaluator prompts, the reason,
tokens and cost, and a metric left out when the judge fails it twice."""

import pytest

from judging.calls import judge_model_resolve
from judging.pointwise import answer_score
from judging.rubric import OVERALL, Metric, Rubric, rubric_check
from tests.fixtures.judging_factories import JUDGE
from tests.judging.scripts import pointwise


@pytest.fixture
def judge(workspace, fake_llm, connections):
    scenario = fake_llm.model()
    return judge_model_resolve(workspace=workspace, model_id=f"{JUDGE}::{scenario}"), scenario


@pytest.mark.parametrize(
    ("scale", "raw", "score", "allowed"),
    [
        ("binary", 1, 1.0, [0, 1]),
        ("1-3", 2, 0.5, [1, 2, 3]),
        ("1-5", 4, 0.75, [1, 2, 3, 4, 5]),
        ("1-10", 10, 1.0, list(range(1, 11))),
    ],
)
def test_one_answer_is_scored_on_each_scale(judge, fake_llm, scale, raw, score, allowed):
    judge, scenario = judge
    fake_llm.script(scenario, pointwise({"Overall": (raw, "as asked")}))

    result = answer_score(judge=judge, rubric=Rubric(scale=scale, metrics=(OVERALL,)), prompt="Say hi.", response="Hi!")

    assert (result.score, result.scale_score, result.reason) == (score, raw, "as asked")
    assert result.calls == 1 and result.input_tokens > 0 and result.output_tokens > 0
    assert result.cost is not None and result.cost > 0
    [body] = fake_llm.requests(scenario)
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["metrics"]["properties"]["Overall"]["properties"]["score"]["enum"] == allowed


def test_a_custom_evaluator_prompt_is_filled_and_the_reply_format_appended(judge, fake_llm):
    judge, scenario = judge
    rubric = rubric_check(
        scale="1-5",
        metrics=[OVERALL.as_dict()],
        prompt="Q: {{prompt}}\nA: {{response}}\nScale: {{scoring_scale}}\nOn: {{metrics}}",
    )
    fake_llm.script(scenario, pointwise({"Overall": (5, "great")}))

    answer_score(judge=judge, rubric=rubric, prompt="What is 2+2?", response="4, obviously {{prompt}}")

    text = fake_llm.requests(scenario)[0]["messages"][1]["content"]
    assert text.startswith("Q: <request>\nWhat is 2+2?\n</request>\nA: <answer>\n4, obviously {{prompt}}\n</answer>")
    assert "Scale: An integer from 1 to 5" in text and "On: - Overall (weight 1)" in text
    assert 'Reply with JSON only: {"metrics"' in text


def test_several_metrics_are_weighted_and_a_failing_one_is_left_out(judge, fake_llm):
    judge, scenario = judge
    rubric = Rubric(scale="1-5", metrics=(OVERALL, Metric("Tone", 3, "Cold.", "Warm.")))
    bad_tone = pointwise({"Overall": (5, "right"), "Tone": (9, "off the scale")})
    fake_llm.script(scenario, bad_tone, bad_tone)

    result = answer_score(judge=judge, rubric=rubric, prompt="Say hi.", response="Hi!")

    assert result.missing == [{"name": "Tone", "reason": "metric Tone: the score 9 is outside 1–5"}]
    assert result.weights == {"Overall": 1.0} and result.score == 1.0 and result.calls == 2


def test_when_nothing_can_be_read_the_score_is_none_with_the_reason(judge, fake_llm):
    judge, scenario = judge
    fake_llm.script(scenario, {"text": "5/5"}, {"text": "Five."})

    result = answer_score(judge=judge, rubric=Rubric(scale="1-5", metrics=(OVERALL,)), prompt="p", response="r")

    assert result.score is None and result.reason.startswith(
        "No metric could be judged: Overall: The reply is not valid JSON"
    )


def test_a_simulated_model_judges_offline_with_replies_of_the_schema(workspace):
    judge = judge_model_resolve(workspace=workspace, model_id="simulated::instant")
    rubric = Rubric(scale="1-5", metrics=(OVERALL,))

    result = answer_score(judge=judge, rubric=rubric, prompt="Say hi.", response="Hi!")
    again = answer_score(judge=judge, rubric=rubric, prompt="Say hi.", response="Hi!")

    assert result.calls == 1 and 1 <= result.scale_score <= 5
    assert (again.scale_score, again.reason) == (result.scale_score, result.reason)  # deterministic
