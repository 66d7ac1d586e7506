"""Toor's documented example files (tests/fixtures/experiments/toor/, README there) run by `manage.py experiment run`
against the fake LLM server with nothing but the providers' SDK variables in the environment: the connections are
made from them, every Toor parameter reaches each provider under its own name (or is refused naming the model where
the provider has no such parameter), Toor's reply shapes are read, and the printed results follow Toor's layout."""

from __future__ import annotations

import json
import re
import uuid

import pytest

from compare.experiments.models import EvaluationStatus
from compare.models import CompareGroup, Output
from lab.models import Connection
from lab.services import connection_create
from tests.fixtures.experiments import run_command, sample
from tests.fixtures.judging_factories import KEY

pytestmark = pytest.mark.django_db(transaction=True)

PROVIDERS = ("OPENAI", "ANTHROPIC", "GEMINI", "OPENROUTER")
LONG_REASON = (
    "The response provides a clear, step-by-step guide for resetting a password, which aligns perfectly with the "
    "prompt. Each step is relevant and there are no contradictions or omissions."
)


@pytest.fixture
def environment(monkeypatch, fake_llm, workspace):
    """Only the SDK variables of the providers a test names, each pointing at its own scenario of the fake server.

    `environment("OPENAI")` returns the base URL given to OPENAI_BASE_URL (its requests are read back with it).
    """
    for prefix in PROVIDERS:
        monkeypatch.delenv(f"{prefix}_API_KEY", raising=False)
        monkeypatch.delenv(f"{prefix}_BASE_URL", raising=False)
    scope = uuid.uuid4().hex[:10]

    def provide(prefix: str) -> str:
        # The SDKs' conventions: OpenAI's and OpenRouter's base URL include /v1, Anthropic's and Gemini's do not.
        with_version = prefix in ("OPENAI", "OPENROUTER")
        url = fake_llm.url("v1", id=f"{scope}-{prefix.lower()}")
        monkeypatch.setenv(f"{prefix}_API_KEY", KEY)
        monkeypatch.setenv(f"{prefix}_BASE_URL", url if with_version else url.removesuffix("/v1"))
        return url if with_version else url.removesuffix("/v1") + ("/v1beta" if prefix == "GEMINI" else "/v1")

    return provide


def toor(name: str) -> str:
    return str(sample(f"toor/{name}"))


def block(text: str, *lines: str) -> None:
    """These lines appear in the output one after the other, exactly."""
    assert "\n".join(lines) in text, "not found in order:\n" + "\n".join(lines) + f"\n---\n{text}"


def scalar_reply(score: int, reason: str = LONG_REASON) -> dict:
    return {"text": json.dumps({"metrics": {"Overall": {"reason": reason, "score": score}}})}


def test_the_minimal_example_runs_with_only_the_key_in_the_environment_and_prints_toor_s_layout(
    environment, fake_llm, workspace, owner, client
):
    url = environment("OPENAI")
    fake_llm.script("gpt-4o", scalar_reply(5), url=url)

    ran = run_command("run", toor("toor.experiment.yaml"))

    assert ran.code == 0, ran.err + ran.out
    connection = Connection.objects.get(workspace=workspace, name="openai-owner")
    assert (connection.kind, connection.base_url, connection.api_key()) == ("openai", url, KEY)
    assert connection.owner == owner
    assert (
        "Connection openai-owner (private, for openai: models) created from OPENAI_API_KEY, OPENAI_BASE_URL" in ran.out
    )
    # The judge shares the candidate's family: run, with a warning next to the estimate and the results.
    warning = (
        "  Warning: The judge openai-owner::gpt-4o shares a family (openai) with models[1] (openai:gpt-4o-mini); "
        "scores may favour it."
    )
    assert ran.out.count(warning) == 2
    [answer] = fake_llm.requests("gpt-4o-mini", url=url)
    assert answer["messages"] == [{"role": "user", "content": "Answer clearly: How can I reset my password?"}]
    # A command-line run nobody watches asks each answer in one request, not streamed.
    assert answer["temperature"] == 0.2 and not answer.get("stream")
    [judged] = fake_llm.requests("gpt-4o", url=url)
    assert judged["temperature"] == 0 and judged["response_format"]["type"] == "json_schema"
    block(
        ran.out,
        "│          Model: openai:gpt-4o-mini",
        "│     Parameters: default",
        "│         Prompt: support",
        "│        Dataset: reset-password",
        "│          Score: 5",
        "│         Reason: The response provides a clear, step-by-step guide for resetting a",
        "│                 password, which aligns perfectly with the prompt. Each step is",
        "│                 relevant and there are no contradictions or omissions.",
    )
    output = Output.objects.get()
    block(
        ran.out,
        f"│             Prompt generation time: {output.latency_ms} ms",
        f"│     Prompt generation input tokens: {output.input_tokens}",
        f"│    Prompt generation output tokens: {output.output_tokens}",
    )
    evaluation = output.evaluation
    block(
        ran.out,
        f"│                    Evaluation time: {evaluation.latency_ms} ms",
        f"│            Evaluation input tokens: {evaluation.input_tokens}",
        f"│           Evaluation output tokens: {evaluation.output_tokens}",
    )
    lines = ran.out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("Model  "))
    assert re.fullmatch(r"Model {16}Parameters   Prompt    Dataset          Score   Gen time .*", lines[header])
    assert set(lines[header + 1]) == {"─"}
    assert re.fullmatch(r"openai:gpt-4o-mini   default      support   reset-password       5   .*", lines[header + 2])
    # The warning is on the experiment's page and its report as well.
    client.force_login(owner)
    group = CompareGroup.objects.get()
    shown = warning.strip().removeprefix("Warning: ")
    for url in (f"/compare/{group.pk}/experiment/", f"/compare/{group.pk}/report/"):
        assert shown in client.get(url).content.decode(), url
    # Neither model is in the fake server's catalog: their price is unknown, and said to be, never $0.
    assert "spent unknown" in client.get(f"/compare/{group.pk}/experiment/").content.decode()
    assert "Done: 1 answer, 0 failed; spent unknown." in ran.out


