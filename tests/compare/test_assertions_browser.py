"""Assertions on the comparison page in a real Chromium: the pass-rate section, and a failing answer's results open
under it on the failing round (`?failing=1`)."""

import pytest
from django.utils import timezone

from compare.assertions.services import rounds_grade
from compare.models import Output, OutputStatus, Round, RoundStatus
from tests.fixtures.browser import log_in, off_loop
from tests.fixtures.compare_factories import make_group, make_round

pytestmark = [pytest.mark.browser]


def finished(group, texts: list[str]) -> Round:
    round_ = make_round(group)
    for output, text in zip(round_.outputs.order_by("variant__position"), texts, strict=True):
        Output.objects.filter(pk=output.pk).update(
            status=OutputStatus.OK, text=text, latency_ms=900, finished_at=timezone.now()
        )
    Round.objects.filter(pk=round_.pk).update(status=RoundStatus.DONE, finished_at=timezone.now())
    rounds_grade([round_.pk])
    return round_


def build(workspace, owner):
    checks = [{"type": "icontains", "value": "paris"}, {"type": "latency", "threshold": 2000}]
    group = make_group(workspace, owner, title="Capitals", assertions=checks)
    finished(group, ["Paris.", "It is Paris."])
    finished(group, ["Paris.", "London, I think."])
    return group


def test_the_failing_round_shows_each_answers_results_and_the_pass_rates(
    transactional_db, owner, workspace, web_server, page_factory
):
    group = off_loop(build, workspace, owner)
    page = page_factory(1280, 900)
    log_in(page, web_server.url, owner.username)
    page.goto(f"{web_server.url}/compare/{group.pk}/?failing=1")
    assert page.locator(".round").get_attribute("data-number") == "2"
    failing = page.locator(".col-asserts[data-passed='0']")
    assert failing.count() == 1 and failing.locator("li.fail").is_visible()  # a failing answer's list is open
    assert 'Expected output to contain "paris"' in failing.inner_text()
    assert page.locator(".col-asserts[data-passed='1'] li").first.is_hidden()  # a passing one stays folded
    rates = page.locator("[data-role=pass-rate-table]")
    assert rates.is_visible() and "50%" in rates.inner_text()
    page.screenshot(path="/tmp/assertions_page.png", full_page=True)
