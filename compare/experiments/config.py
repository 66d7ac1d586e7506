"""Reading an experiment file (YAML or JSON, in the layout of common CLI experiment tools), checked field by field.

    name: Support replies            # optional; the title (default: the file's name)
    evaluation: {type: 1-5, model: judge:gpt-4.1, prompt: "… <<prompt>> … <<response>> …"}
    models: [{model: openai:gpt-4.1-mini}, {model: local::llama3.2}]
    model-parameters: [{name: precise, temperature: 0, maxOutputTokens: 300}]
    prompts: [{name: short, prompt: "Answer <<question>>"}, {name: long, prompt: "$file:prompts/long.txt"}]
    dataset: [{name: first, vars: {question: …}}, {file: data/rows.yaml}]
    structured-output: {schema: {…}, format: yaml}
    combinations: [{model: …, model-parameters: precise, prompt: short}]   # instead of the full cross product
    cache: true                      # optional; reuse stored answers to identical calls (cost 0, marked cached)

`plan` checks models, parameters and the judge against the workspace. Every problem is one message
"<file>: <entry>: <field>: <what is wrong>", and all of them are collected before anything is raised: given the
workspace, a file with problems of its own also gets the workspace's, so a person fixes the whole file in one pass.
What a file becomes is `spec`; each section is checked by a `read_*` module, on the shared `reader`.
"""

from __future__ import annotations

import json
from pathlib import PurePath
from typing import Any

import yaml
from django.core.exceptions import ValidationError

from lab import safe_yaml, values

from ..assertions.services import assertions_parse
from .files import Files
from .plan import plan_problems
from .read_combinations import CombinationsReader
from .read_dataset import DatasetReader
from .read_evaluation import EvaluationReader
from .reader import parse_problem
from .spec import DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S, TOP_LEVEL, Combination, ConfigError, ExperimentConfig, is_number

# Sections whose problems leave variables or rows unread: the placeholder check would then report values as missing.
VALUE_SECTIONS = ("variables", "dataset", "datasets")


def config_read(text: str, *, source: str, files: Files, workspace=None) -> ExperimentConfig:
    """Parse YAML or JSON (by the file's extension; YAML otherwise) and check it; raises ConfigError."""
    try:
        suffix = PurePath(source).suffix.lower()
        data = json.loads(text) if suffix == ".json" else safe_yaml.load(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise ConfigError([f"{source}: not valid {_syntax(source)}: {parse_problem(exc)}"]) from None
    except RecursionError:
        raise ConfigError([f"{source}: nested more than {values.MAX_DEPTH} levels deep."]) from None
    return config_from_data(data, source=source, files=files, workspace=workspace)


def _syntax(source: str) -> str:
    return "JSON" if PurePath(source).suffix.lower() == ".json" else "YAML"


def config_from_data(data: Any, *, source: str, files: Files, workspace=None) -> ExperimentConfig:
    """Check already-parsed data; raises ConfigError listing every problem (the workspace's too, when given)."""
    if found := values.value_problem(data):
        path, problem = found
        raise ConfigError([f"{source}: {values.dotted(path) or 'the file'}: {problem}"])
    reader = _Reader(source, files)
    config = reader.read(data)
    if reader.problems:
        raise ConfigError(reader.problems + _workspace_problems(config, workspace, reader.problems))
    return config


def _workspace_problems(config: ExperimentConfig, workspace, problems: list[str]) -> list[str]:
    if workspace is None:
        return []
    prefixes = tuple(f"{config.source}: {section}" for section in VALUE_SECTIONS)
    unread = any(problem.startswith(prefixes) for problem in problems)
    return plan_problems(config=config, workspace=workspace, rendering=not unread)


class _Reader(CombinationsReader, DatasetReader, EvaluationReader):
    """Every section's checks on one list of problems; `read` takes the sections in the order they are checked."""

    def read(self, data: Any) -> ExperimentConfig:
        config = ExperimentConfig(source=self.source, name=PurePath(self.source).stem or "Experiment")
        if not isinstance(data, dict):
            self.problem("file", "an experiment file is a mapping with models, prompts and the other sections")
            return config
        for key in data:
            if key not in TOP_LEVEL:
                self.problem(str(key), f"not a section of an experiment file; the sections are {', '.join(TOP_LEVEL)}")
        config.name = self._text(data, "name", "name", default=config.name, max_length=200)
        config.description = self._text(data, "description", "description", default="")
        config.models, config.written = self._models(data.get("models"))
        config.param_sets = self._param_sets(data.get("model-parameters"))
        config.prompts = self._prompts(data.get("prompts"))
        config.system_prompt = self._system_prompt(data.get("system-prompt"))
        self._one_system_prompt(config)
        config.variables = self._variables(data.get("variables"), "variables")
        config.rows, config.dataset_ref = self._dataset(self._dataset_section(data))
        config.evaluation = self._evaluation(data.get("evaluation"))
        config.structured = self._structured(data.get("structured-output"))
        config.tools, config.tool_choice = self._tools(data)
        config.timeout_s = self._timeout(data.get("timeout"))
        config.cache = self._cache(data.get("cache"))
        config.assertions = self._assertions(data)
        if "combinations" in data:
            config.explicit_combinations = True
            config.combinations = self._combinations(data["combinations"], config)
        else:
            config.combinations = [
                Combination(model, params, prompt)
                for model in config.models
                for params in config.param_sets
                for prompt in config.prompts
            ]
        return config

    def _one_system_prompt(self, config: ExperimentConfig) -> None:
        """A chat prompt's own system message and the file's `system-prompt` would be two: the renderer takes one."""
        if not config.system_prompt:
            return
        for index, prompt in enumerate(config.prompts, start=1):
            if prompt.messages and prompt.messages[0]["role"] == "system":
                self.problem(
                    f"prompts[{index}] ({prompt.name}): messages: message 1",
                    "a system message, but the file has a system-prompt: keep one of the two",
                )

    def _dataset_section(self, data: dict) -> Any:
        """`dataset`, or `datasets` as Toor spells it; not both."""
        if "dataset" in data and "datasets" in data:
            self.problem("datasets", "write the rows under dataset or under datasets, not both")
        return data.get("dataset", data.get("datasets"))

    def _assertions(self, data: dict) -> list[dict]:
        """`assertions`, or `assert` as promptfoo writes it; each checked as the comparison checks it."""
        if "assertions" in data and "assert" in data:
            self.problem("assert", "write the checks under assertions or under assert, not both")
            return []
        key = "assert" if "assert" in data else "assertions"
        try:
            return assertions_parse(data.get(key) or [], where=key)
        except ValidationError as exc:
            for message in exc.message_dict[key]:
                self.problem(key, message)
            return []

    def _cache(self, value: Any) -> bool:
        if value is None:
            return False
        if not isinstance(value, bool):
            self.problem("cache", "true to reuse stored answers to identical calls, or false")
            return False
        return value

    def _timeout(self, value: Any) -> float:
        if value is None:
            return DEFAULT_TIMEOUT_S
        if not is_number(value) or not 1 <= value <= MAX_TIMEOUT_S:
            self.problem("timeout", f"seconds an answer may take: a number from 1 to {MAX_TIMEOUT_S}")
            return DEFAULT_TIMEOUT_S
        return float(value)
