"""The base layout and settings page in a real Chromium: navigation, phone width, the live worker check."""

import pytest

from tests.fixtures.browser import log_in, until

pytestmark = [pytest.mark.browser, pytest.mark.services]


def test_navigation_and_settings_work_on_a_phone_without_sideways_scrolling(
    transactional_db, owner, workspace, web_server, page_factory
):
    page = page_factory(width=390, height=844)
    log_in(page, web_server.url, owner.username)
    page.goto(f"{web_server.url}/w/{workspace.pk}/settings/")
    assert page.locator("h1").inner_text().startswith("Team A")
    page.locator(".menu-button").click()  # the links fold behind the menu on a phone
    assert page.get_by_role("link", name="History").is_visible()
    assert page.get_by_role("link", name="Settings").is_visible()
    assert page.locator("text=simulated").first.is_visible()
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0


def test_the_worker_check_answers_live_over_the_socket(
    transactional_db, owner, workspace, web_server, celery_worker_process, page_factory
):
    page = page_factory()
    log_in(page, web_server.url, owner.username)
    page.goto(f"{web_server.url}/w/{workspace.pk}/settings/")
    page.wait_for_timeout(300)  # let the socket connect before asking
    page.click("#worker-check")
    until(page, "document.getElementById('worker-status').textContent === 'The worker answered.'")


def test_adding_a_connection_with_a_bad_url_names_the_field(
    transactional_db, owner, workspace, web_server, page_factory
):
    page = page_factory()
    log_in(page, web_server.url, owner.username)
    page.goto(f"{web_server.url}/w/{workspace.pk}/settings/")
    page.click("text=Add a connection")
    page.fill("input[name=name]", "local")
    page.select_option("select[name=kind]", "openai_compatible")
    page.click("text=Add connection")
    assert "Base URL" in page.locator(".flash-error").inner_text()
    assert not workspace.connections.filter(name="local").exists()
