"""The comparison pages in a real Chromium, against the web process and a real worker: create, preview, run and
stream; vote with live tallies; blind mode; a failing variant. Screenshots of each state are saved as artefacts."""

import re

import pytest

from compare.blind import outputs_as_seen_by
from compare.models import Mode, OutputStatus, Round, RoundStatus
from compare.selectors import round_with_outputs
from lab.models import ConnectionKind, Role
from lab.services import connection_create
from tests.compare.queued import wait_for_round
from tests.fixtures.browser import log_in, off_loop, shoot, until
from tests.fixtures.compare_factories import INSTANT, make_group, make_round, start_round
from tests.fixtures.factories import add_member
from voting.services import vote_cast

pytestmark = [pytest.mark.browser, pytest.mark.services]

SLOW = "simulated::writer?ttft_ms=100&token_ms=30&tokens=60"
COLUMNS_JS = "[...document.querySelectorAll('.col')]"


def column_outputs(page) -> list[int]:
    return [int(pk) for pk in page.eval_on_selector_all(".col", "cols => cols.map(c => c.dataset.output)")]


def test_create_three_prompt_versions_preview_run_and_watch_them_stream(
    transactional_db, owner, workspace, web_server, celery_worker_process, page_factory, screenshots
):
    page = page_factory(1440, 1000)
    log_in(page, web_server.url, owner.username)
    page.get_by_role("link", name="New comparison").first.click()
    page.wait_for_selector(".ecol")

    page.fill("input[name=title]", "Greeting styles")
    page.fill("input[name=model]", SLOW)
    page.fill("[aria-label='Shared variables: name of variable 1']", "name")
    page.fill("[aria-label='Shared variables: value of variable 1']", "Ada Lovelace")
    page.locator("[data-role=shared-vars] .add-var").click()
    page.fill("[aria-label='Shared variables: name of variable 2']", "tone")
    page.fill("[aria-label='Shared variables: value of variable 2']", "warm")
    page.click("[data-action=add-variant]")
    prompts = page.locator(".ecol-prompt textarea")
    assert prompts.count() == 3
    prompts.nth(0).fill("Greet {{name}} in a {{tone}} tone.")
    prompts.nth(1).fill("Write a two-line poem that greets {{name}}, {{tone}} and {{style}}.")
    prompts.nth(2).fill("Greet {{name}} in a {{tone}} tone, as a {{role}}.")
    third = page.locator(".ecol").nth(2)
    third.locator(".overrides summary").click()
    third.locator(".add-var").click()
    third.locator("[aria-label='Variant 3 variables: name of variable 1']").fill("tone")
    third.locator("[aria-label='Variant 3 variables: value of variable 1']").fill("formal")
    third.locator(".add-var").click()
    third.locator("[aria-label='Variant 3 variables: name of variable 2']").fill("role")
    third.locator("[aria-label='Variant 3 variables: value of variable 2']").fill("butler")

    # The server renders each variant with the shared values, then its own; a missing value is named beside it.
    third.locator("text=Greet Ada Lovelace in a formal tone, as a butler.").wait_for()
    page.locator(".ecol").nth(0).locator("text=Greet Ada Lovelace in a warm tone.").wait_for()
    second = page.locator(".ecol").nth(1)
    second.locator(".msg-error", has_text="{{style}}").wait_for()
    assert page.locator(".ecol").nth(0).locator(".msg-warning", has_text="{{style}}").count() == 1
    shoot(page, screenshots, "editor-warnings", full_page=True)
    prompts.nth(1).fill("Write a two-line poem that greets {{name}}, {{tone}}.")
    until(page, "!document.querySelector('.ecol .msg-error')")
    shoot(page, screenshots, "editor", full_page=True)

    page.click("text=Save and run")
    page.wait_for_url(re.compile(r"/compare/\d+/rounds/1/$"))
    assert page.locator(".col").count() == 3
    # Partial text while the answers are still coming in.
    until(
        page,
        f"{COLUMNS_JS}.some(c => c.dataset.status === 'running' && c.querySelector('[data-role=stream]')"
        "?.textContent.length > 20)",
    )
    shoot(page, screenshots, "comparison-streaming")
    until(page, f"{COLUMNS_JS}.every(c => c.dataset.status === 'ok')", timeout=20)
    page.wait_for_selector(".round[data-status=done]")
    for column in page.locator(".col").all():
        assert column.locator(".answer strong", has_text="Simulated answer").count() == 1  # Markdown rendered
        assert re.fullmatch(r"\d+ ms|\d+\.\d\d s", column.locator("[data-metric=latency]").inner_text())
        assert re.fullmatch(r"\d+ ms|\d+\.\d\d s", column.locator("[data-metric=ttft]").inner_text())
        assert re.fullmatch(r"≈?\d+ / ≈?\d+", column.locator("[data-metric=tokens]").inner_text())
        assert column.locator("[data-metric=cost]").inner_text() == "$0"
    assert "slowest" in page.locator(".round-total").inner_text()
    page.wait_for_selector(".vote-panel[data-votable='1']")
    shoot(page, screenshots, "comparison-done")


