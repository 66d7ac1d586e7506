"""The model catalog: each connection's models fetched once, cached, refreshable, listed per workspace."""

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse

from lab.catalog import model_info_for
from lab.models import Role
from lab.services import connection_create, connection_update
from tests.fixtures.factories import add_member
from tests.lab.adapters import HTTP_KINDS, KEY

pytestmark = pytest.mark.django_db


def models_url(workspace) -> str:
    return f"/api/v1/workspaces/{workspace.pk}/models/"


def refresh_url(connection) -> str:
    return f"/api/v1/workspaces/{connection.workspace_id}/connections/{connection.pk}/refresh-models/"


def test_the_catalog_lists_a_simulated_and_an_openai_compatible_connection(api, workspace, fake_llm):
    connection_create(workspace=workspace, name="local", kind="openai_compatible", base_url=fake_llm.openai_url)

    response = api.get(models_url(workspace))

    assert response.status_code == 200
    data = response.json()
    by_id = {m["id"]: m for m in data["results"]}
    assert data["errors"] == [] and data["count"] == len(by_id)
    assert {"local::fake", "local::fake-reasoning", "simulated::writer", "simulated::instant"} <= set(by_id)
    assert by_id["local::fake"] == {
        "id": "local::fake",
        "model": "fake",
        "name": "Fake (every parameter)",
        "connection": "local",
        "connection_id": workspace.connections.get(name="local").pk,
        "kind": "openai_compatible",
        "simulated": False,
        "context_length": None,
        "max_output_tokens": None,
        "supported_params": None,
        "input_price_per_mtok": None,
        "output_price_per_mtok": None,
    }
    assert by_id["simulated::writer"]["simulated"] is True
    assert by_id["simulated::writer"]["input_price_per_mtok"] == 0.0


def test_an_openrouter_connection_brings_supported_parameters_and_prices(api, workspace, fake_llm):
    connection_create(workspace=workspace, name="router", kind="openrouter", base_url=fake_llm.openai_url, api_key=KEY)

    by_id = {m["id"]: m for m in api.get(models_url(workspace)).json()["results"]}

    assert by_id["router::fake-reasoning"]["supported_params"] == ["max_tokens", "seed", "stop"]
    assert (by_id["router::fake"]["input_price_per_mtok"], by_id["router::fake"]["output_price_per_mtok"]) == (1, 2)


def test_a_catalog_is_fetched_once_then_served_from_the_cache(api, workspace, fake_llm):
    base_url = fake_llm.url()
    connection = connection_create(workspace=workspace, name="local", kind="openai_compatible", base_url=base_url)

    api.get(models_url(workspace))
    api.get(models_url(workspace))

    assert fake_llm.scenario(url=base_url)["requests"] == 1
    connection.refresh_from_db()
    assert connection.models_fetched_at is not None
    assert [m["id"] for m in connection.models_cache] == ["fake", "fake-free", "fake-reasoning"]


def test_an_editor_refreshes_a_catalog_from_the_provider(api_for, workspace, fake_llm):
    base_url = fake_llm.url()
    connection = connection_create(workspace=workspace, name="local", kind="openai_compatible", base_url=base_url)
    editor = add_member(workspace, "eddie", Role.EDITOR)

    first = api_for(editor).post(refresh_url(connection))
    second = api_for(editor).post(refresh_url(connection))

    assert first.status_code == second.status_code == 200
    assert second.json()["count"] == 3
    assert [m["id"] for m in second.json()["results"]] == ["local::fake", "local::fake-free", "local::fake-reasoning"]
    assert fake_llm.scenario(url=base_url)["requests"] == 2


def test_a_viewer_cannot_refresh_and_a_stranger_sees_nothing(api_for, workspace, stranger, fake_llm):
    connection = connection_create(
        workspace=workspace, name="local", kind="openai_compatible", base_url=fake_llm.openai_url
    )
    viewer = add_member(workspace, "vera", Role.VIEWER)

    assert api_for(viewer).post(refresh_url(connection)).status_code == 403
    assert api_for(viewer).get(models_url(workspace)).status_code == 200
    assert api_for(stranger).post(refresh_url(connection)).status_code == 404
    assert api_for(stranger).get(models_url(workspace)).status_code == 404


