"""promptfoo configs run unchanged by `manage.py experiment run` (issue 41, items 3 and 4): the configs in
tests/fixtures/promptfoo/ (written for this project in promptfoo's format) against the fake LLM server, each checked
for its per-test verdicts, the exit code, promptfoo's JSON keys and the exact body each provider was sent."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

import pytest

from compare.models import CompareGroup, Output
from lab.models import Connection
from lab.services import connection_create
from tests.fixtures.experiments import run_command
from tests.fixtures.judging_factories import KEY

pytestmark = pytest.mark.django_db(transaction=True)

CONFIGS = Path(__file__).parent.parent / "fixtures" / "promptfoo"


def config(name: str) -> str:
    return str(CONFIGS / name / "promptfooconfig.yaml")


@pytest.fixture
def openai_env(monkeypatch, fake_llm):
    """promptfoo's OpenAI variables, pointing at a base URL of the fake server only this test uses."""
    url = fake_llm.url("v1", id=uuid.uuid4().hex[:10])
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    return url


def verdicts(path: Path) -> dict[tuple[int, int], bool]:
    data = json.loads(path.read_text())
    return {(r["testIdx"], r["promptIdx"]): r["success"] for r in data["results"]["results"]}


def test_the_basic_config_grades_every_test_and_exits_100_when_one_fails(workspace, fake_llm, openai_env, tmp_path):
    fake_llm.script(
        "gpt-4o-mini",
        *[{"text": "Paris", "match": "France"}] * 2,
        *[{"text": "Tokyo, not Kyoto.", "match": "Japan"}] * 2,
        *[{"text": "Sydney", "match": "Australia"}] * 2,
        url=openai_env,
    )
    output = tmp_path / "results.json"

    ran = run_command("run", config("basic"), "--output", str(output))

    assert ran.code == 100, ran.err + ran.out
    # Tests in file order, a column per prompt: France passes both, Japan fails not-contains, Australia fails equals.
    assert verdicts(output) == {
        (0, 0): True,
        (0, 1): True,
        (1, 0): False,
        (1, 1): False,
        (2, 0): False,
        (2, 1): False,
    }
    data = json.loads(output.read_text())
    first = data["results"]["results"][0]
    assert first["provider"]["id"] == "openai:chat:gpt-4o-mini"
    assert first["vars"] == {"country": "France"}
    assert first["response"]["output"] == "Paris"
    assert first["score"] == 1.0
    # defaultTest's assertion is graded first.
    assert [c["assertion"]["type"] for c in first["gradingResult"]["componentResults"]] == [
        "not-icontains",
        "icontains",
    ]
    assert all({"pass", "score", "reason"} <= set(c) for c in first["gradingResult"]["componentResults"])
    japan = data["results"]["results"][2]["gradingResult"]["componentResults"]
    assert [c["pass"] for c in japan] == [True, True, False]
    assert data["results"]["stats"]["successes"] == 2
    assert data["results"]["stats"]["failures"] == 4
    assert "Successes: 2" in ran.out and "Failures: 4" in ran.out
    assert "[PASS] Paris" in ran.out and "[FAIL]" in ran.out
    # promptfoo's request: the rendered prompt as the one user message, its default temperature and max tokens.
    bodies = fake_llm.requests("gpt-4o-mini", url=openai_env)
    france = next(b for b in bodies if "France? Answer" in json.dumps(b))
    assert france["messages"] == [{"role": "user", "content": "What is the capital of France? Answer in one word."}]
    # The assertions are recorded on the experiment too, so the lab grades each answer as its round finishes and
    # the experiment's page shows the same verdicts.
    group = CompareGroup.objects.get()
    assert group.assertions == [{"type": "not-icontains", "value": "I don't know"}]
    assert [row.assertions for row in group.dataset.rows.order_by("position")] == [
        [{"type": "icontains", "value": "paris"}],
        [{"type": "contains", "value": "Tokyo"}, {"type": "not-contains", "value": "Kyoto"}],
        [{"type": "equals", "value": "Canberra"}],
    ]
    graded = Output.objects.filter(round__group=group).order_by("round__number", "variant__position")
    assert [o.assertions_passed for o in graded] == [True, True, False, False, False, False]


