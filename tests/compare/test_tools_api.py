"""The API contract of tools and structured output: a group (and a variant overriding it) takes `tools`,
`tool_choice` and `response_schema`; a tool schema 100 levels deep is a 400 naming the tool with nothing stored;
every output carries `tool_calls` and `schema_valid`; the OpenAPI schema describes them."""

import pytest

from compare.models import CompareGroup
from compare.rounds.execution import round_execute
from tests.fixtures.compare_factories import make_group, make_round

pytestmark = pytest.mark.django_db

TOOL = {
    "type": "function",
    "function": {"name": "lookup", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}},
}


def deep_schema(levels):
    schema = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"inner": schema}}
    return schema


def group_body(workspace, **fields):
    variants = [{"model": "simulated::instant", "prompt": "Hi"}, {"model": "simulated::writer", "prompt": "Hi"}]
    return {"workspace": workspace.pk, "mode": "models", "variants": variants, **fields}


def test_a_tool_schema_100_levels_deep_is_a_400_naming_the_tool_and_nothing_is_stored(api, workspace):
    deep = {"type": "function", "function": {"name": "deep_tool", "parameters": deep_schema(100)}}
    response = api.post("/api/v1/groups/", group_body(workspace, tools=[deep]), format="json")
    assert response.status_code == 400
    # The request's own depth limit answers first, naming where: the first tool's parameters.
    assert " ".join(response.json()["tools"]).startswith("tools[0].function.parameters")
    assert not CompareGroup.objects.filter(workspace=workspace).exists()


def test_a_variant_may_override_the_groups_tools_and_schema(api, workspace):
    body = group_body(workspace, tools=[TOOL], tool_choice="auto", response_schema={"name": "r", "schema": {}})
    body["variants"][1] |= {"tools": [], "tool_choice": None, "response_schema": None}
    response = api.post("/api/v1/groups/", body, format="json")
    assert response.status_code == 201, response.json()
    data = response.json()
    assert (data["tools"], data["tool_choice"]) == ([TOOL], "auto")
    assert data["response_schema"] == {"name": "r", "schema": {}, "strict": False, "mode": "native"}
    assert [v["tools"] for v in data["variants"]] == [None, []]
    bad = group_body(workspace, tool_choice="nothing_named_so", tools=[TOOL])
    assert "tool_choice" in api.post("/api/v1/groups/", bad, format="json").json()


def test_every_output_carries_tool_calls_and_schema_valid(api, workspace, owner):
    group = make_group(workspace, owner, models=["simulated::instant", "simulated::writer"])
    round_ = make_round(group)
    round_execute(round_id=round_.pk)
    outputs = api.get(f"/api/v1/rounds/{round_.pk}/").json()["outputs"]
    assert [(o["tool_calls"], o["schema_valid"]) for o in outputs] == [([], None), ([], None)]


def test_the_schema_describes_tools_and_structured_output(client):
    schemas = client.get("/api/schema/?format=json").json()["components"]["schemas"]
    assert {"tools", "tool_choice", "response_schema"} <= set(schemas["GroupInRequest"]["properties"])
    assert {"tool_calls", "schema_valid"} <= set(schemas["OutputOut"]["properties"])
    assert set(schemas["ToolCallOut"]["properties"]) == {"id", "name", "arguments", "valid", "error"}
