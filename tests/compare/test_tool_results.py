"""The tool loop in a conversation: a column whose answer called a tool is continued with a (mocked) result for
each call; its next turn sends the assistant message with its calls and the results in each wire format (OpenAI
`role: tool`, Anthropic `tool_result` blocks in a user turn, Gemini `functionResponse` parts), over real HTTP. A
missing result is a 400 naming the column and the call."""

import json

import pytest
from django.core.exceptions import ValidationError

from compare.models import OutputStatus
from compare.rounds.continuing import round_continue
from compare.rounds.execution import round_execute
from lab.services import connection_create
from tests.compare.queued import wait_for_round
from tests.fixtures.compare_factories import make_group, make_round

pytestmark = pytest.mark.django_db(transaction=True)

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}
KINDS = ("openai", "anthropic", "gemini")
ARGS = json.dumps({"city": "Paris"})


def first_turn(workspace, owner, fake_llm):
    urls = {"openai": fake_llm.openai_url, "anthropic": fake_llm.anthropic_url, "gemini": fake_llm.gemini_url}
    for kind, url in urls.items():
        connection_create(workspace=workspace, name=f"r-{kind}", kind=kind, base_url=url, api_key="sk-test")
    names = {kind: fake_llm.model(tool="get_weather", args=ARGS) for kind in KINDS}
    models = [f"r-{kind}::{names[kind]}" for kind in KINDS]
    group = make_group(workspace, owner, models=models, prompts=["Weather?"] * 3, mode="custom", tools=[WEATHER])
    round_ = make_round(group)
    round_execute(round_id=round_.pk)
    round_.refresh_from_db()
    return round_, names, list(round_.outputs.order_by("variant__position"))


def test_a_tool_result_is_continued_in_each_wire_format(workspace, owner, fake_llm):
    round_, names, outputs = first_turn(workspace, owner, fake_llm)
    assert [len(o.tool_calls) for o in outputs] == [1, 1, 1], [o.error for o in outputs]
    results = [{"output": o.pk, "tool_call_id": o.tool_calls[0]["id"], "content": "Sunny, 21 °C"} for o in outputs]
    turn = round_continue(round=round_, user=owner, message="", tool_results=results)
    round_execute(round_id=turn.pk)
    wait_for_round(turn)  # round_continue also sent it to the workers: a test worker still alive may run it first
    continued = list(turn.outputs.order_by("variant__position"))
    assert [o.status for o in continued] == [OutputStatus.OK] * 3, [o.error for o in continued]
    call = {"id": outputs[0].tool_calls[0]["id"], "name": "get_weather", "arguments": ARGS}
    assert continued[0].messages == [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call["id"], "content": "Sunny, 21 °C"},
    ]

    def last(kind):
        return fake_llm.scenario(names[kind])["last_request"]["body"]

    assert last("openai")["messages"][1:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_fake0", "type": "function", "function": {"name": "get_weather", "arguments": ARGS}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_fake0", "content": "Sunny, 21 °C"},
    ]
    assert last("anthropic")["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Weather?"}]},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_fake0", "name": "get_weather", "input": {"city": "Paris"}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_fake0", "content": "Sunny, 21 °C"}]},
    ]
    assert last("gemini")["contents"] == [
        {"role": "user", "parts": [{"text": "Weather?"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}]},
        {
            "role": "user",
            "parts": [{"functionResponse": {"name": "get_weather", "response": {"content": "Sunny, 21 °C"}}}],
        },
    ]


def test_a_call_without_a_result_is_refused_naming_the_column_and_the_call(workspace, owner, fake_llm):
    round_, _, outputs = first_turn(workspace, owner, fake_llm)
    results = [{"output": o.pk, "tool_call_id": o.tool_calls[0]["id"], "content": "ok"} for o in outputs[:2]]
    with pytest.raises(ValidationError) as refused:
        round_continue(round=round_, user=owner, message="And tomorrow?", tool_results=results)
    (problem,) = refused.value.message_dict["tool_results"]
    assert problem == f"Variant 3 (C): call {outputs[2].tool_calls[0]['id']} (get_weather) needs a result."
    assert round_.children.count() == 0


def test_the_api_takes_tool_results_without_a_message(workspace, owner, fake_llm, api):
    round_, _, outputs = first_turn(workspace, owner, fake_llm)
    body = {"tool_results": [{"output": o.pk, "tool_call_id": o.tool_calls[0]["id"], "content": "x"} for o in outputs]}
    response = api.post(f"/api/v1/rounds/{round_.pk}/continue/", body, format="json")
    assert response.status_code == 202, response.json()
    missing = api.post(
        f"/api/v1/rounds/{round_.pk}/continue/", {"tool_results": body["tool_results"][:1]}, format="json"
    )
    assert missing.status_code == 400
    assert "Variant 2 (B)" in " ".join(missing.json()["tool_results"])
