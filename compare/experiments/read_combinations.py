"""Checking what an experiment runs: its models, parameter sets and prompts, and the combinations of them.

Without a `combinations` section every model × parameter set × prompt is run; with one, only those it lists.
"""

from __future__ import annotations

from typing import Any

from lab.providers.tools import response_schema_errors, tools_errors

from ..messages import last_user_text
from .reader import SectionReader, name_suffix
from .spec import (
    DEFAULT_PARAMS,
    PARAMETERS,
    Combination,
    ExperimentConfig,
    ParamSet,
    Prompt,
    model_id_from,
)

# A combination's own tool settings, overriding the file's for its variant (a promptfoo provider's config).
COMBINATION_TOOL_KEYS = ("tools", "tool-choice", "response-schema")


class CombinationsReader(SectionReader):
    def _models(self, value: Any) -> tuple[list[str], dict[str, str]]:
        """The model ids, and each as the file wrote it (what the results show)."""
        entries = self._list(value, "models", required=True, key="model")
        models, seen, written_as = [], [], {}
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
            written_as.setdefault(model, written.strip())
            seen.append((where, model))
        self._unique(seen, "model", "each model is listed once")
        return list(dict.fromkeys(models)), written_as

    def _param_sets(self, value: Any) -> list[ParamSet]:
        if value is None:
            return [ParamSet(DEFAULT_PARAMS, {})]
        sets, names = [], []
        for index, entry in enumerate(self._list(value, "model-parameters", required=True, key="name"), start=1):
            where = f"model-parameters[{index}]{name_suffix(entry, 'name')}"
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
                if key not in PARAMETERS:
                    known = ", ".join(PARAMETERS)
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
            where = f"prompts[{index}]{name_suffix(entry, 'name')}"
            if not isinstance(entry, dict):
                self.problem(where, "a prompt is a mapping: name and prompt")
                continue
            name = entry.get("name")
            extra = sorted(set(entry) - {"name", "prompt", "messages", "variables", "_value"})
            if extra:
                self.problem(where, f"{', '.join(extra)}: a prompt has only name, prompt (or messages) and variables")
            if not isinstance(name, str | int) or not str(name).strip():
                self.problem(where, "name: give the prompt a name")
            read = self._prompt_body(entry, where)
            variables = self._variables(entry.get("variables"), f"{where}: variables")
            if read is None or not isinstance(name, str | int) or not str(name).strip():
                continue
            prompts.append(Prompt(str(name).strip(), read[0], variables, read[1]))
            names.append((where, str(name).strip()))
        self._unique(names, "name", "prompts have unique names")
        return prompts

    def _prompt_body(self, entry: dict, where: str) -> tuple[str, tuple[dict[str, str], ...]] | None:
        """A prompt's text, or its messages (with their last user message as its text): `prompt:` text or a
        `$file:` (a JSON file holding a list of messages is a chat prompt, as promptfoo reads one), or
        `messages:` a list of {role, content} or a `$file:` JSON list. None when it has problems (reported)."""
        written = entry.get("prompt", entry.get("_value"))
        if "messages" in entry:
            if written is not None:
                self.problem(where, "give prompt or messages, not both")
                return None
            messages = self._messages(entry["messages"], f"{where}: messages")
        else:
            body = self._prompt_or_chat(written, f"{where}: prompt")
            if body is None or isinstance(body, str):
                return None if body is None else (body, ())
            messages = body
        return None if messages is None else (last_user_text(messages), tuple(messages))

    def _system_prompt(self, value: Any) -> str:
        if value is None:
            return ""
        return self._template(value, "system-prompt") or ""

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
            extra = sorted(set(entry) - {"model", "model-parameters", "prompt", *COMBINATION_TOOL_KEYS})
            if extra:
                self.problem(
                    where,
                    f"{', '.join(extra)}: a combination has only model, model-parameters, prompt, tools, "
                    "tool-choice and response-schema",
                )
            model = self._combination_model(entry.get("model"), where, config.models)
            params = self._pick(entry.get("model-parameters"), sets, where, "model-parameters")
            prompt = self._pick(entry.get("prompt"), prompts, where, "prompt")
            own = self._combination_tools(entry, where)
            if model and params and prompt:
                combinations.append(Combination(model, params, prompt, **own))
                seen.append((where, f"{model} · {params.name} · {prompt.name}"))
        self._unique(seen, "combination", "each combination is listed once")
        return combinations

    def _combination_tools(self, entry: dict, where: str) -> dict[str, Any]:
        """A combination's own `tools`, `tool-choice` and `response-schema` (the lab's `{"name", "schema",
        "strict"}`), overriding the file's for its variant only (docs/tools.md); each problem names the key."""
        own: dict[str, Any] = {}
        tools, choice = entry.get("tools"), entry.get("tool-choice")
        if tools is not None or choice is not None:
            problems = tools_errors(tools, choice) if choice is None or isinstance(choice, str) else ["a text"]
            for problem in problems:
                self.problem(f"{where}: tools", problem)
            if not problems:
                own.update(tools=tools, tool_choice=choice)
        if (schema := entry.get("response-schema")) is not None:
            problems = response_schema_errors(schema)
            for problem in problems:
                self.problem(f"{where}: response-schema", problem)
            if not problems:
                own["response_schema"] = schema
        return own

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