def test_the_json_form_of_the_minimal_example_runs_the_same(environment, fake_llm):
    url = environment("OPENAI")
    fake_llm.script("gpt-4o", scalar_reply(4), url=url)

    ran = run_command("run", toor("toor.experiment.json"))

    assert ran.code == 0, ran.err + ran.out
    assert "│          Score: 4" in ran.out
    assert fake_llm.requests("gpt-4o-mini", url=url)[0]["temperature"] == 0.2


def test_a_second_run_updates_nothing_and_a_new_base_url_updates_the_connection(environment, fake_llm, monkeypatch):
    url = environment("OPENAI")
    fake_llm.script("gpt-4o", scalar_reply(5), scalar_reply(5), url=url)
    assert run_command("run", toor("toor.experiment.yaml")).code == 0
    again = run_command("run", toor("toor.experiment.yaml"), "--dry-run")
    assert "Connection openai-owner (private, for openai: models) unchanged from OPENAI_API_KEY" in again.out

    moved = fake_llm.url("v1", id=uuid.uuid4().hex[:10])
    monkeypatch.setenv("OPENAI_BASE_URL", moved)
    ran = run_command("run", toor("toor.experiment.yaml"), "--dry-run")
    assert "Connection openai-owner (private, for openai: models) updated from OPENAI_API_KEY" in ran.out
    assert Connection.objects.get(name="openai-owner").base_url == moved


def test_toor_s_binary_evaluator_prompt_and_its_reply_shape(environment, fake_llm):
    url = environment("OPENAI")
    fake_llm.script("gpt-4o", {"text": json.dumps({"passed": True, "reasoning": "It explains the reset."})}, url=url)

    ran = run_command("run", toor("binary.experiment.yaml"))

    assert ran.code == 0, ran.err + ran.out
    evaluation = Output.objects.get().evaluation
    assert (evaluation.status, evaluation.scale_score, evaluation.score) == (EvaluationStatus.DONE, 1, 1.0)
    assert "It explains the reset." in evaluation.reason
    [judged] = fake_llm.requests("gpt-4o", url=url)
    asked = judged["messages"][-1]["content"]
    assert asked.startswith("You are an evaluator. Does the response correctly satisfy the prompt?\n\nPrompt:\n")
    assert "Answer clearly: How can I reset my password?" in asked
    assert "│          Score: 1" in ran.out and "│         Reason: " in ran.out


def test_toor_s_scalar_evaluator_prompt_and_its_reply_shape(environment, fake_llm):
    url = environment("OPENAI")
    fake_llm.script("gpt-4o", {"text": json.dumps({"score": 4, "reasoning": "Clear, one step missing."})}, url=url)

    ran = run_command("run", toor("scalar.experiment.yaml"))

    assert ran.code == 0, ran.err + ran.out
    evaluation = Output.objects.get().evaluation
    assert (evaluation.status, evaluation.scale_score) == (EvaluationStatus.DONE, 4)
    asked = fake_llm.requests("gpt-4o", url=url)[0]["messages"][-1]["content"]
    assert "SCORING_SCALE:\n" in asked and "METRICS:\n" in asked and "<<" not in asked
    assert "│          Score: 4" in ran.out


