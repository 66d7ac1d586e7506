"""A comparison run over a test set from the pages: the editor's and the comparison page's dataset pickers, and
the refusals the page shows (a dataset of another workspace, an empty one, a row without a variable)."""

import json

import pytest

from compare.datasets.services import dataset_create
from compare.models import CompareGroup, Dataset
from tests.compare.test_pages_editor import editor_initial, save_body
from tests.fixtures.compare_factories import make_group
from tests.fixtures.factories import make_user, make_workspace

pytestmark = pytest.mark.django_db

TOPIC_PROMPTS = ["Write about {{topic}}.", "A haiku on {{topic}}."]


def post_json(client, url, body):
    return client.post(url, json.dumps(body), content_type="application/json")


def topics(workspace, owner, name="Topics", rows=({"topic": "tea"}, {"topic": "rain"}, {"topic": "bees"})):
    return dataset_create(workspace=workspace, user=owner, name=name, rows=[{"vars": r} for r in rows])


def topic_body(dataset) -> dict:
    variants = [
        {"label": label, "model": "simulated::instant", "prompt": p, "variables": {}}
        for label, p in zip("AB", TOPIC_PROMPTS, strict=True)
    ]
    return save_body(shared_variables={}, repeat=1, dataset=dataset.pk if dataset else None, variants=variants)


@pytest.fixture
def as_owner(client, owner):
    client.force_login(owner)
    return client


@pytest.fixture
def foreign_dataset(db):
    someone = make_user("someone")
    return topics(make_workspace(someone, "Elsewhere"), someone, name="Their secret topics")


def test_the_editor_offers_this_workspaces_datasets_with_their_row_counts(as_owner, workspace, owner, foreign_dataset):
    topics(workspace, owner)
    Dataset.objects.create(workspace=workspace, name="Nothing yet", created_by=owner)
    html = as_owner.get(f"/w/{workspace.pk}/compare/new/").content.decode()
    assert "Topics · 3 rows" in html
    assert "disabled>Nothing yet · 0 rows" in html  # shown, but cannot be picked
    assert "Their secret topics" not in html


def test_saving_with_a_dataset_hands_the_page_a_run_of_one_round_per_row(as_owner, workspace, owner):
    dataset = topics(workspace, owner)
    response = post_json(as_owner, f"/w/{workspace.pk}/compare/save/", topic_body(dataset))
    assert response.status_code == 201, response.content
    group = CompareGroup.objects.get()
    assert response.json() == {"group": group.pk, "url": f"/compare/{group.pk}/", "dataset": dataset.pk}
    assert group.dataset == dataset
    # What the page then posts: the runs API starts one round per row, in row order.
    started = post_json(as_owner, f"/api/v1/groups/{group.pk}/runs/", {"dataset": dataset.pk, "cache": False})
    assert started.status_code == 202, started.content
    assert [r.variables["topic"] for r in group.rounds.order_by("number")] == ["tea", "rain", "bees"]


def test_the_editor_refuses_another_workspaces_dataset_naming_the_field(as_owner, workspace, foreign_dataset):
    response = post_json(as_owner, f"/w/{workspace.pk}/compare/save/", topic_body(foreign_dataset))
    assert response.status_code == 400
    assert response.json() == {"errors": {"dataset": ["No such dataset in this workspace."]}}
    assert not CompareGroup.objects.exists()


@pytest.fixture
def topic_group(workspace, owner):
    return make_group(workspace, owner, prompts=TOPIC_PROMPTS, shared_variables={"topic": "default"})


def test_the_comparison_page_offers_a_run_over_each_dataset(as_owner, workspace, owner, topic_group, foreign_dataset):
    topics(workspace, owner)
    html = as_owner.get(f"/compare/{topic_group.pk}/").content.decode()
    assert 'data-action="run-dataset"' in html and "Topics · 3 rows" in html
    assert "Their secret topics" not in html


def run(client, group, dataset):
    return post_json(client, f"/api/v1/groups/{group.pk}/runs/", {"dataset": dataset.pk, "cache": False})


