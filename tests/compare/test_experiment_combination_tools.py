"""A combination's own tools, tool choice and response schema in an experiment file (how a promptfoo config's
providers each keep theirs, issue 41): read onto that variant only, written back by `as_data`, and a bad one
refused naming the combination and the key."""

import pytest

from compare.experiments.config import config_from_data
from compare.experiments.files import UploadedFiles
from compare.experiments.plan import Plan
from compare.experiments.spec import ConfigError

WEATHER = {
    "type": "function",
    "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}},
}
SCHEMA = {"name": "forecast", "schema": {"type": "object", "required": ["city"]}, "strict": True}


def data(**own) -> dict:
    return {
        "name": "Tools per combination",
        "models": [{"model": "openai:a"}, {"model": "openai:b"}],
        "prompts": [{"name": "p", "prompt": "Weather in {{city}}?"}],
        "dataset": [{"name": "paris", "vars": {"city": "Paris"}}],
        "combinations": [{"model": "openai:a", "prompt": "p", **own}, {"model": "openai:b", "prompt": "p"}],
    }


def test_a_combinations_own_settings_reach_its_variant_only():
    own = {"tools": [WEATHER], "tool-choice": "get_weather", "response-schema": SCHEMA}
    config = config_from_data(data(**own), source="t.yaml", files=UploadedFiles({}))

    first, second = Plan(config=config, infos={}, rows=config.rows).variants
    assert (first["tools"], first["tool_choice"], first["response_schema"]) == ([WEATHER], "get_weather", SCHEMA)
    assert not {"tools", "tool_choice", "response_schema"} & set(second)
    assert config.as_data()["combinations"][0] == {
        "model": "openai:a",
        "model-parameters": "default",
        "prompt": "p",
        **own,
    }


@pytest.mark.parametrize(
    ("own", "named"),
    [
        ({"tools": [WEATHER], "tool-choice": "get_time"}, "combinations[1]: tools: tool_choice 'get_time'"),
        ({"response-schema": {"name": "a b", "schema": {}}}, "combinations[1]: response-schema: response_schema name"),
        ({"tool": [WEATHER]}, "combinations[1]: tool: a combination has only"),
    ],
)
def test_a_bad_one_is_refused_naming_the_combination_and_key(own, named):
    with pytest.raises(ConfigError) as caught:
        config_from_data(data(**own), source="t.yaml", files=UploadedFiles({}))
    assert any(named in message for message in caught.value.messages), caught.value.messages