def test_prompt_files_split_on_dashes_csv_tests_and_file_vars(workspace, fake_llm, openai_env, tmp_path):
    fake_llm.script(
        "gpt-4o-mini",
        *[{"text": "Yes, within 30 days.", "match": "refund"}] * 2,
        {"text": "Here is your tracking link.", "match": "Customer: Where is my order"},
        {"text": "I cannot say.", "match": "Question: Where is my order"},
        *[{"text": "Yes we do", "match": "abroad"}] * 2,
        url=openai_env,
    )
    output = tmp_path / "out.json"

    ran = run_command("run", config("files"), "--output", str(output))

    assert ran.code == 100, ran.err + ran.out
    # Two prompts from one file (split on its `---` line); three CSV rows with `__expected` columns.
    assert verdicts(output) == {
        (0, 0): True,
        (0, 1): True,
        (1, 0): True,
        (1, 1): False,
        (2, 0): True,
        (2, 1): True,
    }
    data = json.loads(output.read_text())
    types = [c["assertion"]["type"] for c in data["results"]["results"][0]["gradingResult"]["componentResults"]]
    assert types == ["icontains", "not-contains"]
    # A bare `__expected` value is promptfoo's `equals`; `contains-any:` splits at commas.
    row_three = data["results"]["results"][4]["gradingResult"]["componentResults"]
    assert [c["assertion"] for c in row_three] == [{"type": "equals", "value": "Yes we do"}]
    row_two = data["results"]["results"][2]["gradingResult"]["componentResults"]
    assert row_two[0]["assertion"] == {"type": "contains-any", "value": ["tracking", "track"]}
    assert data["results"]["results"][0]["vars"] == {
        "question": "Can I get a refund?",
        "policy": "Refunds within 30 days.",  # a var file's text is trimmed, as promptfoo reads it
    }
    # The provider's own settings, as promptfoo sends them (and no system message).
    body = fake_llm.requests("gpt-4o-mini", url=openai_env)[0]
    assert body["temperature"] == 0.2
    assert [m["role"] for m in body["messages"]] == ["user"]
    assert "[mini]" in ran.out


def test_var_lists_expand_to_every_combination_repeat_and_test_threshold(workspace, fake_llm, openai_env, tmp_path):
    fake_llm.script("gpt-4o-mini", *[{"text": "El pájaro", "match": "bird"}] * 2, url=openai_env)
    output = tmp_path / "out.json"

    ran = run_command("run", config("expansion"), "--output", str(output))

    assert ran.code == 100, ran.err + ran.out
    data = json.loads(output.read_text())
    # word × language, the first var varying slowest, all four repeated (promptfoo loops repeats outside the
    # combinations); then the file's test, whose one-item list is one value.
    expanded = [(r["testIdx"], r["vars"]["word"], r["vars"]["language"]) for r in data["results"]["results"]]
    assert expanded == [
        (0, "cat", "French"),
        (1, "cat", "German"),
        (2, "dog", "French"),
        (3, "dog", "German"),
        (4, "cat", "French"),
        (5, "cat", "German"),
        (6, "dog", "French"),
        (7, "dog", "German"),
        (8, "bird", "Spanish"),
        (9, "bird", "Spanish"),
    ]
    # The fake server's default answer "t0 t1 …" starts with a lower-case letter: the regex fails. The bird test
    # passes by its threshold (contains passes with weight 1, starts-with passes with weight 3: score 1 ≥ 0.5).
    assert [r["success"] for r in data["results"]["results"]] == [False] * 8 + [True, True]
    assert len(fake_llm.requests("gpt-4o-mini", url=openai_env)) == 10
    # defaultTest from its own file: its assertion is graded first on every test.
    first = data["results"]["results"][0]["gradingResult"]["componentResults"]
    assert [c["assertion"]["type"] for c in first] == ["not-contains", "regex"]
    assert "Read as a promptfoo config: 10 tests (after var lists expand) × 1 prompt × provider column" in ran.out


