"""The audit log: each change it lists writes one entry naming who did it and to what, never a key; owners see
it and export it as CSV; old entries go after the retention period."""

import csv
import io
import json
from datetime import timedelta

import pytest
from django.utils import timezone

from lab.audit.models import Action, AuditEntry
from lab.audit.services import audit_prune
from lab.invitations.services import invitation_accept, invitation_create, invitation_for_key, invitation_revoke
from lab.tokens.services import api_token_create, api_token_revoke
from tests.fixtures.compare_factories import make_group
from tests.fixtures.factories import make_user

pytestmark = pytest.mark.django_db

PROVIDER_KEY = "sk-audit-test-secret-key-0123456789"
NEW_PROVIDER_KEY = "sk-audit-test-replacement-key-9876543210"


def only_entry(workspace, action) -> AuditEntry:
    (entry,) = AuditEntry.objects.filter(workspace=workspace, action=action)
    return entry


def test_member_changes_are_recorded_with_actor_and_target(api, owner, workspace):
    make_user("nora")
    base = f"/api/v1/workspaces/{workspace.pk}/members/"
    nora_id = api.post(base, {"username": "nora", "role": "viewer"}, format="json").json()["user_id"]
    api.patch(f"{base}{nora_id}/", {"role": "editor"}, format="json")
    api.delete(f"{base}{nora_id}/")
    added = only_entry(workspace, Action.MEMBER_ADDED)
    changed = only_entry(workspace, Action.MEMBER_ROLE_CHANGED)
    removed = only_entry(workspace, Action.MEMBER_REMOVED)
    for entry in (added, changed, removed):
        assert entry.actor == owner and entry.actor_name == "owner" and entry.target_name == "nora"
    assert added.details == {"role": "viewer"}
    assert changed.details == {"from": "viewer", "to": "editor"}


def test_connection_changes_are_recorded_and_no_entry_holds_a_key(api, owner, workspace):
    base = f"/api/v1/workspaces/{workspace.pk}/connections/"
    created = api.post(base, {"name": "router", "kind": "openrouter", "api_key": PROVIDER_KEY}, format="json").json()
    api.patch(f"{base}{created['id']}/", {"rpm": 30}, format="json")
    api.patch(f"{base}{created['id']}/", {"api_key": NEW_PROVIDER_KEY}, format="json")
    api.delete(f"{base}{created['id']}/")
    entries = {
        action: only_entry(workspace, action)
        for action in (
            Action.CONNECTION_CREATED,
            Action.CONNECTION_CHANGED,
            Action.CONNECTION_KEY_ROTATED,
            Action.CONNECTION_DELETED,
        )
    }
    for entry in entries.values():
        assert entry.actor == owner and entry.target_name == "router" and entry.target_id == str(created["id"])
    assert entries[Action.CONNECTION_CHANGED].details == {"changed": {"rpm": {"from": 60, "to": 30}}}
    everything = json.dumps(list(AuditEntry.objects.values()), default=str)
    assert PROVIDER_KEY not in everything and NEW_PROVIDER_KEY not in everything
    assert PROVIDER_KEY[-8:] not in everything


def test_deleting_a_comparison_is_recorded(api, owner, workspace):
    group = make_group(workspace, owner, title="Tea prompts")
    assert api.delete(f"/api/v1/groups/{group.pk}/").status_code == 204
    entry = only_entry(workspace, Action.COMPARISON_DELETED)
    assert entry.actor == owner and entry.target_name == "Tea prompts" and entry.target_id == str(group.pk)
    assert entry.details == {"variants": 2, "rounds": 0}


def test_only_the_creator_or_an_owner_deletes_a_comparison(api_for, owner, editor, workspace):
    group = make_group(workspace, owner, title="Owner's")
    assert api_for(editor).delete(f"/api/v1/groups/{group.pk}/").status_code == 403
    assert not AuditEntry.objects.filter(action=Action.COMPARISON_DELETED).exists()


