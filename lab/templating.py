"""Prompt templating: `{{name}}`, `{{name|json}}` and `{{name|yaml}}` filled in one pass, nothing else.

User text is never handed to a template engine or `str.format`: one regular expression finds the placeholders
and each is replaced by its value, inserted literally (a value containing `{{x}}` stays `{{x}}`). There is no
attribute access, no code and no other filter, so `{{x.__class__}}` or `{% if %}` are sent as written, with a
warning. The preview endpoint and the worker call the same `render_variants`. `{{name|json_line}}` is JSON on one
line (strings quoted); experiment files' `<<name:format>>` placeholders are rewritten into these forms on reading.

A variant renders as a conversation: the group's system prompt, then the group's shared messages, then its own
messages (`prompt` alone being one user message), each refusal naming the variant and the message; with a target,
its provider's rules too (lab.providers.message_rules). docs/messages.md explains them. A plain `{{name}}` whose
value is a file reference (`{"$file": id}`) becomes an image part at its place in a user message (docs/images.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import yaml

from lab.files.references import file_id_of
from lab.providers.message_rules import ROLES, Target, estimate_input_tokens, target_problems

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\|\s*(json_line|json|yaml)\s*)?\}\}")
# Anything that looks like a placeholder but is not one of the three forms above.
LOOKALIKE = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.DOTALL)


@dataclass(frozen=True)
class Rendered:
    text: str  # an image stands as `[image: name]`
    used: frozenset[str]  # every variable the template names, found or not
    missing: tuple[str, ...]  # in order of first appearance
    # When a `{{name}}` holds a file (`{"$file": id}`): the content as parts, text and images in place.
    parts: tuple[dict[str, Any], ...] | None = None
    images: tuple[str, ...] = ()  # the variables placed as images

    @property
    def content(self) -> str | list[dict[str, Any]]:
        """A message's content: the text, or its parts when it holds an image."""
        return list(self.parts) if self.parts is not None else self.text


@dataclass
class VariantTemplate:
    """What a variant contributes to rendering; `label` and `position` only serve the messages.

    `messages` are the variant's own messages ([{role, content}], content a template); when empty, `prompt` is
    its one user message (the shorthand). `target`, when known, adds the rules of the provider the conversation
    goes to (alternation, prefill, context: lab.providers.message_rules).
    """

    position: int
    label: str
    prompt: str
    variables: Mapping[str, Any] = field(default_factory=dict)
    messages: Sequence[Mapping[str, Any]] = ()
    target: Target | None = None

    def own_messages(self) -> list[Mapping[str, Any]]:
        return list(self.messages) if self.messages else [{"role": "user", "content": self.prompt}]


@dataclass
class RenderedVariant:
    position: int
    label: str
    system_prompt: str
    prompt: str  # the last user message, rendered
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    used: frozenset[str] = frozenset()
    # The list to send, rendered: [{role, content}], the system prompt first when there is one.
    messages: list[dict[str, Any]] = field(default_factory=list)

    @property
    def input_tokens(self) -> int:
        """About how many tokens the whole conversation is (the estimate the context check uses)."""
        return estimate_input_tokens(self.messages)


@dataclass
class RenderedGroup:
    variants: list[RenderedVariant]
    warnings: list[str]  # about the group as a whole (variables used unevenly, unused shared variables)

    @property
    def errors(self) -> list[str]:
        return [error for variant in self.variants for error in variant.errors]


def format_value(value: Any, filter_name: str | None = None) -> str:
    """A value as prompt text: strings as they are, structured values as JSON unless a filter says otherwise."""
    if filter_name == "yaml":
        dumped = yaml.safe_dump(value, allow_unicode=True, sort_keys=False, default_flow_style=False)
        # safe_dump ends a bare scalar with a document-end marker that means nothing in a prompt.
        return dumped.removesuffix("\n...\n").rstrip("\n")
    if filter_name == "json":
        return json.dumps(value, ensure_ascii=False, indent=2)
    if filter_name == "json_line":
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


# Experiment files (the layout of common CLI experiment tools) write `<<name>>` and `<<name:format>>` (Toor's
# newer docs `{{name:format}}`); they are rewritten once, when the file is read, into the placeholders above, so
# prompts are rendered by `render` alone.
ANGLE_PLACEHOLDER = re.compile(r"<<\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?::\s*([^<>\s]*)\s*)?>>")
BRACE_FORMAT_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*([^{}\s]*)\s*\}\}")
ANGLE_FORMATS = {"string": "", "json": "json_line", "json-pretty": "json", "yaml": "yaml", "yml": "yaml"}