def test_the_editor_compares_models_and_warns_about_a_refused_parameter_before_running(
    transactional_db, owner, workspace, web_server, celery_worker_process, page_factory, fake_llm, screenshots
):
    off_loop(
        connection_create,
        workspace=workspace,
        name="openai",
        kind=ConnectionKind.OPENAI_COMPATIBLE,
        base_url=fake_llm.openai_url,
    )
    page = page_factory(1440, 1000)
    log_in(page, web_server.url, owner.username)
    page.goto(f"{web_server.url}/w/{workspace.pk}/compare/new/")
    page.fill("input[name=title]", "Which model writes the best release note?")
    page.check("input[name=mode][value=models]")
    page.fill("textarea[name=prompt]", "Write a release note for {{feature}} in two sentences.")
    page.fill("[aria-label='Shared variables: name of variable 1']", "feature")
    page.fill("[aria-label='Shared variables: value of variable 1']", "dark mode")
    models = page.locator("input[data-role=variant-model]")
    models.nth(0).fill("openai::o3-mini")
    models.nth(1).fill("simulated::writer")
    page.locator(".ecol").nth(1).get_by_role("button", name="Duplicate variant 2").click()
    assert page.locator(".ecol").count() == 3
    page.locator("input[data-role=variant-model]").nth(2).fill("simulated::coder")
    page.fill("input[name=temperature]", "0.3")
    page.locator(".problems li", has_text="openai::o3-mini does not support temperature").wait_for()
    page.locator(".ecol").nth(2).locator("text=Write a release note for dark mode in two sentences.").wait_for()
    assert page.locator(".ecol-label").nth(2).input_value() == "B v2"
    page.locator(".ecol").nth(2).get_by_role("button", name="Move variant 3 left").click()
    assert [page.locator(".ecol-label").nth(i).input_value() for i in range(3)] == ["A", "B v2", "B"]
    shoot(page, screenshots, "editor-models", full_page=True)

    page.click("text=Save and run")  # the server refuses it for the same reason
    page.locator(".editor-errors li", has_text="does not support temperature").wait_for()
    page.fill("input[name=temperature]", "")
    page.click("text=Save and run")
    page.wait_for_url(re.compile(r"/compare/\d+/$"))
    page.wait_for_selector(".round .col")  # the page started the run it was handed


def test_one_persons_vote_changes_the_tally_another_person_is_watching(
    transactional_db, owner, workspace, web_server, celery_worker_process, page_factory, screenshots
):
    group = off_loop(
        make_group, workspace, owner, title="Support reply tone", prompts=["Reply kindly.", "Reply briefly."]
    )
    round_ = off_loop(start_round, group, owner)
    wait_for_round(round_)
    colleague = add_member(workspace, "colleague", Role.VIEWER)
    first, second = round_.outputs.order_by("variant__position")

    watcher, voter = page_factory(1280, 860), page_factory(1280, 860)
    for page, person in ((watcher, owner), (voter, colleague)):
        log_in(page, web_server.url, person.username)
        page.goto(f"{web_server.url}/compare/{group.pk}/")
        page.wait_for_selector(".vote-panel[data-votable='1']")
    until(watcher, "document.getElementById('compare').dataset.live === '1'")

    voter.keyboard.press("2")
    voter.wait_for_selector(".vote-status:has-text('You voted for B')")
    until(watcher, f"document.querySelector('[data-tally=\"{second.pk}\"]').textContent.trim() === '1'")
    assert watcher.locator("[data-tally=total]").inner_text() == "1"
    assert "1 vote so far." in watcher.locator("[data-role=vote-status]").inner_text()  # not "1 votes"

    watcher.keyboard.press("1")
    until(voter, f"document.querySelector('[data-tally=\"{first.pk}\"]').textContent.trim() === '1'")
    watcher.wait_for_selector(f".col.is-pick[data-output='{first.pk}']")
    voter.keyboard.press("t")  # a vote is changeable: still one vote per person
    until(watcher, "document.querySelector('[data-tally=\"tie\"]').textContent.trim() === '1'")
    until(watcher, f"document.querySelector('[data-tally=\"{second.pk}\"]').textContent.trim() === '0'")
    assert round_.votes.count() == 2
    assert "has not been judged" in watcher.locator(".verdict-slot").inner_text()  # judging's partial, by URL
    shoot(watcher, screenshots, "voting")

    watcher.get_by_role("tab", name="Report").click()
    watcher.wait_for_selector("table.winrates")
    rows = watcher.locator("table.winrates tbody tr").all_inner_texts()
    assert rows[0].split("\t")[:5] == ["A", INSTANT, "1", "1", "100%"]
    shoot(watcher, screenshots, "report")


