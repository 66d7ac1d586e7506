"""An unknown price never reads as $0 (issue 38, item 6): an answer of a model without a known price shows "unknown"
in its column, the round's total and the verdict panel say so, and the API gives null, never 0."""

from decimal import Decimal

import pytest

from compare.models import Output, OutputStatus
from judging.models import Scale, Verdict, VerdictStatus
from tests.fixtures.voting_factories import finished_round, voting_group

pytestmark = pytest.mark.django_db


@pytest.fixture
def half_priced(workspace, owner):
    """A finished round of two answers: the first priced, the second of a model without a known price."""
    group = voting_group(workspace, owner, n=2)
    round_ = finished_round(group, owner, enqueue=False)
    priced, unpriced = round_.outputs.order_by("variant__position")
    Output.objects.filter(pk=priced.pk).update(cost=Decimal("0.0012"), finished_at=round_.finished_at)
    Output.objects.filter(pk=unpriced.pk).update(cost=None, finished_at=round_.finished_at)
    return round_


def test_an_answer_of_unknown_price_reads_unknown_on_the_page_and_null_in_the_api(client, api, owner, half_priced):
    client.force_login(owner)
    page = client.get(f"/compare/{half_priced.group_id}/").content.decode()

    assert page.count('<dd data-metric="cost">unknown</dd>') == 1
    assert '<dd data-metric="cost">$0.0012</dd>' in page
    assert "cost <strong>$0.0012</strong>" in page and "+ unknown" in page  # the round's total is a lower bound
    costs = [o["cost"] for o in api.get(f"/api/v1/rounds/{half_priced.pk}/").json()["outputs"]]
    assert sorted(costs, key=lambda c: c is None) == ["0.00120000", None]


def test_a_round_with_no_known_price_totals_unknown(client, owner, half_priced):
    half_priced.outputs.update(cost=None)
    client.force_login(owner)
    page = client.get(f"/compare/{half_priced.group_id}/").content.decode()

    assert "cost <strong>unknown</strong>" in page
    assert page.count('<dd data-metric="cost">unknown</dd>') == 2
    assert "$0<" not in page


def test_the_verdict_panel_leaves_unknown_costs_out_and_says_so(client, owner, half_priced):
    Verdict.objects.create(
        round=half_priced,
        judge_name="Judge",
        judge_model="judge::unpriced",
        scale=Scale.choices[0][0],
        mode="scores",
        status=VerdictStatus.DONE,
        judge_calls=2,
        cost=None,
    )
    client.force_login(owner)
    panel = client.get(f"/judging/rounds/{half_priced.pk}/verdict/").content.decode()

    assert '<strong data-role="judge-cost">unknown</strong>' in panel
    assert '<strong data-role="answers-cost">$0.0012 + 1 of unknown price</strong>' in panel
    assert "cost of judging <strong>unknown</strong>" in panel


def test_a_cancelled_answer_is_no_unknown_cost(client, owner, half_priced):
    half_priced.outputs.filter(cost__isnull=True).update(status=OutputStatus.CANCELLED, text="")
    client.force_login(owner)
    page = client.get(f"/compare/{half_priced.group_id}/").content.decode()

    assert '<dd data-metric="cost">unknown</dd>' not in page and "+ unknown" not in page
