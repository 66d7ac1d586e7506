"""Reading an experiment file (YAML or JSON, in the layout of common CLI experiment tools), checked field by field.

    name: Support replies            # optional; the title (default: the file's name)
    evaluation: {type: 1-5, model: judge:gpt-4.1, prompt: "… <<prompt>> … <<response>> …"}
    models: [{model: openai:gpt-4.1-mini}, {model: local::llama3.2}]
    model-parameters: [{name: precise, temperature: 0, maxOutputTokens: 300}]
    prompts: [{name: short, prompt: "Answer <<question>>"}, {name: long, prompt: "$file:prompts/long.txt"}]
    dataset: [{name: first, vars: {question: …}}, {file: data/rows.yaml}]
    structured-output: {schema: {…}, format: yaml}
    combinations: [{model: …, model-parameters: precise, prompt: short}]   # instead of the full cross product

Nothing here touches the workspace: `plan` checks models, parameters and the judge against it. Every problem is
one message "<file>: <entry>: <field>: <what is wrong>", and all of them are collected before anything is raised.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

import jsonschema
import yaml
from django.core.exceptions import ValidationError

from lab.templating import ANGLE_FORMATS, PLACEHOLDER, from_angle_placeholders, placeholders

from ..datasets import format_for, row_from_record, rows_parse
from ..services import MAX_DATASET_ROWS
from .files import Files
from .scoring import scorer

FILE_PREFIX = "$file:"
DEFAULT_TIMEOUT_S = 60
MAX_TIMEOUT_S = 240
DEFAULT_PARAMS = "default"
TOP_LEVEL = (
    "name",
    "description",
    "evaluation",
    "models",
    "model-parameters",
    "prompts",
    "system-prompt",
    "variables",
    "dataset",
    "structured-output",
    "combinations",
    "timeout",
)
# The file's parameter names → ours; `check` is (test, what a good value is).
PARAMETERS: dict[str, tuple[str, Callable[[Any], bool], str]] = {
    "temperature": ("temperature", lambda v: _number(v) and 0 <= v <= 2, "a number from 0 to 2"),
    "topP": ("top_p", lambda v: _number(v) and 0 <= v <= 1, "a number from 0 to 1"),
    "maxOutputTokens": ("max_tokens", lambda v: _integer(v) and 1 <= v <= 1_000_000, "a whole number from 1"),
    "seed": ("seed", lambda v: _integer(v) and 0 <= v <= 2**53, "a whole number from 0"),
    "stopSequences": ("stop", lambda v: _stops(v), "a list of up to 4 texts"),
}
FILE_NAMES = {ours: theirs for theirs, (ours, _, _) in PARAMETERS.items()}
# Known to the file layout but sent by none of our adapters (OpenAI, Anthropic, OpenRouter, Gemini,
# OpenAI-compatible, simulated), so a run would silently differ from what the file asks: refused.
UNSENT_PARAMETERS = ("topK", "presencePenalty", "frequencyPenalty")
STRUCTURED_FORMATS = ("json", "yaml")


class ConfigError(Exception):
    """Everything wrong with a file, one readable message each."""

    def __init__(self, messages: list[str]):
        super().__init__("\n".join(messages))
        self.messages = messages


@dataclass(frozen=True)
class ParamSet:
    name: str
    params: dict[str, Any]  # our names: temperature, top_p, max_tokens, seed


@dataclass(frozen=True)
class Prompt:
    name: str
    template: str  # in our `{{name}}` syntax, `$file:` read in
    variables: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Row:
    name: str
    vars: dict[str, Any]


@dataclass(frozen=True)
class Evaluation:
    type: str
    model: str  # `<connection>::<model>`
    prompt: str = ""  # custom evaluator prompt in our `{{name}}` syntax; empty: the judge's own


@dataclass(frozen=True)
class StructuredOutput:
    schema: dict[str, Any]
    format: str  # how a valid answer is shown to the evaluator: json or yaml


@dataclass(frozen=True)
class Combination:
    model: str
    params: ParamSet
    prompt: Prompt


@dataclass
class ExperimentConfig:
    source: str  # the file's name, for messages
    name: str
    description: str = ""
    models: list[str] = field(default_factory=list)  # `<connection>::<model>`
    param_sets: list[ParamSet] = field(default_factory=list)
    prompts: list[Prompt] = field(default_factory=list)
    system_prompt: str = ""
    variables: dict[str, Any] = field(default_factory=dict)
    rows: list[Row] = field(default_factory=list)
    dataset_ref: str | int | None = None  # a dataset of the workspace, by name or id, instead of rows
    evaluation: Evaluation | None = None
    structured: StructuredOutput | None = None
    combinations: list[Combination] = field(default_factory=list)
    explicit_combinations: bool = False
    timeout_s: float = DEFAULT_TIMEOUT_S

    def as_data(self) -> dict[str, Any]:
        """The file layout again, self-contained (files read in, our placeholders): what export writes."""
        data: dict[str, Any] = {"name": self.name}
        if self.description:
            data["description"] = self.description
        if self.evaluation:
            data["evaluation"] = {"type": self.evaluation.type, "model": self.evaluation.model}
            if self.evaluation.prompt:
                data["evaluation"]["prompt"] = self.evaluation.prompt
        data["models"] = [{"model": model} for model in self.models]
        data["model-parameters"] = [
            {"name": s.name, **{FILE_NAMES[k]: v for k, v in s.params.items()}} for s in self.param_sets
        ]
        data["prompts"] = [
            {"name": p.name, "prompt": p.template, **({"variables": p.variables} if p.variables else {})}
            for p in self.prompts
        ]
        if self.system_prompt:
            data["system-prompt"] = self.system_prompt
        if self.variables:
            data["variables"] = self.variables
        if self.dataset_ref is not None:
            data["dataset"] = [{"dataset": self.dataset_ref}]
        elif self.rows:
            data["dataset"] = [{"name": row.name, "vars": row.vars} for row in self.rows]
        if self.structured:
            data["structured-output"] = {"schema": self.structured.schema, "format": self.structured.format}
        if self.explicit_combinations:
            data["combinations"] = [
                {"model": c.model, "model-parameters": c.params.name, "prompt": c.prompt.name}
                for c in self.combinations
            ]
        data["timeout"] = self.timeout_s
        return data


def config_read(text: str, *, source: str, files: Files) -> ExperimentConfig:
    """Parse YAML or JSON (by the file's extension; YAML otherwise) and check it; raises ConfigError."""
    try:
        data = json.loads(text) if PurePath(source).suffix.lower() == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise ConfigError([f"{source}: not valid {_syntax(source)}: {_parse_problem(exc)}"]) from None
    return config_from_data(data, source=source, files=files)


def _syntax(source: str) -> str:
    return "JSON" if PurePath(source).suffix.lower() == ".json" else "YAML"


def _parse_problem(exc: Exception) -> str:
    mark = getattr(exc, "problem_mark", None)
    if mark is not None:
        return f"line {mark.line + 1}, column {mark.column + 1}: {getattr(exc, 'problem', '') or exc}"
    return str(exc)


def config_from_data(data: Any, *, source: str, files: Files) -> ExperimentConfig:
    """Check already-parsed data; raises ConfigError listing every problem."""
    reader = _Reader(source, files)
    config = reader.read(data)
    if reader.problems:
        raise ConfigError(reader.problems)
    return config


def model_id_from(written: str) -> str:
    """`openai:gpt-4.1-mini` (provider = a connection's name) → `openai::gpt-4.1-mini`; our `::` form as it is."""
    written = written.strip()
    if "::" in written:
        return written
    connection, sep, model = written.partition(":")
    if not sep or not connection.strip() or not model.strip():
        raise ValueError(
            f"{written!r} is not provider:model; write the connection's name, a colon and the model, "
            "e.g. openai:gpt-4.1-mini"
        )
    return f"{connection.strip()}::{model.strip()}"


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _stops(value: Any) -> bool:
    return isinstance(value, list) and 1 <= len(value) <= 4 and all(isinstance(v, str) and v for v in value)


def _named(entry: Any, key: str) -> str:
    """`[3] (name)` for messages: entries are counted from 1, as people count."""
    name = entry.get(key) if isinstance(entry, dict) else None
    return f" ({name})" if isinstance(name, str | int) and str(name).strip() else ""


class _Reader:
    def __init__(self, source: str, files: Files):
        self.source, self.files = source, files
        self.problems: list[str] = []

    def problem(self, where: str, message: str) -> None:
        self.problems.append(f"{self.source}: {where}: {message}")

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
        config.models = self._models(data.get("models"))
        config.param_sets = self._param_sets(data.get("model-parameters"))
        config.prompts = self._prompts(data.get("prompts"))
        config.system_prompt = self._system_prompt(data.get("system-prompt"))
        config.variables = self._variables(data.get("variables"), "variables")
        config.rows, config.dataset_ref = self._dataset(data.get("dataset"))
        config.evaluation = self._evaluation(data.get("evaluation"))
        config.structured = self._structured(data.get("structured-output"))
        config.timeout_s = self._timeout(data.get("timeout"))
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

    def _text(self, data: dict, key: str, where: str, *, default: str, max_length: int = 10_000) -> str:
        value = data.get(key)
        if value is None:
            return default
        if not isinstance(value, str) or not value.strip():
            self.problem(where, "write some text")
            return default
        if len(value) > max_length:
            self.problem(where, f"at most {max_length} characters")
        return value.strip()

    def _list(self, value: Any, where: str, *, required: bool, key: str) -> list[Any]:
        """A section's entries; a mapping of name → value is read as a list of entries named by their key."""
        if value is None:
            if required:
                self.problem(where, "missing; give at least one entry")
            return []
        if isinstance(value, dict):
            return [
                {key: name, **body} if isinstance(body, dict) else {key: name, "_value": body}
                for name, body in value.items()
            ]
        if not isinstance(value, list) or (required and not value):
            self.problem(where, "a list of entries" + (" (at least one)" if required else ""))
            return []
        return value

    def _unique(self, names: list[tuple[str, str]], what: str, rule: str) -> None:
        seen: dict[str, str] = {}
        for where, name in names:
            if name in seen:
                self.problem(where, f"{what}: {seen[name]} already uses {name!r}; {rule}")
            seen.setdefault(name, where)

    def _file_text(self, value: str, where: str) -> str | None:
        """`$file:path` read relative to the config; any other text as it is."""
        if not value.startswith(FILE_PREFIX):
            return value
        path = value[len(FILE_PREFIX) :].strip()
        try:
            return self.files.read(path)
        except (OSError, ValueError) as exc:
            self.problem(where, f"cannot read {path}: {exc}")
            return None

    def _template(self, value: Any, where: str, *, required: bool = True) -> str | None:
        if not isinstance(value, str) or (required and not value.strip()):
            self.problem(where, "write the text, or $file:path to read it from a file")
            return None
        text = self._file_text(value, where)
        if text is None:
            return None
        if required and not text.strip():
            self.problem(where, f"{value[len(FILE_PREFIX) :].strip()} is empty")
            return None
        translated, unknown = from_angle_placeholders(text)
        for written in unknown:
            formats = ", ".join(ANGLE_FORMATS)
            self.problem(where, f"{written} has an unknown format; the formats are {formats}")
        return translated

    def _models(self, value: Any) -> list[str]:
        entries = self._list(value, "models", required=True, key="model")
        models, seen = [], []
        for index, entry in enumerate(entries, start=1):
            written = entry.get("model") if isinstance(entry, dict) else entry
            where = f"models[{index}]" + (f" ({written})" if isinstance(written, str) else "")
            if isinstance(entry, dict) and set(entry) - {"model", "_value"}:
                extra = ", ".join(sorted(set(entry) - {"model", "_value"}))
                self.problem(where, f"{extra}: a models entry has only `model: provider:model`")
            if not isinstance(written, str) or not written.strip():
                self.problem(where, "model: write provider:model, e.g. openai:gpt-4.1-mini")
                continue
            try:
                model = model_id_from(written)
            except ValueError as exc:
                self.problem(where, f"model: {exc}")
                continue
            models.append(model)
            seen.append((where, model))
        self._unique(seen, "model", "each model is listed once")
        return list(dict.fromkeys(models))

    def _param_sets(self, value: Any) -> list[ParamSet]:
        if value is None:
            return [ParamSet(DEFAULT_PARAMS, {})]
        sets, names = [], []
        for index, entry in enumerate(self._list(value, "model-parameters", required=True, key="name"), start=1):
            where = f"model-parameters[{index}]{_named(entry, 'name')}"
            if not isinstance(entry, dict):
                self.problem(where, "a parameter set is a mapping: name, then temperature, topP, maxOutputTokens …")
                continue
            name = entry.get("name")
            if not isinstance(name, str | int) or not str(name).strip():
                self.problem(where, "name: give the parameter set a name")
                continue
            params = {}
            for key, raw in entry.items():
                if key == "name" or key == "_value":
                    continue
                if key in UNSENT_PARAMETERS:
                    sent = ", ".join(PARAMETERS)
                    self.problem(
                        where, f"{key}: no adapter of Prompt Lab sends {key} yet (they send {sent}); remove it"
                    )
                elif key not in PARAMETERS:
                    known = ", ".join([*PARAMETERS, *UNSENT_PARAMETERS])
                    self.problem(where, f"{key}: not a model parameter; the parameters are {known}")
                elif raw is not None:
                    ours, good, expected = PARAMETERS[key]
                    if good(raw):
                        params[ours] = raw
                    else:
                        self.problem(where, f"{key}: {raw!r} is not {expected}")
            sets.append(ParamSet(str(name).strip(), params))
            names.append((where, str(name).strip()))
        self._unique(names, "name", "parameter sets have unique names")
        return sets

    def _prompts(self, value: Any) -> list[Prompt]:
        prompts, names = [], []
        for index, entry in enumerate(self._list(value, "prompts", required=True, key="name"), start=1):
            where = f"prompts[{index}]{_named(entry, 'name')}"
            if not isinstance(entry, dict):
                self.problem(where, "a prompt is a mapping: name and prompt")
                continue
            name = entry.get("name")
            extra = sorted(set(entry) - {"name", "prompt", "variables", "_value"})
            if extra:
                self.problem(where, f"{', '.join(extra)}: a prompt has only name, prompt and variables")
            if not isinstance(name, str | int) or not str(name).strip():
                self.problem(where, "name: give the prompt a name")
            template = self._template(entry.get("prompt", entry.get("_value")), f"{where}: prompt")
            variables = self._variables(entry.get("variables"), f"{where}: variables")
            if template is None or not isinstance(name, str | int) or not str(name).strip():
                continue
            prompts.append(Prompt(str(name).strip(), template, variables))
            names.append((where, str(name).strip()))
        self._unique(names, "name", "prompts have unique names")
        return prompts

    def _system_prompt(self, value: Any) -> str:
        if value is None:
            return ""
        return self._template(value, "system-prompt") or ""

    def _variables(self, value: Any, where: str) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict) or not all(isinstance(k, str) and k.isidentifier() for k in value):
            self.problem(where, "a mapping of variable name → value (names are letters, digits and _)")
            return {}
        return value

    def _dataset(self, value: Any) -> tuple[list[Row], str | int | None]:
        if value is None:
            return [], None
        if isinstance(value, dict):
            value = [value]
        if not isinstance(value, list) or not value:
            self.problem("dataset", "a list of rows {name, vars}, files {file: path} or one {dataset: name}")
            return [], None
        rows: list[tuple[str, Row]] = []
        ref = None
        for index, entry in enumerate(value, start=1):
            where = f"dataset[{index}]{_named(entry, 'name')}"
            if isinstance(entry, dict) and "dataset" in entry:
                if len(value) > 1 or set(entry) != {"dataset"}:
                    self.problem(where, "dataset: a workspace's dataset is used on its own, as the only entry")
                elif not isinstance(entry["dataset"], str | int) or isinstance(entry["dataset"], bool):
                    self.problem(where, "dataset: the name or id of one of the workspace's datasets")
                else:
                    ref = entry["dataset"]
            elif isinstance(entry, dict) and "file" in entry:
                rows += self._file_rows(entry, f"dataset[{index}] (file {entry.get('file')})")
            else:
                problems: list[str] = []
                row = row_from_record(entry, where, problems)
                if isinstance(entry, dict) and "vars" not in entry:
                    problems = [f"{where}: vars: each entry is {{name, vars}} or {{file: path}}"]
                for message in problems:
                    self.problems.append(f"{self.source}: {message}")
                if row is not None and not problems:
                    rows.append((where, Row(row["name"], row["vars"])))
        return self._named_rows(rows), ref

    def _file_rows(self, entry: dict, where: str) -> list[tuple[str, Row]]:
        path = entry.get("file")
        if set(entry) != {"file"} or not isinstance(path, str) or not path.strip():
            self.problem(where, "file: a dataset file entry is only {file: path}")
            return []
        kind = format_for(path)
        if kind is None:
            self.problem(where, f"file: {path} is not .yaml, .yml, .json, .jsonl or .csv")
            return []
        try:
            text = self.files.read(path.strip())
        except (OSError, ValueError) as exc:
            self.problem(where, f"file: cannot read {path}: {exc}")
            return []
        try:
            parsed = rows_parse(content=text, format=kind)
        except ValidationError as exc:
            for message in exc.messages:
                self.problem(where, message)
            return []
        return [(f"{where}: row {i}", Row(r["name"], r["vars"])) for i, r in enumerate(parsed, start=1)]

    def _named_rows(self, rows: list[tuple[str, Row]]) -> list[Row]:
        """Unnamed rows are called row-1, row-2 … by position; names must be unique across all entries."""
        named = [(where, Row(row.name or f"row-{i}", row.vars)) for i, (where, row) in enumerate(rows, start=1)]
        self._unique([(where, row.name) for where, row in named], "name", "dataset rows have unique names")
        if len(named) > MAX_DATASET_ROWS:
            self.problem("dataset", f"at most {MAX_DATASET_ROWS} rows; this has {len(named)}")
        return [row for _, row in named]

    def _evaluation(self, value: Any) -> Evaluation | None:
        if value is None:
            return None
        if not isinstance(value, dict):
            self.problem("evaluation", "a mapping: type, model and optionally prompt")
            return None
        extra = sorted(set(value) - {"type", "model", "prompt"})
        if extra:
            self.problem("evaluation", f"{', '.join(extra)}: evaluation has only type, model and prompt")
        judge = scorer()
        if judge is None:
            self.problem("evaluation", "this installation has no judge (the judging app); remove the evaluation")
            return None
        kind = str(value.get("type", "")).strip()
        if kind not in judge.types:
            self.problem(
                "evaluation", f"type: {value.get('type')!r} is not a type; the types are {', '.join(judge.types)}"
            )
        model = None
        try:
            model = model_id_from(value["model"]) if isinstance(value.get("model"), str) else None
        except ValueError as exc:
            self.problem("evaluation", f"model: {exc}")
        else:
            if model is None:
                self.problem("evaluation", "model: the judge, as provider:model")
        prompt = ""
        if value.get("prompt") is not None:
            prompt = self._template(value["prompt"], "evaluation: prompt") or ""
            if prompt and kind in judge.types:
                self._check_evaluator_prompt(prompt, *judge.placeholders(kind), kind)
        if model is None or kind not in judge.types:
            return None
        return Evaluation(type=kind, model=model, prompt=prompt)

    def _check_evaluator_prompt(self, prompt: str, required: tuple[str, ...], allowed: tuple[str, ...], kind: str):
        used = placeholders(prompt)
        missing = [name for name in required if name not in used]
        if missing:
            needs = ", ".join(f"<<{name}>>" for name in required)
            absent = ", ".join(f"<<{name}>>" for name in missing)
            self.problem("evaluation: prompt", f"missing {absent}; a {kind} evaluator prompt needs {needs}")
        for name in used:
            if name not in allowed:
                known = ", ".join(f"<<{p}>>" for p in allowed)
                self.problem("evaluation: prompt", f"<<{name}>> is not filled by the judge; it fills {known}")
        if any(match.group(2) for match in PLACEHOLDER.finditer(prompt)):
            self.problem("evaluation: prompt", "the evaluator's placeholders take no format (write <<response>>)")

    def _structured(self, value: Any) -> StructuredOutput | None:
        if value is None:
            return None
        where = "structured-output"
        if not isinstance(value, dict):
            self.problem(where, "a mapping: schema and format")
            return None
        extra = sorted(set(value) - {"schema", "format"})
        if extra:
            self.problem(where, f"{', '.join(extra)}: structured-output has only schema and format")
        fmt = str(value.get("format", "json")).strip().lower()
        if fmt == "yml":
            fmt = "yaml"
        if fmt not in STRUCTURED_FORMATS:
            self.problem(where, f"format: {value.get('format')!r} is not json or yaml")
        schema = value.get("schema")
        if isinstance(schema, str):
            text = self._file_text(schema, f"{where}: schema")
            try:
                schema = yaml.safe_load(text) if text is not None else None
            except yaml.YAMLError as exc:
                self.problem(f"{where}: schema", f"not valid YAML or JSON: {_parse_problem(exc)}")
                return None
        if not isinstance(schema, dict):
            self.problem(where, "schema: the JSON schema of an answer, as a mapping (or $file:path)")
            return None
        try:
            jsonschema.validators.validator_for(schema).check_schema(schema)
        except jsonschema.SchemaError as exc:
            path = "/".join(str(p) for p in exc.path) or "(top)"
            self.problem(where, f"schema: not a valid JSON schema at {path}: {exc.message}")
            return None
        return StructuredOutput(schema=schema, format=fmt) if fmt in STRUCTURED_FORMATS else None

    def _timeout(self, value: Any) -> float:
        if value is None:
            return DEFAULT_TIMEOUT_S
        if not _number(value) or not 1 <= value <= MAX_TIMEOUT_S:
            self.problem("timeout", f"seconds an answer may take: a number from 1 to {MAX_TIMEOUT_S}")
            return DEFAULT_TIMEOUT_S
        return float(value)

    def _combinations(self, value: Any, config: ExperimentConfig) -> list[Combination]:
        if not isinstance(value, list) or not value:
            self.problem("combinations", "a list of {model, model-parameters, prompt}; leave it out for all of them")
            return []
        sets = {s.name: s for s in config.param_sets}
        prompts = {p.name: p for p in config.prompts}
        combinations, seen = [], []
        for index, entry in enumerate(value, start=1):
            where = f"combinations[{index}]"
            if not isinstance(entry, dict):
                self.problem(where, "a mapping: model, model-parameters and prompt")
                continue
            extra = sorted(set(entry) - {"model", "model-parameters", "prompt"})
            if extra:
                self.problem(where, f"{', '.join(extra)}: a combination has only model, model-parameters and prompt")
            model = self._combination_model(entry.get("model"), where, config.models)
            params = self._pick(entry.get("model-parameters"), sets, where, "model-parameters")
            prompt = self._pick(entry.get("prompt"), prompts, where, "prompt")
            if model and params and prompt:
                combinations.append(Combination(model, params, prompt))
                seen.append((where, f"{model} · {params.name} · {prompt.name}"))
        self._unique(seen, "combination", "each combination is listed once")
        return combinations

    def _combination_model(self, written: Any, where: str, models: list[str]) -> str | None:
        try:
            model = model_id_from(written) if isinstance(written, str) else None
        except ValueError as exc:
            self.problem(where, f"model: {exc}")
            return None
        if model is None:
            self.problem(where, "model: one of the models, as written in models")
        elif model not in models:
            self.problem(where, f"model: {written} is not in models")
            return None
        return model

    def _pick(self, name: Any, options: dict[str, Any], where: str, field_name: str) -> Any:
        if name is None and len(options) == 1:
            return next(iter(options.values()))
        chosen = options.get(str(name).strip()) if isinstance(name, str | int) else None
        if chosen is None:
            self.problem(where, f"{field_name}: {name!r} is not one of {', '.join(options) or 'none'}")
        return chosen