def test_blind_mode_hides_names_and_shuffles_columns_until_the_person_votes(
    transactional_db, owner, workspace, web_server, celery_worker_process, page_factory, screenshots
):
    prompts = [f"Describe tea in style {n}." for n in range(5)]
    group = off_loop(
        make_group, workspace, owner, title="Blind taste test", prompts=prompts, models=[INSTANT] * 5, blind=True
    )
    round_ = off_loop(start_round, group, owner)
    wait_for_round(round_)
    in_order = list(round_.outputs.order_by("variant__position").values_list("pk", flat=True))
    colleague = add_member(workspace, "colleague", Role.VIEWER)

    orders = []
    for person in (owner, colleague):
        page = page_factory(1440, 900)
        log_in(page, web_server.url, person.username)
        page.goto(f"{web_server.url}/compare/{group.pk}/")
        page.wait_for_selector(".vote-panel")
        expected = [o.pk for o in outputs_as_seen_by(round_with_outputs(round_), person)[0]]
        assert column_outputs(page) == expected  # the server's shuffle, for this person and round
        orders.append(expected)
        titles = page.locator(".col-title").all_inner_texts()
        assert titles == ["Answer A", "Answer B", "Answer C", "Answer D", "Answer E"]
        assert page.locator(".col-model").count() == 0 and "simulated::instant" not in page.content()
        assert page.locator(".tally").first.is_hidden()
    assert any(order != in_order for order in orders), "neither person's columns were shuffled"
    shoot(page, screenshots, "blind-before-vote")

    page.keyboard.press("b")
    until(page, "document.querySelector('.round').dataset.labelsVisible === '1'")
    assert column_outputs(page) == in_order
    assert page.locator(".col-title").all_inner_texts() == ["A", "B", "C", "D", "E"]
    assert page.locator(".col-model").first.inner_text() == INSTANT
    page.wait_for_selector(".vote-choice[data-verdict=all_bad][aria-pressed=true]")
    assert page.locator("[data-tally=all_bad]").inner_text() == "1"
    shoot(page, screenshots, "blind-after-vote")

    # Another person's vote reaches this page as a bare count (blind mode); the panel reloads its counts itself.
    until(page, "document.getElementById('compare').dataset.live === '1'")
    off_loop(vote_cast, round=round_, user=owner, verdict="tie")
    until(page, "document.querySelector('[data-tally=\"tie\"]').textContent.trim() === '1'")
    assert page.locator("[data-tally=total]").inner_text() == "2"


