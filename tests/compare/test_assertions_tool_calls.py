"""`is-valid-openai-tools-call` on a comparison (issue 41): graded as a real round finishes (over HTTP to the fake
server) from each answer's stored tool calls against the tools its variant was offered (the group's, or the
variant's own), with promptfoo's reasons."""

import pytest

from compare.models import CompareGroup
from compare.rounds.execution import round_execute
from lab.services import connection_create
from tests.fixtures.compare_factories import make_round

pytestmark = pytest.mark.django_db(transaction=True)


def tool(name: str, required: list[str]) -> dict:
    properties = {"city": {"type": "string"}, "days": {"type": "integer"}}
    parameters = {"type": "object", "properties": properties, "required": required}
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


def test_tool_calls_are_checked_against_the_variants_tools(api, workspace, fake_llm):
    connection_create(workspace=workspace, name="fake", kind="openai_compatible", base_url=fake_llm.openai_url)
    valid = fake_llm.model(tool="get_weather", args='{"city": "Paris", "days": 2}')
    wrong = fake_llm.model(tool="get_weather", args='{"days": "two"}')
    elsewhere = fake_llm.model(tool="get_weather", args='{"city": "Paris"}')
    text = fake_llm.model(tokens=3)
    prompt = "Weather in {{city}}?"
    body = {
        "workspace": workspace.pk,
        "mode": "models",
        "variants": [
            {"label": "valid", "model": f"fake::{valid}", "prompt": prompt},
            {"label": "wrong", "model": f"fake::{wrong}", "prompt": prompt},
            # Offered only get_forecast, so its call of get_weather names no tool it has.
            {
                "label": "elsewhere",
                "model": f"fake::{elsewhere}",
                "prompt": prompt,
                "tools": [tool("get_forecast", ["city"])],
                "tool_choice": "auto",
            },
            {"label": "text", "model": f"fake::{text}", "prompt": prompt},
        ],
        "shared_variables": {"city": "Paris"},
        "tools": [tool("get_weather", ["city"])],
        "tool_choice": "required",
        "assert": [{"type": "is-valid-openai-tools-call"}],
    }
    response = api.post("/api/v1/groups/", body, format="json")
    assert response.status_code == 201, response.json()
    round_ = make_round(CompareGroup.objects.get(pk=response.json()["id"]))
    round_execute(round_id=round_.pk)

    data = api.get(f"/api/v1/rounds/{round_.pk}/").json()
    by_label = {o["label"]: o for o in data["outputs"]}
    assert {label: o["assertions_passed"] for label, o in by_label.items()} == {
        "valid": True,
        "wrong": False,
        "elsewhere": False,
        "text": False,
    }
    reasons = {label: o["assertions"][0]["reason"] for label, o in by_label.items()}
    assert reasons["wrong"].startswith('Call to "get_weather" does not match schema')
    assert reasons["elsewhere"] == 'Called "get_weather", but there is no function with that name'
    assert reasons["text"].startswith("OpenAI did not return a valid-looking tools response")
    assert fake_llm.scenario(elsewhere)["last_request"]["body"]["tools"] == [tool("get_forecast", ["city"])]
