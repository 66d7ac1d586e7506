"""Reading experiment files: the layout, placeholders and their formats, and broken files, each refused with a message
naming the file, the entry and the field (checked against the workspace: models, parameters, judge, rows)."""

import pytest
import yaml

from compare.experiments.config import config_from_data, config_read
from compare.experiments.files import DirectoryFiles, UploadedFiles
from compare.experiments.services import experiment_plan
from compare.experiments.spec import ConfigError
from compare.models import CompareGroup
from lab import safe_yaml
from lab.templating import render
from tests.fixtures.experiments import SAMPLES, run_command, sample

pytestmark = pytest.mark.django_db


def read(name: str):
    path = sample(name)
    return config_read(path.read_text(), source=path.name, files=DirectoryFiles(path.parent))


def problems(name: str, workspace) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        experiment_plan(config=read(name), workspace=workspace)
    return caught.value.messages


def test_the_minimal_file_reads_as_one_combination_on_one_row():
    config = read("minimal.yaml")
    assert config.name == "Minimal greeting" and config.models == ["cands::fake?tokens=20"]
    assert [(s.name, s.params) for s in config.param_sets] == [("precise", {"temperature": 0.2, "max_tokens": 20})]
    [prompt] = config.prompts
    assert prompt.template == "Write a short greeting for {{person}}, who likes {{drink}}."
    assert [(row.name, row.vars) for row in config.rows] == [("ada", {"person": "Ada", "drink": "tea"})]
    assert (config.evaluation.type, config.evaluation.model) == ("1-5", "judge::fake")
    assert len(config.combinations) == 1


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("<<x>>", "A, B"),
        ("<<x:string>>", "A, B"),
        ("<<x:json>>", '"A, B"'),
        ("<<n:json>>", '{"a": [1, 2]}'),
        ("<<n:json-pretty>>", '{\n  "a": [\n    1,\n    2\n  ]\n}'),
        ("<<n:yaml>>", "a:\n- 1\n- 2"),
        ("<< n : yml >>", "a:\n- 1\n- 2"),
        ("{{n}} and {{x}}", '{"a": [1, 2]} and A, B'),
    ],
)
def test_placeholders_and_their_formats_render_through_the_one_renderer(written, expected):
    data = {"models": ["cands:fake"], "prompts": [{"name": "p", "prompt": written}]}

    config = config_from_data(data, source="t.yaml", files=UploadedFiles({}))
    assert render(config.prompts[0].template, {"x": "A, B", "n": {"a": [1, 2]}}).text == expected


def test_a_value_containing_a_placeholder_is_inserted_as_written():

    config = config_from_data(
        {"models": ["cands:fake"], "prompts": [{"name": "p", "prompt": "<<x>>"}]}, source="t", files=UploadedFiles({})
    )
    assert render(config.prompts[0].template, {"x": "<<y>> {{y}}", "y": "no"}).text == "<<y>> {{y}}"


def test_files_are_read_relative_to_the_config_and_a_mapping_is_read_as_named_entries():
    config = read("with_files/experiment.json")
    assert config.prompts[0].template.startswith("You answer support tickets for a kettle shop.")
    assert "{{response}}" in config.evaluation.prompt and "<<" not in config.evaluation.prompt
    assert [row.name for row in config.rows] == ["refund", "descale", "row-3"]
    assert config.rows[2].vars == {"customer": "Cy", "question": "Does it come with a warranty?"}
    assert [(c.model, c.params.name, c.prompt.name) for c in config.combinations] == [
        ("cands::fake?tokens=12", "default", "friendly"),
        ("cands::fake?tokens=12", "short", "terse"),
        ("cands::fake-free?tokens=8", "default", "friendly"),
    ]


def test_duplicate_names_are_refused_naming_both_entries(workspace, connections):
    assert problems("broken/duplicate_names.yaml", workspace) == [
        "duplicate_names.yaml: models[2] (cands::fake): model: models[1] (cands:fake) already uses 'cands::fake'; "
        "each model is listed once",
        "duplicate_names.yaml: model-parameters[2] (warm): name: model-parameters[1] (warm) already uses 'warm'; "
        "parameter sets have unique names",
        "duplicate_names.yaml: prompts[2] (ask): name: prompts[1] (ask) already uses 'ask'; prompts have unique names",
        "duplicate_names.yaml: dataset[2] (one): name: dataset[1] (one) already uses 'one'; "
        "dataset rows have unique names",
    ]


def test_a_custom_evaluator_prompt_must_have_its_placeholders(workspace, connections):
    assert problems("broken/evaluator_placeholders.yaml", workspace) == [
        "evaluator_placeholders.yaml: evaluation: prompt: missing <<response>>, <<scoring_scale>>, <<metrics>>; "
        "a 1-5 evaluator prompt needs <<prompt>>, <<response>>, <<scoring_scale>>, <<metrics>>"
    ]


def test_an_unknown_format_is_refused(workspace, connections):
    assert problems("broken/unknown_format.yaml", workspace) == [
        "unknown_format.yaml: prompts[1] (ask): prompt: <<input:xml>> has an unknown format; "
        "the formats are string, json, json-pretty, yaml, yml"
    ]


def test_a_missing_file_is_named_with_the_entry_that_names_it(workspace, connections):
    prompt, dataset = problems("broken/missing_file.yaml", workspace)
    assert prompt.startswith("missing_file.yaml: prompts[1] (ask): prompt: cannot read prompts/nowhere.txt: no file ")
    assert dataset.startswith(
        "missing_file.yaml: dataset[1] (file data/nowhere.yaml): file: cannot read data/nowhere.yaml: no file "
    )