def test_a_run_over_another_workspaces_dataset_is_refused_naming_the_field(as_owner, topic_group, foreign_dataset):
    response = run(as_owner, topic_group, foreign_dataset)
    assert response.status_code == 400
    assert response.json() == {"dataset": ["No such dataset in this workspace."]}
    assert not topic_group.rounds.exists()


def test_a_run_over_an_empty_dataset_is_refused(as_owner, workspace, owner, topic_group):
    empty = Dataset.objects.create(workspace=workspace, name="Nothing yet", created_by=owner)
    response = run(as_owner, topic_group, empty)
    assert response.status_code == 400
    assert response.json() == {"dataset": ["This dataset has no rows."]}
    assert not topic_group.rounds.exists()


def test_a_run_over_a_row_without_a_variable_names_row_and_variable(as_owner, workspace, owner):
    full = dataset_create(workspace=workspace, user=owner, name="Full", rows=[{"vars": {"reader": "kids"}}])
    group = make_group(
        workspace, owner, prompts=["{{topic}} for {{reader}}"] * 2, shared_variables={"topic": "tea"}, dataset=full
    )
    half = dataset_create(
        workspace=workspace,
        user=owner,
        name="Half",
        rows=[{"vars": {"reader": "kids"}}, {"name": "bare", "vars": {"x": 1}}],
    )
    response = run(as_owner, group, half)
    assert response.status_code == 400
    [first, *_] = response.json()["dataset"]
    assert first.startswith("Row 2 (bare): Variant 1 (A) uses {{reader}}")
    assert not group.rounds.exists()


def test_the_editor_refuses_a_dataset_with_a_row_without_a_variable_naming_row_and_variable(as_owner, workspace, owner):
    half = topics(workspace, owner, name="Half", rows=({"topic": "tea"}, {"mood": "calm"}))
    response = post_json(as_owner, f"/w/{workspace.pk}/compare/save/", topic_body(half))
    assert response.status_code == 400
    assert response.json()["errors"]["dataset"] == [
        "Row 2: Variant 1 (A) uses {{topic}}, which has no value: set it in the shared variables or this variant's.",
        "Row 2: Variant 2 (B) uses {{topic}}, which has no value: set it in the shared variables or this variant's.",
    ]
    assert not CompareGroup.objects.exists()


def test_the_editor_still_names_a_variable_no_row_gives_once_for_the_comparison(as_owner, workspace, owner):
    body = topic_body(topics(workspace, owner))
    body["variants"][1]["prompt"] = "A haiku on {{topic}} for {{reader}}."
    response = post_json(as_owner, f"/w/{workspace.pk}/compare/save/", body)
    assert response.status_code == 400
    assert response.json()["errors"] == {
        "variants": [
            "Variant 2 (B) uses {{reader}}, which has no value: set it in the shared variables or this variant's."
        ]
    }


def preview(client, workspace, dataset) -> dict:
    body = {**topic_body(dataset), "workspace": workspace.pk}
    del body["repeat"]
    return post_json(client, "/api/v1/groups/preview/", body)


def test_the_editors_preview_renders_the_datasets_first_row(as_owner, workspace, owner):
    response = preview(as_owner, workspace, topics(workspace, owner))
    assert response.status_code == 200, response.content
    assert [v["prompt"] for v in response.json()["variants"]] == ["Write about tea.", "A haiku on tea."]
    assert response.json()["errors"] == []


def test_the_preview_refuses_another_workspaces_dataset_naming_the_field(as_owner, workspace, foreign_dataset):
    response = preview(as_owner, workspace, foreign_dataset)
    assert response.status_code == 400
    assert response.json() == {"dataset": ["No such dataset in this workspace."]}


def test_clone_and_edit_keeps_the_test_set_picked(as_owner, workspace, owner):
    dataset = topics(workspace, owner)
    source = make_group(workspace, owner, prompts=TOPIC_PROMPTS, dataset=dataset)
    html = as_owner.get(f"/compare/{source.pk}/edit/").content.decode()
    assert editor_initial(html)["dataset"] == dataset.pk
