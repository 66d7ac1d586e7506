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
    response = api.post("/api/v1/groups/", group_body(workspace, tools=[TOOL, deep]), format="json")
    assert response.status_code == 400
    # The request's parser refuses it, before any serializer or model sees it, naming the tool by its name.
    assert response.json() == {"tools": ["Tool deep_tool: its schema nests deeper than 32 levels."]}
    body = group_body(workspace)
    body["variants"][1]["tools"] = [deep]
    response = api.post("/api/v1/groups/", body, format="json")
    assert response.json() == {"variants": ["Tool deep_tool: its schema nests deeper than 32 levels."]}
    deep_response = {"name": "answer", "schema": deep_schema(100)}
    response = api.post("/api/v1/groups/", group_body(workspace, response_schema=deep_response), format="json")
    assert response.json() == {"response_schema": ["response_schema answer: its schema nests deeper than 32 levels."]}
    assert not CompareGroup.objects.filter(workspace=workspace).exists()


def test_a_tool_schema_as_deep_as_the_tool_rule_allows_is_taken_and_the_body_limit_holds_elsewhere(api, workspace):
    # deep_schema(15) nests 31 levels: within the tools' limit of 32, so the parser (which counts a tool's schema
    # from the schema itself) takes it too; one level more is refused naming the tool.
    fits = {"type": "function", "function": {"name": "fits", "parameters": deep_schema(15)}}
    response = api.post("/api/v1/groups/", group_body(workspace, tools=[fits]), format="json")
    assert response.status_code == 201, response.json()
    over = {"type": "function", "function": {"name": "over", "parameters": deep_schema(16)}}
    response = api.post("/api/v1/groups/", group_body(workspace, tools=[over]), format="json")
    assert response.json() == {"tools": ["Tool over: its schema nests deeper than 32 levels."]}
    # Anywhere else in a tool, and in every other field, the body's own limit still answers with the path.
    nested = deep_schema(20)
    elsewhere = {"type": "function", "function": {"name": "odd", "parameters": {}, "description": nested}}
    response = api.post("/api/v1/groups/", group_body(workspace, tools=[elsewhere]), format="json")
    assert response.json()["tools"][0].startswith("tools[0].function.description")
    assert response.json()["tools"][0].endswith("nested more than 32 levels deep.")
    body = group_body(workspace)
    body["variants"][0]["params"] = nested
    assert "nested more than 32 levels deep." in api.post("/api/v1/groups/", body, format="json").json()["variants"][0]
    assert CompareGroup.objects.filter(workspace=workspace).count() == 1


def test_a_tool_schema_nested_beyond_pythons_recursion_is_a_400_not_a_500(api, workspace):
    text = '{"tools": [{"type": "function", "function": {"name": "abyss", "parameters": ' + "[" * 100_000
    response = api.generic("POST", "/api/v1/groups/", text, content_type="application/json")
    assert response.json() == {"tools": ["Tool abyss: its schema nests deeper than 32 levels."]}
    variant = '{"variants": [{"model": "m"}, {"tools": [{"function": {"name": "pit", "parameters": [{}, [' + "{}," * 3
    response = api.generic("POST", "/api/v1/groups/", variant + '{"a":' * 100_000, content_type="application/json")
    assert response.json() == {"variants": ["Tool pit: its schema nests deeper than 32 levels."]}
    # Elsewhere the scan names the top-level field only, as before.
    response = api.generic("POST", "/api/v1/groups/", '{"title": ' + "[" * 100_000, content_type="application/json")
    assert response.json() == {"title": ["nested more than 32 levels deep."]}
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
