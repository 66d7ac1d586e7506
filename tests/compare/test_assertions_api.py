"""Assertions on comparisons (issue 41, items 1–2): the groups API accepts `assertions` (or promptfoo's `assert`) and
refuses user code, unknown types and bad values with a 400 naming the index; dataset rows carry their own; stored
answers are re-graded on request; the page shows each answer's results, pass rates and only-failing rounds."""

from decimal import Decimal

import pytest
from django.utils import timezone

from compare.assertions.services import rounds_grade
from compare.models import AssertionResult, Output, OutputStatus, Round, RoundStatus
from tests.fixtures.compare_factories import INSTANT, make_group, make_round

pytestmark = pytest.mark.django_db

CHECKS = [
    {"type": "icontains", "value": "paris"},
    {"type": "not-contains", "value": "London", "metric": "no-london"},
    {"type": "latency", "threshold": 5000},
]


def body(workspace, **changes) -> dict:
    data = {
        "workspace": workspace.pk,
        "mode": "prompts",
        "variants": [
            {"label": "Short", "model": INSTANT, "prompt": "Capital of France?"},
            {"label": "Long", "model": INSTANT, "prompt": "What is the capital of France?"},
        ],
    }
    data.update(changes)
    return data


def answered(group, texts: list[str], **fields) -> Round:
    """A finished round whose answers (in variant order) are `texts`, graded as the finish grades it."""
    variables = fields.pop("variables", None)
    round_ = make_round(group, **fields)
    if variables is not None:
        Round.objects.filter(pk=round_.pk).update(variables=variables)  # the row's, as a run over a dataset stores
    for output, text in zip(round_.outputs.order_by("variant__position"), texts, strict=True):
        Output.objects.filter(pk=output.pk).update(
            status=OutputStatus.OK, text=text, latency_ms=1200, cost=Decimal("0.0001"), finished_at=timezone.now()
        )
    Round.objects.filter(pk=round_.pk).update(status=RoundStatus.DONE, finished_at=timezone.now())
    rounds_grade([round_.pk])
    return round_


