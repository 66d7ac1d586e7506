"""API keys are ciphertext at rest, never returned or logged, and survive key rotation."""

import logging

import pytest
from cryptography.fernet import Fernet
from django.core.management import call_command
from django.db import connection as db
from django.test import Client, override_settings

from lab.models import Connection

pytestmark = pytest.mark.django_db
SECRET = "sk-test-THIS-IS-A-SECRET-0123456789"


def create_openai(api, workspace):
    return api.post(
        f"/api/v1/workspaces/{workspace.pk}/connections/",
        {"name": "openai", "kind": "openai", "base_url": "http://127.0.0.1:9/v1", "api_key": SECRET},
        format="json",
    )


def raw_key_column(connection_id: int) -> str:
    with db.cursor() as cursor:
        cursor.execute("SELECT api_key_encrypted FROM lab_connection WHERE id = %s", [connection_id])
        return cursor.fetchone()[0]


def test_the_key_is_stored_as_ciphertext(api, workspace):
    response = create_openai(api, workspace)
    assert response.status_code == 201
    stored = raw_key_column(response.json()["id"])
    assert SECRET not in stored
    assert stored.startswith("gAAAA")  # a Fernet token
    assert Connection.objects.get(pk=response.json()["id"]).api_key() == SECRET


def test_the_key_appears_in_no_response_page_or_log(api, workspace, owner, caplog):
    caplog.set_level(logging.DEBUG)
    created = create_openai(api, workspace)
    assert created.json()["api_key_hint"] == "sk-…6789"
    bodies = [
        created.content,
        api.get(f"/api/v1/workspaces/{workspace.pk}/connections/").content,
        api.get(f"/api/v1/workspaces/{workspace.pk}/connections/{created.json()['id']}/").content,
        api.patch(
            f"/api/v1/workspaces/{workspace.pk}/connections/{created.json()['id']}/", {"rpm": 10}, format="json"
        ).content,
    ]
    page = Client()
    page.force_login(owner)
    bodies.append(page.get(f"/w/{workspace.pk}/settings/").content)
    for body in bodies:
        assert SECRET.encode() not in body
        assert b"api_key_encrypted" not in body
    assert SECRET not in caplog.text
    assert SECRET not in repr(Connection.objects.get(name="openai"))


def test_keys_still_decrypt_after_rotation_with_the_management_command(api, workspace):
    old_key, new_key = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    with override_settings(FIELD_ENCRYPTION_KEYS=[old_key]):
        connection_id = create_openai(api, workspace).json()["id"]
    before = raw_key_column(connection_id)
    with override_settings(FIELD_ENCRYPTION_KEYS=[new_key, old_key]):
        call_command("rotate_encryption_keys")
    after = raw_key_column(connection_id)
    assert after != before
    with override_settings(FIELD_ENCRYPTION_KEYS=[new_key]):  # the old key can now be dropped
        assert Connection.objects.get(pk=connection_id).api_key() == SECRET
    assert Fernet(new_key.encode()).decrypt(after.encode()).decode() == SECRET


def test_replacing_a_key_keeps_it_write_only(api, workspace):
    connection_id = create_openai(api, workspace).json()["id"]
    response = api.patch(
        f"/api/v1/workspaces/{workspace.pk}/connections/{connection_id}/",
        {"api_key": "sk-another-secret-key-abcd"},
        format="json",
    )
    assert response.status_code == 200
    assert response.json()["api_key_hint"] == "sk-…abcd"
    assert "api_key" not in response.json()
    assert Connection.objects.get(pk=connection_id).api_key() == "sk-another-secret-key-abcd"


def test_a_new_key_or_base_url_clears_the_cached_catalog(api, workspace):
    connection_id = create_openai(api, workspace).json()["id"]
    Connection.objects.filter(pk=connection_id).update(models_cache=[{"id": "old-model"}])
    url = f"/api/v1/workspaces/{workspace.pk}/connections/{connection_id}/"
    api.patch(url, {"rpm": 7}, format="json")
    assert Connection.objects.get(pk=connection_id).models_cache == [{"id": "old-model"}]
    api.patch(url, {"base_url": "http://127.0.0.1:10/v1"}, format="json")
    assert Connection.objects.get(pk=connection_id).models_cache == []