def test_prompts_and_datasets_from_files(environment, fake_llm):
    url = environment("OPENAI")
    fake_llm.script("gpt-4o", scalar_reply(5), scalar_reply(3), url=url)

    ran = run_command("run", toor("files.experiment.yaml"))

    assert ran.code == 0, ran.err + ran.out
    prompts = sorted(r["messages"][-1]["content"] for r in fake_llm.requests("gpt-4o-mini", url=url))
    assert prompts == [
        "You answer for the support team. Answer clearly: How can I reset my password?\n",
        "You answer for the support team. Answer clearly: How do I change the email address of my account?\n",
    ]
    assert "│        Dataset: reset-password" in ran.out and "│        Dataset: change-email" in ran.out


def test_structured_output_in_toor_s_schema_form_checks_each_property(environment, fake_llm):
    url = environment("OPENAI")
    fake_llm.script(
        "gpt-4o-mini",
        {"match": "charged twice", "text": "priority: high\ncategory: billing"},
        {"match": "dark mode", "text": "priority: someday\ncategory: feature"},
        url=url,
    )

    ran = run_command("run", toor("structured.experiment.yaml"))

    assert ran.code == 0, ran.err + ran.out
    group = CompareGroup.objects.get()
    checked = {
        o.round.dataset_row.name: (o.evaluation.schema_valid, o.evaluation.schema_errors)
        for o in Output.objects.filter(round__group=group).select_related("round__dataset_row", "evaluation")
    }
    assert checked == {
        "charged-twice": (True, []),
        "dark-mode": (False, ["priority: 'someday' is not one of ['low', 'medium', 'high']"]),
    }
    assert "│          Valid: no (priority: 'someday' is not one of ['low', 'medium', 'high'])" in ran.out


def test_the_reference_file_sends_every_parameter_to_gemini_under_its_names(environment, fake_llm):
    url = environment("GEMINI")
    fake_llm.script("gemini-3.5-flash", {"match": "Ticket:", "text": "priority: low\ncategory: question"}, url=url)

    ran = run_command("run", toor("reference.experiment.yaml"))

    assert ran.code == 0, ran.err + ran.out
    assert (
        "Connection gemini-owner (private, for gemini: models) created from GEMINI_API_KEY, GEMINI_BASE_URL" in ran.out
    )
    answer = next(r for r in fake_llm.requests("gemini-3.5-flash", url=url) if "responseJsonSchema" not in str(r))
    assert answer["generationConfig"] == {
        "temperature": 0.2,
        "topP": 0.8,
        "topK": 10,
        "presencePenalty": 0.1,
        "frequencyPenalty": 0.1,
    }
    assert "Prompt generation cost: unknown" in ran.out  # no known price for this model: never $0


def reference_for(model: str, tmp_path, drop: tuple[str, ...] = ()) -> str:
    """The reference file with another model to evaluate (the judge stays Gemini), less some parameters."""
    text = sample("toor/reference.experiment.yaml").read_text()
    text = text.replace("  - model: gemini:gemini-3.5-flash", f"  - model: {model}")
    lines = [line for line in text.splitlines() if not line.strip().startswith(tuple(f"{d}:" for d in drop))]
    path = tmp_path / "reference.experiment.yaml"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def yaml_answer(url: str, fake_llm, model: str) -> None:
    fake_llm.script(model, {"text": "priority: low\ncategory: question"}, url=url)


SENT_AS_NAMED = {"temperature": 0.2, "top_p": 0.8, "top_k": 10, "presence_penalty": 0.1, "frequency_penalty": 0.1}


def sent(body: dict) -> dict:
    return {name: body[name] for name in SENT_AS_NAMED if name in body}


def test_openrouter_gets_all_three_as_named(environment, fake_llm, tmp_path):
    environment("GEMINI")
    url = environment("OPENROUTER")
    yaml_answer(url, fake_llm, "fake")

    ran = run_command("run", reference_for("openrouter:fake", tmp_path))

    assert ran.code == 0, ran.err + ran.out
    assert sent(fake_llm.requests("fake", url=url)[0]) == SENT_AS_NAMED


def test_an_openai_compatible_server_gets_all_three_as_named(environment, fake_llm, workspace, tmp_path):
    environment("GEMINI")
    url = fake_llm.url("v1", id=uuid.uuid4().hex[:10])
    connection_create(workspace=workspace, name="vllm", kind="openai_compatible", base_url=url)
    yaml_answer(url, fake_llm, "llama3.2")

    ran = run_command("run", reference_for("vllm:llama3.2", tmp_path))

    assert ran.code == 0, ran.err + ran.out
    assert sent(fake_llm.requests("llama3.2", url=url)[0]) == SENT_AS_NAMED


