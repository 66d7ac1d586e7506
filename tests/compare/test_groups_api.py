"""The groups API: create with nested variants, list with filters, detail, clone, runs, preview, rounds, cancel."""

import pytest

from compare.models import OutputStatus, RoundStatus
from lab.services import connection_create
from tests.fixtures.compare_factories import INSTANT, make_group, start_round
from tests.fixtures.judging_factories import KEY


def body(workspace, **changes) -> dict:
    data = {
        "workspace": workspace.pk,
        "title": "Greeting tone",
        "mode": "prompts",
        "system_prompt": "You are {{persona}}.",
        "shared_variables": {"persona": "a butler", "name": "Ada"},
        "params": {"temperature": 0.7, "max_tokens": 200},
        "variants": [
            {"label": "Formal", "model": INSTANT, "prompt": "Greet {{name}} formally."},
            {
                "label": "Warm",
                "model": INSTANT,
                "prompt": "Greet {{name}} warmly in a {{mood}} mood.",
                "variables": {"mood": "sunny"},
            },
        ],
    }
    data.update(changes)
    return data


@pytest.mark.django_db
def test_creating_a_group_returns_it_with_variants_and_template_warnings(api, workspace):
    response = api.post("/api/v1/groups/", body(workspace), format="json")
    assert response.status_code == 201, response.json()
    data = response.json()
    assert data["title"] == "Greeting tone" and data["workspace"] == workspace.pk
    assert data["params"] == {"temperature": 0.7, "max_tokens": 200}
    assert [(v["position"], v["label"], v["model"]) for v in data["variants"]] == [
        (1, "Formal", INSTANT),
        (2, "Warm", INSTANT),
    ]
    assert data["rounds"] == [] and data["created_by"] == "owner"
    assert data["warnings"] == ["{{mood}} is used by some variants but not by Variant 1 (Formal)."]


@pytest.mark.django_db
def test_a_rule_broken_by_one_variant_is_a_400_naming_the_field_and_the_variant(api, workspace):
    bad = body(workspace)
    bad["variants"][1]["model"] = "simulated::writer"
    response = api.post("/api/v1/groups/", bad, format="json")
    assert response.status_code == 400
    [message] = response.json()["variants"]
    assert message.startswith("Variant 2 (Warm): model: a prompts comparison runs every variant on one model")


@pytest.mark.django_db
def test_a_malformed_variant_is_a_400_keyed_by_its_position(api, workspace):
    bad = body(workspace)
    del bad["variants"][1]["model"]
    response = api.post("/api/v1/groups/", bad, format="json")
    assert response.status_code == 400
    assert response.json()["variants"] == {"2": {"model": ["This field is required."]}}


@pytest.mark.django_db
def test_an_out_of_range_parameter_is_a_400_on_that_parameter(api, workspace):
    response = api.post("/api/v1/groups/", body(workspace, params={"temperature": 5}), format="json")
    assert response.status_code == 400
    assert response.json() == {"params": {"temperature": ["Ensure this value is less than or equal to 2."]}}


@pytest.mark.django_db
def test_a_viewer_reads_but_cannot_create_run_clone_or_cancel(api_for, workspace, owner, viewer):
    group = make_group(workspace, owner)
    round_ = start_round(group, owner)
    client = api_for(viewer)
    assert client.get(f"/api/v1/groups/{group.pk}/").status_code == 200
    assert client.get(f"/api/v1/rounds/{round_.pk}/").status_code == 200
    assert client.post("/api/v1/groups/", body(workspace), format="json").status_code == 403
    assert client.post(f"/api/v1/groups/{group.pk}/runs/", {}, format="json").status_code == 403
    assert client.post(f"/api/v1/groups/{group.pk}/clone/", {}, format="json").status_code == 403
    assert client.post(f"/api/v1/rounds/{round_.pk}/cancel/").status_code == 403


@pytest.mark.django_db
def test_an_editor_creates_and_runs(api_for, workspace, editor):
    client = api_for(editor)
    group = client.post("/api/v1/groups/", body(workspace), format="json").json()
    response = client.post(f"/api/v1/groups/{group['id']}/runs/", {"repeat": 2}, format="json")
    assert response.status_code == 202
    assert [(r["number"], r["status"]) for r in response.json()["rounds"]] == [(1, "queued"), (2, "queued")]


