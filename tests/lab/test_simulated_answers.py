"""The simulated models answer plausibly and follow a prompt's simple instructions, offline and deterministically:
a language, one sentence, a list of so many items, JSON or YAML when asked, a code block when asked; a judge's call
with a JSON schema gets an instance of it. Still labelled: prose starts with "**Simulated answer**"."""

import asyncio
import json

import jsonschema
import pytest
import yaml

from lab.providers.base import ChatRequest, ConnectionConfig
from lab.providers.simulated import SimulatedAdapter


def answer(prompt: str, model: str = "instant", system: str = "", **params) -> str:
    messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
    adapter = SimulatedAdapter(ConnectionConfig(name="simulated", kind="simulated"))
    return asyncio.run(adapter.complete(ChatRequest(model=model, messages=messages, params=params))).text


def body(text: str) -> str:
    head, _, rest = text.partition("\n\n")
    assert head == "**Simulated answer**"
    return rest


def test_the_same_request_gives_the_same_answer_and_another_prompt_another():
    assert answer("How can I reset my password?") == answer("How can I reset my password?")
    assert body(answer("How can I reset my password?")) != body(answer("How do I change my email address?"))
    assert "reset my password" in answer("Answer clearly: How can I reset my password?").lower()


def test_an_answer_never_repeats_the_prompts_own_words():
    # A blind comparison of prompt versions must not learn from an answer which version asked it.
    text = answer("Prompt v7 (formal, by Ada):\nSay something about tea.")
    assert not any(word in text for word in ("v7", "formal", "Ada", "Prompt"))


def test_it_writes_in_the_language_asked():
    french = body(answer("Explain how to brew tea, in French."))
    german = body(answer("Erkläre Tee, auf Deutsch.", system=""))
    assert any(word in french for word in ("Pour", "Commencez", "Vérifiez", "Si cela", "En pratique", "Notez"))
    assert any(word in german for word in ("Bei", "Beginnen", "Prüfen", "Wenn", "In der Praxis", "Notieren"))


def test_one_sentence_is_one_sentence():
    text = body(answer("Describe green tea in one sentence."))
    assert text.count(".") == 1 and text.endswith(".")


@pytest.mark.parametrize(
    ("prompt", "items", "marker"),
    [("Give me 4 tips for better sleep.", 4, "- "), ("List the steps to reset a router.", 3, "1. ")],
)
def test_a_list_has_the_items_asked(prompt, items, marker):
    lines = body(answer(prompt)).splitlines()
    assert len(lines) == items and lines[0].startswith(marker)


def test_json_when_asked_with_the_fields_the_prompt_lists():
    prompt = (
        'Classify the ticket. Reply as JSON with:\n- priority: "low" | "medium" | "high"\n'
        '- category: "bug" | "billing"\n\nTicket: charged twice'
    )
    value = json.loads(answer(prompt))
    assert value["priority"] in ("low", "medium", "high") and value["category"] in ("bug", "billing")
    assert set(value) == {"priority", "category"}


def test_yaml_when_asked():
    value = yaml.safe_load(answer("Return YAML with:\n- summary: one line\n\nText: the kettle leaks"))
    assert isinstance(value, dict) and isinstance(value["summary"], str)


def test_a_code_block_when_asked():
    text = answer("Write a javascript function that reverses a string.")
    assert "```javascript\nfunction reverses_a_string(value) {" in text and text.rstrip().endswith("```")


def test_the_length_follows_the_preset_and_max_tokens_cuts_it_off():
    words = len(body(answer("Tell me about tea.", model="instant?tokens=25")).split())
    assert words == 25
    adapter = SimulatedAdapter(ConnectionConfig(name="simulated", kind="simulated"))
    cut = asyncio.run(
        adapter.complete(ChatRequest("instant", [{"role": "user", "content": "Tell me about tea."}], {"max_tokens": 5}))
    )
    assert cut.finish_reason == "length" and cut.usage.output_tokens == 5


def test_a_judge_s_call_with_a_schema_gets_an_instance_of_it():
    schema = {
        "type": "object",
        "properties": {
            "metrics": {
                "type": "object",
                "properties": {
                    "Overall": {
                        "type": "object",
                        "properties": {
                            "reason": {"type": "string"},
                            "score": {"type": "integer", "enum": [1, 2, 3, 4, 5]},
                        },
                        "required": ["reason", "score"],
                        "additionalProperties": False,
                    }
                },
                "required": ["Overall"],
                "additionalProperties": False,
            }
        },
        "required": ["metrics"],
        "additionalProperties": False,
    }
    adapter = SimulatedAdapter(ConnectionConfig(name="simulated", kind="simulated"))
    request = ChatRequest("thinker?ttft_ms=0&token_ms=0", [{"role": "user", "content": "Judge this answer."}])
    reply = asyncio.run(adapter.complete(request, json_schema=schema))
    jsonschema.validate(json.loads(reply.text), schema)