def test_each_provider_kind_gets_the_body_promptfoo_would_send(workspace, fake_llm, monkeypatch, tmp_path):
    run_id = uuid.uuid4().hex[:10]
    urls = {
        kind: fake_llm.url(api, id=f"{run_id}{kind}")
        for kind, api in (
            ("openai", "v1"),
            ("anthropic", "v1"),
            ("gemini", "v1beta"),
            ("openrouter", "v1"),
            ("ollama", "v1"),
            ("self", "v1"),
        )
    }
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_BASE_URL", urls["openai"])  # promptfoo's other spelling
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", urls["anthropic"])
    monkeypatch.setenv("GOOGLE_API_KEY", KEY)
    monkeypatch.setenv("GEMINI_BASE_URL", urls["gemini"])
    monkeypatch.setenv("OPENROUTER_API_KEY", KEY)
    monkeypatch.setenv("OPENROUTER_BASE_URL", urls["openrouter"])
    monkeypatch.setenv("OLLAMA_BASE_URL", urls["ollama"].removesuffix("/v1"))
    folder = tmp_path / "providers"
    shutil.copytree(CONFIGS / "providers", folder)
    path = folder / "promptfooconfig.yaml"
    path.write_text(path.read_text().replace("SELF_HOSTED_URL", urls["self"]))
    for model, url in (
        ("gpt-4o-mini", urls["openai"]),
        ("claude-3-5-haiku-latest", urls["anthropic"]),
        ("meta-llama/llama-3.1-8b-instruct", urls["openrouter"]),
        ("llama3.2", urls["ollama"]),
        ("local-model", urls["self"]),
    ):
        fake_llm.script(model, {"text": "Hello Ada!"}, url=url)
    fake_llm.script("gemini-2.0-flash", {"text": "Hi there."}, url=urls["gemini"])
    output = tmp_path / "out.json"

    ran = run_command("run", str(path), "--output", str(output))

    assert ran.code == 100, ran.err + ran.out
    data = json.loads(output.read_text())
    assert [(r["provider"]["id"], r["success"]) for r in data["results"]["results"]] == [
        ("openai:gpt-4o-mini", True),
        ("anthropic:messages:claude-3-5-haiku-latest", True),
        ("google:gemini-2.0-flash", False),
        ("openrouter:meta-llama/llama-3.1-8b-instruct", True),
        ("ollama:chat:llama3.2", True),
        ("openai:chat:local-model", True),
    ]
    user = [{"role": "user", "content": "Say hello to Ada."}]

    def body(model: str, url: str) -> dict:
        sent = fake_llm.requests(model, url=url)
        assert len(sent) == 1
        return {k: v for k, v in sent[0].items() if k not in ("stream", "stream_options")}

    # promptfoo's OpenAI defaults (temperature 0, 1024 tokens) where the config is silent.
    assert body("gpt-4o-mini", urls["openai"]) == {
        "model": "gpt-4o-mini",
        "messages": user,
        "temperature": 0,
        "max_completion_tokens": 1024,
    }
    assert body("claude-3-5-haiku-latest", urls["anthropic"]) == {
        "model": "claude-3-5-haiku-latest",
        "messages": user,
        "max_tokens": 300,
        "temperature": 0.5,
        "stop_sequences": ["END"],
    }
    assert body("gemini-2.0-flash", urls["gemini"]) == {
        "contents": [{"role": "user", "parts": [{"text": "Say hello to Ada."}]}],
        "generationConfig": {"temperature": 0.1, "maxOutputTokens": 64},
    }
    assert body("meta-llama/llama-3.1-8b-instruct", urls["openrouter"]) == {
        "model": "meta-llama/llama-3.1-8b-instruct",
        "messages": user,
        "temperature": 0,
        "top_p": 0.9,
        "max_tokens": 1024,
        "seed": 7,
    }
    # Ollama: only what the config sets (promptfoo's Ollama provider has no defaults); num_predict is the limit.
    assert body("llama3.2", urls["ollama"]) == {
        "model": "llama3.2",
        "messages": user,
        "temperature": 0.7,
        "max_tokens": 50,
    }
    assert body("local-model", urls["self"]) == {
        "model": "local-model",
        "messages": user,
        "temperature": 0,
        "max_tokens": 1024,
        "stop": ["###"],
    }


