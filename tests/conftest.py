"""Shared test fixtures: users, workspaces, members with each role, the fake server's connections and API clients;
per-area fixtures live in tests/fixtures/."""

import os

import pytest
from rest_framework.test import APIClient

from lab.models import Role
from tests.fixtures.factories import add_member, make_user, make_workspace
from tests.fixtures.judging_factories import fake_connections

# Fixture modules shared across apps.
pytest_plugins = [
    "tests.fixtures.services",
    "tests.fixtures.processes",
    "tests.fixtures.private_services",
    "tests.fixtures.browser",
    "tests.fixtures.fake_llm",
    "tests.fixtures.images",
]

# Tests never start the embedded worker thread; tests that need a worker start a real Celery process.
os.environ.setdefault("EMBEDDED_WORKER", "0")


@pytest.fixture
def owner(db):
    return make_user("owner")


@pytest.fixture
def workspace(owner):
    return make_workspace(owner, "Team A")


@pytest.fixture
def stranger(db):
    """A user of another workspace, who must see none of `workspace`."""
    user = make_user("stranger")
    make_workspace(user, "Team B")
    return user


@pytest.fixture
def editor(workspace):
    return add_member(workspace, "editor", Role.EDITOR)


@pytest.fixture
def viewer(workspace):
    return add_member(workspace, "viewer", Role.VIEWER)


@pytest.fixture
def connections(workspace, fake_llm):
    """The candidates' and the judge's connections on the fake LLM server, in the owner's workspace."""
    return fake_connections(workspace, fake_llm)


@pytest.fixture
def api(owner) -> APIClient:
    client = APIClient()
    client.force_authenticate(owner)
    return client


def client_for(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def api_for():
    return client_for
