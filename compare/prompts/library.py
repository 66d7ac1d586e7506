"""The prompt library as YAML: export a workspace's prompts with every version, import such a file into a workspace.

Import then export gives the same text back, byte for byte: the order of prompts (by name) and versions (by
number), the version numbers, authors' names, messages, variables and lineage (`parent: {prompt, number}`) are all
kept. Multi-line text is written as literal blocks where YAML allows it, so the file diffs well in review. A version
that is more than one user message has `messages: [{role, content}]` (its `text` is then the last user message);
a version that is only its text is written without them, as before.
"""

from __future__ import annotations

from typing import Any

import yaml
from django.core.exceptions import ValidationError
from django.db import transaction

from lab import safe_yaml, values
from lab.models import Workspace

from ..messages import cleaned, last_user_text, message_problems, one_user_message
from .models import Prompt, PromptVersion
from .selectors import workspace_prompts
from .services import MAX_AUTHOR, prompt_name_problem

FORMAT = 1
FIELD = "yaml"  # the request field the errors are about
VERSION_KEYS = ("number", "text", "messages", "system_prompt", "variables", "author", "message", "parent")


class _Dumper(yaml.SafeDumper):
    pass


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # The emitter falls back to a quoted style by itself when a literal block cannot hold the text exactly.
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


_Dumper.add_representer(str, _text)


def library_export(workspace: Workspace) -> str:
    prompts = []
    for prompt in workspace_prompts(workspace):
        versions = prompt.versions.select_related("parent__prompt").order_by("number")
        prompts.append(
            {
                "name": prompt.name,
                "current": prompt.current.number if prompt.current else None,
                "versions": [_version_data(version) for version in versions],
            }
        )
    data = {"prompt-library": FORMAT, "prompts": prompts}
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False, width=120)


def _version_data(version: PromptVersion) -> dict[str, Any]:
    parent = version.parent
    messages = {} if version.messages == one_user_message(version.text) else {"messages": version.messages}
    return {
        "number": version.number,
        "text": version.text,
        **messages,
        "system_prompt": version.system_prompt,
        "variables": version.variables,
        "author": version.author_name,
        "message": version.message,
        "parent": {"prompt": parent.prompt.name, "number": parent.number} if parent else None,
    }


def _fail(message: str):
    raise ValidationError({FIELD: message})


def _read(text: str) -> list[dict]:
    try:
        data = safe_yaml.load(text)
    except yaml.YAMLError as exc:
        _fail(f"Not valid YAML: {exc}")
    # YAML's escapes ("\0", "\ud800") spell text Postgres cannot store out of plain characters: refused by path.
    if found := values.value_problem(data):
        path, problem = found
        _fail(f"{_numbered(path) or 'the file'}: {problem}")
    if not isinstance(data, dict) or data.get("prompt-library") != FORMAT or not isinstance(data.get("prompts"), list):
        _fail(f"A prompt library file starts with `prompt-library: {FORMAT}` and has a list of `prompts`.")
    return data["prompts"]


def _numbered(path: list[str]) -> str:
    """A value's path as this module's messages count: prompts[1] is the first prompt."""
    return values.dotted([f"[{int(part[1:-1]) + 1}]" if part.startswith("[") else part for part in path])