def test_invitations_are_recorded_without_their_link(owner, workspace):
    invitation, link = invitation_create(workspace=workspace, actor=owner, role="editor", base_url="http://t")
    pat = make_user("pat")
    invitation_accept(invitation=invitation_for_key(link.rstrip("/").rpartition("/")[2]), user=pat)
    other, other_link = invitation_create(
        workspace=workspace, actor=owner, role="viewer", email="q@example.com", base_url="http://t"
    )
    invitation_revoke(invitation=other, actor=owner)
    assert AuditEntry.objects.filter(workspace=workspace, action=Action.INVITATION_SENT).count() == 2
    accepted = only_entry(workspace, Action.INVITATION_ACCEPTED)
    assert accepted.actor == pat and accepted.target_id == str(invitation.pk)
    assert only_entry(workspace, Action.MEMBER_ADDED).details == {"role": "editor", "via": "invitation"}
    revoked = only_entry(workspace, Action.INVITATION_REVOKED)
    assert revoked.actor == owner and revoked.target_name == "q@example.com"
    everything = json.dumps(list(AuditEntry.objects.values()), default=str)
    for secret in (link, other_link):
        assert secret.rpartition("/invite/")[2].strip("/") not in everything


def test_tokens_are_recorded_in_each_workspace_of_their_owner_without_the_key(owner, workspace):
    token, key = api_token_create(user=owner, name="CI", scope="read")
    api_token_revoke(token=token, actor=owner)
    created = only_entry(workspace, Action.TOKEN_CREATED)
    revoked = only_entry(workspace, Action.TOKEN_REVOKED)
    assert created.actor == owner and created.target_name == "CI (owner)" and created.details == {"scope": "read"}
    assert revoked.target_id == str(token.pk)
    assert key not in json.dumps(list(AuditEntry.objects.values()), default=str)


def test_the_log_is_for_owners_and_exports_as_csv(client, owner, editor, stranger, workspace, api):
    group = make_group(workspace, owner, title="=HYPERLINK(1)")
    api.delete(f"/api/v1/groups/{group.pk}/")
    client.force_login(owner)
    page = client.get(f"/w/{workspace.pk}/audit/").content.decode()
    assert "<td>Comparison deleted</td>" in page and "=HYPERLINK(1)" in page and "deleted once a day" in page
    exported = client.get(f"/w/{workspace.pk}/audit.csv")
    assert exported["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(exported.content.decode())))
    assert [row["action"] for row in rows] == ["comparison.deleted"]
    # A spreadsheet opening the export shows the title as text instead of running it as a formula.
    assert rows[0]["actor"] == "owner" and rows[0]["target"] == "'=HYPERLINK(1)"
    client.force_login(editor)
    assert client.get(f"/w/{workspace.pk}/audit/").status_code == 403
    assert client.get(f"/w/{workspace.pk}/audit.csv").status_code == 403
    client.force_login(stranger)
    assert client.get(f"/w/{workspace.pk}/audit.csv").status_code == 404


def test_entries_older_than_the_retention_period_are_pruned(settings, owner, workspace):
    settings.AUDIT_RETENTION_DAYS = 30
    api_token_create(user=owner, name="old")
    api_token_create(user=owner, name="new")
    AuditEntry.objects.filter(target_name__startswith="old").update(created_at=timezone.now() - timedelta(days=31))
    assert audit_prune() == 1
    assert list(AuditEntry.objects.values_list("target_name", flat=True)) == ["new (owner)"]
    settings.AUDIT_RETENTION_DAYS = 0
    AuditEntry.objects.update(created_at=timezone.now() - timedelta(days=3650))
    assert audit_prune() == 0 and AuditEntry.objects.count() == 1


def test_the_api_lists_the_log_for_owners_only(api, api_for, owner, editor, stranger, workspace):
    api_token_create(user=owner, name="CI")
    make_group(workspace, owner, title="Gone")
    api.delete(f"/api/v1/groups/{workspace.groups.get().pk}/")
    url = f"/api/v1/workspaces/{workspace.pk}/audit/"
    assert [e["action"] for e in api.get(url).json()["results"]] == ["comparison.deleted", "token.created"]
    assert [e["target_name"] for e in api.get(url, {"action": "token.created"}).json()["results"]] == ["CI (owner)"]
    assert api_for(editor).get(url).status_code == 403
    assert api_for(stranger).get(url).status_code == 404
