"""What each adapter puts on the wire (only set parameters, under each protocol's names), `complete` with a
JSON schema, and each provider's model list, all checked against what the fake server received."""

import json

import pytest

from lab.providers.anthropic import DEFAULT_MAX_TOKENS
from lab.providers.base import Finish, ModelInfo
from tests.lab.adapters import HTTP_KINDS, KEY, SYSTEM, USER, adapter_for, chat, events_of

ALL_PARAMS = {"temperature": 0.3, "top_p": 0.9, "max_tokens": 50, "seed": 7, "stop": ["END"]}
SCHEMA = {
    "type": "object",
    "properties": {"winner": {"type": "string", "enum": ["A", "B"]}, "score": {"type": "integer"}},
    "required": ["winner", "score"],
    "additionalProperties": False,
}


async def sent(fake_llm, kind: str, **params) -> dict:
    """The request the fake server received for one streamed answer."""
    model = fake_llm.model(tokens=2)
    events = await events_of(adapter_for(fake_llm, kind), chat(model, **params))
    assert events[-1] == Finish("stop")
    return fake_llm.scenario(model)["last_request"]


async def test_openai_gets_every_set_parameter_and_asks_for_usage_in_the_stream(fake_llm):
    request = await sent(fake_llm, "openai", **ALL_PARAMS)

    body = request["body"]
    assert request["headers"]["authorization"] == f"Bearer {KEY}"
    assert body["messages"] == [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}]
    assert (body["temperature"], body["top_p"], body["seed"], body["stop"]) == (0.3, 0.9, 7, ["END"])
    assert body["max_completion_tokens"] == 50 and "max_tokens" not in body  # reasoning models refuse max_tokens
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("kind", ["openai_compatible", "openrouter"])
async def test_openai_compatible_servers_get_max_tokens(fake_llm, kind):
    body = (await sent(fake_llm, kind, max_tokens=50))["body"]

    assert body["max_tokens"] == 50 and "max_completion_tokens" not in body


@pytest.mark.parametrize("kind", HTTP_KINDS)
async def test_unset_parameters_are_not_sent(fake_llm, kind):
    request = await sent(fake_llm, kind, temperature=None, top_p="", seed=None, stop=[])

    sent_text = json.dumps(request["body"])
    for name in ("temperature", "top_p", "topP", "seed", "stop", "stopSequences", "stop_sequences"):
        assert f'"{name}"' not in sent_text


async def test_an_openai_compatible_server_without_a_key_gets_no_authorization(fake_llm):
    model = fake_llm.model(tokens=2)
    await events_of(adapter_for(fake_llm, "openai_compatible", key=""), chat(model))

    assert "authorization" not in fake_llm.scenario(model)["last_request"]["headers"]


async def test_openrouter_is_told_who_is_calling(fake_llm):
    request = await sent(fake_llm, "openrouter")

    assert request["headers"]["x-title"] == "Prompt Lab"


async def test_anthropic_gets_a_top_level_system_prompt_and_its_own_parameter_names(fake_llm):
    request = await sent(fake_llm, "anthropic", **ALL_PARAMS)

    body = request["body"]
    assert request["headers"]["x-api-key"] == KEY and request["headers"]["anthropic-version"]
    assert body["system"] == SYSTEM
    assert body["messages"] == [{"role": "user", "content": USER}]
    assert (body["temperature"], body["top_p"], body["max_tokens"], body["stop_sequences"]) == (0.3, 0.9, 50, ["END"])
    assert "seed" not in body  # the Messages API has none; check_params refuses it before a run


async def test_anthropic_always_gets_max_tokens_the_models_maximum_else_8192(fake_llm):
    model = fake_llm.model(tokens=2)
    adapter = adapter_for(fake_llm, "anthropic")

    await events_of(adapter, chat(model))
    assert fake_llm.scenario(model)["last_request"]["body"]["max_tokens"] == DEFAULT_MAX_TOKENS == 8192

    events = [e async for e in adapter.stream(chat(model), model_info=ModelInfo(id="fake", max_output_tokens=1234))]
    assert events[-1] == Finish("stop")
    assert fake_llm.scenario(model)["last_request"]["body"]["max_tokens"] == 1234


