"""The comparison page's server side: columns with metrics, failures, the round navigator, blind mode, isolation."""

import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from compare.blind import outputs_as_seen_by
from compare.models import Output, OutputStatus, Round, RoundStatus
from compare.selectors import round_with_outputs
from lab.models import Role, WorkerProcess
from tests.fixtures.compare_factories import make_group, start_round
from tests.fixtures.factories import add_member
from tests.fixtures.voting_factories import finished_round, voting_group
from voting.services import vote_cast

pytestmark = pytest.mark.django_db


@pytest.fixture
def as_owner(client, owner):
    client.force_login(owner)
    return client


def column_ids(html: str) -> list[int]:
    return [int(pk) for pk in re.findall(r'<article class="col [^"]*" data-output="(\d+)"', html)]


def test_the_page_shows_each_answer_with_its_metrics_and_the_round_total(as_owner, workspace, owner):
    group = voting_group(workspace, owner, n=2, title="Metrics")
    round_ = finished_round(group, owner)
    first, second = round_.outputs.order_by("variant__position")
    Output.objects.filter(pk=first.pk).update(
        html="<p>First answer</p>", ttft_ms=420, latency_ms=1200, input_tokens=12, output_tokens=1034,
        cost=Decimal("0.00123"), finished_at=round_.finished_at,
    )  # fmt: skip
    Output.objects.filter(pk=second.pk).update(
        html="<p>Second</p>", ttft_ms=90, latency_ms=800, input_tokens=10, output_tokens=20, tokens_estimated=True,
        cost=Decimal("0.002"), finished_at=round_.finished_at,
    )  # fmt: skip

    html = as_owner.get(f"/compare/{group.pk}/").content.decode()
    assert column_ids(html) == [first.pk, second.pk]
    assert "<p>First answer</p>" in html and "simulated::instant" in html
    for figure in ("420 ms", "1.20 s", "12 / 1,034", "$0.0012", "≈10 / ≈20", "$0.0020"):
        assert figure in html, figure
    total = re.search(r'<p class="round-total".*?</p>', html, re.S).group(0)
    assert "1.20 s" in total and "≈22" in total and "≈1,054" in total and "$0.0032" in total


def test_a_failed_answer_shows_its_error_and_its_partial_text(as_owner, workspace, owner):
    group = make_group(workspace, owner)
    round_ = finished_round(group, owner, statuses=(OutputStatus.OK, OutputStatus.ERROR))
    failed = round_.outputs.get(variant__position=2)
    Output.objects.filter(pk=failed.pk).update(error="HTTP 500 from the provider", html="<p>half an ans</p>")
    html = as_owner.get(f"/compare/{group.pk}/").content.decode()
    assert f'<article class="col status-error" data-output="{failed.pk}"' in html
    assert "HTTP 500 from the provider" in html and "half an ans" in html


def test_the_round_navigator_counts_rounds_and_links_neighbours(as_owner, workspace, owner):
    group = make_group(workspace, owner)
    for _ in range(3):
        finished_round(group, owner)
    latest = as_owner.get(f"/compare/{group.pk}/").content.decode()
    assert re.search(r"Round 3 <span class=\"muted\">of <span data-role=\"last\">3</span>", latest)
    first = as_owner.get(f"/compare/{group.pk}/rounds/1/").content.decode()
    assert f'href="/compare/{group.pk}/rounds/2/" data-round-link="2" rel="next"' in first
    assert 'rel="prev"' not in first
    assert as_owner.get(f"/compare/{group.pk}/rounds/9/").status_code == 404


def test_the_round_partial_is_the_round_region_alone(as_owner, workspace, owner):
    group = make_group(workspace, owner)
    round_ = finished_round(group, owner)
    html = as_owner.get(f"/compare/{group.pk}/rounds/1/partial/").content.decode()
    assert html.lstrip().startswith(f'<div class="round" data-round="{round_.pk}"')
    assert "<html" not in html and len(column_ids(html)) == 2


