"""A user of one workspace sees nothing of another: every scoped endpoint and page answers 404."""

import pytest
from django.test import Client

from lab.models import Connection

pytestmark = pytest.mark.django_db


def scoped_api_calls(workspace, connection):
    w, c = workspace.pk, connection.pk
    member = workspace.memberships.get().user_id
    return [
        ("get", f"/api/v1/workspaces/{w}/", None),
        ("get", f"/api/v1/workspaces/{w}/members/", None),
        ("post", f"/api/v1/workspaces/{w}/members/", {"username": "stranger", "role": "owner"}),
        ("patch", f"/api/v1/workspaces/{w}/members/{member}/", {"role": "viewer"}),
        ("delete", f"/api/v1/workspaces/{w}/members/{member}/", None),
        ("get", f"/api/v1/workspaces/{w}/connections/", None),
        ("post", f"/api/v1/workspaces/{w}/connections/", {"name": "x", "kind": "simulated"}),
        ("get", f"/api/v1/workspaces/{w}/connections/{c}/", None),
        ("patch", f"/api/v1/workspaces/{w}/connections/{c}/", {"rpm": 5}),
        ("delete", f"/api/v1/workspaces/{w}/connections/{c}/", None),
        ("post", f"/api/v1/workspaces/{w}/worker-check/", None),
    ]


def test_every_workspace_endpoint_of_another_workspace_is_404(api_for, workspace, stranger):
    connection = workspace.connections.get(name="simulated")
    client = api_for(stranger)
    for method, url, body in scoped_api_calls(workspace, connection):
        response = getattr(client, method)(url, body, format="json")
        assert response.status_code == 404, (method, url, response.status_code)
    assert Connection.objects.filter(pk=connection.pk, rpm=connection.rpm).exists()
    assert not workspace.memberships.filter(user=stranger).exists()
    assert workspace.memberships.get().role == "owner"


def test_my_connection_id_under_another_workspace_path_is_404(api_for, workspace, stranger):
    """Ids in the path are checked together: B's workspace with A's connection is still 404."""
    mine = stranger.memberships.get().workspace
    connection = workspace.connections.get(name="simulated")
    response = api_for(stranger).get(f"/api/v1/workspaces/{mine.pk}/connections/{connection.pk}/")
    assert response.status_code == 404


def test_a_member_of_another_workspace_under_my_workspace_path_is_404(api_for, client, owner, workspace, stranger):
    """An owner naming someone who is not a member of their workspace (here another workspace's owner) gets 404,
    by the API and by the settings page, and that person's own membership is untouched."""
    theirs = stranger.memberships.get()
    assert (
        api_for(owner)
        .patch(f"/api/v1/workspaces/{workspace.pk}/members/{stranger.pk}/", {"role": "viewer"})
        .status_code
        == 404
    )
    assert api_for(owner).delete(f"/api/v1/workspaces/{workspace.pk}/members/{stranger.pk}/").status_code == 404
    client.force_login(owner)
    page = client.post(f"/w/{workspace.pk}/settings/members/{stranger.pk}/", {"remove": "1"})
    assert page.status_code == 404
    theirs.refresh_from_db()
    assert theirs.role == "owner"
    assert not workspace.memberships.filter(user=stranger).exists()


def test_every_workspace_page_of_another_workspace_is_404(workspace, stranger):
    connection = workspace.connections.get(name="simulated")
    client = Client()
    client.force_login(stranger)
    w = workspace.pk
    member = workspace.memberships.get().user_id
    pages = [
        ("post", f"/w/{w}/settings/members/{member}/"),
        ("get", f"/w/{w}/"),
        ("get", f"/w/{w}/settings/"),
        ("get", f"/w/{w}/switch/"),
        ("post", f"/w/{w}/settings/members/"),
        ("post", f"/w/{w}/settings/connections/"),
        ("post", f"/w/{w}/settings/connections/{connection.pk}/remove/"),
    ]
    for method, url in pages:
        assert getattr(client, method)(url).status_code == 404, url
    assert Connection.objects.filter(pk=connection.pk).exists()


def test_workspace_list_shows_only_mine_with_my_role(api, workspace, stranger):
    response = api.get("/api/v1/workspaces/")
    assert response.status_code == 200
    assert [(w["name"], w["role"]) for w in response.json()["results"]] == [("Team A", "owner")]


def test_anonymous_requests_are_refused(client, workspace):
    assert client.get(f"/api/v1/workspaces/{workspace.pk}/").status_code in (401, 403)
    assert client.get(f"/w/{workspace.pk}/settings/").status_code == 302
