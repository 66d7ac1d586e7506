"""`manage.py experiment run` with provider variables set: the person's own key runs their file on a connection private
to them, and the team's connections stay exactly as they were (issue 38, item 5)."""

from __future__ import annotations

import json
import uuid

import pytest
from django.core.exceptions import ValidationError

from judging.services import judge_config_create
from lab.models import Action, AuditEntry, Connection
from lab.services import connection_create
from tests.fixtures.experiments import run_command, sample
from tests.fixtures.judging_factories import KEY

pytestmark = pytest.mark.django_db(transaction=True)

TEAM_KEY = "sk-team-0123456789abcdef"


def reply(score: int) -> dict:
    return {"text": json.dumps({"metrics": {"Overall": {"reason": "Clear and complete steps.", "score": score}}})}


@pytest.fixture
def team_openai(workspace, owner):
    """The workspace's shared `openai` connection, made by its owner through the service Settings and the API use."""
    return connection_create(
        workspace=workspace,
        name="openai",
        kind="openai",
        base_url="http://127.0.0.1:9/v1",
        api_key=TEAM_KEY,
        actor=owner,
    )


def shared_rows(workspace) -> list[dict]:
    """Every column of every team connection, the encrypted key included."""
    return list(Connection.objects.filter(workspace=workspace).shared().order_by("pk").values())


def test_a_run_with_provider_variables_leaves_the_team_s_connections_byte_identical_and_the_log_names_the_person(
    monkeypatch, fake_llm, workspace, owner, editor, team_openai, client
):
    url = fake_llm.url("v1", id=uuid.uuid4().hex[:10])
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    fake_llm.script("gpt-4o", reply(5), url=url)
    before = shared_rows(workspace)
    logged_before = AuditEntry.objects.count()

    ran = run_command("run", str(sample("toor/toor.experiment.yaml")), "--user", "editor")

    assert ran.code == 0, ran.err + ran.out
    assert shared_rows(workspace) == before
    assert team_openai.api_key() == Connection.objects.get(pk=team_openai.pk).api_key() == TEAM_KEY
    # The run went to the person's server with their key, through their private connection.
    mine = Connection.objects.get(workspace=workspace, owner=editor)
    assert (mine.name, mine.kind, mine.base_url, mine.api_key()) == ("openai-editor", "openai", url, KEY)
    assert fake_llm.requests("gpt-4o-mini", url=url)
    assert "Connection openai-editor (private, for openai: models) created" in ran.out
    # Every entry the run wrote names the person; none is about a team connection.
    entries = list(AuditEntry.objects.order_by("pk")[logged_before:])
    assert [(e.action, e.target_name, e.actor, e.actor_name) for e in entries] == [
        (Action.CONNECTION_CREATED, "openai-editor", editor, "editor")
    ]
    client.force_login(owner)
    assert ">editor<" in client.get(f"/w/{workspace.pk}/audit/").content.decode()

    # A second run with a new key changes only the private connection, again by the person.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-mine-rotated-0123456789")
    assert run_command("run", str(sample("toor/toor.experiment.yaml")), "--user", "editor", "--dry-run").code == 0
    assert shared_rows(workspace) == before
    rotated = AuditEntry.objects.get(action=Action.CONNECTION_KEY_ROTATED)
    assert (rotated.target_id, rotated.actor) == (str(mine.pk), editor)


def test_a_private_connection_is_seen_only_by_its_owner(monkeypatch, fake_llm, workspace, owner, editor, client):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.url("v1", id=uuid.uuid4().hex[:10]))
    assert run_command("run", str(sample("toor/toor.experiment.yaml")), "--user", "editor", "--dry-run").code == 0
    mine = Connection.objects.get(owner=editor)

    client.force_login(owner)
    listed = client.get(f"/api/v1/workspaces/{workspace.pk}/connections/").json()["results"]
    assert mine.name not in [c["name"] for c in listed]
    assert client.get(f"/api/v1/workspaces/{workspace.pk}/connections/{mine.pk}/").status_code == 404
    assert mine.name not in client.get(f"/w/{workspace.pk}/settings/").content.decode()

    client.force_login(editor)
    listed = client.get(f"/api/v1/workspaces/{workspace.pk}/connections/").json()["results"]
    assert {c["name"]: c["private"] for c in listed}[mine.name] is True


def test_a_user_who_is_not_a_member_is_refused(workspace, stranger):
    ran = run_command(
        "run",
        str(sample("toor/toor.experiment.yaml")),
        "--user",
        stranger.username,
        "--workspace",
        "Team A",
        "--dry-run",
    )

    assert ran.code == 2
    assert f"--user: '{stranger.username}' is not a member of this workspace." in ran.err


def test_another_member_cannot_run_a_comparison_on_someone_s_private_connection(
    monkeypatch, fake_llm, workspace, editor, api
):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.url("v1", id=uuid.uuid4().hex[:10]))
    assert run_command("run", str(sample("toor/toor.experiment.yaml")), "--user", "editor", "--dry-run").code == 0

    body = {
        "workspace": workspace.pk,
        "title": "On her key",
        "mode": "models",
        "variants": [
            {"label": "a", "model": "openai-editor::gpt-4o-mini", "prompt": "Hi"},
            {"label": "b", "model": "simulated::instant", "prompt": "Hi"},
        ],
    }
    response = api.post("/api/v1/groups/", body, format="json")

    assert response.status_code == 400
    assert response.json()["variants"] == [
        "Variant 1 (a): model: the connection openai-editor is private to another member."
    ]


def test_a_team_judge_cannot_use_a_private_connection(monkeypatch, fake_llm, workspace, editor, owner):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.url("v1", id=uuid.uuid4().hex[:10]))
    assert run_command("run", str(sample("toor/toor.experiment.yaml")), "--user", "editor", "--dry-run").code == 0

    with pytest.raises(ValidationError) as refused:
        judge_config_create(workspace=workspace, user=editor, name="On my key", model="openai-editor::gpt-4o")

    assert refused.value.message_dict["model"] == [
        "A judge cannot use a connection private to one person (made from their environment)."
    ]
