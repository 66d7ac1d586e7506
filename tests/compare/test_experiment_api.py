"""The experiment API: estimate a file (dry run), start one, read its progress and averages; errors name the file's
entries; another workspace's experiment is a 404."""

import pytest
from django.utils import timezone

from compare.models import CompareGroup, Output, OutputStatus, RoundStatus
from tests.fixtures.experiments import sample

pytestmark = pytest.mark.django_db


def body(workspace, name: str = "minimal.yaml", **fields) -> dict:
    return {"workspace": workspace.pk, "file": sample(name).read_text(), "name": name, **fields}


def test_a_dry_run_estimates_and_saves_nothing(api, workspace, connections):
    response = api.post("/api/v1/experiments/", body(workspace, dry_run=True), format="json")
    assert response.status_code == 200, response.json()
    estimate = response.json()["estimate"]
    assert (estimate["calls"], estimate["answers"]["calls"], estimate["evaluations"]["calls"]) == (2, 1, 1)
    assert response.json()["group"] is None and not CompareGroup.objects.exists()


def test_an_experiment_is_started_and_read_back(api, workspace, connections):
    response = api.post("/api/v1/experiments/", body(workspace, "classifier.yaml"), format="json")
    assert response.status_code == 201, response.json()
    group = CompareGroup.objects.get(pk=response.json()["group"])
    assert group.mode == "custom" and list(group.rounds.values_list("status", flat=True)) == [RoundStatus.QUEUED] * 2
    detail = api.get(f"/api/v1/experiments/{group.pk}/").json()
    assert (detail["progress"]["done"], detail["progress"]["total"]) == (0, 8)
    assert [a["key"] for a in detail["averages"]["row"]] == ["love-it", "broke"]


def test_a_budget_over_models_without_a_price_is_a_400_naming_it(api, workspace, connections):
    # The fake models have no price on these connections: a cap could not hold their calls.
    response = api.post("/api/v1/experiments/", body(workspace, "classifier.yaml", budget="0.5"), format="json")
    assert response.status_code == 400
    assert "so a budget cap cannot hold them" in response.json()["budget"][0]
    assert not CompareGroup.objects.exists()


def test_answers_not_yet_given_count_as_unfinished_not_failed(api, workspace, connections):
    group = api.post("/api/v1/experiments/", body(workspace, "classifier.yaml"), format="json").json()["group"]
    first, second, *_ = Output.objects.filter(round__group=group).order_by("pk")
    Output.objects.filter(pk=first.pk).update(status=OutputStatus.ERROR, finished_at=timezone.now())
    Output.objects.filter(pk=second.pk).update(status=OutputStatus.RUNNING)
    overall = api.get(f"/api/v1/experiments/{group}/").json()["averages"]["row"]
    assert [(a["answers"], a["failed"], a["unfinished"]) for a in overall] == [(2, 1, 1), (2, 0, 2)]


def test_a_broken_file_is_a_400_naming_its_entries(api, workspace, connections):
    response = api.post("/api/v1/experiments/", body(workspace, "broken/bad_scale.yaml"), format="json")
    assert response.status_code == 400
    assert response.json()["file"] == [
        "broken/bad_scale.yaml: evaluation: type: '1-7' is not a type; the types are binary, 1-3, 1-5, 1-10, "
        "binary-classification, multiclass-classification"
    ]


def test_the_files_a_config_names_come_with_it(api, workspace, connections):
    folder = sample("with_files")
    files = {
        path: (folder / path).read_text()
        for path in ["prompts/friendly.txt", "prompts/evaluator.txt", "data/tickets.yaml", "data/more.csv"]
    }
    payload = {**body(workspace, "with_files/experiment.json", format="json", dry_run=True), "files": files}
    response = api.post("/api/v1/experiments/", payload, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["estimate"]["answers"]["calls"] == 9


def test_another_workspaces_experiment_is_not_found(api, api_for, workspace, connections, stranger):
    group = api.post("/api/v1/experiments/", body(workspace), format="json").json()["group"]
    client = api_for(stranger)
    assert client.get(f"/api/v1/experiments/{group}/").status_code == 404
    assert client.post("/api/v1/experiments/", body(workspace, dry_run=True), format="json").status_code == 400
