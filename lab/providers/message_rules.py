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

- A conversation holding an image goes only to a model not known to be text-only (known_models' `images`).

A message's `content` is text, or a list of parts once it holds an image (lab.files.references: text and image
parts); `content_text` and `content_parts` are the ones that read it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lab.files.references import has_images

from .known_models import takes_images

ROLES = ("system", "user", "assistant")
# A conversation's tool loop (docs/tools.md): an assistant message may carry `tool_calls` ([{"id", "name",
# "arguments"}]) and a `tool` message `{"role": "tool", "tool_call_id", "content"}` answers one call. Only the lab's
# own continuing builds them; adapters write them in their wire format (Anthropic and Gemini as user turns).
TOOL_ROLE = "tool"
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


# A rough input cost of one image, for the context check and budgets before a call (providers count 85 to ~1,600).
IMAGE_TOKENS_ESTIMATE = 800


def content_text(content: Any) -> str:
    """The text of a message's content; of a list of parts, the text parts joined (images contribute nothing)."""
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if part.get("type") == "text")
    return content if isinstance(content, str) else ""


def content_parts(content: Any) -> list[dict]:
    """A message's content as parts: a string is one text part."""
    return list(content) if isinstance(content, list) else [{"type": "text", "text": content_text(content)}]


def estimate_tokens(text: str) -> int:
    """A rough count (about 4 characters a token), used where a provider reports no usage and before a call."""
    return max(1, round(len(text) / 4)) if text else 0


def estimate_input_tokens(messages: Sequence[dict]) -> int:
    """`estimate_tokens` over the whole conversation (the context check, tpm budgets and missing usage)."""
    text = "".join(content_text(message.get("content")) for message in messages)
    images = sum(
        1
        for message in messages
        if isinstance(message.get("content"), list)
        for part in message["content"]
        if part.get("type") == "image"
    )
    return estimate_tokens(text) + images * IMAGE_TOKENS_ESTIMATE


def is_prefill(messages: Sequence[dict]) -> bool:
    return bool(messages) and messages[-1].get("role") == "assistant" and not messages[-1].get("tool_calls")


def has_tool_turns(messages: Sequence[dict]) -> bool:
    """Whether a conversation holds tool calls or results (then adapters build its turns block by block)."""
    return any(m.get("role") == TOOL_ROLE or m.get("tool_calls") for m in messages)


def _mergeable(first: dict, second: dict) -> bool:
    return all(isinstance(m.get("content"), str | list) for m in (first, second))


def _merged(first: Any, second: Any) -> Any:
    if isinstance(first, str) and isinstance(second, str):
        return first + MERGE_SEPARATOR + second
    return [*content_parts(first), {"type": "text", "text": MERGE_SEPARATOR}, *content_parts(second)]


def alternating(messages: Sequence[dict]) -> list[dict]:
    """The non-system messages with adjacent ones of one role merged (text joined by a blank line); the caller has
    checked with `target_problems` that every merge is lossless."""
    merged: list[dict] = []
    for message in messages:
        if message["role"] == "system":
            continue
        if merged and merged[-1]["role"] == message["role"] and _mergeable(merged[-1], message):
            merged[-1] = {**merged[-1], "content": _merged(merged[-1]["content"], message["content"])}
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
    if has_images(messages) and takes_images(target.model.rpartition("::")[2]) is False:
        errors.append(
            f"{variant}: {target.model} does not take images (the model catalog says so), and this conversation "
            "holds one; pick a model that reads images or remove the image."
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
