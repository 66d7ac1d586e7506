"""Prompt templating: `{{name}}`, `{{name|json}}` and `{{name|yaml}}` filled in one pass, nothing else.

User text is never handed to a template engine or `str.format`: one regular expression finds the placeholders
and each is replaced by its value, inserted literally (a value containing `{{x}}` stays `{{x}}`). There is no
attribute access, no code and no other filter, so `{{x.__class__}}` or `{% if %}` are sent as written, with a
warning. The preview endpoint and the worker call the same `render_variants`. `{{name|json_line}}` is JSON on one
line (strings quoted); experiment files' `<<name:format>>` placeholders are rewritten into these forms on reading.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\|\s*(json_line|json|yaml)\s*)?\}\}")
# Anything that looks like a placeholder but is not one of the three forms above.
LOOKALIKE = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.DOTALL)


@dataclass(frozen=True)
class Rendered:
    text: str
    used: frozenset[str]  # every variable the template names, found or not
    missing: tuple[str, ...]  # in order of first appearance


@dataclass
class VariantTemplate:
    """What a variant contributes to rendering; `label` and `position` only serve the messages."""

    position: int
    label: str
    prompt: str
    variables: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class RenderedVariant:
    position: int
    label: str
    system_prompt: str
    prompt: str
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    used: frozenset[str] = frozenset()


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
    return list(dict.fromkeys(match.group(1) for match in PLACEHOLDER.finditer(template)))


def lookalikes(template: str) -> list[str]:
    """Brace constructs that are not placeholders and will be sent as written."""
    stripped = PLACEHOLDER.sub("", template)
    return list(dict.fromkeys(match.group(0) for match in LOOKALIKE.finditer(stripped)))


def render(template: str, variables: Mapping[str, Any]) -> Rendered:
    """Fill every placeholder in one pass; a missing one is left as written and reported."""
    missing: list[str] = []

    def replace(match: re.Match) -> str:
        name, filter_name = match.group(1), match.group(2)
        if name not in variables:
            if name not in missing:
                missing.append(name)
            return match.group(0)
        return format_value(variables[name], filter_name)

    text = PLACEHOLDER.sub(replace, template)
    return Rendered(text=text, used=frozenset(placeholders(template)), missing=tuple(missing))


def variant_name(position: int, label: str) -> str:
    return f"Variant {position} ({label})" if label else f"Variant {position}"


def render_variants(
    *,
    system_prompt: str,
    variables: Mapping[str, Any],
    variants: Sequence[VariantTemplate],
) -> RenderedGroup:
    """Render the system prompt and prompt of each variant with `variables`, then the variant's overrides."""
    rendered = [_render_variant(system_prompt, variables, variant) for variant in variants]
    return RenderedGroup(variants=rendered, warnings=_group_warnings(variables, rendered))


def _render_variant(system_prompt: str, variables: Mapping[str, Any], variant: VariantTemplate) -> RenderedVariant:
    merged = {**variables, **variant.variables}
    system = render(system_prompt, merged)
    prompt = render(variant.prompt, merged)
    name = variant_name(variant.position, variant.label)
    result = RenderedVariant(
        position=variant.position,
        label=variant.label,
        system_prompt=system.text,
        prompt=prompt.text,
        used=system.used | prompt.used,
    )
    for missing in dict.fromkeys((*system.missing, *prompt.missing)):
        result.errors.append(
            f"{name} uses {{{{{missing}}}}}, which has no value: set it in the shared variables or this variant's."
        )
    for odd in dict.fromkeys((*lookalikes(system_prompt), *lookalikes(variant.prompt))):
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