def test_a_failing_variant_shows_its_error_while_the_others_finish(
    transactional_db, owner, workspace, web_server, celery_worker_process, page_factory, fake_llm, screenshots
):
    off_loop(
        connection_create,
        workspace=workspace,
        name="local",
        kind=ConnectionKind.OPENAI_COMPATIBLE,
        base_url=fake_llm.openai_url,
    )
    failing = f"local::{fake_llm.model(fault=500)}"
    cut_off = f"local::{fake_llm.model(fault='mid_stream', tokens=30, token_ms=20)}"
    healthy = f"local::{fake_llm.model(tokens=40, token_ms=10)}"
    # Both healthy answers take well under the failing one's retries (at least 1.75 s of backoff).
    models = (failing, cut_off, healthy, "simulated::writer?ttft_ms=50&token_ms=5&tokens=60")
    group = off_loop(make_group, workspace, owner, title="Provider outage", models=models, mode=Mode.MODELS)
    page = page_factory(1440, 900)
    log_in(page, web_server.url, owner.username)
    page.goto(f"{web_server.url}/compare/{group.pk}/")
    until(page, "document.getElementById('compare').dataset.live === '1'")
    page.click("[data-action=rerun]")
    page.wait_for_selector(".round[data-number='1']")
    # The others finish while the failing one is still retrying its 500s.
    until(page, f"{COLUMNS_JS}.filter(c => c.dataset.status === 'ok').length === 2", timeout=20)
    assert page.locator(".col").nth(0).get_attribute("data-status") in ("queued", "running")
    until(page, f"{COLUMNS_JS}.every(c => ['ok', 'error'].includes(c.dataset.status))", timeout=25)
    broken, cut = page.locator(".col").nth(0), page.locator(".col").nth(1)
    assert broken.get_attribute("data-status") == "error"
    assert "HTTP 500" in broken.locator(".col-error").inner_text()
    assert cut.get_attribute("data-status") == "error"
    assert "t0 t1 t2" in cut.locator(".answer").inner_text()  # the partial text is kept beside the error
    assert cut.locator(".col-error").inner_text()
    color = page.evaluate("() => getComputedStyle(document.querySelector('.col.status-error .col-error')).color")
    assert color == "rgb(192, 54, 44)"  # the danger red
    assert Round.objects.get(group=group).outputs.filter(status=OutputStatus.OK).count() == 2
    shoot(page, screenshots, "comparison-failure")


def test_on_a_phone_the_columns_stack_and_the_page_never_scrolls_sideways(
    transactional_db, owner, workspace, web_server, celery_worker_process, page_factory, screenshots
):
    prompts = ["One {{topic}}.", "Two {{topic}}.", "Three."]
    group = off_loop(make_group, workspace, owner, title="Phone check", prompts=prompts, models=[INSTANT] * 3)
    wait_for_round(off_loop(start_round, group, owner))
    page = page_factory(390, 844)
    log_in(page, web_server.url, owner.username)
    page.goto(f"{web_server.url}/compare/{group.pk}/")
    page.wait_for_selector(".vote-panel")
    boxes = [column.bounding_box() for column in page.locator(".col").all()]
    assert len({round(box["x"]) for box in boxes}) == 1  # one above the other
    assert boxes[0]["y"] < boxes[1]["y"] < boxes[2]["y"]
    assert page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
    shoot(page, screenshots, "comparison-phone")


def test_the_history_lists_searches_and_opens_comparisons(
    transactional_db, owner, workspace, web_server, page_factory, screenshots
):
    colleague = add_member(workspace, "maria", Role.EDITOR)
    voters = [add_member(workspace, f"voter{n}", Role.VIEWER) for n in range(3)]
    specs = [
        ("Refund email: firm vs friendly", owner, Mode.PROMPTS, [INSTANT] * 2, ["Firm {{topic}}", "Kind {{topic}}"]),
        ("Summaries on three models", colleague, Mode.MODELS, [INSTANT, "simulated::writer", "simulated::coder"], None),
        ("SQL helper prompt v3", owner, Mode.PROMPTS, ["simulated::coder"] * 3, ["a {{topic}}", "b {{topic}}", "c"]),
    ]
    for title, author, mode, models, prompts in specs:
        group = off_loop(make_group, workspace, author, title=title, mode=mode, models=models, prompts=prompts)
        for _ in range(2):
            round_ = make_round(group)  # answered here, without a worker
            Round.objects.filter(pk=round_.pk).update(status=RoundStatus.DONE)
            round_.outputs.update(status=OutputStatus.OK, text="ok")
            round_.refresh_from_db()
            winner = round_.outputs.order_by("variant__position").last()
            for voter in voters[: len(models)]:
                off_loop(vote_cast, round=round_, user=voter, output_id=winner.pk)
    page = page_factory(1280, 760)
    log_in(page, web_server.url, owner.username)
    page.goto(f"{web_server.url}/w/{workspace.pk}/")
    assert page.locator("table.history tbody tr").count() == 3
    shoot(page, screenshots, "history")
    page.fill("input[name=q]", "refund")
    page.click("button:has-text('Filter')")
    page.wait_for_url(re.compile(r"q=refund"))
    assert page.locator("table.history tbody tr").count() == 1
    page.click("text=Refund email: firm vs friendly")
    page.wait_for_selector("h1:has-text('Refund email')")
