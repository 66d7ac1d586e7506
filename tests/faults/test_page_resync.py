"""An open comparison page in a real Chromium catches up after Redis blinked: a vote cast while Redis was down (so
its live tally never went out) shows on the page shortly after Redis is back, without a reload."""

import pytest

from lab.models import Role
from tests.fixtures.browser import log_in, off_loop, until
from tests.fixtures.factories import add_member
from tests.fixtures.processes import login, start_web
from tests.fixtures.voting_factories import finished_round, voting_group

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.faults]


def test_a_vote_whose_tally_was_lost_while_redis_was_down_shows_on_an_open_page_once_redis_is_back(
    transactional_db, owner, workspace, tmp_path, private_redis, page_factory
):
    group = off_loop(voting_group, workspace, owner, n=2)
    round_ = off_loop(finished_round, group, owner)
    second = off_loop(lambda: round_.outputs.order_by("variant__position").last())
    colleague = off_loop(add_member, workspace, "colleague", Role.VIEWER)
    web = off_loop(start_web, tmp_path, REDIS_URL=private_redis.url)
    try:
        watcher = page_factory(1280, 860)
        log_in(watcher, web.url, owner.username)
        watcher.goto(f"{web.url}/compare/{group.pk}/")
        watcher.wait_for_selector(".vote-panel[data-votable='1']")
        until(watcher, "document.getElementById('compare').dataset.live === '1'")
        voter = off_loop(login, web.url, colleague.username)

        off_loop(private_redis.stop)
        vote = off_loop(
            voter.post,
            f"/api/v1/rounds/{round_.pk}/vote/",
            json={"output": second.pk},
            headers={"X-CSRFToken": voter.cookies["csrftoken"], "Referer": web.url},
        )
        off_loop(private_redis.start)

        assert vote.status_code == 200 and vote.json()["live"] == "delayed"
        assert watcher.locator("[data-tally=total]").inner_text() == "0"  # the push was lost with Redis
        # The socket stayed open; the server's renewal of its membership tells the page to resync.
        until(watcher, f"document.querySelector('[data-tally=\"{second.pk}\"]').textContent.trim() === '1'", 5)
        assert watcher.locator("[data-tally=total]").inner_text() == "1"
    finally:
        off_loop(web.stop)
