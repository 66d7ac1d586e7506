"""Structured output: read an answer as JSON (or YAML), check it against the file's schema, show it to the judge.

The schema is not sent to the provider (answers stream as plain chat completions), so the prompt must ask for the
format; every answer is checked here and its validity recorded, with the schema's complaints.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import yaml

from lab import safe_yaml

if TYPE_CHECKING:
    import jsonschema

MAX_ERRORS = 5
# A reply wrapped in a Markdown code fence, as chat models often write it.
FENCE = re.compile(r"^\s*```[A-Za-z]*\s*\n(.*?)\n\s*```\s*$", re.DOTALL)


@dataclass(frozen=True)
class Checked:
    valid: bool
    errors: list[str] = field(default_factory=list)
    shown: str = ""  # what the evaluator sees: the value in the file's format when it could be read, else the text


def answer_check(text: str, *, schema: dict[str, Any], format: str) -> Checked:
    value, problem = _read(text)
    if problem:
        return Checked(valid=False, errors=[problem], shown=text)
    from jsonschema.validators import validator_for  # here, not at start-up (lab.providers.tools._validator)

    validator = validator_for(schema)(schema)
    errors = sorted(validator.iter_errors(value), key=lambda error: list(error.absolute_path))
    messages = [f"{_path(error)}: {error.message}" for error in errors[:MAX_ERRORS]]
    if len(errors) > MAX_ERRORS:
        messages.append(f"… and {len(errors) - MAX_ERRORS} more")
    return Checked(valid=not errors, errors=messages, shown=shown_as(value, format))


def shown_as(value: Any, format: str) -> str:
    if format == "yaml":
        return yaml.safe_dump(value, allow_unicode=True, sort_keys=False, default_flow_style=False).strip()
    return json.dumps(value, ensure_ascii=False, indent=2)


def _read(text: str) -> tuple[Any, str]:
    stripped = text.strip()
    fenced = FENCE.match(stripped)
    if fenced:
        stripped = fenced.group(1).strip()
    if not stripped:
        return None, "The answer is empty."
    try:
        return json.loads(stripped), ""
    except ValueError:
        pass
    try:
        return safe_yaml.load(stripped), ""
    except safe_yaml.AliasError:
        return None, f"The answer is YAML whose {safe_yaml.ALIAS_REFUSED}."
    except yaml.YAMLError:
        return None, "The answer is neither JSON nor YAML."


def _path(error: jsonschema.ValidationError) -> str:
    return "/".join(str(part) for part in error.absolute_path) or "(the answer)"
