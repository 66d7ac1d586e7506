"""After `demo_setup` on a fresh database, a newcomer's first look in a real Chromium: the history lists the sample
comparisons and the experiment, the comparison shows its answers, its report counts the votes, the experiment shows
its results, the leaderboard rates the models, the prompt library lists prompts whose versions have standing, and
"New prompt" creates one, at desktop size and on a 390 px phone."""

import io

import pytest
from django.core.management import call_command

from compare.experiments.models import Experiment
from compare.models import CompareGroup, Mode
from compare.prompts.models import Prompt
from tests.fixtures.browser import log_in, off_loop, shoot, until

pytestmark = [pytest.mark.browser, pytest.mark.services]


def seeded() -> tuple[int, int, int]:
    call_command("demo_setup", stdout=io.StringIO())
    comparison = CompareGroup.objects.get(mode=Mode.PROMPTS, experiment__isnull=True)
    return comparison.pk, Experiment.objects.get().group_id, comparison.workspace_id


def no_horizontal_overflow(page) -> bool:
    return page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")


@pytest.mark.django_db(transaction=True)
def test_the_demo_workspace_shows_a_comparison_its_report_with_votes_and_an_experiment(
    page_factory, web_server, celery_worker_process, screenshots
):
    # With a worker running (as under `make run`), it may take some of the rounds demo_setup queues: same result.
    comparison, experiment, workspace = off_loop(seeded)
    page = page_factory()
    log_in(page, web_server.url, "demo", "demo-lab-2026")

    page.goto(f"{web_server.url}/")
    listed = page.inner_text("main")
    assert "Support replies: short or friendly?" in listed
    assert "Which model answers support questions best?" in listed
    assert "Which model replies best to customers?" in listed

    page.goto(f"{web_server.url}/compare/{comparison}/")
    assert page.locator("article.col.status-ok").count() >= 2
    assert page.locator("article.col .badge.sim").count() >= 2  # labelled simulated
    shoot(page, screenshots, "demo-comparison", full_page=True)

    page.goto(f"{web_server.url}/compare/{comparison}/report/")
    summary = page.inner_text("main")
    assert "3 votes, 3 of them naming a winner" in summary
    rows = {
        row.locator("th").inner_text(): row.locator("td.num").first.inner_text()
        for row in page.locator("#winrates-title ~ * tbody tr").all()
    }
    assert rows == {"Short": "2", "Friendly": "1"}  # wins, as the demo user voted
    assert page.locator("#judge-scores table").count() == 1  # the simulated judge's scores
    shoot(page, screenshots, "demo-report", full_page=True)

    page.goto(f"{web_server.url}/compare/{experiment}/experiment/")
    assert "12 of 12 calls · finished" in page.inner_text("#experiment-progress-text")
    assert page.locator("#results-grid td.cell").count() == 6
    shoot(page, screenshots, "demo-experiment", full_page=True)

    page.goto(f"{web_server.url}/w/{workspace}/leaderboard/")
    assert "No ratings yet" not in page.inner_text("#board-summary")
    models = page.locator("#ratings-table tbody tr td:nth-child(2)").all_inner_texts()
    assert sorted(m.split(" ·")[0].strip() for m in models) == [
        "simulated::coder",
        "simulated::instant",
        "simulated::writer",
    ]
    shoot(page, screenshots, "leaderboard", full_page=True)

    page.goto(f"{web_server.url}/w/{workspace}/prompts/")
    names = page.locator("main table tbody tr td:first-child").all_inner_texts()
    assert names == ["Support reply: friendly", "Support reply: short"]
    shoot(page, screenshots, "prompt-library", full_page=True)
    page.click("text=Support reply: short")
    until(page, "document.querySelector('table.standing')")  # the versions' standing, fetched as a partial
    assert "decisive votes" in page.inner_text('table.standing tr[data-version="2"]')
    assert "One sentence: customers skim." in page.inner_text("main")

    # "New prompt" on a phone: refused without a text (the field named), then created.
    phone = page_factory(390, 844)
    log_in(phone, web_server.url, "demo", "demo-lab-2026")
    phone.goto(f"{web_server.url}/w/{workspace}/prompts/")
    assert no_horizontal_overflow(phone)
    phone.click("a:has-text('New prompt')")
    phone.fill("#id_name", "Shipping delay apology")
    phone.click("button:has-text('Create prompt')")
    assert "Text: This field is required." in phone.inner_text("[data-role=form-errors]")
    assert phone.input_value("#id_name") == "Shipping delay apology"
    phone.fill("#id_text", "Apologise for the delay of order {{order}} and say when it ships.")
    phone.click("button:has-text('Create prompt')")
    phone.wait_for_url(lambda url: "/prompts/" in url and "/w/" not in url)
    assert phone.inner_text("h1") == "Shipping delay apology"
    assert "1 version · current: v1" in phone.inner_text("main")
    created = off_loop(lambda: Prompt.objects.get(name="Shipping delay apology").current.text)
    assert created == "Apologise for the delay of order {{order}} and say when it ships."
