"""A message list's shape as it comes from outside — a pasted or uploaded OpenAI-style `[{role, content}]`, an
experiment file's `messages:`, a library version — and the `prompt` shorthand (one user message) both ways.

Only the shape: roles system, user and assistant, text content, a system message only first. What a provider can
take in which order, and rendering, are lab.templating's and the providers'. Problems count messages from 1, as
people do, and say what is wrong with that message.
"""

from __future__ import annotations

from typing import Any

ROLES = ("system", "user", "assistant")
MAX_MESSAGES = 200
MAX_CONTENT = 100_000  # as a variant's prompt


def one_user_message(text: str) -> list[dict[str, str]]:
    """The `prompt` shorthand as a message list."""
    return [{"role": "user", "content": text}]


def last_user_text(messages: list[dict[str, str]]) -> str:
    """The last user message's content: what `prompt` holds beside `messages`; "" when there is none."""
    return next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")


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
    if not isinstance(message, dict):
        return 'a message is an object {"role": …, "content": …}'
    if extra := sorted(set(map(str, message)) - {"role", "content"}):
        return f"{', '.join(extra)}: a message has only role and content"
    role, content = message.get("role"), message.get("content")
    if role not in ROLES:
        return f"role: {role!r} is not one of {', '.join(ROLES)}" if "role" in message else "role: missing"
    if not isinstance(content, str):
        return "content: write the message's text" if "content" in message else "content: missing"
    if len(content) > MAX_CONTENT:
        return f"content: at most {MAX_CONTENT} characters"
    if role == "system" and not first:
        return "role: a system message may only come first"
    return None


def cleaned(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    """A checked list with exactly role and content in each message, in that order (what is stored)."""
    return [{"role": m["role"], "content": m["content"]} for m in messages]
