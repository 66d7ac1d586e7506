"""The experiment pages in a real Chromium, against the web process and a real worker: upload a file, confirm the
estimate, watch the progress come in over the socket, then filter the results grid."""

import time

import pytest
from playwright.sync_api import Error as PlaywrightError

from compare.experiments.models import Experiment
from tests.fixtures.browser import log_in, off_loop, shoot, until
from tests.fixtures.experiments import sample
from tests.fixtures.judging_factories import fake_connections

pytestmark = [pytest.mark.browser, pytest.mark.services]


def across_reloads(page, expression: str, timeout: float = 30) -> None:
    """Wait until a JS expression is true on the page, which may reload itself meanwhile."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if page.evaluate(f"() => Boolean({expression})"):
                return
        except PlaywrightError:  # the page navigated while it was being asked
            pass
        time.sleep(0.1)
    pytest.fail(f"still false after {timeout} s: {expression}")


@pytest.mark.django_db(transaction=True)
def test_an_upload_runs_with_live_progress_and_the_grid_filters(
    page_factory,
    web_server,
    celery_worker_process,
    owner,
    workspace,
    fake_llm,
    screenshots,
):
    off_loop(fake_connections, workspace, fake_llm)
    page = page_factory()
    log_in(page, web_server.url, owner.username)

    page.goto(f"{web_server.url}/w/{workspace.pk}/experiments/new/")
    page.set_input_files("input[name=config]", str(sample("classifier.yaml")))
    page.click("form:has(input[value=upload]) button[type=submit]")
    assert "4 answers, 4 evaluations" in page.inner_text(".estimate")
    shoot(page, screenshots, "experiment-estimate")
    page.click("text=Run it")

    # The progress comes over the socket; the page reloads itself with the results once the run has finished.
    across_reloads(page, "document.querySelector('#experiment')?.dataset.finished === '1'")
    assert "8 of 8 calls · finished" in page.inner_text("#experiment-progress-text")
    assert page.locator("#results-grid td.cell").count() == 4
    assert page.locator("#results-grid .badge.good").count() == 2
    shoot(page, screenshots, "experiment-results", full_page=True)

    group_id = off_loop(lambda: Experiment.objects.get().group_id)
    assert page.url.endswith(f"/compare/{group_id}/experiment/")
    page.select_option("select[name=model]", 'cands:fake?text={"sentiment":"meh"}')
    visible = "[...document.querySelectorAll('#results-grid td.cell')].filter(td => !td.hidden).length"
    until(page, f"{visible} === 2")
    page.fill("input[name=row]", "broke")
    until(page, "[...document.querySelectorAll('#results-grid tbody tr')].filter(tr => !tr.hidden).length === 1")


@pytest.mark.django_db(transaction=True)
def test_the_build_form_on_a_phone_adds_a_fourth_prompt_and_estimates(
    page_factory, web_server, owner, workspace, fake_llm, screenshots
):
    off_loop(fake_connections, workspace, fake_llm)
    page = page_factory(390, 844)
    log_in(page, web_server.url, owner.username)
    page.goto(f"{web_server.url}/w/{workspace.pk}/experiments/new/")

    page.fill("input[name=name]", "Four prompts")
    page.check("input[name=models][value='judge::fake']")
    for i in range(4):
        if i:
            page.click("text=Add a prompt")
        page.fill(f"input[name=prompts-{i}-name]", f"p{i + 1}")
        page.fill(f"textarea[name=prompts-{i}-prompt]", f"Version {i + 1} about <<topic>>.")
    # A fifth row, removed again: the rows are renumbered as the formset counts them.
    page.click("text=Add a prompt")
    page.locator("#prompts-rows [data-row]").nth(4).locator("text=Remove").click()
    assert page.input_value("input[name=prompts-TOTAL_FORMS]") == "4"
    page.fill("textarea[name=rows]", "- {name: one, vars: {topic: tea}}")
    # The classification fields show only for a classification judge.
    assert not page.is_visible("textarea[name=criteria]")
    page.select_option("select[name=evaluation_type]", "binary-classification")
    assert page.is_visible("textarea[name=criteria]") and not page.is_visible("textarea[name=evaluator_prompt]")
    page.select_option("select[name=evaluation_type]", "")
    # The tools, tool choice, assertions and schema mode fields are there too, within the phone's width.
    page.select_option("select[name=output_mode]", "validate")
    assert page.is_visible("textarea[name=tools]") and page.is_visible("textarea[name=assertions]")
    assert page.is_visible("input[name=tool_choice]")
    # Nothing wider than the phone.
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    shoot(page, screenshots, "experiment-form-phone", full_page=True)

    page.click("#build-form button.primary[type=submit]")

    assert "4 answers" in page.inner_text(".estimate")
    labels = page.inner_text("body")
    assert all(f"judge::fake · default · p{i}" in labels for i in range(1, 5))
