"""Invitations: mailed through Django's mail settings (locmem in tests), a link that works once, for the role it
names, and not after it expired or was revoked; listed and revoked by owners only."""

import re
from datetime import timedelta
from urllib.parse import urlparse

import pytest
from django.core import mail
from django.test import override_settings
from django.utils import timezone

from lab.invitations.models import Invitation
from lab.models import Membership, Role
from tests.fixtures.factories import PASSWORD, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def invite(django_capture_on_commit_callbacks):
    """Post the settings page's invitation form; the mail goes once the invitation is committed."""

    def post(client, workspace, **fields):
        with django_capture_on_commit_callbacks(execute=True):
            return client.post(f"/w/{workspace.pk}/settings/invitations/", {"role": Role.VIEWER, "days": 7, **fields})

    return post


def mailed_path() -> str:
    (message,) = mail.outbox
    return urlparse(re.search(r"http://testserver/invite/\S+/", message.body).group(0)).path


@pytest.fixture
def owner_client(client, owner, workspace):
    client.force_login(owner)
    return client


def test_a_mailed_invitation_joins_an_existing_account_with_the_role_given(invite, owner_client, workspace):
    response = invite(owner_client, workspace, email="Carol@Example.com", role=Role.EDITOR)
    assert response.status_code == 302
    (message,) = mail.outbox
    assert message.to == ["carol@example.com"]
    assert "Team A" in message.subject and "as editor" in message.body
    path = mailed_path()
    carol = make_user("carol")
    owner_client.force_login(carol)
    page = owner_client.get(path)
    assert page.status_code == 200 and "as <strong>editor</strong>" in page.content.decode()
    accepted = owner_client.post(path)
    assert accepted.status_code == 302 and accepted.url == f"/w/{workspace.pk}/"
    assert Membership.objects.get(user=carol, workspace=workspace).role == Role.EDITOR


def test_the_link_works_once(invite, owner_client, workspace):
    invite(owner_client, workspace, email="dave@example.com")
    path = mailed_path()
    owner_client.force_login(make_user("dave"))
    owner_client.post(path)
    owner_client.force_login(make_user("eve"))
    second = owner_client.post(path)
    assert second.status_code == 410
    assert "already used" in second.content.decode()
    assert not Membership.objects.filter(user__username="eve", workspace=workspace).exists()


def test_an_expired_invitation_says_so(invite, owner_client, workspace):
    invite(owner_client, workspace, email="frank@example.com")
    now = timezone.now()
    Invitation.objects.update(created_at=now - timedelta(days=8), expires_at=now - timedelta(days=1))
    owner_client.force_login(make_user("frank"))
    response = owner_client.post(mailed_path())
    assert response.status_code == 410 and "has expired" in response.content.decode()
    assert not Membership.objects.filter(user__username="frank", workspace=workspace).exists()


def test_a_revoked_invitation_says_so(invite, owner_client, owner, workspace):
    invite(owner_client, workspace, email="grace@example.com")
    invitation = Invitation.objects.get()
    assert owner_client.post(f"/w/{workspace.pk}/settings/invitations/{invitation.pk}/revoke/").status_code == 302
    owner_client.force_login(make_user("grace"))
    response = owner_client.get(mailed_path())
    assert response.status_code == 410 and "was revoked" in response.content.decode()


def test_an_unknown_link_is_not_found(client):
    response = client.get("/invite/not-a-real-key/")
    assert response.status_code == 404 and "not valid" in response.content.decode()


@override_settings(REGISTRATION_OPEN=False)
def test_a_link_creates_the_account_when_needed_even_with_sign_up_closed(invite, owner_client, workspace, client):
    response = invite(owner_client, workspace, role=Role.VIEWER)
    link = re.search(r"http://testserver/invite/[^<\s]+/", response.content.decode()).group(0)
    path = urlparse(link).path
    assert not mail.outbox  # a link is shown to the owner, not mailed
    owner_client.logout()
    assert "Create an account to join" in client.get(path).content.decode()
    signed_up = client.post(
        f"/register/?next={path}",
        {"username": "henry", "email": "henry@example.com", "password1": PASSWORD, "next": path},
    )
    assert signed_up.status_code == 302 and signed_up.url == path
    assert client.post(path).url == f"/w/{workspace.pk}/"
    assert Membership.objects.get(user__username="henry", workspace=workspace).role == Role.VIEWER


@override_settings(REGISTRATION_OPEN=False)
def test_sign_up_stays_closed_without_an_invitation(client):
    response = client.post("/register/", {"username": "ivan", "password1": PASSWORD})
    assert "Sign-up is closed" in response.content.decode()


