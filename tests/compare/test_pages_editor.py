"""The comparison editor's server side: who may open it, save and run, clone and edit, the parameter check."""

import json
import re

import pytest
from django.utils import timezone

from compare.models import CompareGroup, Mode
from lab.models import Connection, ConnectionKind
from tests.fixtures.compare_factories import INSTANT, make_group

pytestmark = pytest.mark.django_db


def save_body(**changes) -> dict:
    body = {
        "title": "Greeting tone",
        "mode": Mode.PROMPTS,
        "system_prompt": "",
        "shared_variables": {"name": "Ada"},
        "params": {"temperature": 0.5, "top_p": None, "max_tokens": None, "seed": None},
        "blind": False,
        "repeat": 2,
        "variants": [
            {"label": "Formal", "model": INSTANT, "prompt": "Greet {{name}} formally.", "variables": {}},
            {"label": "Warm", "model": INSTANT, "prompt": "Greet {{name}} {{how}}.", "variables": {"how": "warmly"}},
        ],
    }
    body.update(changes)
    return body


def editor_initial(html: str):
    return json.loads(re.search(r'<script id="editor-initial" type="application/json">(.*?)</script>', html).group(1))


def post_json(client, url, body):
    return client.post(url, json.dumps(body), content_type="application/json")


@pytest.fixture
def as_owner(client, owner):
    client.force_login(owner)
    return client


def test_an_editor_opens_the_editor_with_the_workspaces_endpoints(client, workspace, editor):
    client.force_login(editor)
    response = client.get(f"/w/{workspace.pk}/compare/new/")
    assert response.status_code == 200
    html = response.content.decode()
    assert f"/api/v1/workspaces/{workspace.pk}/models/" in html
    assert "/api/v1/groups/preview/" in html
    assert editor_initial(html) is None
    for name in ("top_k", "presence_penalty", "frequency_penalty"):  # Toor's parameters in the run settings
        assert f'name="{name}"' in html


def test_viewers_can_neither_open_the_editor_nor_save(client, workspace, viewer, group):
    client.force_login(viewer)
    assert client.get(f"/w/{workspace.pk}/compare/new/").status_code == 403
    assert client.get(f"/compare/{group.pk}/edit/").status_code == 403
    assert post_json(client, f"/w/{workspace.pk}/compare/save/", save_body()).status_code == 403
    assert CompareGroup.objects.count() == 1


def test_saving_creates_the_group_and_hands_its_run_to_the_comparison_page(as_owner, workspace, owner):
    response = post_json(as_owner, f"/w/{workspace.pk}/compare/save/", save_body())
    assert response.status_code == 201, response.content
    group = CompareGroup.objects.get(title="Greeting tone")
    # The page starts the rounds once its socket is live, so no streamed token goes unseen.
    assert response.json() == {"group": group.pk, "url": f"/compare/{group.pk}/", "repeat": 2}
    assert [(v.label, v.variables) for v in group.variants.all()] == [("Formal", {}), ("Warm", {"how": "warmly"})]
    assert group.params == {"temperature": 0.5} and group.created_by == owner
    assert not group.rounds.exists()


def test_a_comparison_that_cannot_run_is_not_saved_and_the_errors_name_the_variant(as_owner, workspace):
    body = save_body(variants=[save_body()["variants"][0], {"label": "B", "model": INSTANT, "prompt": "Hi {{who}}"}])
    response = post_json(as_owner, f"/w/{workspace.pk}/compare/save/", body)
    assert response.status_code == 400
    assert any("Variant 2 (B)" in m and "{{who}}" in m for m in response.json()["errors"]["variants"])
    assert not CompareGroup.objects.exists()


def test_shape_errors_come_back_per_field(as_owner, workspace):
    body = save_body(repeat=0, params={"temperature": 9})
    body["variants"][1]["model"] = ""
    errors = post_json(as_owner, f"/w/{workspace.pk}/compare/save/", body).json()["errors"]
    assert errors["repeat"] == ["Ensure this value is greater than or equal to 1."]
    assert errors["params"] == ["temperature: Ensure this value is less than or equal to 2."]
    assert errors["variants"] == ["Variant 2: model: This field may not be blank."]


def test_clone_and_edit_prefills_the_editor_and_saving_links_the_original(as_owner, workspace, owner):
    source = make_group(workspace, owner, title="Original", blind=True, params={"seed": 7})
    html = as_owner.get(f"/compare/{source.pk}/edit/").content.decode()
    initial = editor_initial(html)
    assert initial["cloned_from"] == source.pk and initial["title"] == "Original (copy)"
    assert initial["blind"] is True and initial["params"] == {"seed": 7}
    assert [v["label"] for v in initial["variants"]] == ["A", "B"]

    response = post_json(as_owner, f"/w/{workspace.pk}/compare/save/", save_body(cloned_from=source.pk))
    assert response.status_code == 201
    assert CompareGroup.objects.get(title="Greeting tone").cloned_from == source


def test_another_workspaces_group_cannot_be_cloned_or_named_as_a_source(client, stranger, workspace, owner):
    foreign = make_group(workspace, owner)
    client.force_login(stranger)
    mine = stranger.memberships.get().workspace
    assert client.get(f"/compare/{foreign.pk}/edit/").status_code == 404
    assert client.get(f"/w/{workspace.pk}/compare/new/").status_code == 404
    assert post_json(client, f"/w/{workspace.pk}/compare/save/", save_body()).status_code == 404
    response = post_json(client, f"/w/{mine.pk}/compare/save/", save_body(cloned_from=foreign.pk))
    assert response.status_code == 404
    assert CompareGroup.objects.count() == 1


def test_the_parameter_check_names_a_model_that_refuses_temperature(as_owner, workspace):
    Connection.objects.create(
        workspace=workspace,
        name="openai",
        kind=ConnectionKind.OPENAI_COMPATIBLE,
        base_url="http://127.0.0.1:9/v1",
        models_cache=[{"id": "o3-mini"}, {"id": "picky", "supported_params": ["max_tokens"]}],
        models_fetched_at=timezone.now(),
    )
    url = f"/w/{workspace.pk}/compare/check/"
    body = {"params": {"temperature": 0.2, "max_tokens": 100}, "models": ["openai::o3-mini", "openai::picky", INSTANT]}
    assert post_json(as_owner, url, body).json() == {
        "problems": ["openai::o3-mini does not support temperature", "openai::picky does not support temperature"]
    }
    assert post_json(as_owner, url, {"params": {}, "models": ["openai::o3-mini"]}).json() == {"problems": []}
    problems = post_json(as_owner, url, {"params": {"top_p": 3}, "models": ["nowhere::x"]}).json()["problems"]
    assert problems == ["top_p: Ensure this value is less than or equal to 1."]
    problems = post_json(as_owner, url, {"params": {}, "models": ["nowhere::x"]}).json()["problems"]
    assert problems[0].startswith("nowhere::x: This workspace has no connection named “nowhere”")
