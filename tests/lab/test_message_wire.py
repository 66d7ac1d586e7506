"""A whole conversation on the wire, per provider kind, as the fake server received it: the system prompt, a
shared few-shot pair, the variant's two user messages and a prefill. Anthropic and Gemini get the system text
apart and strictly alternating turns (the two user messages merged); the simulated models continue the prefill."""

import json

import pytest

from lab.providers.base import ChatRequest, ConnectionConfig, Finish
from lab.providers.simulated import SimulatedAdapter, wire_messages
from tests.lab.adapters import adapter_for, events_of

SYSTEM = "You answer in JSON."
CONVERSATION = [
    {"role": "system", "content": SYSTEM},
    {"role": "user", "content": "Capital of France?"},  # the shared few-shot pair
    {"role": "assistant", "content": '{"capital": "Paris"}'},
    {"role": "user", "content": "Context: South America."},  # the variant's own messages
    {"role": "user", "content": "Capital of Peru?"},
    {"role": "assistant", "content": "{"},  # the prefill
]
MERGED_USER = "Context: South America.\n\nCapital of Peru?"


async def wire_body(fake_llm, kind: str) -> tuple[str, dict]:
    """(the model name, the body the fake server received) for one streamed answer to CONVERSATION."""
    model = fake_llm.model(tokens=2)
    request = ChatRequest(model=model, messages=CONVERSATION, params={"temperature": 0.5, "max_tokens": 100})
    events = await events_of(adapter_for(fake_llm, kind), request)
    assert events[-1] == Finish("stop")
    return model, fake_llm.scenario(model)["last_request"]["body"]


@pytest.mark.parametrize("kind", ["openai_compatible", "openrouter"])
async def test_openai_protocol_kinds_send_the_messages_as_they_are_prefill_last(fake_llm, kind):
    model, body = await wire_body(fake_llm, kind)

    assert body == {
        "model": model,
        "messages": CONVERSATION,
        "temperature": 0.5,
        "max_tokens": 100,
        "stream": True,
        "stream_options": {"include_usage": True},
    }


async def test_anthropic_gets_a_top_level_system_and_alternating_turns_ending_in_the_prefill(fake_llm):
    model, body = await wire_body(fake_llm, "anthropic")

    assert body == {
        "model": model,
        "messages": [
            {"role": "user", "content": "Capital of France?"},
            {"role": "assistant", "content": '{"capital": "Paris"}'},
            {"role": "user", "content": MERGED_USER},
            {"role": "assistant", "content": "{"},
        ],
        "max_tokens": 100,
        "system": SYSTEM,
        "temperature": 0.5,
        "stream": True,
    }


async def test_anthropic_prefill_loses_its_trailing_whitespace_which_the_api_refuses(fake_llm):
    model = fake_llm.model(tokens=2)
    messages = [{"role": "user", "content": "Name a colour."}, {"role": "assistant", "content": "The colour is "}]
    await events_of(adapter_for(fake_llm, "anthropic"), ChatRequest(model=model, messages=messages))

    assert fake_llm.scenario(model)["last_request"]["body"]["messages"][-1] == {
        "role": "assistant",
        "content": "The colour is",
    }


async def test_gemini_gets_system_instruction_and_user_model_contents_ending_in_the_prefill(fake_llm):
    model, body = await wire_body(fake_llm, "gemini")

    assert body == {
        "contents": [
            {"role": "user", "parts": [{"text": "Capital of France?"}]},
            {"role": "model", "parts": [{"text": '{"capital": "Paris"}'}]},
            {"role": "user", "parts": [{"text": MERGED_USER}]},
            {"role": "model", "parts": [{"text": "{"}]},
        ],
        "systemInstruction": {"parts": [{"text": SYSTEM}]},
        "generationConfig": {"temperature": 0.5, "maxOutputTokens": 100},
    }
    assert fake_llm.scenario(model)["last_request"]["path"].endswith(f"/models/{model}:streamGenerateContent")


async def test_the_simulated_model_reads_the_conversation_and_continues_the_prefill():
    assert wire_messages(CONVERSATION) == CONVERSATION
    adapter = SimulatedAdapter(ConnectionConfig(name="sim", kind="simulated"))
    asked = [{"role": "user", "content": "Reply in JSON with the fields name and age."}]

    prefilled = await adapter.complete(ChatRequest("instant", [*asked, {"role": "assistant", "content": "{"}]))
    plain = await adapter.complete(ChatRequest("instant", asked))

    assert set(json.loads("{" + prefilled.text)) == {"name", "age"}  # the answer goes on from the "{"
    assert plain.text.startswith("{")
    prose = await adapter.complete(ChatRequest("instant", [*ASK_TEA, {"role": "assistant", "content": "Tea"}]))
    assert prose.text.startswith(" ")  # words after the prefill, not a new answer glued to it


ASK_TEA = [
    {"role": "user", "content": "Explain how to roast coffee."},
    {"role": "assistant", "content": "Coffee is roasted seeds."},
    {"role": "user", "content": "Explain how to brew green tea."},
]


async def test_the_simulated_model_answers_the_last_user_message():
    adapter = SimulatedAdapter(ConnectionConfig(name="sim", kind="simulated"))

    answer = await adapter.complete(ChatRequest("instant", ASK_TEA))

    assert "tea" in answer.text.lower() and "coffee" not in answer.text.lower()