def test_owners_list_invitations_and_others_may_not_invite(invite, owner_client, workspace, editor, client):
    invite(owner_client, workspace, email="judy@example.com")
    settings_page = owner_client.get(f"/w/{workspace.pk}/settings/").content.decode()
    assert "judy@example.com" in settings_page and "Pending" in settings_page
    client.force_login(editor)
    assert invite(client, workspace, email="kim@example.com").status_code == 403
    assert Invitation.objects.count() == 1


def test_another_workspace_cannot_revoke_an_invitation(invite, owner_client, workspace, stranger, client):
    invite(owner_client, workspace, email="leo@example.com")
    invitation = Invitation.objects.get()
    client.force_login(stranger)
    assert client.post(f"/w/{workspace.pk}/settings/invitations/{invitation.pk}/revoke/").status_code == 404
    invitation.refresh_from_db()
    assert invitation.revoked_at is None


def test_a_bad_role_or_expiry_is_refused_naming_the_field(invite, owner_client, workspace):
    response = invite(owner_client, workspace, role="boss", days=400)
    assert response.status_code == 302
    texts = [str(m) for m in owner_client.get(f"/w/{workspace.pk}/settings/").context["messages"]]
    assert any(t.startswith("Role:") for t in texts) and any(t.startswith("Expires after") for t in texts)
    assert not Invitation.objects.exists()


def test_the_api_makes_lists_and_revokes_invitations_for_owners_only(api, api_for, editor, workspace, client):
    base = f"/api/v1/workspaces/{workspace.pk}/invitations/"
    made = api.post(base, {"role": "viewer", "days": 3}, format="json")
    assert made.status_code == 201 and made.json()["state"] == "pending"
    path = urlparse(made.json()["link"]).path
    listed = api.get(base).json()["results"]
    assert [i["id"] for i in listed] == [made.json()["id"]] and "link" not in listed[0]
    assert api_for(editor).get(base).status_code == 403
    revoked = api.delete(f"{base}{made.json()['id']}/")
    assert revoked.status_code == 200 and revoked.json()["state"] == "revoked"
    assert client.get(path).status_code == 410


def test_the_api_names_the_field_that_is_wrong(api, workspace):
    response = api.post(f"/api/v1/workspaces/{workspace.pk}/invitations/", {"role": "boss", "days": 0}, format="json")
    assert response.status_code == 400 and {"role", "days"} <= set(response.json())


def test_another_workspace_sees_no_invitations(api, api_for, stranger, workspace):
    api.post(f"/api/v1/workspaces/{workspace.pk}/invitations/", {"role": "viewer"}, format="json")
    assert api_for(stranger).get(f"/api/v1/workspaces/{workspace.pk}/invitations/").status_code == 404
    invitation = workspace.invitations.get()
    assert (
        api_for(stranger).delete(f"/api/v1/workspaces/{workspace.pk}/invitations/{invitation.pk}/").status_code == 404
    )


def invitation_link(invite, owner_client, workspace) -> str:
    response = invite(owner_client, workspace, role=Role.EDITOR)
    owner_client.logout()
    return urlparse(re.search(r"http://testserver/invite/[^<\s]+/", response.content.decode()).group(0)).path


@override_settings(REGISTRATION_OPEN=False)
def test_signing_up_through_a_link_joins_at_once_and_makes_no_workspace_of_its_own(
    invite, owner_client, workspace, client
):
    path = invitation_link(invite, owner_client, workspace)
    client.get(path)
    signed_up = client.post(f"/register/?next={path}", {"username": "iris", "password1": PASSWORD, "next": path})
    assert client.get(signed_up.url).url == f"/w/{workspace.pk}/"  # no second "Join"
    memberships = Membership.objects.filter(user__username="iris")
    assert [(m.workspace_id, m.role) for m in memberships] == [(workspace.pk, Role.EDITOR)]


def test_logging_in_through_a_link_joins_at_once(invite, owner_client, workspace, client):
    path = invitation_link(invite, owner_client, workspace)
    make_user("jack")
    client.get(path)
    logged_in = client.post(f"/login/?next={path}", {"login": "jack", "password": PASSWORD, "next": path})
    assert client.get(logged_in.url).url == f"/w/{workspace.pk}/"
    assert Membership.objects.get(user__username="jack", workspace=workspace).role == Role.EDITOR


def test_a_plain_sign_up_still_gets_a_workspace_of_its_own(client):
    with override_settings(REGISTRATION_OPEN=True):
        client.post("/register/", {"username": "kate", "password1": PASSWORD})
    assert Membership.objects.get(user__username="kate").role == Role.OWNER