@pytest.mark.parametrize("kind", HTTP_KINDS)
def test_a_failing_catalog_is_reported_readably_and_never_shows_the_key(api, workspace, fake_llm, kind):
    base_url = fake_llm.url("v1beta" if kind == "gemini" else "v1", fault="401")
    connection = connection_create(workspace=workspace, name=kind, kind=kind, base_url=base_url, api_key=KEY)

    listing = api.get(models_url(workspace))
    refresh = api.post(refresh_url(connection))
    connections = api.get(f"/api/v1/workspaces/{workspace.pk}/connections/")

    assert listing.status_code == 200
    error = f"{kind} answered HTTP 401: Fake unauthorized. Request made with key [redacted]."
    assert listing.json()["errors"] == [{"connection": kind, "error": error}]
    assert any(m["id"] == "simulated::writer" for m in listing.json()["results"])  # the others still list
    assert refresh.status_code == 502
    assert refresh.json()["detail"] == error
    for response in (listing, refresh, connections):
        assert KEY not in response.content.decode()


def test_a_catalog_that_failed_is_not_asked_for_again_by_every_use_until_the_connection_changes(
    workspace, owner, fake_llm
):
    """Every round's claim looks its models up: a provider whose model list fails was asked, and waited for, each
    time. Now a failure is tried again by a use at most once a minute, and at once for another endpoint or key."""
    base_url = fake_llm.url(fault="401")
    connection = connection_create(
        workspace=workspace, name="local", kind="openai_compatible", base_url=base_url, api_key=KEY
    )

    for _ in range(3):
        assert model_info_for(workspace, "local::fake")[1] is None  # unknown: the run itself goes ahead
    assert fake_llm.scenario(url=base_url)["requests"] == 1

    connection_update(connection=connection, actor=owner, api_key="sk-another-key-0000")
    model_info_for(workspace, "local::fake")
    assert fake_llm.scenario(url=base_url)["requests"] == 2

    working = fake_llm.url()
    connection_update(connection=connection, actor=owner, base_url=working)
    _, info = model_info_for(workspace, "local::fake")
    assert info is not None and info.id == "fake"
    assert fake_llm.scenario(url=working)["requests"] == 1


def test_model_info_for_finds_the_catalog_entry_behind_a_model_id(workspace, fake_llm):
    connection_create(workspace=workspace, name="local", kind="openai_compatible", base_url=fake_llm.openai_url)

    connection, info = model_info_for(workspace, "local::fake?tokens=3")
    _, missing = model_info_for(workspace, "local::not-in-the-catalog")
    _, simulated = model_info_for(workspace, "simulated::writer?ttft_ms=5")

    assert (connection.name, info.id, info.name) == ("local", "fake", "Fake (every parameter)")
    assert missing is None
    assert simulated.id == "writer" and simulated.input_price_per_mtok == 0.0
    with pytest.raises(ValidationError, match="no connection named “nowhere”"):
        model_info_for(workspace, "nowhere::x")
    with pytest.raises(ValidationError, match="not a model id"):
        model_info_for(workspace, "gpt-4.1")


def test_the_settings_page_refreshes_a_connection_for_editors_only(workspace, fake_llm):
    connection = connection_create(
        workspace=workspace, name="local", kind="openai_compatible", base_url=fake_llm.openai_url
    )
    editor, viewer = add_member(workspace, "eddie", Role.EDITOR), add_member(workspace, "vera", Role.VIEWER)
    page = reverse("lab:settings", args=[workspace.pk])
    action = reverse("lab:connection_refresh_models", args=[workspace.pk, connection.pk])
    as_editor, as_viewer = Client(), Client()
    as_editor.force_login(editor)
    as_viewer.force_login(viewer)

    assert action in as_editor.get(page).content.decode()
    assert action not in as_viewer.get(page).content.decode()
    response = as_editor.post(action, follow=True)
    assert "local: 3 models." in response.content.decode()
    assert as_viewer.post(action).status_code == 403
    assert as_editor.get(action).status_code == 405


def test_the_settings_page_shows_a_refresh_failure_without_the_key(client, owner, workspace, fake_llm):
    base_url = fake_llm.url(fault="500")
    connection = connection_create(workspace=workspace, name="openai", kind="openai", base_url=base_url, api_key=KEY)
    client.force_login(owner)

    response = client.post(reverse("lab:connection_refresh_models", args=[workspace.pk, connection.pk]), follow=True)

    page = response.content.decode()
    assert "Could not refresh the models of openai: openai answered HTTP 500" in page
    assert KEY not in page
