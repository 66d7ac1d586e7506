"""The judge editor in a real Chromium: adding and removing metric rows, the custom prompt's error shown beside the
field, saving, and the judge's page loading voting's agreement partial; the verdict panel's "Judge this round"."""

import time

import pytest
from django.utils import timezone

from judging.models import JudgeConfig, Verdict
from lab.models import Connection
from tests.fixtures.browser import log_in
from tests.fixtures.judging_factories import JUDGE, answered_round, judged_group, make_judge

pytestmark = [pytest.mark.browser, pytest.mark.services]


def test_a_judge_is_built_in_the_editor_with_errors_beside_the_field(
    transactional_db, owner, workspace, fake_llm, connections, web_server, page_factory, screenshots
):
    page = page_factory(1280, 1000)
    log_in(page, web_server.url, owner.username)
    page.goto(f"{web_server.url}/w/{workspace.pk}/judges/new/")
    assert page.locator("[data-role=metric-rows] [data-role=metric]").count() == 5

    page.fill("input[name=name]", "Careful reader")
    page.fill("input[name=model]", f"{JUDGE}::{fake_llm.model()}")
    page.select_option("select[name=scale]", "1-10")
    page.click("[data-role=add-metric]")
    page.fill("input[name=metrics-5-name]", "Kindness")
    page.fill("input[name=metrics-5-weight]", "2")
    page.fill("input[name=metrics-5-low]", "Curt.")
    page.fill("input[name=metrics-5-high]", "Warm and respectful.")
    page.check("input[name=metrics-4-DELETE]")
    assert "removed" in page.locator("[data-role=metric]").nth(4).get_attribute("class")
    page.fill("textarea[name=prompt]", "Judge {{response}} to {{prompt}} on {{metrics}}.")
    page.click("form.judge-editor button[type=submit]")

    error = page.locator("#prompt-errors")
    assert "must contain {{scoring_scale}}" in error.inner_text()
    assert page.locator("textarea[name=prompt]").input_value() == "Judge {{response}} to {{prompt}} on {{metrics}}."
    assert "removed" in page.locator("[data-role=metric]").nth(4).get_attribute("class")  # still ticked, still grey
    page.screenshot(path=str(screenshots / "judge-editor-error.png"), full_page=True)

    page.fill("textarea[name=prompt]", "Judge {{response}} to {{prompt}} on {{metrics}}, scored {{scoring_scale}}.")
    page.click("form.judge-editor button[type=submit]")
    page.wait_for_url(f"{web_server.url}/judges/*/")

    judge = JudgeConfig.objects.get(name="Careful reader")
    assert judge.scale == "1-10"
    assert [m["name"] for m in judge.metrics][-2:] == ["Clarity", "Kindness"]  # "Format and tone" removed
    page.wait_for_selector("[data-role=agreement] .judge-agreement")
    assert "has the team's votes yet" in page.locator("[data-role=agreement]").inner_text()


def test_judge_this_round_shows_the_queued_verdict_in_the_panel(
    transactional_db, owner, workspace, fake_llm, connections, web_server, celery_worker_process, page_factory
):
    # Playwright holds an event loop on this thread, so nothing here may fetch a catalog (async_to_sync).
    Connection.objects.filter(workspace=workspace).update(models_fetched_at=timezone.now())
    judge, _ = make_judge(workspace, owner, fake_llm)
    round_ = answered_round(judged_group(workspace, owner, count=2), owner, ["a", "b"])
    page = page_factory()
    log_in(page, web_server.url, owner.username)
    # A page embedding the panel the way the comparison page does: a slot with the partial's URL.
    page.goto(f"{web_server.url}/judges/{judge.pk}/")
    page.evaluate(
        """async (url) => {
            const { VerdictPanel } = await import('/static/js/judging/verdict_panel.js');
            const slot = document.createElement('div');
            slot.id = 'slot';
            document.querySelector('main').append(slot);
            await new VerdictPanel(slot, url).load();
        }""",
        f"/judging/rounds/{round_.pk}/verdict/",
    )
    page.wait_for_selector("#slot .verdict-panel")
    assert "has not been judged" in page.locator("#slot").inner_text()

    page.click("#slot button[type=submit]")

    # Queued, or further along when the session's worker (started by other tests) has picked it up.
    page.wait_for_selector("#slot .verdict[data-status]")
    assert page.locator("#slot .verdict").get_attribute("data-status") in ("queued", "running", "done", "failed")
    verdict = Verdict.objects.get(round=round_, judge=judge)
    # Let the worker finish before the test's tables are emptied: a task still writing would deadlock the flush.
    deadline = time.monotonic() + 30
    while not verdict.is_finished and time.monotonic() < deadline:
        time.sleep(0.2)
        verdict.refresh_from_db()
    assert verdict.is_finished
