"""Any comparison as an experiment file that runs it again: `manage.py experiment export GROUP > file.yaml`.

Written from the group's variants (one combination each), its shared settings and its dataset's rows, so the
file is self-contained; an experiment's own names, evaluation and structured output come from what it was made
from. Prompts are written in our `{{name}}` syntax, which experiment files accept beside `<<name>>`; a chat prompt
(several messages, or the group's shared few-shot messages) as `messages:`.
"""

from __future__ import annotations

from typing import Any

import yaml

from lab.providers.params import set_params

from ..models import CompareGroup
from .models import Experiment
from .naming import combination_names
from .spec import DEFAULT_PARAMS, FILE_NAMES, MAX_TIMEOUT_S


def group_export(group: CompareGroup) -> dict[str, Any]:
    """The file's data: run it (`experiment run`) and the same combinations run on the same rows."""
    experiment = Experiment.objects.filter(group=group).first()
    stored = experiment.config if experiment else {}
    variants = list(group.variants.order_by("position"))
    names = combination_names(stored) if experiment else []
    param_sets: dict[str, dict[str, Any]] = {}
    prompts: dict[str, tuple[str | list[dict[str, str]], dict[str, Any]]] = {}
    combinations = []
    for index, variant in enumerate(variants):
        params = set_params({**group.params, **variant.params})
        prompt = (_prompt_body(group, variant), variant.variables or {})
        if len(names) == len(variants):
            _, params_name, prompt_name = names[index]
        else:
            params_name = _name_for(
                param_sets, params, DEFAULT_PARAMS if not params else f"params-{len(param_sets) + 1}"
            )
            prompt_name = _name_for(prompts, prompt, variant.label)
        param_sets.setdefault(params_name, params)
        prompts.setdefault(prompt_name, prompt)
        combinations.append((variant.model, params_name, prompt_name))

    data: dict[str, Any] = {"name": group.title}
    if stored.get("description"):
        data["description"] = stored["description"]
    if stored.get("evaluation"):
        data["evaluation"] = stored["evaluation"]
    models = list(dict.fromkeys(variant.model for variant in variants))
    data["models"] = [{"model": model} for model in models]
    data["model-parameters"] = [
        {"name": name, **{FILE_NAMES[key]: value for key, value in params.items()}}
        for name, params in param_sets.items()
    ]
    data["prompts"] = [
        {
            "name": name,
            **({"prompt": body} if isinstance(body, str) else {"messages": body}),
            **({"variables": variables} if variables else {}),
        }
        for name, (body, variables) in prompts.items()
    ]
    if group.system_prompt:
        data["system-prompt"] = group.system_prompt
    if group.shared_variables:
        data["variables"] = group.shared_variables
    if group.dataset is not None:
        rows = group.dataset.rows.order_by("position")
        data["dataset"] = [{"name": row.name or f"row-{row.position}", "vars": row.vars} for row in rows]
    if stored.get("structured-output"):
        data["structured-output"] = stored["structured-output"]
    cross = [(m, p, q) for m in models for p in param_sets for q in prompts]
    if combinations != cross:
        data["combinations"] = [{"model": m, "model-parameters": p, "prompt": q} for m, p, q in combinations]
    data["timeout"] = min(group.timeout_ms / 1000, MAX_TIMEOUT_S)
    if stored.get("cache"):
        data["cache"] = True
    return data


def _prompt_body(group: CompareGroup, variant) -> str | list[dict[str, str]]:
    """A variant's prompt as the file writes it: its text when it is one user message, else its messages after the
    group's shared ones (a file has no shared messages: each prompt carries them)."""
    messages = [*group.shared_messages, *(variant.messages or [{"role": "user", "content": variant.prompt}])]
    if messages == [{"role": "user", "content": variant.prompt}]:
        return variant.prompt
    return [{"role": m["role"], "content": m["content"]} for m in messages]


def _name_for(existing: dict[str, Any], value: Any, wanted: str) -> str:
    """The name `value` already has, else `wanted` (made unique)."""
    for name, known in existing.items():
        if known == value:
            return name
    name, counter = wanted, 2
    while name in existing:
        name, counter = f"{wanted}-{counter}", counter + 1
    return name


class _Dumper(yaml.SafeDumper):
    """Multi-line text (prompts, evaluator prompts) as `|` blocks, as a person would write it."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def export_yaml(data: dict[str, Any]) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=120)
