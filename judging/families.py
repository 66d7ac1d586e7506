"""Model families: a judge may not grade answers from its own family, since models favour their own kind.

The family of a model, by connection kind:

| kind                         | family                                                | example                     |
|------------------------------|-------------------------------------------------------|-----------------------------|
| openrouter                   | the vendor prefix of the model                        | `openai/gpt-4o` → openai    |
| openai, anthropic, gemini    | the provider (Gemini's is google, as on OpenRouter)   | `o3` → openai               |
| openai_compatible, simulated | the model name without a `:tag` (Ollama's size/quant) | `llama3.2:8b` → llama3.2    |
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

PROVIDER_FAMILY = {"openai": "openai", "anthropic": "anthropic", "gemini": "google"}


def model_family(kind: str, model: str) -> str:
    """The family of `model` (the provider's name, without `<connection>::`) served by a connection of `kind`."""
    bare = model.split("?", 1)[0].strip().lower()
    if kind in PROVIDER_FAMILY:
        return PROVIDER_FAMILY[kind]
    if kind == "openrouter":
        return bare.split("/", 1)[0]
    return bare.split(":", 1)[0]


@dataclass(frozen=True)
class Candidate:
    """One answer's model as the family check sees it; `name` only serves the message (never the judge)."""

    name: str  # e.g. "Variant 2 (Concise)"
    model_id: str  # `<connection>::<model>`
    kind: str


def family_sharing(judge_model_id: str, judge_kind: str, candidates: Iterable[Candidate]) -> tuple[str, list]:
    """The judge's family and the candidates of that family."""
    judge_family = model_family(judge_kind, judge_model_id.split("::", 1)[-1])
    return judge_family, [
        candidate
        for candidate in candidates
        if model_family(candidate.kind, candidate.model_id.split("::", 1)[-1]) == judge_family
    ]


def family_conflicts(judge_model_id: str, judge_kind: str, candidates: Iterable[Candidate]) -> list[str]:
    """One readable reason per candidate sharing the judge's family; empty when the judge may grade them all."""
    judge_family, sharing = family_sharing(judge_model_id, judge_kind, candidates)
    return [
        f"The judge {judge_model_id} and {candidate.name}, {candidate.model_id}, are both {judge_family} models; "
        "a judge may not grade its own family. Choose a judge from another family."
        for candidate in sharing
    ]


def family_warnings(judge_model_id: str, judge_kind: str, candidates: Iterable[Candidate]) -> list[str]:
    """The same finding as a warning, where the rule is advice (experiment files): one sentence per candidate."""
    judge_family, sharing = family_sharing(judge_model_id, judge_kind, candidates)
    return [
        f"The judge {judge_model_id} shares a family ({judge_family}) with {candidate.name}; scores may favour it."
        for candidate in sharing
    ]