def test_a_comparison_without_rounds_says_so(as_owner, workspace, owner):
    group = make_group(workspace, owner)
    assert "has not run yet" in as_owner.get(f"/compare/{group.pk}/").content.decode()


def test_blind_mode_hides_names_and_shuffles_per_person_until_they_vote(client, workspace, owner):
    group = voting_group(workspace, owner, n=3, blind=True)
    round_ = finished_round(group, owner)
    in_order = list(round_.outputs.order_by("variant__position").values_list("pk", flat=True))
    people = [add_member(workspace, f"voter{n}", Role.VIEWER) for n in range(8)]
    orders = set()
    for person in people:
        client.force_login(person)
        html = client.get(f"/compare/{group.pk}/").content.decode()
        expected = [o.pk for o in outputs_as_seen_by(round_with_outputs(round_), person)[0]]
        assert column_ids(html) == expected  # the server's order, not the JS's
        assert ">Answer A</h2>" in html and "simulated::instant" not in html and ">v0<" not in html
        orders.add(tuple(expected))
    assert len(orders) > 1, "every person saw the same order"

    voter = people[0]
    vote_cast(round=round_, user=voter, verdict="tie")
    client.force_login(voter)
    html = client.get(f"/compare/{group.pk}/").content.decode()
    assert column_ids(html) == in_order
    assert "simulated::instant" in html and ">Answer A</h2>" not in html


def test_viewers_see_the_page_without_the_run_buttons(client, workspace, owner, viewer):
    group = make_group(workspace, owner)
    finished_round(group, owner)
    client.force_login(viewer)
    html = client.get(f"/compare/{group.pk}/").content.decode()
    assert 'data-action="rerun"' not in html and "Clone and edit" not in html
    assert f"/votes/rounds/{group.rounds.get().pk}/panel/" in html


def test_another_workspaces_pages_and_partials_are_404(client, workspace, owner, stranger):
    group = make_group(workspace, owner)
    round_ = finished_round(group, owner)
    client.force_login(stranger)
    for url in (
        f"/compare/{group.pk}/",
        f"/compare/{group.pk}/rounds/1/",
        f"/compare/{group.pk}/rounds/1/partial/",
        f"/compare/{group.pk}/edit/",
        f"/votes/rounds/{round_.pk}/panel/",
        f"/votes/groups/{group.pk}/report/",
    ):
        assert client.get(url).status_code == 404, url


def test_pages_need_a_login(client, workspace, owner):
    group = make_group(workspace, owner)
    response = client.get(f"/compare/{group.pk}/")
    assert response.status_code == 302 and response.url.startswith("/login/")


def test_an_unfinished_round_says_when_no_worker_is_running(as_owner, workspace, owner, settings):
    group = make_group(workspace, owner)
    round_ = start_round(group, owner)
    page = f"/compare/{group.pk}/rounds/1/partial/"
    assert (
        "No worker is running (last seen never): this round starts when a worker does."
        in as_owner.get(page).content.decode()
    )

    now = timezone.now()
    worker = WorkerProcess.objects.create(node="worker@here", pid=1, started_at=now, seen_at=now)
    assert "No worker is running" not in as_owner.get(page).content.decode()

    lost = now - timedelta(seconds=settings.JOBS_WORKER_LOST_AFTER_S + 120)
    WorkerProcess.objects.filter(pk=worker.pk).update(seen_at=lost)
    Round.objects.filter(pk=round_.pk).update(status=RoundStatus.RUNNING, deadline=now + timedelta(minutes=1))
    html = as_owner.get(page).content.decode()
    assert "No worker is running (last seen 2\xa0minutes ago): the worker running this round stopped" in html


def test_a_finished_round_says_nothing_of_workers(as_owner, workspace, owner):
    group = make_group(workspace, owner)
    finished_round(group, owner)
    assert "No worker is running" not in as_owner.get(f"/compare/{group.pk}/").content.decode()
