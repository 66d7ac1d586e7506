"""Rubrics: the custom evaluator prompt must carry the placeholders its scale needs (each missing one named),
metrics are checked one by one, and scores are scaled to 0–1 by the scale's ends."""

import pytest
from django.core.exceptions import ValidationError

from judging.rubric import DEFAULT_METRICS, Rubric, check_custom_prompt, rubric_check


@pytest.mark.parametrize(
    ("scale", "prompt", "missing"),
    [
        ("1-5", "{{response}}", ["{{prompt}}", "{{scoring_scale}}", "{{metrics}}"]),
        ("1-10", "{{prompt}} {{response}} {{metrics}}", ["{{scoring_scale}}"]),
        ("1-3", "{{prompt}} {{ response }} {{scoring_scale}}", ["{{metrics}}"]),
        ("binary", "{{prompt}}", ["{{response}}"]),
    ],
)
def test_each_missing_placeholder_is_named(scale, prompt, missing):
    with pytest.raises(ValidationError) as refused:
        check_custom_prompt(prompt, scale)

    messages = refused.value.message_dict["prompt"]
    assert [message.split(" ")[5] for message in messages] == missing
    assert messages[0].startswith("The custom prompt must contain {{")


def test_a_complete_prompt_and_an_empty_one_are_accepted():
    check_custom_prompt("{{prompt}} {{response}} {{scoring_scale}} {{metrics}}", "1-5")
    check_custom_prompt("{{prompt}} {{response}}", "binary")
    check_custom_prompt("   ", "1-10")


def test_the_default_rubric_has_five_weighted_metrics():
    assert len(DEFAULT_METRICS) == 5 and all(
        metric.weight > 0 and metric.low and metric.high for metric in DEFAULT_METRICS
    )


@pytest.mark.parametrize(
    ("scale", "raw", "scaled"), [("binary", 0, 0.0), ("1-3", 3, 1.0), ("1-5", 2, 0.25), ("1-10", 4, 1 / 3)]
)
def test_scores_are_scaled_by_the_ends_of_the_scale(scale, raw, scaled):
    assert Rubric(scale=scale).scaled(raw) == pytest.approx(scaled)


def test_every_problem_of_a_rubric_is_reported_at_once():
    with pytest.raises(ValidationError) as refused:
        rubric_check(scale="1-7", metrics=[{"name": "", "weight": "heavy", "low": "", "high": "x"}], prompt="")

    errors = refused.value.message_dict
    assert errors["scale"] == ["The scale is one of: binary, 1-3, 1-5, 1-10."]
    assert errors["metrics"] == [
        "Metric 1: name: give the metric a name.",
        "Metric 1: weight: a number above 0 and at most 100.",
        "Metric 1: low/high: say what the lowest and the highest score look like.",
    ]
