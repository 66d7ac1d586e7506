"""A broken experiment file is reported whole: the file's own problems and the workspace's arrive in one pass, by
the API, the command line and the page alike."""

import pytest

from compare.models import CompareGroup
from tests.fixtures.experiments import run_command, sample

pytestmark = pytest.mark.django_db

FIVE = [
    "five_problems.yaml: colour: not a section of an experiment file",
    "five_problems.yaml: model-parameters[1] (sampled): maxOutputTokens: 'many' is not a whole number",
    "five_problems.yaml: timeout: seconds an answer may take",
    "five_problems.yaml: models[2] (nowhere:gpt-4.1): model: This workspace has no connection named “nowhere”",
    "five_problems.yaml: dataset[1] (no such rows): dataset: this workspace has no such dataset",
]


def assert_all_five(messages: list[str]) -> None:
    assert len(messages) == 5, messages
    for expected in FIVE:
        assert any(message.startswith(expected) for message in messages), (expected, messages)


def test_a_file_with_five_different_problems_reports_all_five_through_the_api(api, workspace, connections):
    text = sample("broken/five_problems.yaml").read_text()
    body = {"workspace": workspace.pk, "file": text, "name": "five_problems.yaml", "dry_run": True}
    response = api.post("/api/v1/experiments/", body, format="json")
    assert response.status_code == 400
    assert_all_five(response.json()["file"])


def test_the_command_lists_all_five_at_once(workspace, connections):
    ran = run_command("run", str(sample("broken/five_problems.yaml")), "--workspace", "Team A")
    assert ran.code == 2
    assert "The experiment has 5 problem(s) (listed above); nothing was run." in ran.err
    assert_all_five([line.split("/broken/", 1)[-1] for line in ran.err.splitlines() if "five_problems.yaml:" in line])
    assert not CompareGroup.objects.exists()


def test_the_upload_page_lists_all_five_at_once(client, owner, workspace, connections):
    client.force_login(owner)
    with sample("broken/five_problems.yaml").open("rb") as upload:
        response = client.post(f"/w/{workspace.pk}/experiments/estimate/", {"kind": "upload", "config": upload})
    assert response.status_code == 400
    assert_all_five(response.context["errors"])
