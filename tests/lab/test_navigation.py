"""The top navigation: every page links history, leaderboard, judges and settings; only editors see 'New comparison'."""

import pytest
from django.test import Client

from lab.models import Role
from tests.fixtures.factories import add_member

pytestmark = pytest.mark.django_db


def nav_of(user, url: str) -> str:
    client = Client()
    client.force_login(user)
    html = client.get(url).content.decode()
    return html[html.index('<nav class="mainnav"') : html.index("</nav>")]


def test_an_owner_sees_every_section_and_new_comparison(owner, workspace):
    nav = nav_of(owner, f"/w/{workspace.pk}/settings/")
    for section in ("History", "New comparison", "Leaderboard", "Judges", "Settings"):
        assert f">{section}</a>" in nav
    assert f"/w/{workspace.pk}/compare/new/" in nav


def test_a_viewer_is_not_offered_new_comparison(workspace):
    viewer = add_member(workspace, "vera", Role.VIEWER)
    nav = nav_of(viewer, f"/w/{workspace.pk}/settings/")
    assert ">History</a>" in nav
    assert "New comparison" not in nav
