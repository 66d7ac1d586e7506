"""The names of an experiment's combinations, in the order of its variants, read back from its stored file data.

Variants are made one per combination in that order (the explicit list, else models × parameter sets × prompts),
so position n of the group is combination n.
"""

from __future__ import annotations

from typing import Any

from .spec import DEFAULT_PARAMS


def combination_names(data: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(model as the file wrote it, parameter set, prompt) per combination."""
    if data.get("combinations"):
        return [
            (_written(c["model"]), str(c.get("model-parameters") or _only_set(data)), str(c["prompt"]))
            for c in data["combinations"]
        ]
    models = [_written(entry["model"]) for entry in data.get("models") or []]
    sets = [str(entry["name"]) for entry in data.get("model-parameters") or []] or [DEFAULT_PARAMS]
    prompts = [str(entry["name"]) for entry in data.get("prompts") or []]
    return [(model, params, prompt) for model in models for params in sets for prompt in prompts]


def _written(model: str) -> str:
    """`openai:gpt-4o` as written; an id stored as `openai::gpt-4o` (before files kept their spelling) as it is."""
    return str(model).strip()


def _only_set(data: dict[str, Any]) -> str:
    sets = data.get("model-parameters") or []
    return str(sets[0]["name"]) if sets else DEFAULT_PARAMS
