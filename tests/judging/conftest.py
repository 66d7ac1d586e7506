"""Judging fixtures: the fake server's connections in the owner's workspace, members with each role."""

import pytest

from lab.models import Role
from tests.fixtures.factories import add_member
from tests.fixtures.judging_factories import fake_connections


@pytest.fixture
def connections(workspace, fake_llm):
    return fake_connections(workspace, fake_llm)


@pytest.fixture
def editor(workspace):
    return add_member(workspace, "editor", Role.EDITOR)


@pytest.fixture
def viewer(workspace):
    return add_member(workspace, "viewer", Role.VIEWER)
