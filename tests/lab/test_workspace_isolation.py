"""A user of one workspace sees nothing of another: every scoped endpoint answers 404."""

import pytest


@pytest.mark.django_db
def test_workspace_detail_of_another_workspace_is_404(api_for, workspace, stranger):
    response = api_for(stranger).get(f"/api/v1/workspaces/{workspace.pk}/")
    assert response.status_code == 404


@pytest.mark.django_db
def test_workspace_list_shows_only_mine_with_my_role(api, workspace, stranger):
    response = api.get("/api/v1/workspaces/")
    assert response.status_code == 200
    assert [(w["name"], w["role"]) for w in response.json()["results"]] == [("Team A", "owner")]
