"""The report's per-variant figures beside the win rates (issue 38, item 6): mean and spread of latency, output tokens
and cost against numpy's, how consistent each variant's repeated answers were, and a cost no answer has a price for
reading "unknown" — never $0 — in the API's JSON and the page's HTML."""

from decimal import Decimal

import numpy as np
import pytest

from compare.models import Output, OutputStatus
from tests.fixtures.voting_factories import finished_round, voting_group

pytestmark = pytest.mark.django_db

# Five repeated rounds of two variants: `priced` with known costs and three different answers (one given with
# extra whitespace), `unpriced` whose model has no known price and always the same answer.
PRICED = [  # latency ms, output tokens, cost, text
    (812, 40, Decimal("0.00012000"), "Paris."),
    (1430, 52, Decimal("0.00015600"), "Paris"),
    (655, 38, Decimal("0.00011400"), "  Paris.\n"),
    (2210, 90, Decimal("0.00027000"), "The capital of France is Paris."),
    (990, 41, Decimal("0.00012300"), "Paris."),
]
UNPRICED = [(300 + 10 * i, 20 + i, None, "Paris.") for i in range(5)]


@pytest.fixture
def repeated(workspace, owner):
    group = voting_group(workspace, owner, n=2)
    for answers in zip(PRICED, UNPRICED, strict=True):
        round_ = finished_round(group, owner, enqueue=False)
        for output, (latency_ms, tokens, cost, text) in zip(
            round_.outputs.order_by("variant__position"), answers, strict=True
        ):
            Output.objects.filter(pk=output.pk).update(
                latency_ms=latency_ms, output_tokens=tokens, cost=cost, text=text, status=OutputStatus.OK
            )
    return group


def reference(values) -> dict:
    values = np.array(values, dtype=float)
    return {"n": len(values), "mean": values.mean(), "sd": values.std(ddof=1), "min": values.min(), "max": values.max()}


def test_the_api_gives_each_variant_s_mean_and_spread_and_the_consistency_of_its_answers(api, repeated):
    body = api.get(f"/api/v1/groups/{repeated.pk}/report/").json()
    priced, unpriced = body["variant_figures"]
    assert [priced["label"], unpriced["label"]] == [v.label for v in repeated.variants.order_by("position")]
    assert body["report"]["variants"][0]["variant"] == priced["variant"]  # the same keys as the win rates

    for field, column in (("latency_ms", 0), ("output_tokens", 1), ("cost", 2)):
        expected = reference([float(row[column]) for row in PRICED])
        assert priced[field] == pytest.approx(expected), field
    assert (priced["answers"], priced["unpriced"]) == (5, 0)
    assert priced["consistency"] == {
        "answers": 5,
        "distinct": 3,
        "groups": [
            {"count": 3, "share": 0.6, "text": "Paris.", "cut": False},
            {"count": 1, "share": 0.2, "text": "Paris", "cut": False},
            {"count": 1, "share": 0.2, "text": "The capital of France is Paris.", "cut": False},
        ],
    }
    # No answer of the other has a price: its cost is null, never zeros, and every answer is counted as unpriced.
    assert unpriced["cost"] is None and unpriced["unpriced"] == 5
    assert unpriced["latency_ms"] == pytest.approx(reference([row[0] for row in UNPRICED]))
    assert unpriced["consistency"]["distinct"] == 1 and unpriced["consistency"]["groups"][0]["count"] == 5


def test_one_answer_has_a_mean_and_no_spread(api, workspace, owner):
    group = voting_group(workspace, owner, n=2)
    round_ = finished_round(group, owner, enqueue=False)
    round_.outputs.update(latency_ms=700, output_tokens=12, cost=Decimal("0.0001"))

    first = api.get(f"/api/v1/groups/{group.pk}/report/").json()["variant_figures"][0]

    assert first["latency_ms"] == {"n": 1, "mean": 700.0, "sd": None, "min": 700.0, "max": 700.0}


def test_the_report_page_shows_the_figures_beside_the_win_rates_and_an_unknown_cost_as_unknown(client, owner, repeated):
    client.force_login(owner)
    page = client.get(f"/compare/{repeated.pk}/report/").content.decode()

    section = page.split('id="variant-figures"')[1].split("</section>")[0]
    assert page.index('id="winrates-title"') < page.index('id="variant-figures"') < page.index('id="pairs-title"')
    priced, unpriced = section.split('<tr data-variant="')[1:]
    latency = reference([row[0] for row in PRICED])
    assert f"{latency['mean'] / 1000:.2f} s ± {latency['sd'] / 1000:.2f} s (0.66 s–2.21 s)" in priced
    assert "3 distinct of 5" in priced and "<strong>3×</strong> <q>Paris.</q>" in priced
    cost = reference([float(row[2]) for row in PRICED])
    assert f"${cost['mean']:.6f} ± ${cost['sd']:.6f}" in priced
    assert '<td data-role="cost">unknown</td>' in unpriced
    assert "$0" not in unpriced and "1 distinct of 5" in unpriced
