"""Compare fixtures: members with each role, and a ready group in the owner's workspace."""

import asyncio

import pytest
from channels.db import database_sync_to_async
from django.db import connections

from lab.models import Role
from tests.fixtures.compare_factories import make_group
from tests.fixtures.factories import add_member


@pytest.fixture(autouse=True)
def close_engine_connections():
    """The engine writes through asgiref's one sync thread; close its connection so the test database can go."""
    yield
    asyncio.run(database_sync_to_async(connections.close_all)())


@pytest.fixture
def editor(workspace):
    return add_member(workspace, "editor", Role.EDITOR)


@pytest.fixture
def viewer(workspace):
    return add_member(workspace, "viewer", Role.VIEWER)


@pytest.fixture
def group(workspace, owner):
    return make_group(workspace, owner)
