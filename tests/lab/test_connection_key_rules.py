"""An API key is printable ASCII without whitespace and a base URL is http(s); a key saved before that rule existed
fails readably for its own connection only; every form a key can take in an error is redacted."""

import json
from urllib.parse import quote, quote_plus

import pytest
from django.test import Client

from lab.connection_rules import MAX_API_KEY_CHARS
from lab.models import Connection
from lab.providers.base import ProviderError
from lab.providers.http import scrub
from tests.lab.adapters import adapter_for, chat, events_of

BAD_KEYS = {
    "non-ASCII": "sk-éü😀",
    "a line break": "sk-abc\r\nX-Injected: 1",
    "a space": "sk-abc 1",
    "a tab": "sk-abc\t1",
    "a control character": "sk-abc\x07def",
}


def connections_url(workspace) -> str:
    return f"/api/v1/workspaces/{workspace.pk}/connections/"


@pytest.mark.django_db
@pytest.mark.parametrize("key", BAD_KEYS.values(), ids=BAD_KEYS.keys())
def test_a_key_no_header_can_carry_is_refused_with_a_clear_message(api, workspace, key):
    body = {"name": "openai", "kind": "openai", "base_url": "http://127.0.0.1:9/v1", "api_key": key}

    response = api.post(connections_url(workspace), body, format="json")

    assert response.status_code == 400, response.content
    message = response.json()["api_key"][0]
    assert message.startswith("An API key ") and "character" in message
    assert key.strip() not in message
    assert not workspace.connections.filter(name="openai").exists()


@pytest.mark.django_db
def test_a_key_longer_than_the_limit_is_refused_naming_it_and_one_at_the_limit_is_kept(api, workspace):
    for name, length, status in [("long", 100 * 1024, 400), ("longest", MAX_API_KEY_CHARS, 201)]:
        body = {"name": name, "kind": "openai", "base_url": "http://127.0.0.1:9/v1", "api_key": "k" * length}
        response = api.post(connections_url(workspace), body, format="json")
        assert response.status_code == status, response.content
    assert response.json()["has_api_key"]
    long = api.post(connections_url(workspace), {**body, "name": "long", "api_key": "k" * 100 * 1024}, format="json")
    assert long.json() == {"api_key": ["An API key has at most 2,048 characters; this one has 102,400."]}
    assert not workspace.connections.filter(name="long").exists()


@pytest.mark.django_db
def test_a_key_change_is_checked_too(api, workspace):
    connection = workspace.connections.get()

    response = api.patch(f"{connections_url(workspace)}{connection.pk}/", {"api_key": "sk-a b"}, format="json")

    assert response.status_code == 400
    assert "space at character 5" in response.json()["api_key"][0]


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["ftp://127.0.0.1/v1", "ftps://127.0.0.1/v1", "ws://127.0.0.1:9/v1"])
def test_a_base_url_must_be_http_or_https(api, workspace, url):
    body = {"name": "local", "kind": "openai_compatible", "base_url": url}

    response = api.post(connections_url(workspace), body, format="json")

    assert response.status_code == 400, response.content
    assert "http:// or https://" in " ".join(response.json()["base_url"])
    assert not workspace.connections.filter(name="local").exists()


@pytest.mark.django_db
def test_the_settings_page_refuses_a_bad_key_the_same_way(owner, workspace):
    client = Client()
    client.force_login(owner)
    form = {"name": "openai", "kind": "openai", "api_key": "sk-é", "max_concurrency": 4, "rpm": 60}

    response = client.post(f"/w/{workspace.pk}/settings/connections/", form, follow=True)

    assert response.status_code == 200
    assert "printable ASCII only" in response.content.decode()
    assert not workspace.connections.filter(name="openai").exists()


@pytest.mark.django_db
def test_a_key_saved_before_the_rule_breaks_only_its_own_connection(api, workspace, fake_llm):
    legacy = Connection(workspace=workspace, name="legacy", kind="openai_compatible", base_url=fake_llm.openai_url)
    legacy.set_api_key("sk-éü😀")
    legacy.save()

    models = api.get(f"/api/v1/workspaces/{workspace.pk}/models/")

    assert models.status_code == 200
    errors = {error["connection"]: error["error"] for error in models.json()["errors"]}
    assert "cannot be sent" in errors["legacy"] and "new key" in errors["legacy"]
    assert any(model["connection"] == "simulated" for model in models.json()["results"])
    variants = [{"model": "simulated::instant", "prompt": "Hi"}, {"model": "simulated::instant", "prompt": "Yo"}]
    group = api.post(
        "/api/v1/groups/", {"workspace": workspace.pk, "mode": "prompts", "variants": variants}, format="json"
    )
    assert group.status_code == 201, group.content
    client = Client()
    client.force_login(workspace.memberships.get().user)
    assert client.get(f"/w/{workspace.pk}/experiments/new/").status_code == 200


async def test_the_adapter_refuses_such_a_key_before_sending_it(fake_llm):
    model = fake_llm.model(tokens=1)

    with pytest.raises(ProviderError, match="printable ASCII"):
        await events_of(adapter_for(fake_llm, "openai", key="sk-éü"), chat(model))

    assert fake_llm.scenario(model)["requests"] == 0


ODD_KEY = "sk-odd key/é+\r\n&tail"


@pytest.mark.parametrize(
    "form",
    [
        ODD_KEY,
        quote(ODD_KEY, safe=""),
        quote_plus(ODD_KEY, safe=""),
        json.dumps(ODD_KEY)[1:-1],
        json.dumps(ODD_KEY, ensure_ascii=False)[1:-1],
        repr(ODD_KEY)[1:-1],
        repr(ODD_KEY.encode())[2:-1],
    ],
    ids=["plain", "url-encoded", "form-encoded", "json-escaped", "json", "repr", "bytes-repr"],
)
def test_redaction_covers_every_form_a_key_takes_in_an_error(form):
    scrubbed = scrub(f"The provider said: invalid key {form} (code 401)", [ODD_KEY])

    assert "[redacted]" in scrubbed
    for piece in ("sk-odd", "key/é", "&tail", "tail"):
        assert piece not in scrubbed, scrubbed
    assert scrubbed.endswith("(code 401)")


def test_a_bearer_token_with_a_space_loses_its_tail_too():
    assert scrub("header was 'Authorization: Bearer sk-abc 1'") == "header was 'Authorization: Bearer [redacted]'"
