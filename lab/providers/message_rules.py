"""What each provider kind accepts in a list of messages: the one place these rules live.

Validation (the renderer, at group creation, round start and in the preview) and the adapters (building the wire
body) both ask here, so a conversation the lab accepts is one the provider accepts, sent the way the preview said.

- Anthropic and Gemini take strictly alternating user/assistant turns that start with a user turn. Adjacent
  messages of one role are merged (joined by a blank line) where that loses nothing: text only. A conversation
  that starts with an assistant turn is refused.
- A trailing assistant message is a prefill: the model continues it. Anthropic, OpenRouter, Gemini (a trailing
  `model` turn) and the simulated models take it; OpenAI's chat completions does not, and an OpenAI-compatible
  server may or may not, so both are refused.
- The whole conversation, plus the answer's max_tokens, must fit the model's known context.

A message's `content` is text today; `content_text` is the one function that reads it, so parts (images) can be
added there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

ROLES = ("system", "user", "assistant")
ALTERNATING = frozenset({"anthropic", "gemini"})
PREFILL = frozenset({"anthropic", "openrouter", "gemini", "simulated"})
KIND_NAMES = {
    "openai": "OpenAI",
    "openai_compatible": "an OpenAI-compatible server",
    "openrouter": "OpenRouter",
    "anthropic": "Anthropic",
    "gemini": "Gemini",
    "simulated": "the simulated models",
}
MERGE_SEPARATOR = "\n\n"


@dataclass(frozen=True)
class Target:
    """Where a conversation goes: the connection kind, the model id as written, and what its catalog knows."""

    kind: str
    model: str
    context_length: int | None = None
    max_tokens: int | None = None  # the answer's, when set: it must fit in the context too


def content_text(content: Any) -> str:
    """The text of a message's content (a string today)."""
    return content if isinstance(content, str) else ""


def estimate_tokens(text: str) -> int:
    """A rough count (about 4 characters a token), used where a provider reports no usage and before a call."""
    return max(1, round(len(text) / 4)) if text else 0


def estimate_input_tokens(messages: Sequence[dict]) -> int:
    """`estimate_tokens` over the whole conversation (the context check, tpm budgets and missing usage)."""
    return estimate_tokens("".join(content_text(message.get("content")) for message in messages))


def is_prefill(messages: Sequence[dict]) -> bool:
    return bool(messages) and messages[-1].get("role") == "assistant"


def _mergeable(first: dict, second: dict) -> bool:
    return isinstance(first.get("content"), str) and isinstance(second.get("content"), str)


def alternating(messages: Sequence[dict]) -> list[dict]:
    """The non-system messages with adjacent ones of one role merged (text joined by a blank line); the caller has
    checked with `target_problems` that every merge is lossless."""
    merged: list[dict] = []
    for message in messages:
        if message["role"] == "system":
            continue
        if merged and merged[-1]["role"] == message["role"] and _mergeable(merged[-1], message):
            merged[-1] = {**merged[-1], "content": merged[-1]["content"] + MERGE_SEPARATOR + message["content"]}
        else:
            merged.append(dict(message))
    return merged


def target_problems(
    messages: Sequence[dict], names: Sequence[str], target: Target, *, variant: str
) -> tuple[list[str], list[str]]:
    """(errors, warnings) for sending `messages` (rendered, system first) to `target`; `names[i]` says where message
    i came from ("Variant 1 (A) message 2"), so each problem names the variant and the message."""
    errors: list[str] = []
    warnings: list[str] = []
    kind_name = KIND_NAMES.get(target.kind, target.kind)
    turns = [(index, m) for index, m in enumerate(messages) if m.get("role") != "system"]
    if target.kind in ALTERNATING:
        if turns and turns[0][1].get("role") != "user":
            index = turns[0][0]
            errors.append(
                f"{names[index]}: {target.model} ({kind_name}) needs the conversation to start with a user message "
                "after the system prompt; this one starts with an assistant message."
            )
        for (_, before), (index, message) in zip(turns, turns[1:], strict=False):
            if before.get("role") != message.get("role"):
                continue
            if _mergeable(before, message):
                warnings.append(
                    f"{names[index]}: {target.model} ({kind_name}) takes alternating user and assistant messages, "
                    f"so this {message.get('role')} message is sent merged with the one before it."
                )
            else:
                errors.append(
                    f"{names[index]}: {target.model} ({kind_name}) takes alternating user and assistant messages, "
                    f"and this {message.get('role')} message cannot be merged with the one before it without loss."
                )
    if is_prefill(messages) and target.kind not in PREFILL:
        errors.append(
            f"{names[len(messages) - 1]}: a trailing assistant message is a prefill, which {target.model} "
            f"({kind_name}) does not take; end with a user message."
        )
    if problem := context_problem(messages, target):
        errors.append(f"{variant}: {problem}")
    return errors, warnings


def context_problem(messages: Sequence[dict], target: Target) -> str | None:
    """Why the conversation does not fit the model's known context; None when it fits or the context is unknown."""
    if not target.context_length:
        return None
    tokens = estimate_input_tokens(messages)
    needed = tokens + (target.max_tokens or 0)
    if needed <= target.context_length:
        return None
    answer = f" plus max_tokens {target.max_tokens:,}" if target.max_tokens else ""
    return (
        f"The conversation is about {tokens:,} tokens{answer}, more than the context of {target.model} "
        f"({target.context_length:,} tokens); shorten it or pick a model with a longer context."
    )
