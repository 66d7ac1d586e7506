"""Judging fixtures: the fake server's connections in the owner's workspace."""

import pytest

from tests.fixtures.judging_factories import fake_connections


@pytest.fixture
def connections(workspace, fake_llm):
    return fake_connections(workspace, fake_llm)
