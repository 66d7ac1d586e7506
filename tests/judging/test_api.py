"""The judging API: judge CRUD per workspace (owners and editors write, viewers read), judging a round on demand
(202), the verdicts of a round, a comparison's judge, and 400s that name the field."""

import pytest

from compare.models import Round, RoundStatus
from judging.models import GroupJudge, JudgeConfig, Verdict, VerdictStatus
from judging.rubric import DEFAULT_METRICS
from tests.fixtures.judging_factories import JUDGE, answered_round, judged_group, make_judge


@pytest.fixture
def judge_model(fake_llm):
    return f"{JUDGE}::{fake_llm.model()}"


def judges_url(workspace, *rest) -> str:
    return f"/api/v1/workspaces/{workspace.pk}/judges/" + "".join(f"{part}/" for part in rest)


def test_an_editor_creates_a_judge_with_the_default_rubric(api_for, editor, workspace, connections, judge_model):
    response = api_for(editor).post(judges_url(workspace), {"name": "Strict", "model": judge_model}, format="json")

    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["scale"], body["mode"], body["prompt"], body["seed"]) == ("1-5", "relative", "", None)
    assert [m["name"] for m in body["metrics"]] == [m.name for m in DEFAULT_METRICS]
    assert JudgeConfig.objects.get(pk=body["id"]).created_by == editor


