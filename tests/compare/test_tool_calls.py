"""Tools and native structured output over real HTTP to the fake server, in each wire format: the tools and tool
choice as each provider takes them (exact bodies), a streamed tool call parsed and stored with valid and invalid
arguments, a response schema sent natively and each answer's `schema_valid`, and refusals naming the tool or model."""

import json

import pytest
from django.core.exceptions import ValidationError
from statsmodels.stats.proportion import proportion_confint

from compare.models import CompareGroup, OutputStatus
from compare.rounds.execution import round_execute
from compare.selectors import schema_validity
from lab.jobs.kinds import Lane
from lab.services import connection_create
from tests.fixtures.compare_factories import make_group, make_round

pytestmark = pytest.mark.django_db(transaction=True)

WEATHER_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city"],
}
WEATHER = {
    "type": "function",
    "function": {"name": "get_weather", "description": "The forecast for a city.", "parameters": WEATHER_SCHEMA},
}
KINDS = ("openai", "anthropic", "gemini")


def connections(workspace, fake_llm):
    urls = {"openai": fake_llm.openai_url, "anthropic": fake_llm.anthropic_url, "gemini": fake_llm.gemini_url}
    for kind, url in urls.items():
        if workspace.connections.filter(name=f"t-{kind}").exists():
            continue
        connection_create(workspace=workspace, name=f"t-{kind}", kind=kind, base_url=url, api_key="sk-test")


def run_kinds(workspace, owner, fake_llm, names, **fields):
    connections(workspace, fake_llm)
    models = [f"t-{kind}::{names[kind]}" for kind in KINDS]
    group = make_group(workspace, owner, models=models, prompts=["Weather in {{topic}}?"] * 3, mode="custom", **fields)
    round_ = make_round(group)
    round_execute(round_id=round_.pk)
    return list(round_.outputs.order_by("variant__position"))


def body(fake_llm, name):
    return fake_llm.scenario(name)["last_request"]["body"]


def test_tools_and_tool_choice_go_as_each_provider_takes_them(workspace, owner, fake_llm):
    names = {kind: fake_llm.model(tokens=2) for kind in KINDS}
    outputs = run_kinds(workspace, owner, fake_llm, names, tools=[WEATHER], tool_choice="get_weather")
    assert [o.status for o in outputs] == [OutputStatus.OK] * 3, [o.error for o in outputs]

    openai = body(fake_llm, names["openai"])
    assert openai["tools"] == [WEATHER]
    assert openai["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    anthropic = body(fake_llm, names["anthropic"])
    assert anthropic["tools"] == [
        {"name": "get_weather", "description": "The forecast for a city.", "input_schema": WEATHER_SCHEMA}
    ]
    assert anthropic["tool_choice"] == {"type": "tool", "name": "get_weather"}
    gemini = body(fake_llm, names["gemini"])
    assert gemini["tools"] == [
        {
            "functionDeclarations": [
                {"name": "get_weather", "description": "The forecast for a city.", "parameters": WEATHER_SCHEMA}
            ]
        }
    ]
    assert gemini["toolConfig"] == {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}}


@pytest.mark.parametrize(
    ("choice", "openai", "anthropic", "gemini"),
    [
        ("auto", "auto", {"type": "auto"}, "AUTO"),
        ("required", "required", {"type": "any"}, "ANY"),
        ("none", "none", {"type": "none"}, "NONE"),
    ],
)
def test_each_tool_choice_is_converted(workspace, owner, fake_llm, choice, openai, anthropic, gemini):
    names = {kind: fake_llm.model(tokens=2) for kind in KINDS}
    run_kinds(workspace, owner, fake_llm, names, tools=[WEATHER], tool_choice=choice)
    assert body(fake_llm, names["openai"])["tool_choice"] == openai
    assert body(fake_llm, names["anthropic"])["tool_choice"] == anthropic
    assert body(fake_llm, names["gemini"])["toolConfig"] == {"functionCallingConfig": {"mode": gemini}}


def test_a_streamed_tool_call_is_stored_with_its_validity_in_each_wire_format(workspace, owner, fake_llm):
    valid = json.dumps({"city": "Paris", "days": 3})
    names = {kind: fake_llm.model(tool="get_weather", args=valid) for kind in KINDS}
    outputs = run_kinds(workspace, owner, fake_llm, names, tools=[WEATHER], tool_choice="auto")
    assert [o.status for o in outputs] == [OutputStatus.OK] * 3, [o.error for o in outputs]
    for output in outputs:
        (call,) = output.tool_calls
        assert call["name"] == "get_weather"
        assert json.loads(call["arguments"]) == {"city": "Paris", "days": 3}
        assert (call["valid"], call["error"]) == (True, "")
        assert call["id"]
        assert output.text == ""  # only a call: still a complete answer
    assert fake_llm.scenario(names["openai"])["last_request"]["body"]["stream"] is True


