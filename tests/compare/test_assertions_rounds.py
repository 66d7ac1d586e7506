"""Assertions graded as real rounds finish (against the fake LLM server over HTTP), and re-graded from the stored
answers without any request reaching the server."""

import pytest

from compare.models import AssertionResult, CompareGroup, Output
from compare.rounds.execution import round_execute
from lab.services import connection_create
from tests.fixtures.compare_factories import make_round

pytestmark = pytest.mark.django_db(transaction=True)


def test_answers_are_graded_when_the_round_finishes_and_rerun_calls_no_model(api, workspace, fake_llm):
    connection_create(workspace=workspace, name="fake", kind="openai_compatible", base_url=fake_llm.openai_url)
    paris, london = fake_llm.model(tokens=3), fake_llm.model(tokens=3)
    fake_llm.script(paris, {"text": '{"capital": "Paris"}'})
    fake_llm.script(london, {"text": "It is London."})
    body = {
        "workspace": workspace.pk,
        "mode": "models",
        "variants": [
            {"label": "P", "model": f"fake::{paris}", "prompt": "Capital of {{country}}?"},
            {"label": "L", "model": f"fake::{london}", "prompt": "Capital of {{country}}?"},
        ],
        "shared_variables": {"country": "France"},
        "assert": [
            {"type": "contains-json"},
            {"type": "icontains", "value": "paris"},
            {"type": "not-contains", "value": "{{country}}"},
            {"type": "latency", "threshold": 60_000},
        ],
    }
    response = api.post("/api/v1/groups/", body, format="json")
    assert response.status_code == 201, response.json()
    group = CompareGroup.objects.get(pk=response.json()["id"])
    round_ = make_round(group)
    round_execute(round_id=round_.pk)

    data = api.get(f"/api/v1/rounds/{round_.pk}/").json()
    by_label = {o["label"]: o for o in data["outputs"]}
    assert by_label["P"]["assertions_passed"] is True, by_label["P"]["assertions"]
    assert [a["pass"] for a in by_label["P"]["assertions"]] == [True, True, True, True]
    assert by_label["L"]["assertions_passed"] is False
    assert [(a["type"], a["pass"]) for a in by_label["L"]["assertions"]] == [
        ("contains-json", False),
        ("icontains", False),
        ("not-contains", True),
        ("latency", True),
    ]
    assert by_label["L"]["assertions"][0]["reason"] == "Expected output to contain valid JSON"
    assert by_label["L"]["assertions_score"] == 0.5

    seen = (fake_llm.scenario(paris)["requests"], fake_llm.scenario(london)["requests"])
    assert seen == (1, 1)
    rerun = api.post(
        f"/api/v1/groups/{group.pk}/assertions/rerun/",
        {"assertions": [{"type": "contains", "value": "London"}]},
        format="json",
    )
    assert rerun.status_code == 200, rerun.json()
    assert (fake_llm.scenario(paris)["requests"], fake_llm.scenario(london)["requests"]) == seen
    verdicts = dict(Output.objects.filter(round=round_).values_list("variant__label", "assertions_passed"))
    assert verdicts == {"P": False, "L": True}
    assert AssertionResult.objects.filter(output__round=round_).count() == 2
