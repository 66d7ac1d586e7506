"""A conversation in a real Chromium, against the web process and a real worker: a 3-variant comparison with a
shared few-shot block (made through the API) runs, continues twice from the follow-up box, and takes a vote on turn
3 and on the whole conversation; each column shows its own earlier turns, collapsed. The page is saved as
`conversation.png` (run with ARTEFACTS_DIR=docs to refresh docs/screenshots/conversation.png)."""

import re

import pytest
from rest_framework.test import APIClient

from compare.models import OutputStatus, Round
from tests.fixtures.browser import log_in, off_loop, shoot, until

pytestmark = [pytest.mark.browser, pytest.mark.services]

COLUMNS_JS = "[...document.querySelectorAll('.col')]"
MODELS = ["simulated::instant", "simulated::writer?token_ms=2&tokens=30", "simulated::coder?token_ms=2&tokens=30"]


def create_through_the_api(owner, workspace) -> int:
    api = APIClient()
    api.force_authenticate(owner)
    response = api.post(
        "/api/v1/groups/",
        {
            "workspace": workspace.pk,
            "title": "Tea chat",
            "mode": "models",
            "system_prompt": "You answer in one short paragraph.",
            "shared_messages": [
                {"role": "user", "content": "Tell me about coffee."},
                {"role": "assistant", "content": "Coffee is brewed from roasted beans."},
            ],
            "shared_variables": {"topic": "tea"},
            "variants": [{"model": model, "prompt": "Tell me about {{topic}}."} for model in MODELS],
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    return response.json()["id"]


def wait_until_done(page) -> None:
    until(page, "document.querySelector('.round')?.dataset.status === 'done'", timeout=30)
    until(page, f"{COLUMNS_JS}.every(c => c.dataset.status === 'ok')", timeout=10)


def continue_with(page, message: str, turn: int) -> None:
    page.fill("[data-action=continue] textarea", message)
    page.click("[data-action=continue] button[type=submit]")
    until(page, f"document.querySelector('[data-role=turn]')?.textContent.includes('Turn {turn}')")
    wait_until_done(page)


def test_a_three_column_conversation_continues_twice_and_takes_a_vote_on_turn_3(
    transactional_db, owner, workspace, web_server, celery_worker_process, page_factory, screenshots
):
    group_id = off_loop(create_through_the_api, owner, workspace)
    page = page_factory(1440, 1100)
    log_in(page, web_server.url, owner.username)
    page.goto(f"{web_server.url}/compare/{group_id}/")
    page.click("[data-action=rerun]")
    page.wait_for_url(re.compile(r"/compare/\d+/rounds/1/$"))
    wait_until_done(page)
    assert page.locator("[data-action=continue]").is_visible()

    continue_with(page, "Is it good for breakfast?", turn=2)
    continue_with(page, "Name one kind to try.", turn=3)
    assert page.url.endswith("/rounds/3/")
    assert page.locator(".col [data-role=history] summary").all_inner_texts() == ["Earlier turns (2)"] * 3
    assert "Name one kind to try." in page.locator("[data-role=follow-up-sent]").inner_text()

    page.wait_for_selector(".vote-panel[data-votable='1']")
    page.keyboard.press("1")
    page.wait_for_selector(".vote-status:has-text('You voted for')")
    # And a vote on the whole conversation, counted apart from the turn's.
    page.locator(".conversation-choice").nth(1).click()
    page.wait_for_selector("[data-role=conversation-voted]")
    page.wait_for_selector(".vote-status:has-text('You voted for')")
    page.locator(".col [data-role=history]").first.locator("summary").click()
    shoot(page, screenshots, "conversation", full_page=True)

    third = off_loop(lambda: Round.objects.get(group_id=group_id, number=3))
    assert (third.turn, third.message) == (3, "Name one kind to try.")
    outputs = off_loop(lambda: list(third.outputs.order_by("variant__position")))
    parents = off_loop(lambda: {o.variant_id: o for o in Round.objects.get(group_id=group_id, number=2).outputs.all()})
    for output in outputs:
        assert output.status == OutputStatus.OK
        # The shared few-shot turns, then this column's own answers: turn 3 sent what turn 2 sent, plus its answer.
        assert output.messages[1:3] == [
            {"role": "user", "content": "Tell me about coffee."},
            {"role": "assistant", "content": "Coffee is brewed from roasted beans."},
        ]
        before = parents[output.variant_id]
        assert output.messages[:-2] == before.messages
        assert output.messages[-2:] == [
            {"role": "assistant", "content": before.text},
            {"role": "user", "content": "Name one kind to try."},
        ]
