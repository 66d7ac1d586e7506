"""Password guessing is limited the same way wherever a password is presented (the token endpoint, the login form,
the admin's login): per account and per client address, counted in the database (lab/accounts/limits.py)."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.db.models import F
from django.test import Client, override_settings

from lab.models import PasswordAttempt
from tests.fixtures.factories import PASSWORD, make_user

pytestmark = pytest.mark.django_db

TOKEN = "/api/v1/auth/token/"


def ask_token(client: Client, username: str, password: str, address: str = "203.0.113.7"):
    return client.post(TOKEN, {"username": username, "password": password}, REMOTE_ADDR=address)


def sign_in_form(client: Client, username: str, password: str, address: str = "203.0.113.7"):
    return client.post("/login/", {"username": username, "password": password}, REMOTE_ADDR=address)


def pass_the_window() -> None:
    """Every recorded attempt becomes as old as the window: the limits forget them, as time would."""
    PasswordAttempt.objects.update(at=F("at") - timedelta(seconds=settings.LOGIN_WINDOW_S))


def test_guessing_on_the_token_endpoint_is_refused_after_five_and_the_right_password_too_until_the_window_passes(
    client, owner
):
    wrong = [ask_token(client, "owner", f"guess-{n}") for n in range(5)]
    assert [response.status_code for response in wrong] == [400] * 5  # checked, and wrong

    refused = ask_token(client, "owner", "guess-5")
    right = ask_token(client, "owner", PASSWORD)

    for response in (refused, right):
        assert response.status_code == 429
        assert response["Content-Type"] == "application/json"
        assert response.json()["detail"].startswith("Too many password attempts. Try again in ")
        assert 1 <= int(response["Retry-After"]) <= 300
    pass_the_window()
    assert ask_token(client, "owner", PASSWORD).status_code == 200


def test_the_right_password_does_not_count_against_the_account(client, owner):
    for _ in range(8):
        assert ask_token(client, "owner", PASSWORD).status_code == 200
    assert ask_token(client, "owner", "wrong").status_code == 400


def test_the_login_form_and_the_token_endpoint_share_one_count_per_account(client, owner):
    for n in range(3):
        assert sign_in_form(client, "owner", f"guess-{n}", address="198.51.100.1").status_code == 200
    for n in range(2):
        assert ask_token(client, "owner", f"guess-{n}", address="198.51.100.2").status_code == 400

    form = sign_in_form(client, "owner", PASSWORD, address="198.51.100.3")
    api = ask_token(client, "owner", PASSWORD, address="198.51.100.4")

    assert form.status_code == 200 and "Too many failed login attempts" in form.content.decode()
    assert "_auth_user_id" not in client.session
    assert api.status_code == 429


def test_a_name_typed_in_another_case_is_the_same_account(client, owner):
    for n in range(5):
        assert ask_token(client, "OWNER", f"guess-{n}").status_code == 400
    assert ask_token(client, "owner", PASSWORD).status_code == 429


def test_the_admin_login_is_limited_too(client):
    make_user("admin", PASSWORD).__class__.objects.filter(username="admin").update(is_staff=True, is_superuser=True)
    for n in range(5):
        client.post("/admin/login/", {"username": "admin", "password": f"guess-{n}"}, REMOTE_ADDR="192.0.2.9")
    refused = client.post("/admin/login/", {"username": "admin", "password": PASSWORD}, REMOTE_ADDR="192.0.2.9")
    assert refused.status_code == 429
    assert refused["Retry-After"]


@override_settings(LOGIN_FAILURES_PER_ADDRESS=6)
def test_one_address_guessing_many_accounts_is_refused_and_other_addresses_are_not(client, owner):
    for n in range(6):
        assert ask_token(client, f"someone-{n}", "guess", address="203.0.113.50").status_code == 400

    assert ask_token(client, "owner", PASSWORD, address="203.0.113.50").status_code == 429
    assert ask_token(client, "owner", PASSWORD, address="203.0.113.51").status_code == 200


# allauth's own limit on change requests (5 a minute per user, in the cache) aside: this is about the password count.
@override_settings(ACCOUNT_RATE_LIMITS={"login": None, "login_failed": None, "change_password": None})
def test_the_current_password_on_the_password_change_form_counts_against_the_account(client, owner):
    client.force_login(owner)
    change = "/accounts/password/change/"
    new = {"password1": "a brand new passphrase", "password2": "a brand new passphrase"}
    for n in range(4):
        wrong = client.post(change, {"oldpassword": f"guess-{n}", **new})
        assert "Please type your current password" in wrong.content.decode()
    assert ask_token(client, "owner", "guess-4").status_code == 400  # the fifth, on another way in

    refused = client.post(change, {"oldpassword": PASSWORD, **new})

    assert "Too many failed login attempts" in refused.content.decode()
    owner.refresh_from_db()
    assert owner.check_password(PASSWORD)
    pass_the_window()
    assert client.post(change, {"oldpassword": PASSWORD, **new}).status_code == 302
