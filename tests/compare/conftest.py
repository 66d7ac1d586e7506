"""Compare fixtures: a ready group in the owner's workspace."""

import asyncio

import pytest
from channels.db import database_sync_to_async
from django.db import connections

from tests.fixtures.compare_factories import make_group


@pytest.fixture(autouse=True)
def close_engine_connections(request):
    """The engine writes through asgiref's one sync thread; close its connection so the test database can go.
    Browser tests skip this: asyncio.run cannot run beside Playwright's loop, and there the engine runs in the worker
    process, so this process holds no engine connection to close."""
    yield
    if request.node.get_closest_marker("browser") is None:
        asyncio.run(database_sync_to_async(connections.close_all)())


@pytest.fixture
def group(workspace, owner):
    return make_group(workspace, owner)
