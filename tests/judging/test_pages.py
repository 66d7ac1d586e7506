"""Judging pages: the judges list, the editor (metrics formset, errors beside the field), the diagnostics page,
and the verdict panel fragment the comparison page fetches (scores, reasons, winner, missing metrics, costs)."""

import re

import pytest

from compare.models import OutputStatus
from judging.models import JudgeConfig, Verdict, VerdictStatus
from judging.rubric import Metric
from judging.services import verdict_request
from judging.verdicts import verdict_execute
from tests.fixtures.judging_factories import JUDGE, answered_round, judged_group, make_judge
from tests.judging.scripts import relative
from voting.services import vote_cast

CORRECT = Metric("Correct", 2, "Wrong.", "Right.")
BRIEF = Metric("Brief", 1, "Rambling.", "Crisp.")


def editor_post(model: str, metrics: list[dict], **fields) -> dict:
    data = {"name": "Careful", "model": model, "scale": "1-5", "mode": "relative", "prompt": "", "seed": ""}
    data |= {"metrics-TOTAL_FORMS": str(len(metrics)), "metrics-INITIAL_FORMS": "0"}
    for index, metric in enumerate(metrics):
        data |= {f"metrics-{index}-{key}": value for key, value in metric.items()}
    return data | fields


@pytest.fixture
def logged_in(client, owner):
    client.force_login(owner)
    return client


def test_the_editor_starts_from_the_default_rubric_of_five(logged_in, workspace, connections):
    html = logged_in.get(f"/w/{workspace.pk}/judges/new/").content.decode()

    assert html.count('data-role="metric"') == 5 + 1  # five rows and the template for new ones
    assert 'value="Correctness"' in html and 'value="Format and tone"' in html
    assert 'name="metrics-TOTAL_FORMS" value="5"' in html


def test_saving_the_editor_creates_the_judge_with_its_metrics(logged_in, owner, workspace, fake_llm, connections):
    model = f"{JUDGE}::{fake_llm.model()}"
    metrics = [
        CORRECT.as_dict(),
        BRIEF.as_dict() | {"DELETE": "on"},
        {"name": "Kind", "weight": "0.5", "low": "Rude.", "high": "Warm."},
    ]

    response = logged_in.post(f"/w/{workspace.pk}/judges/new/", editor_post(model, metrics))

    judge = JudgeConfig.objects.get(name="Careful")
    assert response.status_code == 302 and response.url == f"/judges/{judge.pk}/"
    assert [m["name"] for m in judge.metrics] == ["Correct", "Kind"]
    assert judge.metrics[1]["weight"] == 0.5 and judge.created_by == owner


def test_a_custom_prompt_missing_a_placeholder_is_shown_beside_the_field(logged_in, workspace, fake_llm, connections):
    model = f"{JUDGE}::{fake_llm.model()}"
    data = editor_post(model, [CORRECT.as_dict()], prompt="Rate {{response}} for {{prompt}} on {{metrics}}.")

    response = logged_in.post(f"/w/{workspace.pk}/judges/new/", data)

    assert response.status_code == 200 and not JudgeConfig.objects.exists()
    html = response.content.decode()
    errors = re.search(r'<span class="field-errors" id="prompt-errors" role="alert">(.*?)</span>', html, re.DOTALL)
    assert errors and "must contain {{scoring_scale}}" in errors.group(1)
    assert "Rate {{response}} for {{prompt}}" in html  # what was typed is kept


def test_metric_errors_are_shown_above_the_metrics(logged_in, workspace, fake_llm, connections):
    model = f"{JUDGE}::{fake_llm.model()}"
    twice = [CORRECT.as_dict(), CORRECT.as_dict()]

    html = logged_in.post(f"/w/{workspace.pk}/judges/new/", editor_post(model, twice)).content.decode()

    assert 'id="metrics-errors"' in html and "Metric 2 (Correct): name: metric 1 already has this name." in html


def test_the_list_and_diagnostics_pages_show_the_judge(logged_in, owner, workspace, fake_llm, connections):
    judge, _ = make_judge(workspace, owner, fake_llm, metrics=[CORRECT.as_dict()])

    listing = logged_in.get(f"/w/{workspace.pk}/judges/").content.decode()
    detail = logged_in.get(f"/judges/{judge.pk}/").content.decode()

    assert judge.name in listing and f"/judges/{judge.pk}/edit/" in listing
    assert "Position bias" in detail and "No pairwise judgement yet" in detail
    assert "Needs at least 5 scored answers" in detail


def test_a_viewer_sees_judges_but_not_the_editor(client, viewer, owner, workspace, fake_llm, connections):
    judge, _ = make_judge(workspace, owner, fake_llm)
    client.force_login(viewer)

    assert "New judge" not in client.get(f"/w/{workspace.pk}/judges/").content.decode()
    assert client.get(f"/judges/{judge.pk}/edit/").status_code == 403
    assert client.post(f"/judges/{judge.pk}/delete/").status_code == 403


def test_delete_removes_the_judge(logged_in, owner, workspace, fake_llm, connections):
    judge, _ = make_judge(workspace, owner, fake_llm)

    response = logged_in.post(f"/judges/{judge.pk}/delete/")

    assert response.status_code == 302 and not JudgeConfig.objects.filter(pk=judge.pk).exists()