@pytest.mark.django_db
def test_the_list_filters_by_workspace_text_and_model_and_is_paginated(api, workspace, owner):
    tea = make_group(workspace, owner, title="Tea notes")
    writer = make_group(workspace, owner, title="Prose", models=["simulated::writer", INSTANT])
    other = api.post("/api/v1/workspaces/", {"name": "Second"}, format="json").json()
    response = api.get("/api/v1/groups/")
    assert response.json()["count"] == 2
    assert [g["id"] for g in response.json()["results"]] == [writer.pk, tea.pk]
    assert [g["id"] for g in api.get("/api/v1/groups/", {"q": "tea"}).json()["results"]] == [tea.pk]
    assert [g["id"] for g in api.get("/api/v1/groups/", {"q": "notes"}).json()["results"]] == [tea.pk]
    assert [g["id"] for g in api.get("/api/v1/groups/", {"model": "simulated::writer"}).json()["results"]] == [
        writer.pk
    ]
    assert api.get("/api/v1/groups/", {"workspace": other["id"]}).json()["count"] == 0


@pytest.mark.django_db
def test_the_detail_lists_rounds_newest_first(api, group, owner):
    start_round(group, owner, repeat=2)
    data = api.get(f"/api/v1/groups/{group.pk}/").json()
    assert [r["number"] for r in data["rounds"]] == [2, 1]
    assert data["round_count"] == 2


@pytest.mark.django_db
def test_clone_with_changes_and_a_copied_variant(api, group):
    response = api.post(f"/api/v1/groups/{group.pk}/clone/", {"title": "Next", "copy_variant": 1}, format="json")
    assert response.status_code == 201
    data = response.json()
    assert data["title"] == "Next" and data["cloned_from"] == group.pk
    assert [v["label"] for v in data["variants"]] == ["A", "B", "A v2"]


@pytest.mark.django_db
def test_preview_renders_every_variant_with_errors_and_warnings_and_saves_nothing(api, workspace):
    preview = body(workspace)
    preview["variants"].append({"label": "Odd", "model": INSTANT, "prompt": "Hi {{nobody}} {{name.upper}}"})
    response = api.post("/api/v1/groups/preview/", preview, format="json")
    assert response.status_code == 200
    data = response.json()
    formal, warm, odd = data["variants"]
    assert (formal["system_prompt"], formal["prompt"]) == ("You are a butler.", "Greet Ada formally.")
    assert warm["prompt"] == "Greet Ada warmly in a sunny mood."
    assert odd["errors"] == [
        "Variant 3 (Odd) uses {{nobody}}, which has no value: set it in the shared variables or this variant's."
    ]
    assert data["errors"] == odd["errors"]
    assert any("{{name.upper}} is not a placeholder" in w for w in odd["warnings"])
    assert api.get("/api/v1/groups/").json()["count"] == 0


@pytest.mark.django_db
def test_the_round_detail_shows_outputs_in_variant_order_with_labels(api, group, owner):
    round_ = start_round(group, owner)
    data = api.get(f"/api/v1/rounds/{round_.pk}/").json()
    assert data["labels_visible"] is True and data["status"] == "queued"
    assert [(o["label"], o["position"], o["model"], o["status"]) for o in data["outputs"]] == [
        ("A", 1, INSTANT, "queued"),
        ("B", 2, INSTANT, "queued"),
    ]


@pytest.mark.django_db
def test_a_blind_round_hides_labels_models_and_prompts_until_the_user_has_voted(api, workspace, owner):
    group = make_group(workspace, owner, prompts=["One {{topic}}", "Two {{topic}}"], blind=True)
    round_ = start_round(group, owner)
    data = api.get(f"/api/v1/rounds/{round_.pk}/").json()
    assert data["labels_visible"] is False
    assert sorted(o["shown_as"] for o in data["outputs"]) == ["Answer A", "Answer B"]
    assert all(o["label"] is None for o in data["outputs"])
    for output in data["outputs"]:
        assert output["variant"] is None and output["model"] is None and output["position"] is None
        assert output["rendered_prompt"] is None


