"""Personal API tokens: made and named on the settings page (the key shown once, only a hash stored), listed with
when they were made and last used, scoped read-only or read-write, revoked; a removed member's token loses the
workspace at once."""

import re

import pytest
from rest_framework.test import APIClient

from lab.models import Membership, Role
from lab.tokens.models import ApiToken, Scope, key_hash
from lab.tokens.services import api_token_create
from tests.fixtures.factories import PASSWORD

pytestmark = pytest.mark.django_db


def token_client(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def test_the_page_shows_a_new_key_once_and_stores_only_its_hash(client, owner):
    client.force_login(owner)
    made = client.post("/settings/tokens/", {"name": "CI", "scope": Scope.READ}).content.decode()
    key = re.search(r'id="new-token-key">([^<]+)<', made).group(1)
    token = ApiToken.objects.get(user=owner)
    assert token.name == "CI" and token.scope == Scope.READ
    assert token.key_hash == key_hash(key) and key not in str(ApiToken.objects.values().get())
    listed = client.get("/settings/tokens/").content.decode()
    assert "CI" in listed and token.prefix in listed and key not in listed and "never" in listed


def test_a_token_lists_when_it_was_last_used(owner, workspace):
    token, key = api_token_create(user=owner, name="laptop")
    assert token_client(key).get("/api/v1/workspaces/").status_code == 200
    token.refresh_from_db()
    assert token.last_used_at is not None and token.last_used_at >= token.created_at


def test_a_read_only_token_reads_but_gets_403_on_writes(owner, workspace):
    _, key = api_token_create(user=owner, name="dashboards", scope=Scope.READ)
    client = token_client(key)
    assert client.get(f"/api/v1/workspaces/{workspace.pk}/connections/").status_code == 200
    response = client.post("/api/v1/workspaces/", {"name": "Not allowed"}, format="json")
    assert response.status_code == 403 and "read-only" in response.json()["detail"]
    denied = client.delete(f"/api/v1/workspaces/{workspace.pk}/connections/{workspace.connections.get().pk}/")
    assert denied.status_code == 403
    assert workspace.connections.exists()


def test_a_read_write_token_writes(owner):
    _, key = api_token_create(user=owner, name="scripts", scope=Scope.WRITE)
    assert token_client(key).post("/api/v1/workspaces/", {"name": "By script"}, format="json").status_code == 201


def test_a_revoked_token_gets_401(client, owner, workspace):
    token, key = api_token_create(user=owner, name="old", scope=Scope.WRITE)
    client.force_login(owner)
    assert client.post(f"/settings/tokens/{token.pk}/revoke/").status_code == 302
    api = token_client(key)
    assert api.get("/api/v1/workspaces/").status_code == 401
    response = api.post("/api/v1/workspaces/", {"name": "Nope"}, format="json")
    assert response.status_code == 401 and "revoked" in response.json()["detail"]


def test_someone_else_cannot_revoke_my_token(client, owner, stranger):
    token, key = api_token_create(user=owner, name="mine")
    client.force_login(stranger)
    assert client.post(f"/settings/tokens/{token.pk}/revoke/").status_code == 404
    _, stranger_key = api_token_create(user=stranger, name="theirs")
    assert token_client(stranger_key).delete(f"/api/v1/tokens/{token.pk}/").status_code == 404
    assert token_client(key).get("/api/v1/workspaces/").status_code == 200


def test_removing_a_member_revokes_their_access_at_once(owner, editor, workspace, api):
    _, key = api_token_create(user=editor, name="editor's script")
    member_api = token_client(key)
    url = f"/api/v1/workspaces/{workspace.pk}/connections/"
    assert member_api.get(url).status_code == 200
    assert api.delete(f"/api/v1/workspaces/{workspace.pk}/members/{editor.pk}/").status_code == 204
    assert member_api.get(url).status_code == 404
    assert member_api.post(url, {"name": "sneaky", "kind": "simulated"}, format="json").status_code == 404
    assert workspace.pk not in [w["id"] for w in member_api.get("/api/v1/workspaces/").json()["results"]]
    assert not Membership.objects.filter(user=editor, workspace=workspace).exists()


def test_the_last_owner_cannot_be_removed(owner, workspace, api):
    response = api.delete(f"/api/v1/workspaces/{workspace.pk}/members/{owner.pk}/")
    assert response.status_code == 400 and "role" in response.json()
    assert Membership.objects.filter(user=owner, workspace=workspace, role=Role.OWNER).exists()


def test_the_login_endpoint_issues_a_named_token_listed_with_the_others(client, owner, workspace):
    response = client.post("/api/v1/auth/token/", {"username": "owner", "password": PASSWORD})
    key = response.json()["token"]
    token = ApiToken.objects.get(user=owner)
    assert token.key_hash == key_hash(key) and token.scope == Scope.WRITE and token.name.startswith("Signed in")
    assert token_client(key).get("/api/v1/workspaces/").json()["count"] == 1


def test_the_api_makes_lists_and_revokes_tokens(api, owner):
    made = api.post("/api/v1/tokens/", {"name": "cli"}, format="json")
    assert made.status_code == 201 and made.json()["scope"] == Scope.READ
    key = made.json()["key"]
    listed = api.get("/api/v1/tokens/").json()["results"]
    assert [t["name"] for t in listed] == ["cli"] and "key" not in listed[0]
    assert api.delete(f"/api/v1/tokens/{made.json()['id']}/").status_code == 204
    assert token_client(key).get("/api/v1/workspaces/").status_code == 401


def test_a_token_needs_a_name(api):
    response = api.post("/api/v1/tokens/", {"name": "", "scope": "write"}, format="json")
    assert response.status_code == 400 and "name" in response.json()


def test_removing_a_member_on_the_settings_page_cuts_off_their_session_and_tokens(client, owner, editor, workspace):
    _, key = api_token_create(user=editor, name="editor's script")
    member_session = APIClient()
    member_session.force_login(editor)
    settings_page = f"/w/{workspace.pk}/settings/"
    assert member_session.get(settings_page).status_code == 200
    client.force_login(owner)
    client.post(f"{settings_page}members/{editor.pk}/", {"role": "viewer"})
    assert Membership.objects.get(user=editor, workspace=workspace).role == Role.VIEWER
    client.post(f"{settings_page}members/{editor.pk}/", {"remove": "1"})
    assert member_session.get(settings_page).status_code == 404
    assert token_client(key).get(f"/api/v1/workspaces/{workspace.pk}/").status_code == 404