@pytest.fixture
def judged_round(owner, workspace, fake_llm, connections):
    """A round of three where the second answer failed and one metric could not be judged."""
    judge, scenario = make_judge(workspace, owner, fake_llm, metrics=[CORRECT.as_dict(), BRIEF.as_dict()])
    group = judged_group(workspace, owner, count=3, labels=["Terse", "Broken", "Chatty"])
    round_ = answered_round(
        group, owner, ["alpha tea", "nothing", "gamma tea"], [OutputStatus.OK, OutputStatus.ERROR, OutputStatus.OK]
    )
    lonely = relative({"alpha": (3, "hm")}, metric=BRIEF)
    fake_llm.script(scenario, relative({"alpha": (5, "spot on"), "gamma": (2, "off")}, metric=CORRECT), lonely, lonely)
    verdict = verdict_execute(verdict_id=verdict_request(round=round_, user=owner, judge=judge).pk)
    assert verdict.status == VerdictStatus.DONE
    return round_, verdict


def test_the_verdict_panel_shows_scores_reasons_winner_missing_metrics_and_costs(logged_in, judged_round):
    round_, verdict = judged_round

    response = logged_in.get(f"/judging/rounds/{round_.pk}/verdict/")

    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html  # a fragment to embed
    assert "Winner: <strong>Terse</strong>" in html
    assert "spot on" in html and "off" in html
    assert "Left out:" in html and "<strong>Brief</strong>" in html and "shared among the other metrics" in html
    assert "Not judged: Error: only complete answers are judged." in html
    assert 'data-role="answers-cost">$0.0030<' in html  # three answers of $0.001
    assert f"{verdict.judge_calls} calls" in html and "not included in the answers' cost" in html
    assert 'action="/judging/rounds/' in html and "Judge this round" in html


def test_in_a_blind_round_the_verdict_waits_for_my_vote(client, viewer, owner, workspace, fake_llm, connections):
    judge, _ = make_judge(workspace, owner, fake_llm)
    group = judged_group(workspace, owner, count=2, blind=True)
    round_ = answered_round(group, owner, ["a", "b"])
    Verdict.objects.create(
        round=round_, judge=judge, judge_name="Secret", judge_model=judge.model, scale="1-5", mode="relative"
    )
    client.force_login(viewer)

    before = client.get(f"/judging/rounds/{round_.pk}/verdict/").content.decode()
    vote_cast(round=round_, user=viewer, verdict="tie")
    after = client.get(f"/judging/rounds/{round_.pk}/verdict/").content.decode()

    assert "shown once you have voted" in before and "Secret" not in before
    assert "Secret" in after
    assert "Judge this round" not in before  # viewers cannot ask for a verdict


def test_judge_this_round_queues_a_verdict_and_answers_with_the_panel(
    logged_in, owner, workspace, fake_llm, connections, django_capture_on_commit_callbacks
):
    judge, _ = make_judge(workspace, owner, fake_llm)
    round_ = answered_round(judged_group(workspace, owner, count=2), owner, ["a", "b"])

    with django_capture_on_commit_callbacks() as enqueued:
        response = logged_in.post(f"/judging/rounds/{round_.pk}/judge/", {"judge": judge.pk})

    assert response.status_code == 200 and len(enqueued) == 1
    html = response.content.decode()
    assert 'data-pending="1"' in html and "Judging…" in html


def test_a_refused_request_answers_with_the_reason_in_the_panel(logged_in, owner, workspace, connections):
    from judging.services import judge_config_create

    same_family = judge_config_create(workspace=workspace, user=owner, name="Same", model="cands::gpt-4o")
    round_ = answered_round(judged_group(workspace, owner, count=2), owner, ["a", "b"])

    response = logged_in.post(f"/judging/rounds/{round_.pk}/judge/", {"judge": same_family.pk})

    assert response.status_code == 400
    assert "may not grade its own family" in response.content.decode()


def test_the_editor_makes_a_multiclass_classification_judge(logged_in, workspace, fake_llm, connections):
    model = f"{JUDGE}::{fake_llm.model()}"
    fields = {
        "kind": "multiclass_classification",
        "criteria": "What is the tone of the answer about {{topic}}?",
        "categories": "friendly: warm\nneutral: plain\nrude: dismissive",
        "uncertainty": "unknown",
        "include_reasoning": "on",
        "input_columns": "topic",
    }

    response = logged_in.post(f"/w/{workspace.pk}/judges/new/", editor_post(model, [CORRECT.as_dict()], **fields))

    judge = JudgeConfig.objects.get(name="Careful")
    assert response.status_code == 302 and judge.kind == "multiclass_classification"
    assert [c["name"] for c in judge.classification["categories"]] == ["friendly", "neutral", "rude"]
    assert judge.classification["categories"][0]["description"] == "warm" and judge.input_columns == ["topic"]
    html = logged_in.get(f"/judges/{judge.pk}/edit/").content.decode()
    assert "friendly: warm" in html and 'value="topic"' in html


def test_a_binary_classification_judge_without_its_categories_is_refused_on_the_page(
    logged_in, workspace, fake_llm, connections
):
    model = f"{JUDGE}::{fake_llm.model()}"
    fields = {"kind": "binary_classification", "criteria": "Is it concise?", "target": "concise"}

    response = logged_in.post(f"/w/{workspace.pk}/judges/new/", editor_post(model, [CORRECT.as_dict()], **fields))

    assert response.status_code == 200 and not JudgeConfig.objects.exists()
    assert "target and non_target: name both categories" in response.content.decode()
