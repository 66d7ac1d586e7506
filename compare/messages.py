"""A message list's shape as it comes from outside — a pasted or uploaded OpenAI-style `[{role, content}]`, an
experiment file's `messages:`, a library version — and the `prompt` shorthand (one user message) both ways.

Only the list's shape: one message's shape is lab.templating's `message_problem` (the rule the groups API shares);
here the list around it, a system message only first and a user message somewhere. What a provider can take in
which order, and rendering, are lab.templating's and the providers'. Problems count messages from 1, as people do,
and say what is wrong with that message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lab.templating import message_problem

MAX_MESSAGES = 200
MAX_CONTENT = 100_000  # as a variant's prompt


def one_user_message(text: str) -> list[dict[str, str]]:
    """The `prompt` shorthand as a message list."""
    return [{"role": "user", "content": text}]


def last_user_text(messages: Sequence[Any]) -> str:
    """The last user message's content (a template): what a variant's or a version's `prompt`/`text` holds beside
    its messages; "" when there is none. Safe on a list not yet checked (a variant's, before its 400)."""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user" and isinstance(message.get("content"), str):
            return message["content"]
    return ""


def message_problems(messages: Any, *, require_user: bool = True) -> list[str]:
    """Every problem with `messages` as "message N: …" (or one about the list); [] when it is a good list."""
    if not isinstance(messages, list):
        return ['a list of messages, each {"role": "system" | "user" | "assistant", "content": "…"}']
    if not messages:
        return ["give at least one message"]
    if len(messages) > MAX_MESSAGES:
        return [f"at most {MAX_MESSAGES} messages"]
    problems = []
    for number, message in enumerate(messages, start=1):
        if problem := _message_problem(message, first=number == 1):
            problems.append(f"message {number}: {problem}")
    if require_user and not problems and not any(m["role"] == "user" for m in messages):
        problems.append("give at least one user message")
    return problems


def _message_problem(message: Any, *, first: bool) -> str | None:
    if problem := message_problem(message):
        return problem.rstrip(".")
    if len(message["content"]) > MAX_CONTENT:
        return f"content: at most {MAX_CONTENT} characters"
    if message["role"] == "system" and not first:
        return "a system message may only come first"
    return None


def cleaned(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    """A checked list with exactly role and content in each message, in that order (what is stored)."""
    return [{"role": m["role"], "content": m["content"]} for m in messages]