def test_a_group_takes_promptfoos_assert_key_and_reads_back_assertions(api, workspace):
    response = api.post("/api/v1/groups/", body(workspace, **{"assert": CHECKS}), format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["assertions"] == CHECKS


def test_both_keys_at_once_is_a_400_on_assert(api, workspace):
    response = api.post("/api/v1/groups/", body(workspace, assertions=CHECKS, **{"assert": CHECKS}), format="json")
    assert response.status_code == 400
    assert response.json() == {"assert": ["Give `assertions` or `assert`, not both."]}


@pytest.mark.parametrize(
    ("assertion", "message"),
    [
        (
            {"type": "javascript", "value": "output.length < 5"},
            "assert[1].type: 'javascript' is refused: it runs user code",
        ),
        ({"type": "python", "value": "file://grade.py"}, "assert[1].type: 'python' is refused"),
        ({"type": "foo"}, "assert[1].type: unknown assertion type 'foo'."),
        ({"type": "regex", "value": "(unclosed"}, "assert[1].value: invalid regular expression"),
        ({"type": "contains", "value": "x", "transform": "output.trim()"}, "assert[1].transform: refused"),
    ],
)
def test_a_bad_assertion_is_a_400_naming_its_index(api, workspace, assertion, message):
    response = api.post("/api/v1/groups/", body(workspace, assertions=[CHECKS[0], assertion]), format="json")
    assert response.status_code == 400
    [error] = response.json()["assertions"]
    assert error.startswith(message)


def test_a_dataset_row_carries_its_own_assertions_graded_after_the_groups(api, workspace, owner):
    rows = [{"vars": {"city": "Paris"}, "assert": [{"type": "contains", "value": "{{city}}"}]}]
    response = api.post("/api/v1/datasets/", {"workspace": workspace.pk, "name": "cities", "rows": rows}, format="json")
    assert response.status_code == 201, response.json()
    [row_out] = response.json()["rows"]
    assert row_out["assertions"] == [{"type": "contains", "value": "{{city}}"}]
    bad = [{"vars": {"city": "Paris"}, "assertions": [{"type": "webhook", "value": "http://x"}]}]
    refused = api.post("/api/v1/datasets/", {"workspace": workspace.pk, "name": "x", "rows": bad}, format="json")
    assert refused.status_code == 400
    assert refused.json()["rows"][0].startswith("Row 1: assertions: assert[0].type: 'webhook' is refused")

    group = make_group(workspace, owner, assertions=CHECKS[:1])
    row = group.workspace.datasets.get().rows.get()
    round_ = answered(group, ["Paris.", "paris, of course"], dataset_row=row, variables={"city": "Paris"})
    data = api.get(f"/api/v1/rounds/{round_.pk}/").json()
    first, second = sorted(data["outputs"], key=lambda o: o["position"])
    assert [a["type"] for a in first["assertions"]] == ["icontains", "contains"]  # the group's, then the row's
    assert first["assertions_passed"] is True
    assert second["assertions_passed"] is False
    assert second["assertions"][1] == {
        "type": "contains",
        "metric": None,
        "pass": False,
        "score": 0.0,
        "reason": 'Expected output to contain "Paris"',
    }


def test_rerun_regrades_stored_answers_with_a_new_list_and_only_failing_rounds_are_listed(api, workspace, owner):
    group = make_group(workspace, owner, assertions=CHECKS)
    passing = answered(group, ["Paris", "It is Paris"])
    failing = answered(group, ["Paris", "London"])
    assert Output.objects.filter(round=failing, assertions_passed=False).count() == 1
    assert AssertionResult.objects.filter(output__round=passing).count() == 6

    response = api.post(
        f"/api/v1/groups/{group.pk}/assertions/rerun/",
        {"assert": [{"type": "equals", "value": "Paris"}]},
        format="json",
    )
    assert response.status_code == 200, response.json()
    assert response.json() == {"rounds": 2, "graded": 4, "assertions": [{"type": "equals", "value": "Paris"}]}
    verdicts = Output.objects.filter(round__group=group).order_by("round__number", "variant__position")
    assert [o.assertions_passed for o in verdicts] == [True, False, True, False]
    assert AssertionResult.objects.filter(output__round__group=group).count() == 4

    bad = api.post(f"/api/v1/groups/{group.pk}/assertions/rerun/", {"assertions": [{"type": "foo"}]}, format="json")
    assert bad.status_code == 400 and bad.json()["assertions"] == ["assert[0].type: unknown assertion type 'foo'."]


def test_rerun_needs_an_editor_and_another_workspace_gets_404(api_for, workspace, owner, viewer, stranger):
    group = make_group(workspace, owner, assertions=CHECKS)
    url = f"/api/v1/groups/{group.pk}/assertions/rerun/"
    assert api_for(viewer).post(url, {}, format="json").status_code == 403
    assert api_for(stranger).post(url, {}, format="json").status_code == 404


def test_the_page_shows_each_answers_results_pass_rates_and_the_failing_filter(client, workspace, owner):
    group = make_group(workspace, owner, assertions=CHECKS)
    answered(group, ["Paris", "It is Paris"])
    failing = answered(group, ["Paris", "London"])
    client.force_login(owner)
    page = client.get(f"/compare/{group.pk}/?failing=1").content.decode()
    assert f'data-round="{failing.pk}"' in page  # opens on the failing round
    assert page.count('data-role="assertions"') == 2
    assert "Expected output to contain &quot;paris&quot;" in page
    assert '<tr data-variant="A"><th scope="row">A</th><td>2 of 2</td><td data-role="rate">100%</td>' in page
    assert '<tr data-variant="B"><th scope="row">B</th><td>1 of 2</td><td data-role="rate">50%</td>' in page
    assert 'data-role="failing-round">#2</a>' in page and "#1</a>" not in page
    assert "not enough data" in page


def test_only_failing_rounds_through_the_api_and_a_group_without_assertions_is_left_alone(api, workspace, owner):
    group = make_group(workspace, owner, assertions=CHECKS)
    answered(group, ["Paris", "Paris"])
    failing = answered(group, ["London", "Paris"])
    rounds = api.get(f"/api/v1/groups/{group.pk}/?failing=1").json()["rounds"]
    assert [r["id"] for r in rounds] == [failing.pk]
    assert len(api.get(f"/api/v1/groups/{group.pk}/").json()["rounds"]) == 2

    plain = make_group(workspace, owner)
    round_ = answered(plain, ["a", "b"])
    outputs = api.get(f"/api/v1/rounds/{round_.pk}/").json()["outputs"]
    assert [(o["assertions"], o["assertions_passed"]) for o in outputs] == [([], None), ([], None)]
    assert not AssertionResult.objects.filter(output__round=round_).exists()


def test_a_blind_round_hides_what_latency_and_cost_checks_say_until_its_viewer_votes(api, workspace, owner):
    group = make_group(workspace, owner, assertions=[{"type": "latency", "threshold": 1000}], blind=True)
    round_ = answered(group, ["a", "b"])
    outputs = api.get(f"/api/v1/rounds/{round_.pk}/").json()["outputs"]
    for output in outputs:
        [result] = output["assertions"]
        assert result["pass"] is False and result["score"] is None
        assert result["reason"].startswith("Hidden in a blind round") and "1200" not in result["reason"]


def test_rows_appended_to_a_dataset_keep_their_assertions_and_bad_ones_name_the_row(api, workspace):
    rows = [{"vars": {"city": "Paris"}}]
    created = api.post("/api/v1/datasets/", {"workspace": workspace.pk, "name": "c", "rows": rows}, format="json")
    url = f"/api/v1/datasets/{created.json()['id']}/rows/"
    added = api.post(
        url, {"rows": [{"vars": {"city": "Rome"}, "assert": [{"type": "icontains", "value": "rome"}]}]}, format="json"
    )
    assert added.status_code == 201, added.json()
    assert [r["assertions"] for r in added.json()["rows"]] == [[], [{"type": "icontains", "value": "rome"}]]
    bad = api.post(url, {"rows": [{"vars": {"city": "Oslo"}, "assertions": [{"type": "ruby"}]}]}, format="json")
    assert bad.status_code == 400
    assert bad.json()["rows"][0].startswith("Row 3: assertions: assert[0].type: 'ruby' is refused")
