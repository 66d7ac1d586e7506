"""The report and leaderboard pages: in a real headless Chromium their charts draw from the vendored Chart.js and no
request leaves 127.0.0.1; the pages show the report's words, the head-to-head matrix and honest empty states."""

import re
import time
from urllib.parse import urlsplit

import pytest
from django.urls import reverse
from django.utils import timezone
from statsmodels.stats.proportion import proportion_confint

from compare.models import OutputStatus, Round, RoundStatus
from lab.models import Role
from lab.stats.sequential import always_valid_interval
from lab.stats.wording import percent_interval
from tests.fixtures.browser import log_in, off_loop, watch
from tests.fixtures.compare_factories import make_group, make_round
from tests.fixtures.factories import add_member
from tests.fixtures.voting_factories import finished_round, voting_group
from voting.reports.cache import cached_group_report, cached_leaderboard
from voting.reports.comparison import DEFAULT_PASS_THRESHOLD
from voting.reports.leaderboard import LeaderboardFilters
from voting.services import vote_cast

INSTANT, WRITER, CODER = "simulated::instant", "simulated::writer", "simulated::coder"

# Pixels a chart painted on its canvas (non-transparent), or -1 while no chart is attached to it.
PAINTED = """(id) => {
  const canvas = document.getElementById(id);
  if (!window.Chart || !Chart.getChart(canvas)) return -1;
  const pixels = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
  let painted = 0;
  for (let i = 3; i < pixels.length; i += 4) if (pixels[i]) painted++;
  return painted;
}"""


def done_round(group) -> Round:
    """A round whose answers are in, made without enqueuing a task: these tests commit, and a worker process
    left from an earlier test would otherwise take the round and rewrite its answers."""
    round_ = make_round(group)
    round_.outputs.update(status=OutputStatus.OK, text="an answer")
    now = timezone.now()
    Round.objects.filter(pk=round_.pk).update(status=RoundStatus.DONE, started_at=now, finished_at=now, deadline=now)
    round_.refresh_from_db()
    return round_


def vote_rounds(group, voters, choices):
    """One finished round per choice; every voter picks that position (or "tie")."""
    for choice in choices:
        round_ = done_round(group)
        for user in voters:
            if choice == "tie":
                vote_cast(round=round_, user=user, verdict="tie")
            else:
                vote_cast(round=round_, user=user, output_id=round_.outputs.get(variant__position=choice).pk)


def painted(page, canvas_id: str, timeout: float = 10) -> int:
    """Wait until a chart has painted its canvas; the number of painted pixels. Polled with page.evaluate: the
    pages' Content-Security-Policy forbids the eval that Playwright's wait_for_function needs."""
    deadline = time.monotonic() + timeout
    while (count := page.evaluate(PAINTED, canvas_id)) < 500:
        if time.monotonic() > deadline:
            pytest.fail(f"the chart #{canvas_id} painted {count} pixels")
        time.sleep(0.05)
    return count


def assert_stayed_local(requested: list[str]) -> None:
    assert requested
    assert all(urlsplit(url).hostname == "127.0.0.1" for url in requested), requested


@pytest.mark.browser
@pytest.mark.services
def test_the_report_page_draws_its_win_rate_chart_with_nothing_fetched_from_outside(
    transactional_db, owner, workspace, web_server, page_factory, screenshots
):
    def build():
        group = voting_group(workspace, owner, n=3, title="Tea haiku")
        teammate = add_member(workspace, "tom", Role.EDITOR)
        vote_rounds(group, [owner, teammate], [2, 2, 1, 2, "tie", 3, 2, 2, 1, 2])
        return group, cached_group_report(group, pass_threshold=DEFAULT_PASS_THRESHOLD)["report"]

    group, report = off_loop(build)

    page = page_factory()
    requested, errors = watch(page)
    log_in(page, web_server.url, owner.username)
    page.goto(f"{web_server.url}{reverse('voting:report_page', args=[group.pk])}")
    painted(page, "winrate-chart")

    chart = page.evaluate("Chart.getChart(document.getElementById('winrate-chart')).data")
    assert chart["labels"] == ["A", "B", "C"]
    assert chart["datasets"][0]["data"] == [[rate["ci_low"], rate["ci_high"]] for rate in report["variants"]]
    assert page.locator("#report-summary").inner_text() == report["summary"]
    assert report["which_p_to_trust"] in page.locator("#which-p").inner_text()
    matrix = page.locator("#pair-matrix tbody tr")
    assert matrix.count() == 3
    assert "(12–4)" in matrix.nth(1).locator("td").nth(0).inner_text()  # B against A: 12 wins, 4 losses
    page.screenshot(path=str(screenshots / "report-page.png"), full_page=True)
    assert errors == []
    assert_stayed_local(requested)


