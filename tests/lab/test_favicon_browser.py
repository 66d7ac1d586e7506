"""The site's icon in a real Chromium: the page links one that answers, and /favicon.ico (asked for by anything that
does not read the link) answers too, so a first page load has no 404."""

import pytest

from tests.fixtures.browser import watch

pytestmark = [pytest.mark.browser]


def test_the_first_page_links_an_icon_that_answers_and_favicon_ico_answers(transactional_db, web_server, page_factory):
    page = page_factory()
    _, errors = watch(page)
    page.goto(f"{web_server.url}/login/")
    icon = page.eval_on_selector("link[rel=icon]", "link => link.href")
    statuses = page.evaluate(
        "async (urls) => Promise.all(urls.map(async (url) => (await fetch(url)).status))",
        [icon, f"{web_server.url}/favicon.ico"],
    )
    assert statuses == [200, 200]
    assert not errors
