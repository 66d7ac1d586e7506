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

Some parameters exist only in some providers' protocols; a model of a connection whose protocol has no such
parameter refuses it, whatever its catalog says (`PROTOCOL_LACKS`):

| connection kind | has no                                | sends                                                   |
|-----------------|---------------------------------------|---------------------------------------------------------|
| openai          | top_k                                 | presence_penalty, frequency_penalty                     |
| anthropic       | seed, presence_penalty, frequency_penalty | top_k                                               |
| gemini          | —                                     | topK, presencePenalty, frequencyPenalty                 |
| openrouter, openai_compatible (vLLM, Ollama, llama.cpp) | — | top_k, presence_penalty, frequency_penalty as named |
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
PROTOCOL_LACKS: dict[str, frozenset[str]] = {
    "openai": frozenset({"top_k"}),
    "anthropic": frozenset({"seed", "presence_penalty", "frequency_penalty"}),
}
# Parameters a model accepts one at a time but refuses together.
KNOWN_EXCLUSIVE = ((re.compile(r"^claude-(opus|sonnet|haiku)-4-[1-9]"), ("temperature", "top_p")),)


def set_params(params: dict[str, Any]) -> dict[str, Any]:
    """The known parameters that carry a value; None, "" and [] mean unset, so the model keeps its default."""
    return {name: params[name] for name in PARAMETERS if params.get(name) not in (None, "", [])}


def base_model_name(model: str) -> str:
    """`openai::openai/o3-mini?x=1` → `o3-mini`: the bare name the refusal table is written for."""
    name = model.split("::", 1)[-1].split("?", 1)[0]
    return name.rsplit("/", 1)[-1]


def unsupported_params(model: str, info: ModelInfo | None, params: dict[str, Any], kind: str = "") -> list[str]:
    """The set parameters `model` refuses: those its protocol lacks, then exact from the catalog, else from the
    table of known refusals. `kind` is its connection's kind ("" when unknown: no protocol rule applies)."""
    wanted = set_params(params)
    lacking = PROTOCOL_LACKS.get(kind, frozenset())
    if info is not None and info.supported_params is not None:
        return [name for name in wanted if name in lacking or name not in info.supported_params]
    bare = base_model_name(model)
    refused = lacking.union(*(r.params for r in KNOWN_REFUSALS if r.pattern.match(bare)))
    return [name for name in wanted if name in refused]


def check_params(
    params: dict[str, Any],
    models: list[tuple[str, ModelInfo | None]],
    *,
    kinds: dict[str, str] | None = None,
    names: dict[str, str] | None = None,
) -> list[str]:
    """One readable message per (model, parameter) that would be refused; empty when the run may go ahead.

    `models` pairs each composite model id (`<connection>::<model>`) with its catalog entry, or None; `kinds`
    maps a model id to its connection's kind, for the parameters a protocol does not have; `names` says each
    parameter as the caller's user wrote it (an experiment file's topK for top_k).
    """
    messages = []
    wanted = set_params(params)
    kinds, names = kinds or {}, names or {}
    for model_id, info in models:
        refused = unsupported_params(model_id, info, params, kinds.get(model_id, ""))
        messages += [f"{model_id} does not support {names.get(name, name)}" for name in refused]
        bare = base_model_name(model_id)
        for pattern, together in KNOWN_EXCLUSIVE:
            if pattern.match(bare) and all(name in wanted for name in together):
                shown = " and ".join(names.get(name, name) for name in together)
                messages.append(f"{model_id} does not support {shown} together")
    return messages
