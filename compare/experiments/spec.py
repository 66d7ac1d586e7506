"""What an experiment file becomes once checked: the data classes `config` builds, and the limits and names it uses.

Nothing here reads a file; that is `config` (the entry points) with `reader` and the `read_*` section modules.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from lab.engine.fanout import DEFAULT_TIMEOUT_S

FILE_PREFIX = "$file:"
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
    "datasets",  # Toor's spelling of `dataset`
    "structured-output",
    "combinations",
    "timeout",
    "cache",  # reuse stored answers to identical calls (compare/response_cache.py)
    "tools",  # OpenAI function-format tools every model is offered (docs/tools.md)
    "tool-choice",
    "assertions",  # promptfoo-style checks of every answer (compare/assertions/)
    "assert",  # promptfoo's name for `assertions`
)
# The file's parameter names → ours; `check` is (test, what a good value is).
PARAMETERS: dict[str, tuple[str, Callable[[Any], bool], str]] = {
    "temperature": ("temperature", lambda v: is_number(v) and 0 <= v <= 2, "a number from 0 to 2"),
    "topP": ("top_p", lambda v: is_number(v) and 0 <= v <= 1, "a number from 0 to 1"),
    "topK": ("top_k", lambda v: _integer(v) and 1 <= v <= 1000, "a whole number from 1 to 1000"),
    "maxOutputTokens": ("max_tokens", lambda v: _integer(v) and 1 <= v <= 1_000_000, "a whole number from 1"),
    "seed": ("seed", lambda v: _integer(v) and 0 <= v <= 2**53, "a whole number from 0"),
    "stopSequences": ("stop", lambda v: _stops(v), "a list of up to 4 texts"),
    "presencePenalty": ("presence_penalty", lambda v: is_number(v) and -2 <= v <= 2, "a number from -2 to 2"),
    "frequencyPenalty": ("frequency_penalty", lambda v: is_number(v) and -2 <= v <= 2, "a number from -2 to 2"),
}
FILE_NAMES = {ours: theirs for theirs, (ours, _, _) in PARAMETERS.items()}
STRUCTURED_FORMATS = ("json", "yaml")
# What a judge sharing a model family with a candidate does to an experiment: a warning (the default, so a file
# judging gpt-4o-mini by gpt-4o runs), or a refusal.
FAMILY_RULES = ("warn", "refuse")


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _stops(value: Any) -> bool:
    return isinstance(value, list) and 1 <= len(value) <= 4 and all(isinstance(v, str) and v for v in value)


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
    template: str  # in our `{{name}}` syntax, `$file:` read in; with `messages`, their last user message
    variables: dict[str, Any] = field(default_factory=dict)
    # A chat prompt ([{role, content}], contents in our syntax), from `messages:` or a `$file:` JSON list; empty for
    # a prompt given as text, which is one user message.
    messages: tuple[dict[str, str], ...] = ()

    def own_messages(self) -> list[dict[str, str]]:
        return [dict(m) for m in self.messages] if self.messages else [{"role": "user", "content": self.template}]


@dataclass(frozen=True)
class Row:
    name: str
    vars: dict[str, Any]
    assertions: list[dict[str, Any]] = field(default_factory=list)  # the row's own (a promptfoo test's `assert`)


@dataclass(frozen=True)
class Evaluation:
    type: str
    model: str  # `<connection>::<model>`
    prompt: str = ""  # custom evaluator prompt in our `{{name}}` syntax; empty: the judge's own
    family: str = "warn"  # one of FAMILY_RULES
    classification: dict[str, Any] = field(default_factory=dict)  # a classification type's keys, as in the file


@dataclass(frozen=True)
class StructuredOutput:
    schema: dict[str, Any]
    format: str  # how a valid answer is shown to the evaluator: json or yaml
    # "native": a JSON schema is sent to the model (docs/tools.md); "validate": only the answers are checked. A
    # YAML answer cannot be asked for natively, so it is always validated only.
    mode: str = "native"

    def response_schema(self) -> dict[str, Any]:
        """The comparison's `response_schema` for this block."""
        mode = self.mode if self.format == "json" else "validate"
        return {"name": "response", "schema": self.schema, "strict": False, "mode": mode}