def test_a_bad_scale_is_refused_listing_the_types(workspace, connections):
    assert problems("broken/bad_scale.yaml", workspace) == [
        "bad_scale.yaml: evaluation: type: '1-7' is not a type; the types are binary, 1-3, 1-5, 1-10, "
        "binary-classification, multiclass-classification"
    ]


def test_an_unknown_model_is_refused_naming_the_connections_there_are(workspace, connections):
    assert problems("broken/unknown_model.yaml", workspace) == [
        "unknown_model.yaml: models[2] (nowhere:gpt-4.1): model: This workspace has no connection named “nowhere” "
        "(it has: cands, judge, simulated)."
    ]


def test_unknown_parameters_and_bad_values_are_refused(workspace, connections):
    assert problems("broken/unsupported_parameter.yaml", workspace) == [
        "unsupported_parameter.yaml: model-parameters[1] (sampled): topKay: not a model parameter; the parameters "
        "are temperature, topP, topK, maxOutputTokens, seed, stopSequences, presencePenalty, frequencyPenalty",
        "unsupported_parameter.yaml: model-parameters[1] (sampled): maxOutputTokens: 'many' is not a whole number "
        "from 1",
    ]


def test_a_parameter_the_model_refuses_is_refused_by_the_parameter_check(workspace, connections, tmp_path):
    path = tmp_path / "refused.yaml"
    path.write_text(
        "models: [{model: judge:fake-reasoning}]\nmodel-parameters: {warm: {temperature: 0.7}}\n"
        "prompts: {ask: Say hi.}\n"
    )
    config = config_read(path.read_text(), source=path.name, files=DirectoryFiles(tmp_path))
    with pytest.raises(ConfigError) as caught:
        experiment_plan(config=config, workspace=workspace)
    assert caught.value.messages == [
        "refused.yaml: model-parameters[1] (warm): judge::fake-reasoning does not support temperature; "
        "drop it from this set or use another model"
    ]


def test_a_placeholder_some_rows_do_not_fill_names_them(workspace, connections):
    assert problems("broken/missing_variable.yaml", workspace) == [
        "missing_variable.yaml: prompts[1] (ask): prompt: uses <<language>>, which dataset rows bo do not give"
    ]


def test_a_judge_of_the_candidates_family_is_a_warning_unless_the_file_refuses_it(workspace, connections, tmp_path):
    config = config_read(
        sample("broken/same_family_judge.yaml").read_text(),
        source="same_family_judge.yaml",
        files=DirectoryFiles(tmp_path),
    )
    _, estimate = experiment_plan(config=config, workspace=workspace)
    assert estimate.warnings == [
        "The judge cands::gpt-4.1 shares a family (openai) with models[1] (cands:fake); scores may favour it."
    ]

    strict = tmp_path / "strict.yaml"
    strict.write_text(
        sample("broken/same_family_judge.yaml").read_text().replace("evaluation:\n", "evaluation:\n  family: refuse\n")
    )
    [message] = problems(str(strict), workspace)
    assert message.startswith(
        "strict.yaml: evaluation: model: The judge cands::gpt-4.1 shares a family (openai) with models[1] "
        "(cands:fake); scores may favour it. (evaluation: family is refuse"
    )


def test_a_file_that_is_not_yaml_says_where(tmp_path):
    with pytest.raises(ConfigError) as caught:
        config_read("models: [a\nprompts: x\n", source="x.yaml", files=DirectoryFiles(tmp_path))
    [message] = caught.value.messages
    assert message.startswith("x.yaml: not valid YAML: line 2, column")


def test_unknown_sections_and_missing_ones_are_named(tmp_path):
    with pytest.raises(ConfigError) as caught:
        config_read("model: x\n", source="y.yaml", files=DirectoryFiles(tmp_path))
    assert caught.value.messages[:3] == [
        "y.yaml: model: not a section of an experiment file; the sections are name, description, evaluation, models, "
        "model-parameters, prompts, system-prompt, variables, dataset, datasets, structured-output, combinations, "
        "timeout, cache, tools, tool-choice, assertions, assert",
        "y.yaml: models: missing; give at least one entry",
        "y.yaml: prompts: missing; give at least one entry",
    ]


def test_the_command_lists_the_problems_and_runs_nothing(workspace, connections):
    ran = run_command("run", str(sample("broken/duplicate_names.yaml")), "--workspace", "Team A")
    assert ran.code == 2
    assert "duplicate_names.yaml: prompts[2] (ask): name: prompts[1] (ask) already uses 'ask'" in ran.err
    assert "The experiment has 4 problem(s) (listed above); nothing was run." in ran.err
    assert not CompareGroup.objects.exists()


def test_an_uploaded_prompt_file_with_a_nul_character_is_refused_naming_it(workspace, connections):
    text = (
        sample("minimal.yaml")
        .read_text()
        .replace(
            "prompt: Write a short greeting for <<person>>, who likes <<drink>>.", "prompt: $file:prompts/greet.txt"
        )
    )

    with pytest.raises(ConfigError) as caught:
        config = config_read(text, source="minimal.yaml", files=UploadedFiles({"greet.txt": b"Hello\x00 <<person>>"}))
        experiment_plan(config=config, workspace=workspace)

    assert "prompts/greet.txt: text may not contain the NUL character" in " ".join(caught.value.messages)


@pytest.mark.parametrize(
    "path",
    sorted(
        path for path in SAMPLES.rglob("*.y*ml") if path.suffix in (".yaml", ".yml") and (path.parent.name != "broken")
    ),
    ids=lambda path: str(path.relative_to(SAMPLES)),
)
def test_experiment_files_are_read_as_yaml_safe_load_reads_them(path):
    # The command parses with libyaml (several times faster on large datasets); the values must be PyYAML's own.
    text = path.read_text()
    assert safe_yaml.load(text) == yaml.safe_load(text)