@pytest.mark.browser
@pytest.mark.services
def test_the_leaderboard_page_draws_ratings_with_intervals_and_switches_to_prompts(
    transactional_db, owner, workspace, web_server, page_factory, screenshots
):
    def build():
        models = make_group(workspace, owner, models=[INSTANT, WRITER, CODER], title="Three models")
        vote_rounds(models, [owner], [2, 2, 1, 2, 3, 2, "tie", 2, 1, 2, 3, 2])
        prompts = make_group(workspace, owner, models=[INSTANT, INSTANT], prompts=["Be brief.", "Be thorough."])
        vote_rounds(prompts, [owner], [1, 1, 2, 1])
        return cached_leaderboard(workspace, by="model", filters=LeaderboardFilters())

    expected = off_loop(build)

    page = page_factory()
    requested, errors = watch(page)
    log_in(page, web_server.url, owner.username)
    page.goto(f"{web_server.url}{reverse('voting:leaderboard', args=[workspace.pk])}")
    painted(page, "ratings-chart")

    chart = page.evaluate("Chart.getChart(document.getElementById('ratings-chart')).data")
    assert chart["labels"] == [rating["key"] for rating in expected["ratings"]]
    assert chart["datasets"][0]["data"] == [[r["ci_low"], r["ci_high"]] for r in expected["ratings"]]
    assert page.locator("#board-summary").inner_text() == expected["summary"]
    assert page.locator("#ratings-table tbody tr").count() == 3
    page.screenshot(path=str(screenshots / "leaderboard-by-model.png"), full_page=True)

    page.select_option("select[name=by]", "prompt")
    page.click("#board-filters button[type=submit]")
    page.wait_for_url("**by=prompt**")
    painted(page, "ratings-chart")
    labels = page.evaluate("Chart.getChart(document.getElementById('ratings-chart')).data.labels")
    assert sorted(labels) == ["A", "B"]
    assert "Be brief." in page.locator("#ratings-table").inner_text()
    assert errors == []
    assert_stayed_local(requested)


@pytest.mark.django_db
def test_a_report_without_decisive_votes_says_so_instead_of_drawing(client, owner, workspace):
    group = voting_group(workspace, owner)
    round_ = finished_round(group, owner)
    vote_cast(round=round_, user=owner, verdict="all_bad")
    client.force_login(owner)

    page = client.get(reverse("voting:report_page", args=[group.pk])).content.decode()

    assert 'id="winrate-empty"' in page and 'id="winrate-chart"' not in page
    assert "not enough data" in page
    assert "No judge scores yet" in page
    assert "Which p-value to trust" in page


@pytest.mark.django_db
def test_a_leaderboard_without_votes_says_so_and_a_bad_filter_names_itself(client, owner, workspace):
    make_group(workspace, owner, models=[INSTANT, WRITER])
    client.force_login(owner)

    page = client.get(reverse("voting:leaderboard", args=[workspace.pk]), {"since": "soon"}).content.decode()

    assert 'id="board-empty"' in page and 'id="ratings-chart"' not in page
    assert "since: Date has wrong format" in page


@pytest.mark.django_db
def test_pages_of_another_workspace_are_not_found(client, stranger, owner, workspace):
    group = voting_group(workspace, owner)
    client.force_login(stranger)
    assert client.get(reverse("voting:report_page", args=[group.pk])).status_code == 404
    assert client.get(reverse("voting:leaderboard", args=[workspace.pk])).status_code == 404


@pytest.mark.django_db
def test_the_report_page_shows_the_always_valid_interval_beside_the_exact_one(client, owner, workspace):
    group = voting_group(workspace, owner, n=2)
    vote_rounds(group, [owner], [1] * 11 + [2])
    client.force_login(owner)

    page = client.get(reverse("voting:report_page", args=[group.pk])).content.decode()

    [pair] = cached_group_report(group, pass_threshold=DEFAULT_PASS_THRESHOLD)["report"]["pairs"]
    low, high = always_valid_interval(11, 12)
    assert (pair["always_valid_low"], pair["always_valid_high"]) == pytest.approx((low, high))
    cell = re.search(r'<td data-role="always-valid-interval">(.*?)</td>', page).group(1)
    assert cell == percent_interval(low, high)
    exact = re.search(r'<td data-role="exact-interval">(.*?)</td>', page).group(1)
    assert exact == f"92% {percent_interval(*proportion_confint(11, 12, method='beta'))}"
    assert "It is larger than the fixed-sample one" not in page
    assert "the peek-safe p is never smaller than the fixed-sample p" in page


@pytest.mark.django_db
def test_the_leaderboard_page_warns_about_one_sided_votes_and_says_what_a_rank_means(client, owner, workspace):
    group = make_group(workspace, owner, models=[INSTANT, WRITER])
    vote_rounds(group, [owner], [1])
    client.force_login(owner)

    page = client.get(reverse("voting:leaderboard", args=[workspace.pk])).content.decode()

    assert 'id="one-sided-warning"' in page
    assert page.count("not measured: one-sided votes") == 2
    assert "shares its rank with every rating whose interval overlaps" not in page
    assert "ratings whose intervals overlap can still have different ranks" in page
    assert "seeded so the page is reproducible" not in page
    board = cached_leaderboard(workspace, by="model", filters=LeaderboardFilters())
    assert "(95% CI 1,507–1,507)" not in board["summary"] and "the lead is clear" not in board["summary"]
    assert "The votes are one-sided" in board["summary"]