@dataclass(frozen=True)
class Combination:
    model: str
    params: ParamSet
    prompt: Prompt
    # The variant's own tool settings (None: the file's), as the comparison's variants override the group's.
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | None = None
    response_schema: dict[str, Any] | None = None

    def tool_overrides(self, names: tuple[str, str, str]) -> dict[str, Any]:
        """The settings it overrides, under `names` for tools, tool choice and response schema."""
        values = (self.tools, self.tool_choice, self.response_schema)
        return {name: value for name, value in zip(names, values, strict=True) if value is not None}


@dataclass
class ExperimentConfig:
    source: str  # the file's name, for messages
    name: str
    description: str = ""
    models: list[str] = field(default_factory=list)  # `<connection>::<model>`
    written: dict[str, str] = field(default_factory=dict)  # model id → as the file wrote it (`openai:gpt-4o`)
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
    cache: bool = False  # take answers to identical calls from the workspace's response cache
    tools: list[dict[str, Any]] = field(default_factory=list)
    tool_choice: str = ""
    assertions: list[dict[str, Any]] = field(default_factory=list)  # every answer's checks (compare/assertions/)

    def as_data(self) -> dict[str, Any]:
        """The file layout again, self-contained (files read in, our placeholders): what export writes."""
        data: dict[str, Any] = {"name": self.name}
        if self.description:
            data["description"] = self.description
        if self.evaluation:
            data["evaluation"] = {"type": self.evaluation.type, "model": self.evaluation.model}
            if self.evaluation.prompt:
                data["evaluation"]["prompt"] = self.evaluation.prompt
            if self.evaluation.family != "warn":
                data["evaluation"]["family"] = self.evaluation.family
            data["evaluation"].update(self.evaluation.classification)
        data["models"] = [{"model": self.written.get(model, model)} for model in self.models]
        data["model-parameters"] = [
            {"name": s.name, **{FILE_NAMES[k]: v for k, v in s.params.items()}} for s in self.param_sets
        ]
        data["prompts"] = [
            {
                "name": p.name,
                **({"messages": p.own_messages()} if p.messages else {"prompt": p.template}),
                **({"variables": p.variables} if p.variables else {}),
            }
            for p in self.prompts
        ]
        if self.system_prompt:
            data["system-prompt"] = self.system_prompt
        if self.variables:
            data["variables"] = self.variables
        if self.dataset_ref is not None:
            data["dataset"] = [{"dataset": self.dataset_ref}]
        elif self.rows:
            data["dataset"] = [
                {"name": row.name, "vars": row.vars, **({"assertions": row.assertions} if row.assertions else {})}
                for row in self.rows
            ]
        if self.structured:
            data["structured-output"] = {"schema": self.structured.schema, "format": self.structured.format}
            if self.structured.mode != "native":
                data["structured-output"]["mode"] = self.structured.mode
        if self.tools:
            data["tools"] = self.tools
        if self.tool_choice:
            data["tool-choice"] = self.tool_choice
        if self.explicit_combinations:
            data["combinations"] = [
                {
                    "model": self.written.get(c.model, c.model),
                    "model-parameters": c.params.name,
                    "prompt": c.prompt.name,
                    **c.tool_overrides(("tools", "tool-choice", "response-schema")),
                }
                for c in self.combinations
            ]
        data["timeout"] = self.timeout_s
        if self.cache:
            data["cache"] = True
        if self.assertions:
            data["assertions"] = self.assertions
        return data


def config_on_connections(config: ExperimentConfig, names: dict[str, str]) -> ExperimentConfig:
    """The same experiment with models of connection `old` run on connection `names[old]` (the command line's
    private connections from the environment, lab.connection_env); results still show the model as written."""

    def moved(model_id: str) -> str:
        connection, sep, model = model_id.partition("::")
        return f"{names[connection]}::{model}" if sep and connection in names else model_id

    evaluation = config.evaluation and replace(config.evaluation, model=moved(config.evaluation.model))
    return replace(
        config,
        models=[moved(model) for model in config.models],
        written={moved(model): text for model, text in config.written.items()},
        combinations=[replace(c, model=moved(c.model)) for c in config.combinations],
        evaluation=evaluation,
    )
