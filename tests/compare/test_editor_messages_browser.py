"""The editor's message lists in a real Chromium, against the web process and a real worker: a two-variant comparison
with a shared few-shot block and a prefill, one variant pasted as JSON (a bad paste is refused at the field), the
preview rendering each whole conversation with its token estimate, a missing variable and a refused save shown
beside their message, the page usable at 390 px wide, then saved and run with every message sent; and a library
version of several messages picked into a variant, diffed message by message. Run with ARTEFACTS_DIR=docs to
refresh docs/screenshots/editor-messages.png."""

import json
import re

import pytest

from compare.models import CompareGroup, OutputStatus
from compare.prompts import services as prompts
from tests.fixtures.browser import log_in, off_loop, shoot, until, watch

pytestmark = [pytest.mark.browser, pytest.mark.services]

MODEL = "simulated::writer?ttft_ms=20&token_ms=5&tokens=12"
PASTED = [
    {"role": "user", "content": "Greet {{name}} warmly, as a letter."},
    {"role": "assistant", "content": "Dear {{name}},"},
]
FITS_JS = "document.documentElement.scrollWidth <= window.innerWidth"


def sent_messages(title: str) -> list[list[dict]]:
    group = CompareGroup.objects.get(title=title)
    outputs = group.rounds.get().outputs.order_by("variant__position")
    assert [o.status for o in outputs] == [OutputStatus.OK, OutputStatus.OK]
    return [o.messages for o in outputs]


