"""A comparison over a test set in a real Chromium: picked in the editor, one round per row, voted through with the
round navigation; and a refused run's reason shown in the comparison page."""

import re

import pytest

from compare.datasets.services import dataset_create
from compare.models import CompareGroup
from tests.fixtures.browser import log_in, off_loop, shoot, until
from tests.fixtures.compare_factories import INSTANT

pytestmark = [pytest.mark.browser, pytest.mark.services]


def make_dataset(workspace, owner, name, rows):
    return dataset_create(workspace=workspace, user=owner, name=name, rows=rows)


def group_rounds(group_pk):
    group = CompareGroup.objects.get(pk=group_pk)
    return [
        (r.number, r.dataset_row.position, r.variables["topic"], r.votes.count())
        for r in group.rounds.select_related("dataset_row").order_by("number")
    ]


def test_a_dataset_picked_in_the_editor_runs_one_round_per_row_to_vote_through(
    transactional_db, owner, workspace, web_server, celery_worker_process, page_factory, screenshots
):
    rows = [{"vars": {"topic": topic}} for topic in ("tea", "rain", "bees")]
    off_loop(make_dataset, workspace, owner, "Three topics", rows)
    half = [{"vars": {"topic": "tea"}}, {"name": "bare", "vars": {"mood": "calm"}}]
    off_loop(make_dataset, workspace, owner, "Half", half)

    page = page_factory(1440, 1000)
    log_in(page, web_server.url, owner.username)
    page.goto(f"{web_server.url}/w/{workspace.pk}/compare/new/")
    page.wait_for_selector(".ecol")
    page.fill("input[name=title]", "Topics")
    page.fill("input[name=model]", INSTANT)
    prompts = page.locator(".ecol-prompt textarea")
    prompts.nth(0).fill("Write about {{topic}}.")
    prompts.nth(1).fill("A haiku on {{topic}}.")
    page.select_option("select[name=test_set]", label="Three topics · 3 rows")
    assert page.locator("input[name=repeat]").is_disabled()  # one round per row instead
    # The preview renders the first row, as the first round will; no variable is reported missing.
    page.locator(".ecol").nth(0).locator("text=Write about tea.").wait_for()
    until(page, "!document.querySelector('.ecol .msg-error')")
    page.click("text=Save and run")

    # The page lands on the run's first round, the navigator counting all three.
    page.wait_for_url(re.compile(r"/compare/\d+/rounds/1/$"))
    group_pk = int(re.search(r"/compare/(\d+)/", page.url).group(1))
    until(page, "document.querySelector('.round [data-role=last]')?.textContent === '3'")
    page.wait_for_selector(".round[data-number='1'] .vote-panel[data-votable='1']", timeout=20_000)
    page.locator(".vote-choice[data-output]").first.click()
    page.wait_for_selector(".vote-choice[data-output][aria-pressed=true]")
    shoot(page, screenshots, "dataset-run-voted")

    page.click(".round-nav a[rel=next]")
    until(page, "document.querySelector('.round').dataset.number === '2'")
    page.wait_for_selector(".round[data-number='2'] .vote-panel[data-votable='1']", timeout=20_000)
    assert off_loop(group_rounds, group_pk) == [(1, 1, "tea", 1), (2, 2, "rain", 0), (3, 3, "bees", 0)]

    # A test set with a row missing a variable: the page says which row and which variable, and starts nothing.
    page.select_option("#run-dataset", label="Half · 2 rows")
    page.click("form[data-action=run-dataset] button[type=submit]")
    notice = page.locator(".cmp-notice")
    notice.locator("text=Row 2 (bare)").wait_for()
    assert "{{topic}}" in notice.inner_text()
    assert len(off_loop(group_rounds, group_pk)) == 3