def test_openai_gets_the_penalties_and_refuses_top_k_naming_the_model(environment, fake_llm, tmp_path):
    environment("GEMINI")
    url = environment("OPENAI")

    refused = run_command("run", reference_for("openai:gpt-4o-mini", tmp_path))
    assert refused.code == 2
    assert "model-parameters[1] (default): openai-owner::gpt-4o-mini does not support topK" in refused.err
    assert not fake_llm.requests("gpt-4o-mini", url=url)

    yaml_answer(url, fake_llm, "gpt-4o-mini")
    ran = run_command("run", reference_for("openai:gpt-4o-mini", tmp_path, drop=("topK",)))
    assert ran.code == 0, ran.err + ran.out
    assert sent(fake_llm.requests("gpt-4o-mini", url=url)[0]) == {
        name: value for name, value in SENT_AS_NAMED.items() if name != "top_k"
    }


def test_anthropic_gets_top_k_and_refuses_the_penalties_naming_the_model(environment, fake_llm, tmp_path):
    environment("GEMINI")
    url = environment("ANTHROPIC")

    refused = run_command("run", reference_for("anthropic:claude-test", tmp_path))
    assert refused.code == 2
    assert "anthropic-owner::claude-test does not support presencePenalty" in refused.err
    assert "anthropic-owner::claude-test does not support frequencyPenalty" in refused.err

    yaml_answer(url, fake_llm, "claude-test")
    ran = run_command(
        "run", reference_for("anthropic:claude-test", tmp_path, drop=("presencePenalty", "frequencyPenalty"))
    )
    assert ran.code == 0, ran.err + ran.out
    body = fake_llm.requests("claude-test", url=url)[0]
    assert (body["temperature"], body["top_p"], body["top_k"]) == (0.2, 0.8, 10)
    assert "presence_penalty" not in body and "frequency_penalty" not in body


def test_toor_s_newer_brace_placeholders_with_formats(environment, fake_llm):
    url = environment("OPENAI")

    ran = run_command("run", toor("newer.experiment.yaml"))

    assert ran.code == 0, ran.err + ran.out
    prompts = sorted(r["messages"][-1]["content"] for r in fake_llm.requests("gpt-4o-mini", url=url))
    assert prompts[0] == "Answer clearly: How can I reset my password?"
    assert "candidate_profile: 10 years of TypeScript experience, 5 years with NestJS.\n" in prompts[1]


def test_family_refuse_makes_the_family_rule_strict(environment, fake_llm, tmp_path):
    environment("OPENAI")
    text = sample("toor/toor.experiment.yaml").read_text()
    path = tmp_path / "strict.experiment.yaml"
    path.write_text(text.replace("  type: 1-5\n", "  type: 1-5\n  family: refuse\n"))

    ran = run_command("run", str(path))

    assert ran.code == 2
    assert "evaluation: model: The judge openai-owner::gpt-4o shares a family (openai) with models[1]" in ran.err


def structured_as(tmp_path, fmt: str, model: str = "openai:gpt-4o-mini", mode: str = "") -> str:
    text = sample("toor/structured.experiment.yaml").read_text().replace("format: yaml", f"format: {fmt}")
    text = text.replace("  - model: openai:gpt-4o-mini", f"  - model: {model}")
    if mode:
        text = text.replace(f"  format: {fmt}", f"  format: {fmt}\n  mode: {mode}")
    path = tmp_path / "structured.experiment.yaml"
    path.write_text(text)
    return str(path)


def test_a_json_structured_output_block_is_sent_natively_and_each_answer_follows_it(environment, fake_llm, tmp_path):
    url = environment("OPENAI")

    ran = run_command("run", structured_as(tmp_path, "json"))

    assert ran.code == 0, ran.err + ran.out
    answers = [r for r in fake_llm.requests("gpt-4o-mini", url=url) if "Ticket:" in str(r)]
    assert len(answers) == 2
    schema = answers[0]["response_format"]["json_schema"]["schema"]
    assert answers[0]["response_format"]["type"] == "json_schema"
    assert schema["properties"]["priority"] == {"type": "string", "enum": ["low", "medium", "high"]}
    outputs = Output.objects.filter(round__group=CompareGroup.objects.get())
    assert [o.schema_valid for o in outputs] == [True, True]


def test_a_model_known_not_to_take_a_schema_is_refused_unless_validate_only(environment, fake_llm, tmp_path):
    url = environment("OPENAI")
    refused = run_command("run", structured_as(tmp_path, "json", model="openai:gpt-3.5-turbo"))
    assert refused.code == 2
    assert "openai-owner::gpt-3.5-turbo does not take a native response schema" in refused.err
    assert not fake_llm.requests("gpt-3.5-turbo", url=url)

    fake_llm.script("gpt-3.5-turbo", {"match": "Ticket:", "text": '{"priority": "low", "category": "bug"}'}, url=url)
    ran = run_command("run", structured_as(tmp_path, "json", model="openai:gpt-3.5-turbo", mode="validate"))
    assert ran.code == 0, ran.err + ran.out
    assert all("response_format" not in r for r in fake_llm.requests("gpt-3.5-turbo", url=url))