async def test_gemini_gets_its_key_in_a_header_never_in_the_url(fake_llm):
    request = await sent(fake_llm, "gemini", **ALL_PARAMS)

    assert request["headers"]["x-goog-api-key"] == KEY
    assert request["query"] == {"alt": "sse"}
    assert KEY not in request["path"]
    assert request["path"].endswith(":streamGenerateContent")
    body = request["body"]
    assert body["systemInstruction"] == {"parts": [{"text": SYSTEM}]}
    assert body["contents"] == [{"role": "user", "parts": [{"text": USER}]}]
    assert body["generationConfig"] == {
        "temperature": 0.3,
        "topP": 0.9,
        "maxOutputTokens": 50,
        "seed": 7,
        "stopSequences": ["END"],
    }


@pytest.mark.parametrize("kind", HTTP_KINDS)
async def test_complete_returns_json_that_follows_the_schema(fake_llm, kind):
    model = fake_llm.model()

    completion = await adapter_for(fake_llm, kind).complete(chat(model), json_schema=SCHEMA)

    assert json.loads(completion.text) == {"winner": "A", "score": 1}
    assert completion.finish_reason == "stop"
    assert completion.usage.input_tokens == 5
    body = fake_llm.scenario(model)["last_request"]["body"]
    schema_sent = {
        "openai": lambda: body["response_format"]["json_schema"]["schema"],
        "openai_compatible": lambda: body["response_format"]["json_schema"]["schema"],
        "openrouter": lambda: body["response_format"]["json_schema"]["schema"],
        "anthropic": lambda: body["tools"][0]["input_schema"],
        "gemini": lambda: body["generationConfig"]["responseJsonSchema"],
    }[kind]()
    assert schema_sent == SCHEMA


async def test_openai_strict_mode_is_used_only_for_schemas_it_accepts(fake_llm):
    adapter, model = adapter_for(fake_llm, "openai"), fake_llm.model()
    loose = {"type": "object", "properties": {"score": {"type": "integer"}}}

    await adapter.complete(chat(model), json_schema=SCHEMA)
    strict = fake_llm.scenario(model)["last_request"]["body"]["response_format"]["json_schema"]["strict"]
    await adapter.complete(chat(model), json_schema=loose)
    lenient = fake_llm.scenario(model)["last_request"]["body"]["response_format"]["json_schema"]["strict"]

    assert (strict, lenient) == (True, False)


@pytest.mark.parametrize("kind", HTTP_KINDS)
async def test_complete_without_a_schema_returns_the_plain_answer(fake_llm, kind):
    completion = await adapter_for(fake_llm, kind).complete(chat(fake_llm.model(text="Plain words here")))

    assert (completion.text, completion.finish_reason) == ("Plain words here", "stop")
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (5, 3)


async def test_openrouter_lists_supported_parameters_and_prices_per_million(fake_llm):
    models = {m.id: m for m in await adapter_for(fake_llm, "openrouter").list_models()}

    assert models["fake"].supported_params == {
        "temperature",
        "top_p",
        "top_k",
        "max_tokens",
        "seed",
        "stop",
        "presence_penalty",
        "frequency_penalty",
    }
    assert (models["fake"].input_price_per_mtok, models["fake"].output_price_per_mtok) == (1.0, 2.0)
    assert models["fake-reasoning"].supported_params == {"max_tokens", "seed", "stop"}
    assert (models["fake-free"].input_price_per_mtok, models["fake-free"].max_output_tokens) == (0.0, 2048)


@pytest.mark.parametrize("kind", ["openai", "openai_compatible"])
async def test_openai_protocol_lists_say_nothing_of_parameters_so_all_are_assumed(fake_llm, kind):
    models = await adapter_for(fake_llm, kind).list_models()

    assert [m.id for m in models] == ["fake", "fake-free", "fake-reasoning"]
    assert all(m.supported_params is None and m.input_price_per_mtok is None for m in models)


async def test_anthropic_lists_its_models_without_seed_or_penalties(fake_llm):
    models = await adapter_for(fake_llm, "anthropic").list_models()

    assert [m.name for m in models][:1] == ["Fake (every parameter)"]
    assert all(m.supported_params == {"temperature", "top_p", "top_k", "max_tokens", "stop"} for m in models)


async def test_gemini_lists_only_models_that_generate_content(fake_llm):
    models = await adapter_for(fake_llm, "gemini").list_models()

    assert [m.id for m in models] == ["fake", "fake-free", "fake-reasoning"]
    assert (models[0].context_length, models[0].max_output_tokens) == (32768, 4096)
