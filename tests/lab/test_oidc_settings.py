"""Sign-in providers and mail come from the environment: nothing set means passwords only and mail on the console
(what `make run` gets); each provider's keys add its button; EMAIL_URL configures SMTP. Settings are read in a
fresh interpreter, as a deployment would."""

import json
import os
import subprocess
import sys

import pytest

READ = (
    "import json, django; django.setup(); from django.conf import settings as s; print(json.dumps({"
    "'providers': sorted(s.SOCIALACCOUNT_PROVIDERS), 'backend': s.EMAIL_BACKEND, 'host': s.EMAIL_HOST, "
    "'port': s.EMAIL_PORT, 'tls': s.EMAIL_USE_TLS, 'domains': s.OIDC_ALLOWED_EMAIL_DOMAINS, "
    "'signup': s.OIDC_ALLOW_SIGNUP, 'form_action': s.CONTENT_SECURITY_POLICY['DIRECTIVES']['form-action']}))"
)
SSO_VARIABLES = ("OIDC_ISSUER_URL", "OIDC_CLIENT_ID", "GITHUB_CLIENT_ID", "GOOGLE_CLIENT_ID", "EMAIL_URL")


def settings_with(**variables) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in SSO_VARIABLES}
    env.update(DJANGO_SETTINGS_MODULE="promptlab.settings", **variables)
    out = subprocess.run([sys.executable, "-c", READ], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_with_nothing_set_there_is_no_provider_and_mail_goes_to_the_console():
    read = settings_with()
    assert read["providers"] == [] and read["backend"] == "django.core.mail.backends.console.EmailBackend"


def test_each_provider_appears_when_its_keys_are_set_and_email_url_configures_smtp():
    read = settings_with(
        OIDC_ISSUER_URL="http://127.0.0.1:9/realms/acme",
        OIDC_CLIENT_ID="lab",
        OIDC_ALLOWED_EMAIL_DOMAINS="acme.example, @Corp.Example",
        OIDC_ALLOW_SIGNUP="0",
        GITHUB_CLIENT_ID="gh",
        GOOGLE_CLIENT_ID="gg",
        EMAIL_URL="smtp://mailer:secret@127.0.0.1:2525/?tls=True",
    )
    assert read["providers"] == ["github", "google", "openid_connect"]
    assert read["backend"] == "django.core.mail.backends.smtp.EmailBackend"
    assert (read["host"], read["port"], read["tls"]) == ("127.0.0.1", 2525, True)
    assert read["domains"] == ["acme.example", "corp.example"] and read["signup"] is False


@pytest.mark.django_db
def test_the_login_page_offers_a_button_per_configured_provider(client, settings):
    settings.SOCIALACCOUNT_PROVIDERS = {
        "github": {"APPS": [{"client_id": "gh", "secret": "s"}]},
        "google": {"APPS": [{"client_id": "gg", "secret": "s"}]},
    }
    page = client.get("/login/").content.decode()
    assert "Sign in with GitHub" in page and "Sign in with Google" in page
    assert 'action="/accounts/github/login/?process=login"' in page


@pytest.mark.django_db
def test_without_providers_the_login_page_offers_only_passwords(client, settings):
    settings.SOCIALACCOUNT_PROVIDERS = {}
    page = client.get("/login/").content.decode()
    assert "Sign in with" not in page and 'name="password"' in page and "Forgot your password?" in page


def test_the_form_action_policy_lets_each_configured_provider_s_sign_in_redirect_through():
    assert settings_with()["form_action"] == ["'self'"]
    read = settings_with(OIDC_ISSUER_URL="http://127.0.0.1:9/realms/acme", OIDC_CLIENT_ID="lab", GITHUB_CLIENT_ID="gh")
    assert read["form_action"] == ["'self'", "http://127.0.0.1:9", "https://github.com"]
