"""The site's address in text printed outside a request: SITE_URL, or the first allowed host on PORT (as
`PORT=8200 make run` serves); demo_setup's login line and the experiment command's links use it, and the embedded
mode's in-memory broker does not make kombu warn "No hostname was supplied"."""

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import override_settings

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = """
import logging
import django
from django.conf import settings
logging.basicConfig()
django.setup()
from promptlab.celery import app
with app.connection_for_write() as connection:
    connection.as_uri()
print(settings.SITE_URL)
"""


def embedded(**variables: str) -> subprocess.CompletedProcess:
    drop = ("DATABASE_URL", "REDIS_URL", "SITE_URL", "PORT", "ALLOWED_HOSTS", "DJANGO_ALLOW_ASYNC_UNSAFE")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update({"DEBUG": "1", "DJANGO_SETTINGS_MODULE": "promptlab.settings", **variables})
    return subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True, check=True)


def test_the_address_follows_the_port_make_run_serves_on_and_the_broker_does_not_warn():
    ran = embedded(PORT="8200")
    assert ran.stdout.strip() == "http://127.0.0.1:8200"
    assert "No hostname" not in ran.stderr


def test_site_url_names_the_address_outright():
    assert embedded(SITE_URL="https://lab.example.com/", PORT="8200").stdout.strip() == "https://lab.example.com"


@pytest.mark.django_db
@override_settings(SITE_URL="http://127.0.0.1:8200")
def test_demo_setup_prints_the_login_address_on_that_port():
    out = io.StringIO()
    call_command("demo_setup", "--empty", stdout=out)
    assert "Log in at http://127.0.0.1:8200/ as demo" in out.getvalue()
