"""Where an experiment's problems go on the build form: each message of the file's checks (`<source>: <entry>:
<field>: <what>`) is put at the form field that wrote that part of the file, so the page shows every problem once,
beside what to change. Only a problem no field wrote (none so far but a whole section's) stays in the list above."""

from __future__ import annotations

import re

from django import forms

# `prompts[2] (ask): prompt: …`, `evaluation: type: …`, `timeout: …`
MESSAGE = re.compile(r"(?P<section>[a-z-]+)(?:\[(?P<index>\d+)\])?(?: \([^)]*\))?(?:: (?P<rest>.*))?", re.DOTALL)
# A section of the file → the build form's field that writes it.
SECTION_FIELDS = {
    "name": "name",
    "description": "description",
    "models": "models",
    "system-prompt": "system_prompt",
    "variables": "variables",
    "dataset": "rows",
    "datasets": "rows",
    "structured-output": "schema",
    "combinations": "combinations",
    "tools": "tools",
    "tool-choice": "tool_choice",
    "assertions": "assertions",
    "assert": "assertions",
    "timeout": "timeout",
    "cache": "cache",
}
# An evaluation problem's first word → the field that writes it; any other goes to the type.
EVALUATION_FIELDS = {
    "type": "evaluation_type",
    "model": "judge",
    "family": "family",
    "prompt": "evaluator_prompt",
    "criteria": "criteria",
    "target and non-target": "target",
    "target": "target",
    "non-target": "non_target",
    "categories": "categories",
    "uncertainty": "uncertainty",
    "input-columns": "input_columns",
    "include-reasoning": "include_reasoning",
    "include-score": "include_score",
}


def errors_placed(
    messages: list[str],
    *,
    source: str,
    build: forms.Form,
    params: list[forms.Form],
    prompts: list[forms.Form],
    sections: dict[str, forms.BaseFormSet],
) -> list[str]:
    """Add each message to the field it is about (`params`, `prompts`: the forms in the file's order; `sections`:
    the formset of `model-parameters` and of `prompts`, whose first row takes a problem of the whole section);
    returns the messages that belong to no field."""
    unplaced = []
    for message in messages:
        if not _place(message, source, build, params, prompts, sections):
            unplaced.append(message)
    return unplaced


def _place(message: str, source: str, build, params, prompts, sections) -> bool:
    prefix = f"{source}: "
    if not message.startswith(prefix):
        return False
    shown = message[len(prefix) :]
    found = MESSAGE.fullmatch(shown)
    if found is None:
        return False
    section, index, rest = found["section"], found["index"], found["rest"] or ""
    entries = {"model-parameters": params, "prompts": prompts}.get(section)
    if entries is not None and index is None and sections.get(section) is not None and sections[section].forms:
        sections[section].forms[0].add_error(None, shown)  # the section as a whole: "at least one entry"
        return True
    if entries is not None:
        if index is None or not 1 <= int(index) <= len(entries):
            return False
        form = entries[int(index) - 1]
        key = rest.split(":", 1)[0].strip()
        form.add_error(key if key in form.fields else None, shown)
        return True
    if section == "evaluation":
        key = next((k for k in EVALUATION_FIELDS if rest.startswith(f"{k}:")), "type")
        build.add_error(EVALUATION_FIELDS[key], shown)
        return True
    field = SECTION_FIELDS.get(section)
    if section == "tools" and rest.startswith(("tool_choice", "tool-choice")):
        field = "tool_choice"  # the file checks tools and their choice together, under `tools`
    if section == "structured-output" and rest.startswith("mode:"):
        field = "output_mode"
    if section == "models" and index is not None and int(index) > len(build.data.getlist("models")):
        field = "other_models"  # the checked models come first in the file, then the ids written out
    if field == "rows" and build.cleaned_data.get("dataset") is not None:
        field = "dataset"
    if field is None:
        return False
    build.add_error(field, shown)
    return True