def _check(prompts: list) -> None:
    names: set[str] = set()
    for index, prompt in enumerate(prompts, start=1):
        where = f"prompts[{index}]"
        if not isinstance(prompt, dict) or not isinstance(prompt.get("name"), str) or not prompt["name"].strip():
            _fail(f"{where}: each prompt has a `name`.")
        if problem := prompt_name_problem(prompt["name"]):
            _fail(f"{where}: name: {problem}")
        if prompt["name"] in names:
            _fail(f'{where}: the name "{prompt["name"]}" appears twice.')
        names.add(prompt["name"])
        versions = prompt.get("versions")
        if not isinstance(versions, list) or not versions:
            _fail(f"{where} ({prompt['name']}): a prompt has a list of `versions`, at least one.")
        numbers = []
        for version in versions:
            if not isinstance(version, dict) or set(version) - set(VERSION_KEYS):
                _fail(f"{where} ({prompt['name']}): a version has only {', '.join(VERSION_KEYS)}.")
            number = version.get("number")
            if not isinstance(number, int) or isinstance(number, bool) or number < 1:
                _fail(f"{where} ({prompt['name']}): each version has a `number` from 1.")
            if "messages" in version:
                _check_messages(f"{where} ({prompt['name']}) v{number}", version)
            elif not isinstance(version.get("text"), str) or not version["text"].strip():
                _fail(f"{where} ({prompt['name']}) v{number}: `text` is the prompt's text.")
            for key in ("system_prompt", "author", "message"):
                if not isinstance(version.get(key, ""), str):
                    _fail(f"{where} ({prompt['name']}) v{number}: `{key}` is text.")
            if len(version.get("author") or "") > MAX_AUTHOR:
                _fail(f"{where} ({prompt['name']}) v{number}: `author` has at most {MAX_AUTHOR} characters.")
            if not isinstance(version.get("variables") or {}, dict):
                _fail(f"{where} ({prompt['name']}) v{number}: `variables` is an object of name → value.")
            numbers.append(number)
        if numbers != sorted(set(numbers)):
            _fail(f"{where} ({prompt['name']}): version numbers are unique and in increasing order.")
        if prompt.get("current") is not None and prompt["current"] not in numbers:
            _fail(f"{where} ({prompt['name']}): `current` names one of its version numbers.")


def _check_messages(where: str, version: dict) -> None:
    """A version's `messages`; its `text`, when given, must be their last user message (as export writes it)."""
    messages = version["messages"]
    if problems := message_problems(messages):
        _fail(f"{where}: messages: {'; '.join(problems)}.")
    if not last_user_text(messages).strip():
        _fail(f"{where}: messages: the last user message is empty.")
    if "text" in version and version["text"] != last_user_text(messages):
        _fail(f"{where}: `text` is the last user message's content; leave it out or make them the same.")


@transaction.atomic
def library_import(*, workspace: Workspace, user, text: str) -> list[Prompt]:
    """Add the file's prompts to the workspace (none may share a name with one it has); all or nothing."""
    prompts = _read(text)
    _check(prompts)
    names = [p["name"] for p in prompts]
    taken = set(Prompt.objects.filter(workspace=workspace, name__in=names).values_list("name", flat=True))
    if taken:
        _fail(f"This workspace already has prompts named {', '.join(sorted(taken))}; rename them in the file.")
    # An author who is a member here is linked; any other name is kept as text.
    members = {m.user.username: m.user for m in workspace.memberships.select_related("user")}
    created: dict[tuple[str, int], PromptVersion] = {}
    saved = []
    for data in prompts:
        prompt = Prompt.objects.create(workspace=workspace, name=data["name"], created_by=user)
        for version in data["versions"]:
            messages = cleaned(version["messages"]) if "messages" in version else one_user_message(version["text"])
            created[(prompt.name, version["number"])] = PromptVersion.objects.create(
                prompt=prompt,
                number=version["number"],
                text=last_user_text(messages),
                messages=messages,
                system_prompt=version.get("system_prompt") or "",
                variables=version.get("variables") or {},
                author=members.get(version.get("author") or ""),
                author_name=version.get("author") or "",
                message=version.get("message") or "",
            )
        if data.get("current") is not None:
            prompt.current = created[(prompt.name, data["current"])]
            prompt.save(update_fields=["current"])
        saved.append(prompt)
    for data in prompts:
        for version in data["versions"]:
            _link_parent(created, data["name"], version)
    return saved


def _link_parent(created: dict[tuple[str, int], PromptVersion], name: str, version: dict) -> None:
    parent = version.get("parent")
    if parent is None:
        return
    key = (parent.get("prompt"), parent.get("number")) if isinstance(parent, dict) else None
    if key not in created:
        _fail(f"{name} v{version['number']}: parent {parent!r} is not a version in this file.")
    child = created[(name, version["number"])]
    if created[key].pk == child.pk:
        _fail(f"{name} v{version['number']}: a version cannot be its own parent.")
    child.parent = created[key]
    child.save(update_fields=["parent"])
