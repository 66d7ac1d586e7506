"""Writes for the prompt library: create a prompt, add a version, promote one, save a variant's messages as a version.

A version is a message list (`messages`); `text` is its last user message, so a version given as text alone is one
user message. Errors are Django ValidationErrors keyed by field, which the API turns into 400s.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max

from lab import values
from lab.models import Workspace

from ..blind import require_revealed
from ..messages import cleaned, last_user_text, message_problems, one_user_message
from ..models import Variant
from .models import Prompt, PromptVersion

MAX_NAME = 200
MAX_AUTHOR = 150  # PromptVersion.author_name's length


def _check_storable(**fields: Any) -> None:
    """Pages pass their form's text as it came: a NUL (or a lone surrogate) would reach Postgres, which refuses it."""
    for field, value in fields.items():
        if value is not None and (found := values.value_problem(value)):
            path, problem = found
            where = values.dotted(path)
            raise ValidationError({field: f"{where}: {problem}" if where else problem})


def prompt_name_problem(name: str) -> str | None:
    """Why `name` (stripped) cannot name a prompt, uniqueness apart: the rule for a new prompt and a library file."""
    return values.name_problem(name, noun="prompt", max_length=MAX_NAME)


def _check_name(workspace: Workspace, name: str) -> str:
    name = (name or "").strip()
    if problem := prompt_name_problem(name):
        raise ValidationError({"name": problem})
    if Prompt.objects.filter(workspace=workspace, name=name).exists():
        raise ValidationError({"name": f'This workspace already has a prompt named "{name}".'})
    return name


def _check_parent(workspace: Workspace, parent: PromptVersion | None) -> None:
    if parent is not None and parent.prompt.workspace_id != workspace.pk:
        raise ValidationError({"parent": "No such prompt version in this workspace."})


@transaction.atomic
def prompt_create(
    *,
    workspace: Workspace,
    user,
    name: str,
    text: str = "",
    messages: list[dict[str, str]] | None = None,
    system_prompt: str = "",
    variables: dict[str, Any] | None = None,
    message: str = "",
    parent: PromptVersion | None = None,
) -> Prompt:
    """A prompt with its first version, which is current."""
    prompt = Prompt.objects.create(workspace=workspace, name=_check_name(workspace, name), created_by=user)
    version = prompt_version_create(
        prompt=prompt,
        user=user,
        text=text,
        messages=messages,
        system_prompt=system_prompt,
        variables=variables,
        message=message,
        parent=parent,
    )
    prompt.current = version
    prompt.save(update_fields=["current"])
    return prompt


@transaction.atomic
def prompt_version_create(
    *,
    prompt: Prompt,
    user,
    text: str = "",
    messages: list[dict[str, str]] | None = None,
    system_prompt: str = "",
    variables: dict[str, Any] | None = None,
    message: str = "",
    parent: PromptVersion | None = None,
    author_name: str | None = None,
) -> PromptVersion:
    """The prompt's next version (numbered after its last), from `text` (one user message) or `messages`.
    `parent` is the version it was edited from."""
    messages = version_messages(text=text, messages=messages)
    text = last_user_text(messages)
    if variables is not None and not isinstance(variables, dict):
        raise ValidationError({"variables": "Give variables as an object of name → value."})
    _check_storable(messages=messages, system_prompt=system_prompt, variables=variables, message=message)
    _check_parent(prompt.workspace, parent)
    Prompt.objects.select_for_update().filter(pk=prompt.pk).first()  # one numbering at a time
    last = prompt.versions.aggregate(last=Max("number"))["last"] or 0
    return PromptVersion.objects.create(
        prompt=prompt,
        number=last + 1,
        text=text,
        messages=messages,
        system_prompt=system_prompt or "",
        variables=dict(variables or {}),
        parent=parent,
        author=user,
        author_name=author_name if author_name is not None else getattr(user, "username", "") or "",
        message=(message or "").strip(),
    )


def version_messages(*, text: str = "", messages: list[dict[str, str]] | None = None) -> list[dict[str, str]]:
    """A version's message list from exactly one of `text` and `messages`, checked; raises ValidationError naming
    the field (and the message, counted from 1). Its last user message must say something: it is the version's text."""
    if messages is not None and (text or "").strip():
        raise ValidationError({"messages": "Give the text or the messages, not both."})
    if messages is None:
        if not (text or "").strip():
            raise ValidationError({"text": "Write the prompt's text."})
        return one_user_message(text)
    if problems := message_problems(messages):
        raise ValidationError({"messages": problems})
    if not last_user_text(messages).strip():
        raise ValidationError({"messages": "The last user message is empty: write the prompt's text."})
    return cleaned(messages)


@transaction.atomic
def prompt_promote(*, version: PromptVersion) -> Prompt:
    """Mark `version` as its prompt's current version."""
    prompt = Prompt.objects.select_for_update().get(pk=version.prompt_id)
    prompt.current = version
    prompt.save(update_fields=["current"])
    return prompt


@transaction.atomic
def variant_save_as_version(
    *, variant: Variant, user, prompt: Prompt | None = None, name: str = "", message: str = ""
) -> PromptVersion:
    """The variant's messages (with its comparison's system prompt and its variables) as a new version: of
    `prompt`, or of a new prompt called `name`. Its parent is the version the variant was made from, and the
    variant now points at the new version (whose messages are exactly what it runs)."""
    workspace = variant.group.workspace
    require_revealed(variant.group, "variant")
    if prompt is not None and prompt.workspace_id != workspace.pk:
        raise ValidationError({"prompt": "No such prompt in this workspace."})
    fields = {
        "messages": variant.messages or one_user_message(variant.prompt),
        "system_prompt": variant.group.system_prompt,
        "variables": variant.variables,
        "message": message,
        "parent": variant.prompt_version,
    }
    if prompt is None:
        prompt = prompt_create(workspace=workspace, user=user, name=name, **fields)
        version = prompt.current
    else:
        version = prompt_version_create(prompt=prompt, user=user, **fields)
    variant.prompt_version = version
    variant.save(update_fields=["prompt_version"])
    return version