def test_a_viewer_reads_judges_but_cannot_write(api_for, viewer, owner, workspace, fake_llm, connections, judge_model):
    judge, _ = make_judge(workspace, owner, fake_llm)
    client = api_for(viewer)

    assert client.get(judges_url(workspace)).json()["results"][0]["id"] == judge.pk
    assert client.get(judges_url(workspace, judge.pk)).status_code == 200
    assert client.post(judges_url(workspace), {"name": "X", "model": judge_model}, format="json").status_code == 403
    assert client.patch(judges_url(workspace, judge.pk), {"name": "Y"}, format="json").status_code == 403
    assert client.delete(judges_url(workspace, judge.pk)).status_code == 403


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"scale": "1-7"}, "scale", '"1-7" is not a valid choice.'),
        ({"mode": "vibes"}, "mode", '"vibes" is not a valid choice.'),
        ({"model": "nowhere::gpt"}, "model", "This workspace has no connection named “nowhere”"),
        ({"model": "gpt-4o"}, "model", "is not a model id"),
        ({"prompt": "Judge {{response}} to {{prompt}}."}, "prompt", "must contain {{scoring_scale}}"),
        ({"prompt": "{{prompt}} {{response}} {{metrics}} {{scoring_scale}} {{answer}}"}, "prompt", "{{answer}} is not"),
        ({"metrics": []}, "metrics", "A rubric has 1 to 10 metrics; this has 0."),
        (
            {"metrics": [{"name": "A", "weight": 1, "low": "x", "high": "y"}] * 2},
            "metrics",
            "Metric 2 (A): name: metric 1 already has this name.",
        ),
        ({"metrics": [{"name": "A", "weight": 0, "low": "x", "high": "y"}]}, "metrics", "weight: a number above 0"),
        ({"seed": -1}, "seed", "greater than or equal to 0"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(api, workspace, connections, judge_model, body, field, message):
    response = api.post(judges_url(workspace), {"name": "J", "model": judge_model, **body}, format="json")

    assert response.status_code == 400
    errors = response.json()[field]
    assert any(message in str(error) for error in errors), errors


def test_a_binary_judge_needs_no_scale_or_metrics_placeholders(api, workspace, connections, judge_model):
    body = {
        "name": "Pass/fail",
        "model": judge_model,
        "scale": "binary",
        "prompt": "Is {{response}} a fine reply to {{prompt}}?",
    }

    assert api.post(judges_url(workspace), body, format="json").status_code == 201


def test_a_judge_name_is_unique_in_its_workspace(api, workspace, connections, judge_model):
    api.post(judges_url(workspace), {"name": "Twice", "model": judge_model}, format="json")

    response = api.post(judges_url(workspace), {"name": "Twice", "model": judge_model}, format="json")

    assert response.status_code == 400 and "already has a judge with this name" in response.json()["name"][0]


def test_patch_changes_a_judge_and_delete_keeps_its_verdicts(api, owner, workspace, fake_llm, connections):
    judge, _ = make_judge(workspace, owner, fake_llm)
    round_ = answered_round(judged_group(workspace, owner, count=2), owner, ["a", "b"])
    verdict = Verdict.objects.create(
        round=round_, judge=judge, judge_name=judge.name, judge_model=judge.model, scale="1-5", mode="relative"
    )

    patched = api.patch(judges_url(workspace, judge.pk), {"scale": "1-10", "mode": "pairwise"}, format="json")
    deleted = api.delete(judges_url(workspace, judge.pk))

    assert patched.status_code == 200 and (patched.json()["scale"], patched.json()["mode"]) == ("1-10", "pairwise")
    assert deleted.status_code == 204 and not JudgeConfig.objects.filter(pk=judge.pk).exists()
    verdict.refresh_from_db()
    assert verdict.judge is None and verdict.judge_name == judge.name


def test_judging_a_round_on_demand_is_accepted_and_queued(
    api_for, editor, owner, workspace, fake_llm, connections, django_capture_on_commit_callbacks
):
    judge, _ = make_judge(workspace, owner, fake_llm)
    round_ = answered_round(judged_group(workspace, owner, count=2), owner, ["a", "b"])

    with django_capture_on_commit_callbacks() as enqueued:
        response = api_for(editor).post(f"/api/v1/rounds/{round_.pk}/judge/", {"judge": judge.pk}, format="json")

    assert response.status_code == 202
    assert (response.json()["status"], response.json()["judge"], response.json()["round"]) == (
        "queued",
        judge.pk,
        round_.pk,
    )
    assert len(enqueued) == 1
    assert Verdict.objects.get().requested_by == editor


def test_without_a_judge_in_the_body_the_comparisons_judge_is_used(api, owner, workspace, fake_llm, connections):
    judge, _ = make_judge(workspace, owner, fake_llm)
    group = judged_group(workspace, owner, count=2)
    round_ = answered_round(group, owner, ["a", "b"])

    assert api.post(f"/api/v1/rounds/{round_.pk}/judge/", {}, format="json").json() == {
        "judge": ["This comparison names no judge; choose one."]
    }
    assert api.put(f"/api/v1/groups/{group.pk}/judge/", {"judge": judge.pk}, format="json").status_code == 200
    response = api.post(f"/api/v1/rounds/{round_.pk}/judge/", {}, format="json")

    assert response.status_code == 202 and response.json()["judge"] == judge.pk
    assert api.get(f"/api/v1/groups/{group.pk}/judge/").json() == {"judge": judge.pk}


def test_asking_again_while_queued_returns_the_same_verdict_and_after_it_finished_rejudges(
    api, owner, workspace, fake_llm, connections
):
    judge, _ = make_judge(workspace, owner, fake_llm)
    round_ = answered_round(judged_group(workspace, owner, count=2), owner, ["a", "b"])
    url = f"/api/v1/rounds/{round_.pk}/judge/"

    first = api.post(url, {"judge": judge.pk}, format="json").json()
    second = api.post(url, {"judge": judge.pk}, format="json").json()
    Verdict.objects.filter(pk=first["id"]).update(status=VerdictStatus.FAILED, error="old")
    third = api.post(url, {"judge": judge.pk}, format="json").json()

    assert first["id"] == second["id"] == third["id"]
    assert (third["status"], third["error"]) == ("queued", "")
    assert Verdict.objects.count() == 1


def test_a_round_still_running_cannot_be_judged(api, owner, workspace, fake_llm, connections):
    judge, _ = make_judge(workspace, owner, fake_llm)
    round_ = answered_round(judged_group(workspace, owner, count=2), owner, ["a", "b"])
    Round.objects.filter(pk=round_.pk).update(status=RoundStatus.RUNNING)

    response = api.post(f"/api/v1/rounds/{round_.pk}/judge/", {"judge": judge.pk}, format="json")

    assert response.status_code == 400 and "still running" in response.json()["round"][0]


def test_a_viewer_cannot_ask_for_a_verdict(api_for, viewer, owner, workspace, fake_llm, connections):
    judge, _ = make_judge(workspace, owner, fake_llm)
    round_ = answered_round(judged_group(workspace, owner, count=2), owner, ["a", "b"])

    response = api_for(viewer).post(f"/api/v1/rounds/{round_.pk}/judge/", {"judge": judge.pk}, format="json")

    assert response.status_code == 403


def test_naming_a_same_family_judge_for_a_comparison_is_a_400_with_the_reason(api, owner, workspace, connections):
    from judging.services import judge_config_create

    judge = judge_config_create(workspace=workspace, user=owner, name="Same", model="cands::gpt-4o")
    group = judged_group(workspace, owner, count=2)

    response = api.put(f"/api/v1/groups/{group.pk}/judge/", {"judge": judge.pk}, format="json")

    assert response.status_code == 400
    assert "are both openai models; a judge may not grade its own family" in response.json()["judge"][0]
    assert not GroupJudge.objects.exists()


def test_the_diagnostics_endpoint_reports_the_judges_figures(api, owner, workspace, fake_llm, connections):
    judge, _ = make_judge(workspace, owner, fake_llm)

    body = api.get(judges_url(workspace, judge.pk, "diagnostics")).json()

    assert body["verdicts"] == 0 and body["position_bias"] == {
        "judgements": 0,
        "flipped": 0,
        "share": None,
        "first_favoured": 0,
        "second_favoured": 0,
        "tie_changes": 0,
        "p_value": None,
        "favoured": None,
    }
    assert body["verbosity"]["rho"] is None
