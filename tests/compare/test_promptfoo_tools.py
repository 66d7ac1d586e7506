"""A promptfoo config with tools, tool_choice and response_format per provider, run through `manage.py experiment
run` against the fake server (issue 41): each provider's wire body carries them as promptfoo sends them (passed
through as given), `is-valid-openai-tools-call` reads the stored calls against that provider's tools, and promptfoo's
JSON agrees. `response_format: json_object` is refused naming the key."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
import yaml

from tests.fixtures.experiments import run_command
from tests.fixtures.judging_factories import KEY

pytestmark = pytest.mark.django_db(transaction=True)

CONFIG = Path(__file__).parent.parent / "fixtures" / "promptfoo" / "tools" / "promptfooconfig.yaml"
CALLER = 'fake?tool=get_weather&args={"city":"Paris","days":2}'
WRONG = 'fake?tool=get_weather&args={"days":"two"}'
JSON_MODEL = "fake?tokens=3"


@pytest.fixture
def openai_env(monkeypatch, fake_llm):
    url = fake_llm.url("v1", id=uuid.uuid4().hex[:10])
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    return url


def sent(fake_llm, model: str, url: str) -> dict:
    return fake_llm.scenario(model, url=url)["last_request"]["body"]


def test_tools_and_response_format_go_as_promptfoo_sends_them(workspace, fake_llm, openai_env, tmp_path):
    output = tmp_path / "results.json"

    ran = run_command("run", str(CONFIG), "--output", str(output))

    assert ran.code == 100, ran.err + ran.out  # some tests fail, as promptfoo says with 100
    providers = yaml.safe_load(CONFIG.read_text())["providers"]
    caller, wrong, json_body = (sent(fake_llm, m, openai_env) for m in (CALLER, WRONG, JSON_MODEL))
    for body, provider in zip((caller, wrong, json_body), providers, strict=True):
        config = provider["config"]
        for key in ("tools", "tool_choice", "response_format"):
            assert body.get(key) == config.get(key), (provider["label"], key)
        assert body["temperature"] == 0  # promptfoo's defaults still go

    data = json.loads(output.read_text())
    rows = {(r["testIdx"], r["promptIdx"]): r for r in data["results"]["results"]}
    # Test 1 (is-valid-openai-tools-call): valid arguments pass, a missing city and a text `days` fail, an answer
    # without calls fails as promptfoo's does. Test 2 (is-json): only the JSON provider answers JSON.
    assert [rows[(0, column)]["success"] for column in range(3)] == [True, False, False]
    assert [rows[(1, column)]["success"] for column in range(3)] == [False, False, True]
    assert 'Call to "get_weather" does not match schema' in rows[(0, 1)]["gradingResult"]["reason"]
    assert "did not return a valid-looking tools response" in rows[(0, 2)]["gradingResult"]["reason"]
    # A json_schema answer is shown parsed, as promptfoo's OpenAI provider gives it.
    assert rows[(1, 2)]["response"]["output"].keys() == {"city", "sunny"}
    # A tool-only answer's output is its calls, as promptfoo's OpenAI provider gives them.
    [call] = rows[(0, 0)]["response"]["output"]
    assert call["type"] == "function" and call["function"]["name"] == "get_weather"
    assert json.loads(call["function"]["arguments"]) == {"city": "Paris", "days": 2}
    assert '[PASS] [{"id"' in ran.out
    stats = data["results"]["stats"]
    assert (stats["successes"], stats["failures"], stats["errors"]) == (2, 4, 0)


@pytest.mark.parametrize(
    ("config", "named"),
    [
        ({"response_format": {"type": "json_object"}}, "config: response_format: json_object is not supported"),
        ({"tool_choice": {"type": "tool"}}, "config: tool_choice: auto, none, required"),
        ({"tools": [{"type": "function", "function": {"name": "a b"}}]}, "tools"),
    ],
)
def test_what_the_lab_cannot_send_is_refused_naming_the_key(workspace, fake_llm, openai_env, tmp_path, config, named):
    path = tmp_path / "promptfooconfig.yaml"
    data = {"prompts": ["Hi {{x}}"], "providers": [{"id": "openai:chat:fake", "config": config}]}
    path.write_text(yaml.safe_dump({**data, "tests": [{"vars": {"x": "1"}}]}))

    ran = run_command("run", str(path))

    assert ran.code == 2, ran.err + ran.out
    assert named in ran.err + ran.out