def test_arguments_that_do_not_validate_are_stored_with_the_error(workspace, owner, fake_llm):
    wrong = json.dumps({"days": "three"})
    names = {kind: fake_llm.model(tool="get_weather", args=wrong) for kind in KINDS}
    outputs = run_kinds(workspace, owner, fake_llm, names, tools=[WEATHER])
    for output in outputs:
        (call,) = output.tool_calls
        assert call["valid"] is False
        assert call["error"] == "'three' is not of type 'integer' (at days)" or "'city' is a required" in call["error"]
    not_json = {kind: fake_llm.model(tool="get_weather", args='{"city": "Par') for kind in ("openai", "anthropic")}
    connections_done = run_two(workspace, owner, fake_llm, not_json)
    for output in connections_done:
        assert output.tool_calls[0]["valid"] is False
        assert output.tool_calls[0]["error"].startswith("Not JSON:")


def run_two(workspace, owner, fake_llm, names):
    models = [f"t-{kind}::{name}" for kind, name in names.items()]
    group = make_group(workspace, owner, models=models, prompts=["Weather?"] * 2, mode="custom", tools=[WEATHER])
    round_ = make_round(group)
    round_execute(round_id=round_.pk)
    return list(round_.outputs.order_by("variant__position"))


def test_a_response_schema_is_sent_natively_and_each_answer_checked(workspace, owner, fake_llm):
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    names = {kind: fake_llm.model() for kind in KINDS}
    response_schema = {"name": "forecast", "schema": schema, "strict": False}
    outputs = run_kinds(workspace, owner, fake_llm, names, response_schema=response_schema)
    assert [o.status for o in outputs] == [OutputStatus.OK] * 3, [o.error for o in outputs]
    assert body(fake_llm, names["openai"])["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "forecast", "schema": schema, "strict": False},
    }
    anthropic = body(fake_llm, names["anthropic"])
    assert anthropic["tools"] == [
        {"name": "forecast", "description": "Give the answer in this structure.", "input_schema": schema}
    ]
    assert anthropic["tool_choice"] == {"type": "tool", "name": "forecast"}
    config = body(fake_llm, names["gemini"])["generationConfig"]
    assert (config["responseMimeType"], config["responseSchema"]) == ("application/json", schema)
    assert [json.loads(o.text) for o in outputs] == [{"answer": "fake"}] * 3
    assert [o.schema_valid for o in outputs] == [True] * 3

    invalid = {kind: fake_llm.model(json="invalid") for kind in KINDS}
    outputs = run_kinds(workspace, owner, fake_llm, invalid, response_schema=response_schema)
    assert [o.schema_valid for o in outputs] == [False] * 3


def test_validate_only_sends_nothing_and_checks_the_answer(workspace, owner, fake_llm):
    names = {kind: fake_llm.model(text='{"answer": "x"}') for kind in KINDS}
    schema = {"type": "object", "required": ["answer"]}
    outputs = run_kinds(
        workspace, owner, fake_llm, names, response_schema={"name": "r", "schema": schema, "mode": "validate"}
    )
    assert "response_format" not in body(fake_llm, names["openai"])
    assert "tools" not in body(fake_llm, names["anthropic"])
    assert "generationConfig" not in body(fake_llm, names["gemini"])
    assert [o.schema_valid for o in outputs] == [True] * 3


def deep_schema(levels):
    schema = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"inner": schema}}
    return schema


def test_bad_tools_are_refused_naming_the_tool_and_nothing_is_stored(workspace, owner, fake_llm):
    deep = {"type": "function", "function": {"name": "deep_tool", "parameters": deep_schema(100)}}
    bad = {"type": "function", "function": {"name": "bad_tool", "parameters": {"type": 12}}}
    with pytest.raises(ValidationError) as refused:
        make_group(workspace, owner, models=["simulated::a", "simulated::b"], tools=[deep, bad, WEATHER, WEATHER])
    messages = refused.value.message_dict["tools"]
    assert any(m.startswith("Tool deep_tool: its schema nests deeper than") for m in messages)
    assert any(m.startswith("Tool bad_tool: its schema is not a valid JSON Schema") for m in messages)
    assert "Tool get_weather: another tool has this name." in messages
    assert not CompareGroup.objects.filter(workspace=workspace).exists()