def from_angle_placeholders(template: str) -> tuple[str, list[str]]:
    """`<<name>>` → `{{name}}`, `<<name:json>>` → `{{name|json_line}}`, `<<name:json-pretty>>` → `{{name|json}}`,
    `<<name:yaml>>` → `{{name|yaml}}`, and the same formats as `{{name:yaml}}`; also returns each placeholder
    with an unknown format, which stays as written.
    """
    unknown: list[str] = []

    def rewrite(match: re.Match) -> str:
        name, fmt = match.group(1), (match.group(2) or "string").lower()
        if fmt not in ANGLE_FORMATS:
            unknown.append(match.group(0))
            return match.group(0)
        return f"{{{{{name}|{ANGLE_FORMATS[fmt]}}}}}" if ANGLE_FORMATS[fmt] else f"{{{{{name}}}}}"

    rewritten = BRACE_FORMAT_PLACEHOLDER.sub(rewrite, ANGLE_PLACEHOLDER.sub(rewrite, template))
    return rewritten, list(dict.fromkeys(unknown))


def placeholders(template: str) -> list[str]:
    """The variable names a template uses, in order of first appearance."""
    return list(_placeholders(template))


def missing_names(template: str, variables: Mapping[str, Any]) -> tuple[str, ...]:
    """The names `render(template, variables)` would report missing, in the same order, without rendering: checking
    a thousand rows' values this way is a set lookup a placeholder, not a rendering of every row."""
    return tuple(name for name in _placeholders(template) if name not in variables)


# A run renders the same few templates with every row's variables, several times over (checked when the file is
# read, when its comparison and its rounds are made, then sent): what a template holds is read once. Bounded, as
# a template may be long (128 of 100 KB each would hold about 13 MB a cache).
@lru_cache(maxsize=128)
def _placeholders(template: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(match.group(1) for match in PLACEHOLDER.finditer(template)))


@lru_cache(maxsize=128)
def _used(template: str) -> frozenset[str]:
    return frozenset(_placeholders(template))


@lru_cache(maxsize=128)
def _lookalikes(template: str) -> tuple[str, ...]:
    """Brace constructs that are not placeholders and will be sent as written."""
    stripped = PLACEHOLDER.sub("", template)
    return tuple(dict.fromkeys(match.group(0) for match in LOOKALIKE.finditer(stripped)))


def render(template: str, variables: Mapping[str, Any]) -> Rendered:
    """Fill every placeholder in one pass; a missing one is left as written and reported. A plain `{{name}}` whose
    value is a file reference becomes an image part at its place (the result has `parts`)."""
    if any(file_id_of(value) is not None for value in variables.values()):
        return _render_parts(template, variables)
    missing: list[str] = []

    def replace(match: re.Match) -> str:
        name, filter_name = match.group(1), match.group(2)
        if name not in variables:
            if name not in missing:
                missing.append(name)
            return match.group(0)
        return format_value(variables[name], filter_name)

    text = PLACEHOLDER.sub(replace, template)
    return Rendered(text=text, used=_used(template), missing=tuple(missing))


def _render_parts(template: str, variables: Mapping[str, Any]) -> Rendered:
    missing: list[str] = []
    images: list[str] = []
    segments: list[str | dict[str, Any]] = []
    last = 0
    for match in PLACEHOLDER.finditer(template):
        segments.append(template[last : match.start()])
        last = match.end()
        name, filter_name = match.group(1), match.group(2)
        if name not in variables:
            missing += [name] if name not in missing else []
            segments.append(match.group(0))
        elif filter_name is None and (file_id := file_id_of(variables[name])) is not None:
            segments.append({"type": "image", "file": file_id, "variable": name})
            images.append(name)
        else:
            segments.append(format_value(variables[name], filter_name))
    segments.append(template[last:])
    text = "".join(s if isinstance(s, str) else f"[image: {s['variable']}]" for s in segments)
    parts: list[dict[str, Any]] = []
    for segment in segments:
        if isinstance(segment, dict):
            parts.append(segment)
        elif segment and parts and parts[-1]["type"] == "text":
            parts[-1] = {"type": "text", "text": parts[-1]["text"] + segment}
        elif segment:
            parts.append({"type": "text", "text": segment})
    used = _used(template)
    return Rendered(
        text=text, used=used, missing=tuple(missing), parts=tuple(parts) if images else None, images=tuple(images)
    )


def variant_name(position: int, label: str) -> str:
    return f"Variant {position} ({label})" if label else f"Variant {position}"


def render_variants(
    *,
    system_prompt: str,
    variables: Mapping[str, Any],
    variants: Sequence[VariantTemplate],
    shared_messages: Sequence[Mapping[str, Any]] = (),
) -> RenderedGroup:
    """Render each variant's conversation with `variables`, then the variant's overrides: the system prompt, then
    the shared messages, then the variant's own messages."""
    rendered = [_render_variant(system_prompt, shared_messages, variables, variant) for variant in variants]
    return RenderedGroup(variants=rendered, warnings=_group_warnings(variables, rendered))