@pytest.mark.django_db
def test_cancelling_a_queued_round_cancels_its_outputs_and_a_second_cancel_is_harmless(api, group, owner):
    round_ = start_round(group, owner)
    response = api.post(f"/api/v1/rounds/{round_.pk}/cancel/")
    assert response.status_code == 200
    assert response.json()["status"] == RoundStatus.CANCELLED
    assert {o["status"] for o in response.json()["outputs"]} == {OutputStatus.CANCELLED}
    assert api.post(f"/api/v1/rounds/{round_.pk}/cancel/").status_code == 200


@pytest.mark.django_db
def test_a_finished_round_cannot_be_cancelled(api, group, owner):
    round_ = start_round(group, owner)
    type(round_).objects.filter(pk=round_.pk).update(status=RoundStatus.DONE)
    response = api.post(f"/api/v1/rounds/{round_.pk}/cancel/")
    assert response.status_code == 400
    assert response.json() == {"round": ["Round 1 is already done; nothing to cancel."]}


@pytest.mark.django_db
def test_runs_over_a_dataset_and_datasets_are_listed(api, workspace, owner):
    created = api.post(
        "/api/v1/datasets/",
        {
            "workspace": workspace.pk,
            "name": "Names",
            "rows": [{"name": "ada", "vars": {"name": "Ada"}}, {"vars": {"name": "Bo"}}],
        },
        format="json",
    )
    assert created.status_code == 201
    dataset = created.json()
    assert dataset["row_count"] == 2 and [r["name"] for r in dataset["rows"]] == ["ada", ""]
    group = api.post("/api/v1/groups/", body(workspace, dataset=dataset["id"]), format="json").json()
    response = api.post(f"/api/v1/groups/{group['id']}/runs/", {"dataset": dataset["id"]}, format="json")
    assert response.status_code == 202
    assert len(response.json()["rounds"]) == 2
    assert [d["name"] for d in api.get("/api/v1/datasets/").json()["results"]] == ["Names"]


@pytest.mark.django_db
def test_a_dataset_without_rows_is_a_400(api, workspace):
    response = api.post("/api/v1/datasets/", {"workspace": workspace.pk, "name": "Empty", "rows": []}, format="json")
    assert response.status_code == 400
    assert response.json() == {"rows": ["A dataset has 1 to 1000 rows; this has 0."]}


@pytest.mark.django_db
def test_a_misspelt_parameter_is_a_400_naming_it(api, workspace):
    response = api.post("/api/v1/groups/", body(workspace, params={"temprature": 0.2}), format="json")
    assert response.status_code == 400
    assert response.json() == {
        "params": {
            "temprature": [
                "Unknown parameter; known: temperature, top_p, top_k, max_tokens, seed, stop, presence_penalty, "
                "frequency_penalty."
            ]
        }
    }


def test_top_k_and_the_penalties_are_taken_and_refused_by_name_where_a_provider_has_none(api, workspace, fake_llm):
    connection_create(workspace=workspace, name="oa", kind="openai", base_url=fake_llm.openai_url, api_key=KEY)
    connection_create(workspace=workspace, name="an", kind="anthropic", base_url=fake_llm.anthropic_url, api_key=KEY)
    params = {"top_k": 20, "presence_penalty": 0.5, "frequency_penalty": 0.25}

    created = api.post("/api/v1/groups/", body(workspace, params=params), format="json")
    assert created.status_code == 201, created.json()
    assert {k: created.json()["params"][k] for k in params} == params

    variants = [
        {"label": "A", "model": "oa::gpt-4.1-mini", "prompt": "Hi {{name}}."},
        {"label": "B", "model": "an::claude-test", "prompt": "Hi {{name}}."},
    ]
    refused = api.post(
        "/api/v1/groups/", body(workspace, mode="models", params=params, variants=variants), format="json"
    )
    assert refused.status_code == 400
    messages = " ".join(refused.json()["params"])
    assert "oa::gpt-4.1-mini does not support top_k" in messages
    assert "an::claude-test does not support presence_penalty" in messages
    assert "an::claude-test does not support frequency_penalty" in messages
    assert "oa::gpt-4.1-mini does not support presence_penalty" not in messages
