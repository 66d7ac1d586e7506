"""After `demo_setup`, a newcomer's first look in a real Chromium: the history lists the sample comparison and the
experiment, the comparison shows its answers, its report counts the votes, and the experiment shows its results."""

import io

import pytest
from django.core.management import call_command

from compare.experiments.models import Experiment
from compare.models import CompareGroup
from tests.fixtures.browser import log_in, off_loop, shoot

pytestmark = [pytest.mark.browser, pytest.mark.services]


def seeded() -> tuple[int, int]:
    call_command("demo_setup", stdout=io.StringIO())
    comparison = CompareGroup.objects.filter(experiment__isnull=True).get()
    return comparison.pk, Experiment.objects.get().group_id


@pytest.mark.django_db(transaction=True)
def test_the_demo_workspace_shows_a_comparison_its_report_with_votes_and_an_experiment(
    page_factory, web_server, celery_worker_process, screenshots
):
    # With a worker running (as under `make run`), it may take some of the rounds demo_setup queues: same result.
    comparison, experiment = off_loop(seeded)
    page = page_factory()
    log_in(page, web_server.url, "demo", "demo-lab-2026")

    page.goto(f"{web_server.url}/")
    listed = page.inner_text("main")
    assert "Support replies: short or friendly?" in listed
    assert "Which model answers support questions best?" in listed

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
