"""Bad input to every lab endpoint is a 400 that names the field."""

import pytest

pytestmark = pytest.mark.django_db


def assert_field_error(response, field: str) -> None:
    assert response.status_code == 400, response.content
    assert field in response.json(), response.json()
    assert response.json()[field], response.json()


def test_workspace_create_needs_a_name(api):
    assert_field_error(api.post("/api/v1/workspaces/", {"name": ""}, format="json"), "name")
    assert_field_error(api.post("/api/v1/workspaces/", {}, format="json"), "name")


def test_workspace_create_makes_me_the_owner(api):
    response = api.post("/api/v1/workspaces/", {"name": "Research"}, format="json")
    assert response.status_code == 201
    assert response.json()["role"] == "owner"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"role": "editor"}, "username"),
        ({"username": "nobody-here", "role": "editor"}, "username"),
        ({"username": "owner", "role": "admin"}, "role"),
    ],
)
def test_member_add_rejects_bad_input(api, workspace, body, field):
    assert_field_error(api.post(f"/api/v1/workspaces/{workspace.pk}/members/", body, format="json"), field)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"kind": "simulated"}, "name"),
        ({"name": "has spaces", "kind": "simulated"}, "name"),
        ({"name": "x", "kind": "telepathy"}, "kind"),
        ({"name": "x", "kind": "openai"}, "api_key"),
        ({"name": "x", "kind": "openai_compatible"}, "base_url"),
        ({"name": "x", "kind": "openai_compatible", "base_url": "not a url"}, "base_url"),
        ({"name": "x", "kind": "simulated", "max_concurrency": 0}, "max_concurrency"),
        ({"name": "x", "kind": "simulated", "rpm": "many"}, "rpm"),
        ({"name": "x", "kind": "simulated", "tpm": -1}, "tpm"),
        ({"name": "simulated", "kind": "simulated"}, "name"),
    ],
)
def test_connection_create_rejects_bad_input(api, workspace, body, field):
    url = f"/api/v1/workspaces/{workspace.pk}/connections/"
    assert_field_error(api.post(url, body, format="json"), field)


def test_a_connection_keeps_its_tokens_per_minute_budget(api, workspace):
    url = f"/api/v1/workspaces/{workspace.pk}/connections/"
    created = api.post(url, {"name": "budget", "kind": "simulated", "tpm": 40_000}, format="json")
    assert created.status_code == 201 and created.json()["tpm"] == 40_000
    changed = api.patch(f"{url}{created.json()['id']}/", {"tpm": 0}, format="json")
    assert changed.status_code == 200 and changed.json()["tpm"] == 0  # 0: no token budget


def test_connection_update_rejects_bad_input(api, workspace):
    connection = workspace.connections.get()
    url = f"/api/v1/workspaces/{workspace.pk}/connections/{connection.pk}/"
    assert_field_error(api.patch(url, {"max_concurrency": -1}, format="json"), "max_concurrency")


def test_token_needs_username_and_password(client, owner):
    response = client.post("/api/v1/auth/token/", {"username": "owner"})
    assert_field_error(response, "password")
    wrong = client.post("/api/v1/auth/token/", {"username": "owner", "password": "wrong"})
    assert wrong.status_code == 400
    assert "non_field_errors" in wrong.json()