def test_a_model_known_not_to_take_a_response_schema_is_refused_by_name(workspace, owner, fake_llm):
    connections(workspace, fake_llm)
    schema = {"name": "r", "schema": {"type": "object"}}
    models = ["t-openai::gpt-3.5-turbo", f"t-openai::{fake_llm.model()}"]
    with pytest.raises(ValidationError) as refused:
        make_group(workspace, owner, models=models, response_schema=schema)
    assert any("t-openai::gpt-3.5-turbo does not take a native response schema" in m for m in refused.value.messages)
    group = make_group(workspace, owner, models=models, response_schema={**schema, "mode": "validate"})
    assert group.response_schema["mode"] == "validate"


def test_the_share_of_valid_answers_per_variant_has_its_wilson_interval(workspace, owner, fake_llm, client):
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    connections(workspace, fake_llm)
    good, bad = fake_llm.model(), fake_llm.model(json="invalid")
    group = make_group(
        workspace,
        owner,
        models=[f"t-openai::{good}", f"t-anthropic::{bad}"],
        response_schema={"name": "r", "schema": schema},
    )
    for _ in range(3):
        round_ = make_round(group)
        round_execute(round_id=round_.pk)
    # One more answer of the first variant that does not validate: 3 valid of 4.
    first = group.variants.get(position=1).outputs.first()
    first.__class__.objects.filter(pk=first.pk).update(schema_valid=False)
    round_ = make_round(group)
    round_execute(round_id=round_.pk)

    shares = schema_validity(group)
    assert [(s.position, s.valid, s.checked) for s in shares] == [(1, 3, 4), (2, 0, 4)]
    for share in shares:
        low, high = proportion_confint(share.valid, share.checked, alpha=0.05, method="wilson")
        assert (share.low, share.high) == pytest.approx((low, high))
    client.force_login(owner)
    page = client.get(f"/compare/{group.pk}/").content.decode()
    assert 'data-role="schema-validity"' in page and "75%" in page
    report = client.get(f"/votes/groups/{group.pk}/report/").content.decode()
    assert 'data-role="schema-validity"' in report
    # The full report page shows the same share with its interval, in the form the template prints it.
    full = client.get(f"/compare/{group.pk}/report/").content.decode()
    assert 'data-role="schema-validity"' in full
    low, high = proportion_confint(3, 4, alpha=0.05, method="wilson")
    assert f'<td data-role="interval">{low:.0%}–{high:.0%}</td>' in full


def test_a_batch_round_nobody_watches_stores_the_calls_of_one_json_body(workspace, owner, fake_llm):
    valid = json.dumps({"city": "Oslo"})
    names = {kind: fake_llm.model(tool="get_weather", args=valid) for kind in KINDS}
    connections(workspace, fake_llm)
    models = [f"t-{kind}::{names[kind]}" for kind in KINDS]
    group = make_group(workspace, owner, models=models, prompts=["Weather?"] * 3, mode="custom", tools=[WEATHER])
    round_ = make_round(group, lane=Lane.BATCH)
    round_execute(round_id=round_.pk)
    for kind, output in zip(KINDS, round_.outputs.order_by("variant__position"), strict=True):
        assert "stream" not in body(fake_llm, names[kind]) or kind == "gemini"
        assert [(c["name"], json.loads(c["arguments"]), c["valid"]) for c in output.tool_calls] == [
            ("get_weather", {"city": "Oslo"}, True)
        ], kind


def test_a_validate_only_column_says_the_schema_was_only_checked(workspace, owner, fake_llm, client):
    connections(workspace, fake_llm)
    models = [f"t-openai::{fake_llm.model(text='{}')}", f"t-gemini::{fake_llm.model(text='no')}"]
    schema = {"name": "r", "schema": {"type": "object"}, "mode": "validate"}
    group = make_group(workspace, owner, models=models, response_schema=schema)
    round_ = make_round(group)
    round_execute(round_id=round_.pk)
    assert [o.schema_valid for o in round_.outputs.order_by("variant__position")] == [True, False]
    client.force_login(owner)
    page = client.get(f"/compare/{group.pk}/").content.decode()
    assert page.count('data-role="validate-only"') == 2
