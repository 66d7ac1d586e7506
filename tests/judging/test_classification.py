"""Classification judges after Evidently's templates: binary (criteria, target and non-target, what an uncertain
judge answers, reasoning and score asked for or not) and multiclass (categories with descriptions), with dataset
columns in the prompt; the report counts each variant's answers per category with Wilson intervals."""

import json

import pytest
from statsmodels.stats.proportion import proportion_confint

from judging.models import VerdictStatus
from judging.services import judge_config_create, verdict_request
from judging.verdicts import verdict_execute
from lab.numbers import percent_interval
from tests.fixtures.judging_factories import JUDGE, answered_round, judged_group

BINARY = {
    "criteria": "Is an answer about {{topic}} concise: short, to the point, no filler?",
    "target": "concise",
    "non_target": "verbose",
    "uncertainty": "non_target",
    "include_reasoning": True,
    "include_score": True,
}
MULTICLASS = {
    "criteria": "What is the tone of the answer?",
    "categories": [
        {"name": "friendly", "description": "warm, addresses the reader"},
        {"name": "neutral", "description": "plain and factual"},
        {"name": "rude", "description": "dismissive or insulting"},
    ],
}


def reply(category: str, about: str, **extra) -> dict:
    return {"text": json.dumps({"reasoning": f"{about} reads so", "category": category, **extra}), "match": about}


def classification_judge(workspace, owner, fake_llm, kind: str, settings: dict, columns=()):
    scenario = fake_llm.model()
    judge = judge_config_create(
        workspace=workspace,
        user=owner,
        name=f"Classifier {scenario[-10:]}",
        model=f"{JUDGE}::{scenario}",
        kind=kind,
        classification=settings,
        input_columns=list(columns),
    )
    return judge, scenario


def test_a_binary_judge_is_asked_evidently_s_question_and_records_each_category(
    workspace, owner, fake_llm, connections
):
    judge, scenario = classification_judge(
        workspace, owner, fake_llm, "binary_classification", BINARY, columns=["topic"]
    )
    round_ = answered_round(judged_group(workspace, owner, count=2), owner, ["alpha on tea", "beta on tea"])
    fake_llm.script(scenario, reply("concise", "alpha", score=0.9), reply("verbose", "beta", score=0.7))

    verdict = verdict_execute(verdict_id=verdict_request(round=round_, user=owner, judge=judge).pk)

    assert verdict.status == VerdictStatus.DONE and verdict.decided_by == "classification"
    categories = {entry.output.text: (entry.category, entry.score) for entry in verdict.outputs.all()}
    assert categories == {"alpha on tea": ("concise", 1.0), "beta on tea": ("verbose", 0.0)}
    assert verdict.winner is None  # a category is not a ranking
    sent = fake_llm.requests(scenario)
    assert len(sent) == 2  # one call per answer
    asked = sent[0]["messages"][1]["content"]
    assert "Criteria:\nIs an answer about tea concise: short, to the point, no filler?" in asked
    assert 'Classify the response as "concise" or "verbose"' in asked
    assert 'If you are not sure, answer "verbose".' in asked  # uncertainty: the non-target
    assert '<column name="topic">\ntea\n</column>' in asked
    schema = sent[0]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["category"]["enum"] == ["concise", "verbose"]
    assert set(schema["required"]) == {"reasoning", "category", "score"}


def test_a_multiclass_judge_lists_the_categories_and_an_uncertain_one_answers_unknown(
    workspace, owner, fake_llm, connections
):
    judge, scenario = classification_judge(workspace, owner, fake_llm, "multiclass_classification", MULTICLASS)
    round_ = answered_round(judged_group(workspace, owner, count=2), owner, ["alpha on tea", "beta on tea"])
    fake_llm.script(scenario, reply("friendly", "alpha"), reply("UNKNOWN", "beta"))

    verdict = verdict_execute(verdict_id=verdict_request(round=round_, user=owner, judge=judge).pk)

    assert {e.output.text: e.category for e in verdict.outputs.all()} == {
        "alpha on tea": "friendly",
        "beta on tea": "UNKNOWN",
    }
    asked = fake_llm.requests(scenario)[0]["messages"][1]["content"]
    assert "- friendly: warm, addresses the reader\n- neutral: plain and factual\n- rude: dismissive" in asked
    assert 'If the information is not enough to decide, answer "UNKNOWN".' in asked
    schema = fake_llm.requests(scenario)[0]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["category"]["enum"] == ["friendly", "neutral", "rude", "UNKNOWN"]
    assert "score" not in schema["properties"]


def test_the_report_shows_each_variant_s_share_per_category_with_wilson_intervals(
    workspace, owner, fake_llm, connections, api, client
):
    judge, scenario = classification_judge(workspace, owner, fake_llm, "binary_classification", BINARY, ["topic"])
    group = judged_group(workspace, owner, count=2)
    # alpha is concise in 4 rounds of 5, beta in 1.
    for number in range(5):
        round_ = answered_round(group, owner, [f"alpha {number} on tea", f"beta {number} on tea"])
        fake_llm.script(
            scenario,
            reply("concise" if number < 4 else "verbose", "alpha", score=0.8),
            reply("concise" if number == 0 else "verbose", "beta", score=0.8),
        )
        verdict_execute(verdict_id=verdict_request(round=round_, user=owner, judge=judge).pk)

    data = api.get(f"/api/v1/groups/{group.pk}/report/").json()["categories"]

    assert data["categories"] == ["concise", "verbose"]
    [alpha, beta] = data["variants"]
    for row, concise in ((alpha, 4), (beta, 1)):
        assert row["answers"] == 5
        share = row["shares"][0]
        low, high = proportion_confint(concise, 5, alpha=0.05, method="wilson")
        assert (share["count"], share["share"]) == (concise, concise / 5)
        assert share["ci_low"] == pytest.approx(low) and share["ci_high"] == pytest.approx(high)
    client.force_login(owner)
    page = client.get(f"/compare/{group.pk}/report/").content.decode()
    low, high = proportion_confint(4, 5, alpha=0.05, method="wilson")
    assert "Categories" in page and f'4 · 80% <span class="muted">({percent_interval(low, high)})</span>' in page


@pytest.mark.parametrize(
    ("kind", "settings", "message"),
    [
        ("binary_classification", {"criteria": "Concise?", "target": "concise"}, "target and non_target"),
        ("multiclass_classification", {"criteria": "Tone?", "categories": [{"name": "x"}]}, "2 to 10 categories"),
        ("binary_classification", {**BINARY, "criteria": "About {{nope}}?"}, "{{nope}} is not one of the input"),
    ],
)
def test_incomplete_classification_settings_are_a_400_naming_the_field(
    workspace, owner, connections, api, kind, settings, message
):
    body = {"name": "C", "model": f"{JUDGE}::fake", "kind": kind, "classification": settings}
    response = api.post(f"/api/v1/workspaces/{workspace.pk}/judges/", body, format="json")
    assert response.status_code == 400
    assert message in " ".join(response.json()["classification"])
