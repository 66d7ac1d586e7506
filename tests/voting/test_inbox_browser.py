"""The inbox in a real Chromium: ten rounds of each of three comparisons voted on by keyboard alone (picks, tie,
all bad, a skip and an undo), each next round loading at once, blind until voted; and the same by mouse at desktop
size and by touch on a 390 px phone, with what each round asked shown above the answers (blind mode's shared input
only) and every button at touch size."""

import pytest
from django.urls import reverse

from compare.models import OutputStatus, Round
from lab.models import Role
from tests.fixtures.browser import log_in, off_loop, shoot, until
from tests.fixtures.compare_factories import INSTANT, make_group
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
            shoot(page, screenshots, "inbox-keyboard")  # the vote just cast on a three-way round, and the next
    until(page, "document.querySelector('[data-role=empty]').hidden === false")
    assert page.locator("[data-role=remaining]").inner_text() == "0 rounds left to vote on"
    assert page.locator("[data-role=last]").inner_text().startswith("Your vote on ")
    shoot(page, screenshots, "inbox-done")

    votes = off_loop(lambda: list(Vote.objects.filter(user=owner).values_list("round_id", "choice")))
    assert {round_id for round_id, _ in votes} == rounds  # every round once, none twice
    assert len(votes) == ROUNDS * COMPARISONS
    assert {choice for _, choice in votes} == {"winner", "tie", "all_bad"}
    assert off_loop(lambda: InboxSkip.objects.filter(user=owner).count()) == 0


TOPIC = "a parcel charged twice"
MODELS_PROMPT = f"Write a short refund email about {TOPIC}."
OWN_PROMPTS = {"A": "Version A: apologise first, then explain.", "B": "Version B: explain first, then apologise."}


def build_with_inputs(workspace, owner) -> None:
    """Two rounds of a comparison of models (one prompt for all) and two of a blind comparison of prompts (a prompt
    each), recorded as a worker records what it sent."""
    models = make_group(
        workspace,
        owner,
        models=[INSTANT, "simulated::coder", "simulated::writer"],
        prompts=["Write a short refund email about {{topic}}."] * 3,
        shared_variables={"topic": TOPIC},
        title="Refund email",
    )
    prompts = make_group(
        workspace,
        owner,
        models=[INSTANT, INSTANT],
        prompts=list(OWN_PROMPTS.values()),
        shared_variables={"topic": TOPIC},
        title="Apology order",
        blind=True,
    )
    for group, sent in ((models, dict.fromkeys("ABC", MODELS_PROMPT)), (prompts, OWN_PROMPTS)):
        for _ in range(2):
            round_ = finished_round(group, owner, enqueue=False)
            for output in round_.outputs.select_related("variant"):
                output.rendered_prompt = sent[output.variant.label]
                output.text = f"Dear customer, about {TOPIC}: answer {output.variant.label}."
                output.save(update_fields=["rendered_prompt", "text"])


def click(page, locator) -> None:
    """Click and wait until the page has finished acting on it."""
    done = int(page.evaluate("() => document.getElementById('inbox').dataset.actions || 0"))
    locator.click()
    until(page, f"Number(document.getElementById('inbox').dataset.actions || 0) > {done}")


def check_input(page) -> None:
    """The input panel opens from its summary and shows what this round asked, and nothing that names a variant."""
    details = page.locator("[data-role=input]")
    if details.get_attribute("open") is None:
        details.locator("summary").click()
    shown = details.inner_text()
    assert TOPIC in shown  # the round's variable
    if "Refund email" in page.inner_text("[data-role=title]"):
        assert MODELS_PROMPT in shown  # every answer was sent it: no secret
    else:
        assert "in words of its own" in shown
        assert not any(text in page.inner_text("#inbox") for text in OWN_PROMPTS.values())  # blind: hidden
    assert details.locator("[data-role=input-body]").is_visible()


def no_horizontal_overflow(page) -> bool:
    return page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")


@pytest.mark.django_db(transaction=True)
def test_voting_by_mouse_with_the_input_shown_and_by_touch_on_a_390_px_phone(
    owner, workspace, web_server, page_factory, screenshots
):
    off_loop(build_with_inputs, workspace, owner)
    teammate = off_loop(add_member, workspace, "tess", Role.VIEWER)
    inbox_url = f"{web_server.url}{reverse('voting:inbox', args=[workspace.pk])}"

    page = page_factory()
    log_in(page, web_server.url, owner.username)
    page.goto(inbox_url)
    until(page, f"{SHOWN}")
    check_input(page)
    actions = page.locator("[data-role=actions]")
    assert actions.locator("[data-key]").count() == page.locator("#inbox .col").count() + 4  # picks, T, B, S, U
    click(page, actions.get_by_role("button", name="Vote for Answer A"))
    assert page.locator("[data-role=last]").inner_text().startswith("Your vote on ")
    check_input(page)  # stays open for the next round, showing that round's input
    shoot(page, screenshots, "inbox")
    skipped = int(page.evaluate(f"() => {SHOWN}"))
    click(page, actions.get_by_role("button", name="Skip"))
    click(page, actions.get_by_role("button", name="Undo"))
    assert int(page.evaluate(f"() => {SHOWN}")) == skipped
    click(page, actions.get_by_role("button", name="Tie"))
    check_input(page)
    click(page, actions.get_by_role("button", name="All bad"))
    click(page, actions.get_by_role("button", name="Vote for Answer B"))
    until(page, "document.querySelector('[data-role=empty]').hidden === false")
    assert not actions.get_by_role("button", name="Tie").is_visible()  # nothing left to vote on…
    assert actions.get_by_role("button", name="Undo").is_visible()  # …but the last vote can still be taken back
    votes = off_loop(lambda: sorted(Vote.objects.filter(user=owner).values_list("choice", flat=True)))
    assert votes == ["all_bad", "tie", "winner", "winner"]

    phone = page_factory(390, 844, has_touch=True, is_mobile=True)
    log_in(phone, web_server.url, teammate.username)
    phone.goto(inbox_url)
    until(phone, f"{SHOWN}")
    assert no_horizontal_overflow(phone)
    summary = phone.locator("[data-role=input] summary")
    summary.tap()
    check_input(phone)
    for target in [summary, *phone.locator("[data-role=actions] button:visible").all()]:
        box = target.bounding_box()
        assert box["height"] >= 44 and box["width"] >= 44, target.inner_text()
    assert no_horizontal_overflow(phone)
    shoot(phone, screenshots, "inbox-phone", full_page=True)
    done = int(phone.evaluate("() => document.getElementById('inbox').dataset.actions || 0"))
    phone.locator("[data-role=actions]").get_by_role("button", name="Vote for Answer A").tap()
    until(phone, f"Number(document.getElementById('inbox').dataset.actions || 0) > {done}")
    assert phone.locator("[data-role=last]").inner_text().startswith("Your vote on ")
    assert off_loop(lambda: Vote.objects.filter(user=teammate, choice="winner").count()) == 1