def test_a_two_variant_chat_comparison_with_few_shot_and_a_prefill_previews_saves_and_runs(
    transactional_db, owner, workspace, web_server, celery_worker_process, page_factory, screenshots
):
    page = page_factory(1280, 1000)
    _, errors = watch(page)
    log_in(page, web_server.url, owner.username)
    page.goto(f"{web_server.url}/w/{workspace.pk}/compare/new/")
    page.wait_for_selector(".ecol")

    page.fill("input[name=title]", "Greetings with examples")
    page.fill("input[name=model]", MODEL)
    page.fill("textarea[name=system_prompt]", "You write one-line greetings.")
    page.fill("[aria-label='Shared variables: name of variable 1']", "name")
    page.fill("[aria-label='Shared variables: value of variable 1']", "Ada")

    # The shared few-shot block: an example question and the answer to imitate.
    shared = page.locator("[data-role=shared-messages]")
    shared.locator("[data-action=add-message]").click()
    shared.locator("[data-action=add-message]").click()
    page.fill("[aria-label='Shared few-shot, message 1: content']", "Greet Grace.")
    assert page.locator("[aria-label='Shared few-shot, message 2: role']").input_value() == "assistant"
    page.fill("[aria-label='Shared few-shot, message 2: content']", "Hello, Grace!")

    # Variant 1 stays the simple case: one user message is one prompt box.
    first, second = page.locator(".ecol").nth(0), page.locator(".ecol").nth(1)
    assert first.locator(".msg-row").count() == 0
    first.locator(".ecol-prompt textarea").fill("Greet {{name}}.")

    # Variant 2 is pasted: a bad paste is refused at the field, a good one fills the list and marks the prefill.
    second.locator("[data-action=paste-messages]").click()
    second.locator("[data-role=paste-text]").fill('[{"role": "user", "content": "Hi"},')
    second.locator("[data-action=use-pasted]").click()
    assert second.locator("[data-role=paste-error]").inner_text().startswith("Not valid JSON")
    second.locator("[data-role=paste-text]").fill(json.dumps([{"role": "wizard", "content": "Hi"}]))
    second.locator("[data-action=use-pasted]").click()
    assert (
        'Message 1: the role "wizard" is not system, user or assistant'
        in second.locator("[data-role=paste-error]").inner_text()
    )
    second.locator("[data-role=paste-text]").fill(json.dumps({"model": "gpt-4o", "messages": PASTED}))
    second.locator("[data-action=use-pasted]").click()
    assert second.locator(".msg-row").count() == 2 and second.locator("[data-role=paste-box]").count() == 0
    assert second.locator(".msg-row").nth(1).locator(".prefill-badge").text_content() == "prefill"

    # The preview renders each whole conversation: system prompt, the few-shot turns, then the variant's own.
    conversation = second.locator("[data-role=conversation] li")
    second.locator("[data-role=conversation]", has_text="Dear Ada,").wait_for()
    assert [li.locator(".role-chip").text_content() for li in conversation.all()] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant · prefill",
    ]
    assert conversation.nth(1).locator("pre").inner_text() == "Greet Grace."
    assert conversation.nth(3).locator("pre").inner_text() == "Greet Ada warmly, as a letter."
    first.locator("[data-role=conversation]", has_text="Greet Ada.").wait_for()
    estimates = [c.locator("[data-role=tokens]").text_content() for c in (first, second)]
    tokens = [int(re.fullmatch(r"≈ (\d+) input tokens", text)[1]) for text in estimates]
    assert tokens[1] > tokens[0] > 5

    # A missing variable is named beside the message that uses it.
    second.locator("[aria-label='Variant 2, message 2: content']").fill("Dear {{title}} {{name}},")
    slot = second.locator("[data-message-index='2'] [data-role=message-error]")
    slot.locator("text={{title}}").wait_for()
    assert second.locator("[data-message-index='1'] [data-role=message-error]").is_hidden()
    second.locator("[aria-label='Variant 2, message 2: content']").fill("Dear {{name}},")
    until(page, "!document.querySelector('.ecol .msg-error, .ecol [data-role=message-error]:not([hidden])')")
    assert "null" not in page.inner_text("#editor")
    shoot(page, screenshots, "editor-messages", full_page=True)

    # At a phone's width the editor stacks and nothing scrolls sideways.
    page.set_viewport_size({"width": 390, "height": 900})
    until(page, FITS_JS)
    assert second.locator(".msg-row").nth(1).locator("textarea").bounding_box()["width"] > 250

    page.set_viewport_size({"width": 1280, "height": 1000})
    # A refused save names the message, in the list above and beside the message itself.
    shared.locator("[data-action=add-message]").click()
    page.click("text=Save and run")
    page.locator(".editor-errors li", has_text="Shared message 3: content is empty").wait_for()
    beside = shared.locator("[data-message-index='3'] [data-role=message-error]")
    assert beside.is_visible() and "content is empty" in beside.inner_text()
    page.click("[aria-label='Remove Shared few-shot, message 3']")
    page.click("text=Save and run")
    page.wait_for_url(re.compile(r"/compare/\d+/$"))
    page.wait_for_selector(".round[data-status=done]", timeout=20_000)
    plain, prefilled = off_loop(sent_messages, "Greetings with examples")
    few_shot = [{"role": "user", "content": "Greet Grace."}, {"role": "assistant", "content": "Hello, Grace!"}]
    system = {"role": "system", "content": "You write one-line greetings."}
    assert plain == [system, *few_shot, {"role": "user", "content": "Greet Ada."}]
    assert prefilled == [
        system,
        *few_shot,
        {"role": "user", "content": "Greet Ada warmly, as a letter."},
        {"role": "assistant", "content": "Dear Ada,"},
    ]
    assert errors == [f"400 {web_server.url}/w/{workspace.pk}/compare/save/"]  # the refused save, and nothing else


def test_picking_a_library_version_of_several_messages_fills_the_list_and_diffs_it_message_by_message(
    transactional_db, owner, workspace, web_server, page_factory
):
    few_shot = [
        {"role": "system", "content": "You label tickets."},
        {"role": "user", "content": "My parcel is late."},
        {"role": "assistant", "content": "shipping"},
        {"role": "user", "content": "{{ticket}}"},
    ]
    prompt = off_loop(prompts.prompt_create, workspace=workspace, user=owner, name="Labeller", messages=few_shot)
    page = page_factory(1280, 1000)
    log_in(page, web_server.url, owner.username)
    page.goto(f"{web_server.url}/w/{workspace.pk}/compare/new/")
    first = page.locator(".ecol").first
    first.locator("[data-role=version-pick]").select_option(str(prompt.current_id))
    assert first.locator(".msg-row").count() == 4
    assert first.locator("[aria-label='Variant 1, message 1: role']").input_value() == "system"
    first.locator("[aria-label='Variant 1, message 3: content']").fill("delivery")
    first.locator("[data-role=version-diff] summary").click()
    body = first.locator("[data-role=version-diff-body]")
    body.locator(".msg-diff[data-op=changed]").wait_for()
    assert body.locator(".msg-diff").count() == 1 and "message 3 changed" in body.inner_text()
    assert (body.locator("del").inner_text(), body.locator("ins").inner_text()) == ("shipping", "delivery")
