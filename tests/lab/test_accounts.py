"""Accounts: registration (which can be closed), a first workspace for a new user, login, API tokens, e-mail
verification and password reset (allauth's flows, mail through Django's locmem backend)."""

import re

import pytest
from allauth.account.models import EmailAddress
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import override_settings

from lab.models import Connection, Membership, Role
from tests.fixtures.factories import make_user

pytestmark = pytest.mark.django_db


def test_registering_creates_an_owned_workspace_that_works_offline(client):
    response = client.post("/register/", {"username": "newcomer", "password1": "correct horse battery staple"})
    assert response.status_code == 302
    membership = Membership.objects.get(user__username="newcomer")
    assert membership.role == Role.OWNER
    assert membership.workspace.name == "newcomer's workspace"
    assert list(membership.workspace.connections.values_list("kind", flat=True)) == ["simulated"]
    assert client.get("/", follow=True).status_code == 200


def test_registration_names_the_field_that_is_wrong(client, owner):
    response = client.post("/register/", {"username": "owner", "password1": "123"})
    assert response.status_code == 200
    form = response.context["form"]
    assert "username" in form.errors
    assert "password1" in form.errors
    assert get_user_model().objects.filter(username="owner").count() == 1


@override_settings(REGISTRATION_OPEN=False)
def test_registration_can_be_turned_off(client):
    response = client.post("/register/", {"username": "x", "password1": "correct horse battery staple"})
    assert "Sign-up is closed" in response.content.decode()
    assert not get_user_model().objects.filter(username="x").exists()


def test_provider_keys_in_the_environment_seed_new_workspaces(client, settings):
    settings.PROVIDER_SEED = {
        "openai": "sk-seeded-openai-key-1234",
        "anthropic": "",
        "openrouter": "",
        "gemini": "gm-seeded-gemini-key-9876",
        "openai_compatible": "http://127.0.0.1:11434/v1",
    }
    client.post("/register/", {"username": "seeded", "password1": "correct horse battery staple"})
    connections = {c.name: c for c in Connection.objects.filter(workspace__memberships__user__username="seeded")}
    assert sorted(connections) == ["gemini", "local", "openai", "simulated"]
    assert connections["openai"].api_key() == "sk-seeded-openai-key-1234"
    assert connections["local"].base_url == "http://127.0.0.1:11434/v1"


def test_a_token_authenticates_the_api(client, owner, workspace):
    from tests.fixtures.factories import PASSWORD

    token = client.post("/api/v1/auth/token/", {"username": "owner", "password": PASSWORD}).json()["token"]
    response = client.get("/api/v1/workspaces/", headers={"Authorization": f"Token {token}"})
    assert response.status_code == 200
    assert response.json()["count"] == 1


def test_login_page_and_logout(client, owner):
    from tests.fixtures.factories import PASSWORD

    assert client.get("/login/").status_code == 200
    assert client.post("/login/", {"username": "owner", "password": PASSWORD}).status_code == 302
    assert client.get("/", follow=True).status_code == 200
    client.post("/logout/")
    assert client.get("/", follow=False).status_code == 302


def test_signing_up_with_an_address_mails_a_verification_link_that_verifies_it(client):
    client.post(
        "/register/", {"username": "vera", "email": "vera@example.com", "password1": "correct horse battery staple"}
    )
    (message,) = mail.outbox
    assert message.to == ["vera@example.com"]
    link = re.search(r"http://testserver(/accounts/confirm-email/\S+/)", message.body).group(1)
    assert not EmailAddress.objects.get(email="vera@example.com").verified
    client.post(link)
    assert EmailAddress.objects.get(email="vera@example.com").verified


def test_a_forgotten_password_is_reset_through_the_mailed_link(client):
    user = make_user("rita")
    user.email = "rita@example.com"
    user.save()
    client.post("/accounts/password/reset/", {"email": "rita@example.com"})
    (message,) = mail.outbox
    link = re.search(r"http://testserver(/accounts/password/reset/key/\S+/)", message.body).group(1)
    form_page = client.get(link, follow=True)
    new_password = "a brand new long password 2026"
    client.post(form_page.redirect_chain[-1][0], {"password1": new_password, "password2": new_password})
    assert client.post("/login/", {"username": "rita", "password": new_password}).status_code == 302
    assert client.get("/", follow=True).context["user"].username == "rita"


@pytest.mark.parametrize(
    "path", ["/accounts/password/change/", "/accounts/email/", "/accounts/3rdparty/", "/accounts/password/reset/"]
)
def test_the_account_pages_render_in_the_lab_layout(client, owner, path):
    client.force_login(owner)
    response = client.get(path)
    assert response.status_code == 200
    assert 'class="brand"' in response.content.decode()  # the lab's top bar, not allauth's bare layout


def test_the_login_page_offers_sign_up_only_while_it_is_open(client, settings):
    assert "Create an account" in client.get("/login/").content.decode()
    settings.REGISTRATION_OPEN = False
    assert "Create an account" not in client.get("/login/").content.decode()
