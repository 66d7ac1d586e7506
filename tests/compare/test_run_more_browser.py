"""The "Run more" button in a real Chromium: the page lands on the newest round started, not the batch's first."""

import pytest

from tests.compare.queued import wait_for_round
from tests.fixtures.browser import log_in, off_loop, until
from tests.fixtures.compare_factories import INSTANT, make_group, start_round

pytestmark = [pytest.mark.browser, pytest.mark.services]


def test_run_more_lands_on_the_newest_round_it_started(
    transactional_db, owner, workspace, web_server, celery_worker_process, page_factory
):
    group = off_loop(make_group, workspace, owner, title="Run more", prompts=["One.", "Two."], models=[INSTANT] * 2)
    wait_for_round(off_loop(start_round, group, owner))
    page = page_factory(1280, 900)
    log_in(page, web_server.url, owner.username)
    page.goto(f"{web_server.url}/compare/{group.pk}/")
    until(page, "document.getElementById('compare').dataset.live === '1'")
    page.fill("#run-more-count", "5")
    page.click("form[data-action=run-more] button[type=submit]")
    until(page, "document.querySelector('.round').dataset.number !== '1'")
    assert page.locator(".round").get_attribute("data-number") == "6"
    assert page.url.rstrip("/").endswith("6")
