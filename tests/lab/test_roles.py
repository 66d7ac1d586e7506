"""Roles: owners manage members and connections, editors run comparisons, viewers read and vote."""

import pytest

from lab.models import Membership, Role
from tests.fixtures.factories import add_member

pytestmark = pytest.mark.django_db


def test_a_viewer_cannot_create_a_connection(api_for, workspace):
    viewer = add_member(workspace, "vera", Role.VIEWER)
    response = api_for(viewer).post(
        f"/api/v1/workspaces/{workspace.pk}/connections/", {"name": "mine", "kind": "simulated"}, format="json"
    )
    assert response.status_code == 403
    assert not workspace.connections.filter(name="mine").exists()


def test_a_viewer_can_read_connections_without_keys(api_for, workspace):
    viewer = add_member(workspace, "vera", Role.VIEWER)
    response = api_for(viewer).get(f"/api/v1/workspaces/{workspace.pk}/connections/")
    assert response.status_code == 200
    assert [c["name"] for c in response.json()["results"]] == ["simulated"]


def test_an_editor_cannot_add_members(api_for, workspace):
    editor = add_member(workspace, "eddie", Role.EDITOR)
    add_member(workspace, "newbie", Role.VIEWER).memberships.all().delete()
    response = api_for(editor).post(
        f"/api/v1/workspaces/{workspace.pk}/members/", {"username": "newbie", "role": "viewer"}, format="json"
    )
    assert response.status_code == 403
    assert not workspace.memberships.filter(user__username="newbie").exists()


def test_an_owner_adds_an_existing_user_by_username_with_a_role(api, workspace):
    other = add_member(workspace, "olga", Role.VIEWER)
    other.memberships.all().delete()
    response = api.post(f"/api/v1/workspaces/{workspace.pk}/members/", {"username": "olga", "role": "editor"})
    assert response.status_code == 201
    assert response.json()["role"] == "editor"
    assert Membership.objects.get(user=other, workspace=workspace).role == Role.EDITOR


def test_adding_a_member_again_changes_their_role(api, workspace):
    add_member(workspace, "vera", Role.VIEWER)
    response = api.post(f"/api/v1/workspaces/{workspace.pk}/members/", {"username": "vera", "role": "editor"})
    assert response.status_code == 201
    assert workspace.memberships.get(user__username="vera").role == Role.EDITOR


def test_the_last_owner_cannot_demote_themselves(api, workspace, owner):
    response = api.post(f"/api/v1/workspaces/{workspace.pk}/members/", {"username": owner.username, "role": "viewer"})
    assert response.status_code == 400
    assert "role" in response.json()


def test_an_owner_creates_a_connection_and_an_editor_cannot_delete_it(api, api_for, workspace):
    created = api.post(
        f"/api/v1/workspaces/{workspace.pk}/connections/",
        {"name": "local", "kind": "openai_compatible", "base_url": "http://127.0.0.1:9/v1"},
        format="json",
    )
    assert created.status_code == 201
    editor = add_member(workspace, "eddie", Role.EDITOR)
    url = f"/api/v1/workspaces/{workspace.pk}/connections/{created.json()['id']}/"
    assert api_for(editor).delete(url).status_code == 403
    assert api.delete(url).status_code == 204
