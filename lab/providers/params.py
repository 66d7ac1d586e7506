"""Which request parameters are set, and whether each chosen model accepts them (checked before a run).

A model's catalog entry is exact when the provider publishes supported parameters (OpenRouter, Anthropic's
protocol). Where it publishes nothing, every parameter is assumed supported except the known refusals below,
which come from the providers' documentation and from errors users actually hit:

| models (name after any `vendor/` prefix)      | refuse                 | why                                        |
|-----------------------------------------------|------------------------|--------------------------------------------|
| OpenAI reasoning: o1, o3, o4-mini, … gpt-5,   | temperature, top_p     | only the default sampling is allowed       |
| gpt-5-mini, gpt-5-nano (and dated versions)   |                        |                                            |
| Anthropic `claude-*`                          | seed                   | the Messages API has no seed               |
| Claude 4.1 and later (`claude-*-4-1`, `4-5`…) | temperature with top_p | "cannot both be specified for this model"  |
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .base import PARAMETERS, ModelInfo


@dataclass(frozen=True)
class Refusal:
    pattern: re.Pattern
    params: frozenset[str]


KNOWN_REFUSALS = (
    Refusal(re.compile(r"^(o\d(-.*)?|gpt-5(-mini|-nano)?(-\d{4}-\d{2}-\d{2})?)$"), frozenset({"temperature", "top_p"})),
    Refusal(re.compile(r"^claude-"), frozenset({"seed"})),
)
# Parameters a model accepts one at a time but refuses together.
KNOWN_EXCLUSIVE = ((re.compile(r"^claude-(opus|sonnet|haiku)-4-[1-9]"), ("temperature", "top_p")),)


def set_params(params: dict[str, Any]) -> dict[str, Any]:
    """The known parameters that carry a value; None, "" and [] mean unset, so the model keeps its default."""
    return {name: params[name] for name in PARAMETERS if params.get(name) not in (None, "", [])}


def base_model_name(model: str) -> str:
    """`openai::openai/o3-mini?x=1` → `o3-mini`: the bare name the refusal table is written for."""
    name = model.split("::", 1)[-1].split("?", 1)[0]
    return name.rsplit("/", 1)[-1]


def unsupported_params(model: str, info: ModelInfo | None, params: dict[str, Any]) -> list[str]:
    """The set parameters `model` refuses: exact from the catalog, else from the table of known refusals."""
    wanted = set_params(params)
    if info is not None and info.supported_params is not None:
        return [name for name in wanted if name not in info.supported_params]
    bare = base_model_name(model)
    refused = set().union(*(r.params for r in KNOWN_REFUSALS if r.pattern.match(bare)))
    return [name for name in wanted if name in refused]


def check_params(params: dict[str, Any], models: list[tuple[str, ModelInfo | None]]) -> list[str]:
    """One readable message per (model, parameter) that would be refused; empty when the run may go ahead.

    `models` pairs each composite model id (`<connection>::<model>`) with its catalog entry, or None.
    """
    messages = []
    wanted = set_params(params)
    for model_id, info in models:
        messages += [f"{model_id} does not support {name}" for name in unsupported_params(model_id, info, params)]
        bare = base_model_name(model_id)
        for pattern, together in KNOWN_EXCLUSIVE:
            if pattern.match(bare) and all(name in wanted for name in together):
                messages.append(f"{model_id} does not support {' and '.join(together)} together")
    return messages