def test_a_run_leaves_a_shared_connection_of_the_same_name_and_kind_byte_identical(
    workspace, owner, fake_llm, openai_env, tmp_path
):
    team = connection_create(
        workspace=workspace, name="openai", kind="openai", base_url="http://127.0.0.1:9/v1", api_key="sk-team-01234567"
    )
    before = list(Connection.objects.filter(workspace=workspace).shared().order_by("pk").values())

    ran = run_command("run", config("basic"))

    assert ran.code == 100, ran.err + ran.out
    assert list(Connection.objects.filter(workspace=workspace).shared().order_by("pk").values()) == before
    assert Connection.objects.get(pk=team.pk).api_key() == "sk-team-01234567"
    mine = Connection.objects.get(workspace=workspace, owner=owner)
    assert (mine.kind, mine.base_url, mine.api_key()) == ("openai", openai_env, KEY)
    assert fake_llm.requests("gpt-4o-mini", url=openai_env)


def test_everything_unsupported_is_refused_up_front_naming_the_key(workspace, fake_llm, openai_env):
    ran = run_command("run", config("refused"))

    assert ran.code == 2
    source = config("refused")
    for expected in (
        f"{source}: sharing: not supported",
        f"{source}: providers[1] (bedrock:anthropic.claude-v2): id: not a supported provider",
        f"{source}: providers[2] (openai:chat:gpt-4o-mini): config: frequency_penalty: not supported",
        f"{source}: prompts[1]: {{{{ name | upper }}}} is Nunjucks beyond {{{{ var }}}}",
        f"{source}: prompts[2]: {{% if formal %}} is Nunjucks",
        f"{source}: prompts[2]: {{% endif %}} is Nunjucks",
        f"{source}: prompts[2]: {{{{ user.name }}}} is Nunjucks",
        f"{source}: prompts[3]: cannot read ../outside.txt: ../outside.txt is outside the config file's directory",
        f"{source}: tests[1]: assert: assert[0].type: 'javascript' is refused: it runs user code",
    ):
        assert expected in ran.err, ran.err
    assert "nothing was run" in ran.err
    assert fake_llm.requests("gpt-4o-mini", url=openai_env) == []


def test_chat_prompts_run_as_the_messages_promptfoo_sends(workspace, fake_llm, monkeypatch, tmp_path):
    url = fake_llm.url("v1", id=uuid.uuid4().hex[:10])
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
    fake_llm.script(
        "claude-3-5-haiku-latest",
        {"text": "Your parcel is on its way.", "match": "kettle"},
        {"text": "Arr, the ship sank.", "match": "pirate"},
        url=url,
    )
    output = tmp_path / "out.json"

    ran = run_command("run", config("chat"), "--output", str(output))

    assert ran.code == 100, ran.err + ran.out
    assert verdicts(output) == {(0, 0): True, (0, 1): False}
    bodies = {len(b["messages"]): b for b in fake_llm.requests("claude-3-5-haiku-latest", url=url)}
    # promptfoo's Anthropic provider sends a chat prompt's system message as `system`, the rest as messages.
    assert bodies[3]["system"] == "You answer for a kettle shop."
    assert bodies[3]["messages"] == [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello! How can I help?"},
        {"role": "user", "content": "Where is my parcel?"},
    ]
    assert bodies[1]["messages"] == [{"role": "user", "content": "Answer as a pirate: Where is my parcel?"}]
    assert "system" not in bodies[1]


