"""The inbox in a real Chromium: ten rounds of each of three comparisons voted on by keyboard alone (picks, tie,
all bad, a skip and an undo), each next round loading at once, blind until voted."""

import pytest
from django.urls import reverse

from compare.models import OutputStatus, Round
from lab.models import Role
from tests.fixtures.browser import log_in, off_loop, shoot, until
from tests.fixtures.factories import add_member
from tests.fixtures.voting_factories import finished_round, voting_group
from voting.models import InboxSkip, Vote
from voting.services import vote_cast

pytestmark = [pytest.mark.browser, pytest.mark.services]

ROUNDS, COMPARISONS = 10, 3
SHOWN = "document.getElementById('inbox').dataset.round"


def build(workspace, owner) -> set[int]:
    rounds = set()
    for index, title in enumerate(["Tea haiku", "Refund email", "SQL explainer"][:COMPARISONS]):
        group = voting_group(workspace, owner, n=3 if index != 1 else 2, title=title)
        for _ in range(ROUNDS):
            round_ = finished_round(group, owner)
            for output in round_.outputs.all():
                output.text = f"{title}: answer {output.variant.label}, a few words long."
                output.status = OutputStatus.OK
                output.save(update_fields=["text", "status"])
            rounds.add(round_.pk)
    return rounds


def press(page, key: str) -> None:
    """Press a key and wait until the page has finished acting on it."""
    done = int(page.evaluate("() => document.getElementById('inbox').dataset.actions || 0"))
    page.keyboard.press(key)
    until(page, f"Number(document.getElementById('inbox').dataset.actions || 0) > {done}")


@pytest.mark.django_db(transaction=True)
def test_voting_through_ten_rounds_of_three_comparisons_by_keyboard_alone(
    owner, workspace, web_server, page_factory, screenshots
):
    rounds = off_loop(build, workspace, owner)
    teammate = off_loop(add_member, workspace, "tess", Role.VIEWER)
    page = page_factory()
    log_in(page, web_server.url, owner.username)
    page.goto(f"{web_server.url}{reverse('voting:inbox', args=[workspace.pk])}")
    until(page, f"{SHOWN}")
    assert page.locator("#inbox .col-title").first.text_content().startswith("Answer ")  # blind by default
    assert page.locator("[data-role=remaining]").inner_text() == f"{ROUNDS * COMPARISONS} rounds left to vote on"

    # Live tally: a teammate's vote on the round shown arrives over the websocket (the total only: blind).
    until(page, "document.getElementById('inbox').dataset.live === '1'")
    shown = int(page.evaluate(f"() => {SHOWN}"))
    off_loop(lambda: vote_cast(round=Round.objects.get(pk=shown), user=teammate, verdict="tie"))
    until(page, "document.querySelector('[data-role=tally]').textContent.startsWith('1 vote so far;')")

    skipped = int(page.evaluate(f"() => {SHOWN}"))
    press(page, "s")  # skip one…
    assert page.locator("[data-role=last]").inner_text().startswith("Skipped")
    press(page, "u")  # …and take the skip back: the same round again
    assert int(page.evaluate(f"() => {SHOWN}")) == skipped

    keys = ["1", "2", "t", "3", "b", "1", "2", "1"]
    for index in range(ROUNDS * COMPARISONS):
        columns = page.locator("#inbox .col").count()
        key = keys[index % len(keys)]
        press(page, key if key in "tb" or int(key) <= columns else "1")
        if index == 4:
            press(page, "u")  # undo the all-bad vote: the round comes back, unvoted and blind again
            assert page.locator("#inbox .col-title").first.text_content().startswith("Answer ")
            press(page, "t")
        if index == 3:
            shoot(page, screenshots, "inbox")  # the vote just cast on a three-way round, revealed, and the next
    until(page, "document.querySelector('[data-role=empty]').hidden === false")
    assert page.locator("[data-role=remaining]").inner_text() == "0 rounds left to vote on"
    assert page.locator("[data-role=last]").inner_text().startswith("Your vote on ")
    shoot(page, screenshots, "inbox-done")

    votes = off_loop(lambda: list(Vote.objects.filter(user=owner).values_list("round_id", "choice")))
    assert {round_id for round_id, _ in votes} == rounds  # every round once, none twice
    assert len(votes) == ROUNDS * COMPARISONS
    assert {choice for _, choice in votes} == {"winner", "tie", "all_bad"}
    assert off_loop(lambda: InboxSkip.objects.filter(user=owner).count()) == 0
