"""The page header in a real Chromium: on a 390 px phone it is one short line with a menu that opens without
JavaScript and shows every link; on a desktop the links sit in the bar."""

import re

import pytest

from tests.fixtures.browser import log_in, shoot

pytestmark = [pytest.mark.browser, pytest.mark.services]

PHONE = (390, 844)
LINKS = ("History", "New comparison", "Experiments", "To vote", "Prompts", "Leaderboard", "Judges", "Settings")


def test_on_a_phone_the_header_is_short_and_its_menu_opens_to_the_links(
    transactional_db, owner, workspace, web_server, page_factory, screenshots
):
    page = page_factory(*PHONE, has_touch=True, is_mobile=True, java_script_enabled=False)
    log_in(page, web_server.url, owner.username)
    page.goto(f"{web_server.url}/w/{workspace.pk}/")
    header = page.locator("header.topbar")
    height = header.bounding_box()["height"]
    assert height <= 0.15 * PHONE[1], height  # before: every link wrapped into the bar, a quarter of the screen
    nav = page.get_by_role("navigation", name="Main")
    assert nav.is_hidden()
    shoot(page, screenshots, "header-phone")

    page.keyboard.press("Tab")  # the menu is the first stop after the brand, and Space opens it
    page.keyboard.press("Tab")
    page.keyboard.press("Space")
    assert nav.is_visible()
    page.keyboard.press("Space")
    assert nav.is_hidden()
    page.locator(".menu-button").tap()
    for name in LINKS:
        assert nav.get_by_role("link", name=name).is_visible(), name
    assert page.get_by_role("button", name=f"Log out {owner.username}").is_visible()
    assert page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
    shoot(page, screenshots, "header-phone-menu")
    nav.get_by_role("link", name="Leaderboard").tap()
    page.wait_for_url(re.compile(r"/leaderboard/"))


def test_on_a_desktop_the_links_sit_in_the_bar_without_a_menu_button(
    transactional_db, owner, workspace, web_server, page_factory
):
    page = page_factory(1280, 900)
    log_in(page, web_server.url, owner.username)
    page.goto(f"{web_server.url}/w/{workspace.pk}/")
    assert page.locator(".menu-button").is_hidden()
    assert page.get_by_role("checkbox", name="Menu").count() == 0  # nothing to tab to that does nothing
    nav = page.get_by_role("navigation", name="Main")
    assert all(nav.get_by_role("link", name=name).is_visible() for name in LINKS)
    assert page.locator("header.topbar").bounding_box()["height"] <= 100
