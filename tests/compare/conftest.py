"""Compare fixtures: a ready group in the owner's workspace."""

import asyncio

import pytest
from channels.db import database_sync_to_async
from django.db import connections

from tests.fixtures.compare_factories import make_group


@pytest.fixture(autouse=True)
def close_engine_connections():
    """The engine writes through asgiref's one sync thread; close its connection so the test database can go."""
    yield
    asyncio.run(database_sync_to_async(connections.close_all)())


@pytest.fixture
def group(workspace, owner):
    return make_group(workspace, owner)