def message_problem(message: Any) -> str | None:
    """Why one message (as given, not rendered) is not a message: the shape rule the API's fields share."""
    if not isinstance(message, Mapping):
        return "give an object with a role and a content."
    role = message.get("role")
    if role not in ROLES:
        return f"unknown role {role!r}; a role is one of {', '.join(ROLES)}."
    if not isinstance(message.get("content"), str):
        return "content: give the message's text."
    if not message["content"].strip():
        return "content is empty; write it or remove the message."
    return None


def _render_variant(
    system_prompt: str,
    shared_messages: Sequence[Mapping[str, Any]],
    variables: Mapping[str, Any],
    variant: VariantTemplate,
) -> RenderedVariant:
    merged = {**variables, **variant.variables}
    name = variant_name(variant.position, variant.label)
    own = variant.own_messages()
    # Where each template comes from, for the messages: the shorthand's one prompt is named as before (no index).
    sources: list[tuple[str, Mapping[str, Any]]] = [
        (f" shared message {i}", m) for i, m in enumerate(shared_messages, 1)
    ]
    if len(own) == 1 and not shared_messages:
        sources.append(("", own[0]))
    else:
        sources += [(f" message {i}", m) for i, m in enumerate(own, 1)]
    system = render(system_prompt, merged)
    result = RenderedVariant(
        position=variant.position, label=variant.label, system_prompt=system.text, prompt="", used=system.used
    )
    names: list[str] = []
    texts: list[str] = []  # each message's text (an image as `[image: name]`), for `prompt`
    if system.text:
        result.messages.append({"role": "system", "content": system.text})
        names.append(f"{name} system prompt")
        texts.append(system.text)
    system_where = "" if len(sources) == 1 and not sources[0][0] else " system prompt"
    for image in system.images:
        result.errors.append(f"{name} system prompt: {{{{{image}}}}} holds an image; an image goes in a user message.")
    missing = [(system_where, each) for each in system.missing]
    templates = [system_prompt]
    for where, message in sources:
        label = f"{name}{where}" if where else name
        # The shorthand's prompt is a user message by construction; an empty one is the caller's "write a prompt".
        if where and (problem := message_problem(message)):
            result.errors.append(f"{label}: {problem}")
            continue
        if message["role"] == "system" and (result.messages or names):
            result.errors.append(
                f"{label}: a system message comes only first"
                f"{' (the group has a system prompt)' if system.text else ''}; make it a user message or move it."
            )
            continue
        text = render(message["content"], merged)
        templates.append(message["content"])
        result.used |= text.used
        missing += [(where, each) for each in text.missing]
        if text.images and message["role"] != "user":
            image, role = text.images[0], message["role"]
            result.errors.append(
                f"{label}: {{{{{image}}}}} holds an image; an image goes in a user message, not {role}."
            )
        result.messages.append({"role": message["role"], "content": text.content})
        texts.append(text.text)
        names.append(label)
        if message["role"] == "system":
            result.system_prompt = text.text
    users = [text for m, text in zip(result.messages, texts, strict=True) if m["role"] == "user"]
    result.prompt = users[-1] if users else ""
    if not users and not result.errors:
        result.errors.append(f"{name}: messages: give at least one user message.")
    for where, each in dict.fromkeys(missing):
        result.errors.append(
            f"{name}{where} uses {{{{{each}}}}}, which has no value: set it in the shared variables or this variant's."
        )
    if variant.target is not None and not result.errors:
        errors, warnings = target_problems(result.messages, names, variant.target, variant=name)
        result.errors += errors
        result.warnings += warnings
    for odd in dict.fromkeys(odd for template in templates for odd in _lookalikes(template)):
        result.warnings.append(
            f"{name}: {odd} is not a placeholder ({{{{name}}}}, {{{{name|json}}}} or {{{{name|yaml}}}}) "
            "and is sent as written."
        )
    for name_unused in sorted(set(variant.variables) - result.used):
        result.warnings.append(f"{name}: its variable {name_unused!r} is not used by its prompt.")
    return result


def _group_warnings(variables: Mapping[str, Any], rendered: list[RenderedVariant]) -> list[str]:
    if len(rendered) < 2:
        return []
    warnings = []
    every_name = sorted(set().union(*(variant.used for variant in rendered)))
    for name in every_name:
        without = [variant_name(v.position, v.label) for v in rendered if name not in v.used]
        if without:
            warnings.append(f"{{{{{name}}}}} is used by some variants but not by {', '.join(without)}.")
    for name in sorted(set(variables) - set(every_name)):
        warnings.append(f"The shared variable {name!r} is not used by any variant.")
    return warnings
