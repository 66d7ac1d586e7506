"""Single sign-on through OpenID Connect, end to end against a real identity provider on 127.0.0.1 (oidc_idp):
allauth discovers it, sends the browser to its authorize endpoint, trades the code (with PKCE) at its token
endpoint and reads the signed ID token and userinfo. Nothing on our side is patched."""

from urllib.parse import urlparse

import httpx
import pytest
from django.contrib.auth import get_user_model

from lab.models import Membership, Role
from tests.fixtures.factories import make_workspace
from tests.lab.oidc_idp import CLIENT_ID, CLIENT_SECRET, IdentityProvider

pytestmark = pytest.mark.django_db


@pytest.fixture
def idp(settings):
    provider = IdentityProvider().start()
    settings.SOCIALACCOUNT_PROVIDERS = {
        "openid_connect": {
            "OAUTH_PKCE_ENABLED": True,
            "APPS": [
                {
                    "provider_id": "oidc",
                    "name": "Acme SSO",
                    "client_id": CLIENT_ID,
                    "secret": CLIENT_SECRET,
                    "settings": {"server_url": provider.issuer},
                }
            ],
        }
    }
    settings.OIDC_ALLOWED_EMAIL_DOMAINS = ["acme.example"]
    settings.OIDC_ALLOW_SIGNUP = True
    yield provider
    provider.stop()


def sign_in(client, idp, **identity):
    """The browser's part of the flow: press the button, visit the provider, come back with the code."""
    idp.next_identity = {"email_verified": True, **identity}
    started = client.post("/accounts/oidc/oidc/login/")
    assert started.status_code == 302 and started.url.startswith(f"{idp.issuer}/authorize?")
    at_provider = httpx.get(started.url, follow_redirects=False)
    assert at_provider.status_code == 302, at_provider.text
    back = urlparse(at_provider.headers["location"])
    assert back.path == "/accounts/oidc/oidc/login/callback/"
    return client.get(f"{back.path}?{back.query}")


def test_a_user_of_an_allowed_domain_signs_in_and_lands_in_their_workspace(client, idp):
    response = sign_in(client, idp, sub="u-1", email="alice@acme.example", preferred_username="alice", name="Alice")
    assert response.status_code == 302
    landing = client.get(response.url, follow=True)
    user = get_user_model().objects.get(email="alice@acme.example")
    membership = Membership.objects.get(user=user)
    assert membership.role == Role.OWNER
    assert landing.redirect_chain[-1][0] == f"/w/{membership.workspace_id}/"
    assert landing.status_code == 200 and landing.context["user"] == user
    # The whole exchange went through the provider: discovery, authorize, token and userinfo.
    assert {"/.well-known/openid-configuration", "/authorize", "/token", "/userinfo"} <= set(idp.requests)


def test_signing_in_again_reaches_the_same_account(client, idp):
    sign_in(client, idp, sub="u-1", email="alice@acme.example", preferred_username="alice")
    client.post("/logout/")
    response = sign_in(client, idp, sub="u-1", email="alice@acme.example", preferred_username="alice")
    assert response.status_code == 302
    assert get_user_model().objects.filter(email="alice@acme.example").count() == 1
    assert Membership.objects.filter(user__email="alice@acme.example").count() == 1


def test_another_domain_is_refused_with_a_clear_message(client, idp):
    response = sign_in(client, idp, sub="u-2", email="mallory@elsewhere.example", preferred_username="mallory")
    assert response.status_code == 403
    text = response.content.decode()
    assert "mallory@elsewhere.example" in text and "only accepts addresses at" in text and "acme.example" in text
    assert not get_user_model().objects.filter(email="mallory@elsewhere.example").exists()
    assert client.get("/").status_code == 302  # still signed out


def test_an_unverified_address_at_an_allowed_domain_is_refused(client, idp):
    idp_identity = {"sub": "u-3", "email": "eve@acme.example", "preferred_username": "eve"}
    idp.next_identity = {**idp_identity, "email_verified": False}
    started = client.post("/accounts/oidc/oidc/login/")
    back = urlparse(httpx.get(started.url, follow_redirects=False).headers["location"])
    response = client.get(f"{back.path}?{back.query}")
    assert response.status_code == 403
    assert not get_user_model().objects.filter(email="eve@acme.example").exists()


def test_when_new_users_may_not_be_created_only_existing_accounts_sign_in(client, idp, settings, owner):
    settings.OIDC_ALLOW_SIGNUP = False
    response = sign_in(client, idp, sub="u-4", email="newbie@acme.example", preferred_username="newbie")
    assert "Sign-up is closed" in response.content.decode()
    assert not get_user_model().objects.filter(email="newbie@acme.example").exists()


def test_an_invited_member_signs_up_through_the_provider_even_when_sign_up_is_closed(client, idp, settings, owner):
    from lab.invitations.services import invitation_create

    settings.OIDC_ALLOW_SIGNUP = False
    workspace = make_workspace(owner, "Acme team")
    _, link = invitation_create(workspace=workspace, actor=owner, role=Role.EDITOR, base_url="http://testserver")
    path = urlparse(link).path
    assert client.get(path).status_code == 200
    response = sign_in(client, idp, sub="u-5", email="bob@acme.example", preferred_username="bob")
    assert response.status_code == 302
    accepted = client.post(path)
    assert accepted.url == f"/w/{workspace.pk}/"
    assert Membership.objects.get(user__email="bob@acme.example", workspace=workspace).role == Role.EDITOR
