"""A comparison's dataset run checked against an earlier dataset run of the same comparison, through the API:
answers paired by row and variant, the experiments' paired Wilcoxon test (checked against scipy) and verdict
sentence, "latest" meaning the pinned run or else the newest earlier one, and bad input a 400 naming the field.

The runs are started through the real API; their answers are filled in here (ok, or an error for a seeded
regression), since the score of a dataset run is whether each answer came back."""

import uuid

import numpy as np
import pytest
from scipy.stats import wilcoxon

from compare.datasets.services import dataset_create
from compare.models import OutputStatus, Round
from tests.conftest import client_for
from tests.fixtures.compare_factories import INSTANT, make_group
from tests.fixtures.judging_factories import answer_round

pytestmark = pytest.mark.django_db

ROWS = 12
OK, ERROR = OutputStatus.OK, OutputStatus.ERROR


@pytest.fixture
def group(workspace, owner):
    return make_group(
        workspace, owner, models=[INSTANT, INSTANT], prompts=["Add {{n}}.", "Double {{n}}."], shared_variables={"n": 0}
    )


@pytest.fixture
def dataset(workspace, owner):
    rows = [{"name": "same" if i <= 2 else "", "vars": {"n": i}} for i in range(1, ROWS + 1)]
    return dataset_create(workspace=workspace, user=owner, name="Numbers", rows=rows)


def dataset_run(api, group, dataset, second: str = OK, text: str = "sum") -> str:
    """Run the dataset through the API; variant 1 answers `text`, variant 2 ends `second`. Returns the run id."""
    response = api.post(f"/api/v1/groups/{group.pk}/runs/", {"dataset": dataset.pk}, format="json")
    assert response.status_code == 202
    run_ids = {entry["run_id"] for entry in response.json()["rounds"]}
    for entry in response.json()["rounds"]:
        round_ = Round.objects.get(pk=entry["id"])
        answer_round(round_, [f"{text} {round_.variables['n']}", "double"], [OK, second])
    [run_id] = run_ids
    return run_id


def baseline(api, group, run: str, **query):
    return api.get(f"/api/v1/groups/{group.pk}/runs/{run}/baseline/", query)


def test_a_seeded_regression_against_the_previous_run_and_a_pinned_baseline(api, group, dataset):
    first = dataset_run(api, group, dataset)
    alone = baseline(api, group, first).json()
    assert (alone["baseline"], alone["verdict"], alone["pairs"]) == (None, None, [])

    worse = dataset_run(api, group, dataset, second=ERROR, text="total")
    body = baseline(api, group, worse).json()

    expected = wilcoxon(np.full(ROWS, -1.0), method="asymptotic")
    assert (body["run"], body["baseline"], body["pinned"]) == (worse, first, None)
    assert body["score"] == "answered (1) or failed (0)" and body["regression"] is True
    assert body["test"]["p_value"] == pytest.approx(expected.pvalue)
    assert (body["test"]["n_pairs"], body["test"]["n_nonzero"]) == (2 * ROWS, ROWS)
    assert body["test"]["mean_difference"] == pytest.approx(-0.5)
    assert body["sentence"] == (
        "Significant regression: scores are lower by 0.500 on average; Wilcoxon signed-rank "
        f"p = {expected.pvalue:.4g} over {ROWS} differing pairs (α = 0.05)."
    )
    assert (body["baseline_mean"], body["current_mean"]) == (1.0, 0.5)
    assert len(body["pairs"]) == 2 * ROWS and body["changed_answers"] == ROWS
    first_pair = body["pairs"][0]
    assert first_pair["row"] == "Row 1: same" and body["pairs"][2]["row"] == "Row 2: same"
    assert first_pair["combination"] == f"Variant 1 (A) · {INSTANT}"
    assert (first_pair["baseline_answer"], first_pair["current_answer"]) == ("sum 1", "total 1")
    assert '<del class="diff-del">sum</del>' in first_pair["baseline_html"]
    assert [pair["change"] for pair in body["pairs"][:2]] == [0.0, -1.0]

    # "latest" is the newest earlier run until one is pinned; then it is the pinned run.
    again = dataset_run(api, group, dataset)
    assert baseline(api, group, again).json()["verdict"] == "significant improvement"
    pinned = api.post(f"/api/v1/groups/{group.pk}/runs/{first}/pin/")
    assert pinned.status_code == 201 and pinned.json()["pinned"] == first
    body = baseline(api, group, again).json()
    assert (body["baseline"], body["pinned"], body["verdict"]) == (first, first, "no change")
    assert body["sentence"] == f"No change: all {2 * ROWS} paired scores are the same as the baseline's."
    chosen = baseline(api, group, again, against=worse).json()
    assert (chosen["baseline"], chosen["verdict"]) == (worse, "significant improvement")


def test_too_few_differing_pairs_give_no_verdict(api, group, dataset):
    first = dataset_run(api, group, dataset)
    second = dataset_run(api, group, dataset)
    response = api.post(f"/api/v1/groups/{group.pk}/runs/", {"dataset": dataset.pk}, format="json")
    for entry in response.json()["rounds"]:
        round_ = Round.objects.get(pk=entry["id"])
        statuses = [OK, ERROR if round_.variables["n"] <= 3 else OK]
        answer_round(round_, [f"sum {round_.variables['n']}", "double"], statuses)
    third = response.json()["rounds"][0]["run_id"]

    body = baseline(api, group, third, against=first).json()

    assert body["verdict"] == "not enough data" and body["regression"] is False
    assert body["sentence"] == (
        "Not enough data for a verdict: 3 of 24 paired scores differ; the Wilcoxon signed-rank test needs at "
        "least 10, so 7 more."
    )
    assert baseline(api, group, second, against=first).json()["verdict"] == "no change"


def test_bad_input_is_a_400_naming_the_field_and_others_runs_are_404(
    api, group, dataset, workspace, owner, stranger, viewer
):
    first = dataset_run(api, group, dataset)
    other = dataset_create(workspace=workspace, user=owner, name="Other", rows=[{"vars": {"n": 1}}])
    elsewhere = dataset_run(api, group, other)

    assert baseline(api, group, first, against="nope").status_code == 400
    assert "against" in baseline(api, group, first, against="nope").json()
    assert "against" in baseline(api, group, first, against=first).json()
    assert "against" in baseline(api, group, first, against=elsewhere).json()
    assert "against" in baseline(api, group, first, against=str(uuid.uuid4())).json()
    assert baseline(api, group, str(uuid.uuid4())).status_code == 404
    assert api.post(f"/api/v1/groups/{group.pk}/runs/{uuid.uuid4()}/pin/").status_code == 404
    assert baseline(client_for(stranger), group, first).status_code == 404
    assert client_for(stranger).post(f"/api/v1/groups/{group.pk}/runs/{first}/pin/").status_code == 404
    assert client_for(viewer).post(f"/api/v1/groups/{group.pk}/runs/{first}/pin/").status_code == 403
    assert baseline(client_for(viewer), group, first).status_code == 200
