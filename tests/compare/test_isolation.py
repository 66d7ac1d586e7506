"""Another workspace's comparisons, rounds and datasets are invisible: 404 everywhere, 400 when named in a body."""

import pytest

from compare.datasets.services import dataset_create
from tests.fixtures.compare_factories import INSTANT, make_group, start_round


@pytest.fixture
def theirs(workspace, owner):
    """A group, a round and a dataset of `workspace`, which the stranger is not a member of."""
    group = make_group(workspace, owner)
    round_ = start_round(group, owner)
    dataset = dataset_create(workspace=workspace, user=owner, name="Private", rows=[{"vars": {"a": 1}}])
    return group, round_, dataset


@pytest.mark.django_db
@pytest.mark.parametrize(
    "method, path",
    [
        ("get", "/api/v1/groups/{group}/"),
        ("post", "/api/v1/groups/{group}/runs/"),
        ("post", "/api/v1/groups/{group}/clone/"),
        ("get", "/api/v1/rounds/{round}/"),
        ("post", "/api/v1/rounds/{round}/cancel/"),
        ("get", "/api/v1/datasets/{dataset}/"),
    ],
)
def test_another_workspaces_objects_are_404(api_for, stranger, theirs, method, path):
    group, round_, dataset = theirs
    url = path.format(group=group.pk, round=round_.pk, dataset=dataset.pk)
    response = getattr(api_for(stranger), method)(url, {}, format="json")
    assert response.status_code == 404


@pytest.mark.django_db
def test_lists_show_nothing_of_another_workspace(api_for, stranger, theirs):
    client = api_for(stranger)
    assert client.get("/api/v1/groups/").json()["count"] == 0
    assert client.get("/api/v1/groups/", {"workspace": theirs[0].workspace_id}).json()["count"] == 0
    assert client.get("/api/v1/datasets/").json()["count"] == 0


@pytest.mark.django_db
def test_creating_in_another_workspace_is_a_400_on_the_workspace_field(api_for, stranger, workspace):
    body = {
        "workspace": workspace.pk,
        "mode": "models",
        "variants": [{"model": INSTANT, "prompt": "Hi"}, {"model": INSTANT, "prompt": "Hi"}],
    }
    response = api_for(stranger).post("/api/v1/groups/", body, format="json")
    assert response.status_code == 400
    assert response.json() == {"workspace": ["No such workspace."]}
    dataset = {"workspace": workspace.pk, "name": "Mine now", "rows": [{"vars": {"a": 1}}]}
    assert api_for(stranger).post("/api/v1/datasets/", dataset, format="json").json() == {
        "workspace": ["No such workspace."]
    }


@pytest.mark.django_db
def test_naming_another_workspaces_dataset_is_a_400_on_the_dataset_field(api_for, stranger, theirs):
    _, _, dataset = theirs
    client = api_for(stranger)
    mine = client.get("/api/v1/workspaces/").json()["results"][0]["id"]
    body = {
        "workspace": mine,
        "mode": "models",
        "dataset": dataset.pk,
        "variants": [{"model": INSTANT, "prompt": "{{a}}"}, {"model": INSTANT, "prompt": "{{a}}"}],
    }
    response = client.post("/api/v1/groups/", body, format="json")
    assert response.status_code == 400
    assert response.json() == {"dataset": ["No such dataset in this workspace."]}
    group = client.post("/api/v1/groups/", {**body, "dataset": None, "shared_variables": {"a": 1}}, format="json")
    runs = client.post(f"/api/v1/groups/{group.json()['id']}/runs/", {"dataset": dataset.pk}, format="json")
    assert runs.status_code == 400
    assert runs.json() == {"dataset": ["No such dataset in this workspace."]}
