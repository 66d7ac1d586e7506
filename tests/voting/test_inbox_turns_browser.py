"""A later turn in the inbox, in a real Chromium on a 390 px phone: turn 3 of a blind three-column conversation
shows what was asked before and, per column, its own earlier answers (collapsed until tapped), no model names, and
takes a vote on the whole conversation and then the turn's own vote, by touch."""

import pytest
from django.urls import reverse

from compare.models import OutputStatus, Round, RoundStatus
from compare.rounds.continuing import continued_messages
from tests.fixtures.browser import log_in, off_loop, shoot, until
from tests.fixtures.compare_factories import INSTANT, make_group, make_round
from voting.models import ConversationVote, Vote

pytestmark = [pytest.mark.browser, pytest.mark.services]

MODELS = [INSTANT, "simulated::coder", "simulated::writer"]
PROMPT = "Name a good tea for the evening."
FOLLOW_UPS = ["Why that one?", "And in summer?"]
SHOWN = "document.getElementById('inbox').dataset.round"


def build(workspace, owner) -> tuple[Round, dict[int, int]]:
    """Three finished turns, recorded as a worker and round_continue record them (no task is queued, so no worker
    writes over them); the first two already voted on, so the inbox serves turn 3. Returns it and each of its
    outputs' variant."""
    group = make_group(workspace, owner, models=MODELS, prompts=[PROMPT] * 3, blind=True, title="Tea talk")
    parent = None
    for turn, message in enumerate(["", *FOLLOW_UPS], start=1):
        fields = {"parent": parent, "root_id": parent.conversation_id, "message": message} if parent else {}
        round_ = make_round(group, created_by=owner, status=RoundStatus.DONE, turn=turn, **fields)
        before = {o.variant_id: o for o in parent.outputs.all()} if parent else {}
        for output in round_.outputs.all():
            sent = (
                continued_messages(before[output.variant_id].messages, before[output.variant_id].text, message)
                if parent
                else [{"role": "user", "content": PROMPT}]
            )
            output.messages, output.rendered_prompt = sent, message or PROMPT
            output.text, output.status = f"Turn {turn} answer of variant {output.variant_id}.", OutputStatus.OK
            output.save(update_fields=["messages", "rendered_prompt", "text", "status"])
        if turn < 3:
            Vote.objects.create(round=round_, group=group, user=owner, choice="tie")
        parent = round_
    return parent, dict(parent.outputs.values_list("pk", "variant_id"))


@pytest.mark.django_db(transaction=True)
def test_turn_three_on_a_390_px_phone_history_expanded_then_voted(
    owner, workspace, web_server, page_factory, screenshots
):
    third, variants = off_loop(build, workspace, owner)
    phone = page_factory(390, 844, has_touch=True, is_mobile=True)
    log_in(phone, web_server.url, owner.username)
    phone.goto(f"{web_server.url}{reverse('voting:inbox', args=[workspace.pk])}")
    until(phone, f"{SHOWN}")
    assert int(phone.evaluate(f"() => {SHOWN}")) == third.pk
    assert "turn 3" in phone.inner_text("[data-role=title]")
    assert " ".join(phone.inner_text("[data-role=follow-up]").split()) == "Turn 3 · you: And in summer?"

    # The conversation so far, collapsed until tapped: both earlier user messages.
    history = phone.locator("[data-role=conversation]")
    assert history.get_attribute("open") is None
    assert not phone.locator("[data-role=conversation-body]").is_visible()
    history.locator("summary").tap()
    asked = [" ".join(text.split()) for text in phone.locator("[data-role=conversation-body] li").all_inner_texts()]
    assert asked == [f"Turn 1 · asked: {PROMPT}", "Turn 2 · you: Why that one?"]

    # Each column's own earlier answers, in its column, collapsed until tapped; never another column's.
    columns = phone.locator("#inbox .col")
    assert columns.count() == 3
    for index in range(3):
        column = columns.nth(index)
        own = variants[int(column.get_attribute("data-output"))]
        earlier = column.locator("[data-role=history]")
        assert not earlier.locator("pre").first.is_visible()
        earlier.locator("summary").tap()
        assert earlier.locator("pre").all_inner_texts() == [
            f"Turn 1 answer of variant {own}.",
            f"Turn 2 answer of variant {own}.",
        ]
        assert column.locator(".col-body").inner_text() == f"Turn 3 answer of variant {own}."
    shown = phone.inner_text("#inbox")
    assert not any(model in shown for model in MODELS)
    assert phone.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
    touch = [
        history.locator("summary"),
        *phone.locator("#inbox [data-role=history] summary").all(),
        *phone.locator("[data-role=conversation-choices] button").all(),
        *phone.locator("[data-role=actions] button:visible").all(),
    ]
    for target in touch:
        box = target.bounding_box()
        assert box["height"] >= 44 and box["width"] >= 44, target.inner_text()
    shoot(phone, screenshots, "inbox-turn-3-phone", full_page=True)

    # The vote on the whole conversation (optional, kept apart), then the turn's own vote.
    picked = int(columns.nth(1).get_attribute("data-output"))
    first_column = int(columns.nth(0).get_attribute("data-output"))
    done = int(phone.evaluate("() => document.getElementById('inbox').dataset.actions || 0"))
    phone.get_by_role("button", name="Whole conversation: Answer B").tap()
    until(phone, f"Number(document.getElementById('inbox').dataset.actions || 0) > {done}")
    assert phone.get_by_role("button", name="Whole conversation: Answer B").get_attribute("aria-pressed") == "true"
    assert phone.locator("[data-role=conversation-voted]").is_visible()
    done = int(phone.evaluate("() => document.getElementById('inbox').dataset.actions || 0"))
    phone.locator("[data-role=actions]").get_by_role("button", name="Vote for Answer A").tap()
    until(phone, f"Number(document.getElementById('inbox').dataset.actions || 0) > {done}")
    assert phone.locator("[data-role=last]").inner_text().startswith("Your vote on ")
    conversation_votes = off_loop(lambda: list(ConversationVote.objects.values_list("variant_id", flat=True)))
    assert conversation_votes == [variants[picked]]
    turn_vote = off_loop(lambda: Vote.objects.get(round=third, user=owner))
    assert (turn_vote.choice, turn_vote.output_id) == ("winner", first_column)  # one vote each, never counted twice
    assert off_loop(lambda: Vote.objects.filter(user=owner).count()) == 3  # turns 1 and 2 before, and this one
