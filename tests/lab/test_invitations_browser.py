"""Invitations, API tokens and the audit log in a real Chromium: an owner makes an invitation link, a newcomer
opens it, creates an account and joins; the settings pages are screenshotted (docs/screenshots/ when
ARTEFACTS_DIR=docs)."""

import pytest

from lab.models import Membership, Role
from tests.fixtures.browser import log_in, shoot
from tests.fixtures.factories import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.services]


def test_a_newcomer_accepts_an_invitation_and_the_settings_pages_show_it(
    transactional_db, owner, workspace, web_server, page_factory, screenshots
):
    owner_page = page_factory()
    log_in(owner_page, web_server.url, owner.username)
    owner_page.goto(f"{web_server.url}/w/{workspace.pk}/settings/")
    owner_page.select_option("#invitations select[name=role]", Role.EDITOR)
    owner_page.click("#invitations button[type=submit]")
    link = owner_page.locator("#invitation-link").inner_text()
    assert link.startswith(f"{web_server.url}/invite/")
    shoot(owner_page, screenshots, "invitation-link")

    newcomer = page_factory()
    newcomer.goto(link)
    assert "as editor" in newcomer.locator("main").inner_text()
    shoot(newcomer, screenshots, "invitation-open")
    newcomer.click("text=Create an account to join")
    newcomer.fill("input[name=username]", "newcomer")
    newcomer.fill("input[name=email]", "newcomer@example.com")
    newcomer.fill("input[name=password1]", PASSWORD)
    newcomer.click("button[type=submit]")
    newcomer.wait_for_url(f"{web_server.url}/w/{workspace.pk}/")
    assert "Welcome to Team A, as editor." in newcomer.locator(".flash").inner_text()
    assert Membership.objects.get(user__username="newcomer", workspace=workspace).role == Role.EDITOR

    # The same link a second time says it was used.
    again = page_factory()
    again.goto(link)
    assert "already used" in again.locator("#invitation-refusal").inner_text()

    newcomer.goto(f"{web_server.url}/settings/tokens/")
    newcomer.fill("input[name=name]", "CI pipeline")
    newcomer.check("input[name=scope][value=read]")
    newcomer.click("text=Make token")
    assert newcomer.locator("#new-token-key").inner_text().startswith("pl_")
    shoot(newcomer, screenshots, "api-tokens", full_page=True)

    owner_page.goto(f"{web_server.url}/w/{workspace.pk}/settings/")
    members = owner_page.locator("#members").inner_text()
    assert "newcomer" in members
    assert "Accepted" in owner_page.locator("#invitations").inner_text()
    shoot(owner_page, screenshots, "settings-members-invitations", full_page=True)

    owner_page.goto(f"{web_server.url}/w/{workspace.pk}/audit/")
    log = owner_page.locator("table").inner_text()
    for what in ("Invitation sent", "Invitation accepted", "Member added", "API token created"):
        assert what in log
    shoot(owner_page, screenshots, "audit-log", full_page=True)