def test_a_json_prompt_that_is_not_messages_is_refused(workspace, tmp_path):
    (tmp_path / "odd.json").write_text('{"question": "{{q}}"}')
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text("prompts: [file://odd.json]\nproviders: [openai:chat:gpt-4o-mini]\ntests: [{vars: {q: A}}]\n")

    ran = run_command("run", str(path), "--dry-run")

    assert ran.code == 2
    assert f"{path}: prompts[1] (odd.json): a JSON prompt other than a list of {{role, content}} messages" in ran.err


def test_output_is_only_for_promptfoo_configs(workspace, tmp_path):
    from tests.fixtures.experiments import sample

    ran = run_command("run", str(sample("minimal.yaml")), "--output", str(tmp_path / "x.json"), "--dry-run")

    assert ran.code == 2
    assert "--output: only for promptfoo configs." in ran.err


def test_a_json_config_that_passes_exits_0_and_writes_its_output_path(workspace, fake_llm, openai_env, tmp_path):
    folder = tmp_path / "json_config"
    shutil.copytree(CONFIGS / "json_config", folder)
    fake_llm.script(
        "gpt-4o-mini",
        {"text": '{"label": "billing"}', "match": "charged"},
        {"text": '{"label": "shipping"}', "match": "parcel"},
        url=openai_env,
    )

    ran = run_command("run", str(folder / "promptfooconfig.json"))

    assert ran.code == 0, ran.err + ran.out
    data = json.loads((folder / "results.json").read_text())
    results = data["results"]["results"]
    # disableVarExpansion keeps defaultTest's list as one value: two tests, not four.
    assert [(r["testIdx"], r["success"]) for r in results] == [(0, True), (1, True)]
    assert results[0]["vars"] == {"labels": ["billing", "shipping"], "ticket": "I was charged twice"}
    assert [c["assertion"]["type"] for c in results[0]["gradingResult"]["componentResults"]] == [
        "is-json",
        "contains-json",
        "icontains",
    ]
    assert data["results"]["stats"] == {
        "successes": 2,
        "failures": 0,
        "errors": 0,
        "tokenUsage": data["results"]["stats"]["tokenUsage"],
    }
    body = fake_llm.requests("gpt-4o-mini", url=openai_env)[0]
    assert body["seed"] == 42 and body["temperature"] == 0
    # A list var is printed as Nunjucks prints it (joined by commas), not as JSON.
    assert body["messages"][0]["content"].startswith("Classify the ticket into one of billing,shipping.")
    assert "Pass Rate: 100.00%" in ran.out


def test_a_failed_call_is_an_error_and_exits_100(workspace, fake_llm, openai_env, tmp_path):
    fake_llm.script(
        "gpt-4o-mini", {"status": 400, "message": "Bad request for France", "match": "France"}, url=openai_env
    )
    output = tmp_path / "out.json"

    ran = run_command("run", config("basic"), "--output", str(output))

    assert ran.code == 100
    data = json.loads(output.read_text())
    errored = [r for r in data["results"]["results"] if r["error"]]
    assert [(r["testIdx"], r["promptIdx"], r["success"], r["gradingResult"]) for r in errored] == [(0, 0, False, None)]
    assert "Bad request for France" in errored[0]["error"]
    assert data["results"]["stats"]["errors"] == 1


def test_a_parameter_the_model_refuses_is_named_with_the_provider(workspace, openai_env, tmp_path):
    path = tmp_path / "promptfooconfig.yaml"
    path.write_text(
        "prompts: ['Hi {{name}}']\n"
        "providers: [{id: 'openai:chat:o3-mini', config: {temperature: 0.3}}]\n"
        "tests: [{vars: {name: A}}]\n"
    )

    ran = run_command("run", str(path), "--dry-run")

    assert ran.code == 2
    assert "(openai:chat:o3-mini)" in ran.err and "temperature" in ran.err, ran.err
