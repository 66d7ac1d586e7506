"""Tools and native structured output: what the lab accepts, how each wire format writes them, and how an answer's
tool calls and JSON are checked. Nothing is ever executed: a call is recorded with whether its arguments are valid.

Tools arrive in OpenAI's function format (`{"type": "function", "function": {"name", "description",
"parameters"}}`) with a `tool_choice` of `auto`, `none`, `required` or one tool's name; a `response_schema` is
`{"name", "schema", "strict", "mode"}` where `mode` "native" (the default) sends it and "validate" only checks the
answer against it. Validation (`tools_errors`, `response_schema_errors`) is shared by the API and experiment files;
the converters are used by the adapters only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

# Providers' common name rule (OpenAI, Anthropic and Gemini all take it): letters, digits, _ and -, up to 64.
TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
MAX_TOOLS = 64
# A schema nested deeper than this is refused before jsonschema walks it (a deep one would exhaust its recursion).
MAX_SCHEMA_DEPTH = 32
TOOL_CHOICES = ("auto", "none", "required")
SCHEMA_MODES = ("native", "validate")


def schema_depth(value: Any, limit: int = MAX_SCHEMA_DEPTH) -> int:
    """How deeply a JSON value nests, counted without recursion and giving up just past `limit`."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return deepest


TOO_DEEP = f"its schema nests deeper than {MAX_SCHEMA_DEPTH} levels."
_INDEX = re.compile(r"\[\d+\]")


def is_body_schema(path: list[str]) -> bool:
    """Whether `path` (lab.values' keys and [indexes]) is a JSON Schema a group's request body carries: a tool's
    `tools[i].function.parameters` or a `response_schema.schema`, of the group or of one of its `variants[j]`.
    The API's parser counts their depth apart, so its limit is the one `schema_error` applies (MAX_SCHEMA_DEPTH)."""
    if len(path) >= 2 and path[0] == "variants" and _INDEX.fullmatch(path[1]):
        path = path[2:]
    if len(path) == 4 and path[0] == "tools" and _INDEX.fullmatch(path[1]):
        return path[2:] == ["function", "parameters"]
    return path == ["response_schema", "schema"]


def body_schema_too_deep(path: list[str], owner_name: Callable[[list[str]], Any]) -> str | None:
    """`Tool NAME: its schema nests deeper than 32 levels.` (or `response_schema NAME: …`) when `path`, where the
    API's parser found a body nested too deep, lies inside a schema `is_body_schema` names; None elsewhere.
    `owner_name(prefix)` is the `name` of the object at `prefix` (the tool's `function`, or the response_schema),
    None when unknown; a name that is not a valid one (it is checked later) is not echoed: the position stands in."""
    for end in range(2, min(len(path), 6) + 1):
        if not is_body_schema(path[:end]):
            continue
        name = owner_name(path[: end - 1])
        shown = name if isinstance(name, str) and TOOL_NAME.match(name) else None
        if path[end - 1] == "parameters":
            return f"Tool {shown or int(path[end - 3][1:-1]) + 1}: {TOO_DEEP}"
        return f"response_schema {shown or 'response'}: {TOO_DEEP}"
    return None


def schema_error(schema: Any) -> str:
    """Why a JSON Schema is unusable, or "" when it is a valid, reasonably shallow one."""
    if not isinstance(schema, dict):
        return "its schema must be a JSON object."
    if schema_depth(schema) > MAX_SCHEMA_DEPTH:
        return TOO_DEEP
    from jsonschema import Draft202012Validator  # here, not at start-up (see `_validator`)
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return f"its schema is not a valid JSON Schema: {exc.message}"
    return ""


def tools_errors(tools: Any, tool_choice: Any) -> list[str]:
    """What is wrong with a list of tools and a tool choice, each message naming the tool; [] when nothing."""
    if tools in (None, []):
        return [] if tool_choice in (None, "") else ["tool_choice needs tools."]
    if not isinstance(tools, list):
        return ["tools must be a list of tools."]
    if len(tools) > MAX_TOOLS:
        return [f"At most {MAX_TOOLS} tools."]
    errors, names = [], []
    for position, tool in enumerate(tools, 1):
        function = tool.get("function") if isinstance(tool, dict) and tool.get("type") == "function" else None
        if not isinstance(function, dict):
            errors.append(f'Tool {position} must be {{"type": "function", "function": {{"name", "parameters"}}}}.')
            continue
        name = function.get("name")
        if not isinstance(name, str) or not TOOL_NAME.match(name):
            errors.append(f"Tool {position} ({name!r}): a name is letters, digits, _ and - (at most 64).")
            continue
        if name in names:
            errors.append(f"Tool {name}: another tool has this name.")
        names.append(name)
        if not isinstance(function.get("description", ""), str):
            errors.append(f"Tool {name}: its description must be text.")
        if problem := schema_error(function.get("parameters", {"type": "object"})):
            errors.append(f"Tool {name}: {problem}")
    if tool_choice not in (None, "", *TOOL_CHOICES) and tool_choice not in names:
        errors.append(f"tool_choice {tool_choice!r} is none of auto, none, required or a tool's name.")
    return errors


def response_schema_errors(response_schema: Any) -> list[str]:
    """What is wrong with a response schema `{"name", "schema", "strict", "mode"}`; [] when nothing."""
    if response_schema in (None, {}):
        return []
    if not isinstance(response_schema, dict) or not isinstance(response_schema.get("schema"), dict):
        return ['response_schema is {"name", "schema", "strict"} with the JSON Schema in "schema".']
    name = response_schema.get("name", "response")
    errors = []
    if not isinstance(name, str) or not TOOL_NAME.match(name):
        errors.append(f"response_schema name {name!r}: letters, digits, _ and - (at most 64).")
    if response_schema.get("mode", "native") not in SCHEMA_MODES:
        errors.append('response_schema mode is "native" (sent to the model) or "validate" (only checked).')
    if problem := schema_error(response_schema["schema"]):
        errors.append(f"response_schema {name}: {problem}")
    return errors


def sent_schema(response_schema: dict | None) -> dict | None:
    """The response schema to send natively: None when there is none or it is only validated."""
    if not response_schema or response_schema.get("mode", "native") == "validate":
        return None
    return {
        "name": response_schema.get("name") or "response",
        "schema": response_schema["schema"],
        "strict": bool(response_schema.get("strict", False)),
    }


def call_arguments(text: str) -> Any:
    """A stored call's arguments as the object Anthropic's `tool_use.input` and Gemini's `functionCall.args` want
    back in a conversation; arguments that were not JSON go inside one, as `{"arguments": text}`."""
    try:
        return json.loads(text) if text else {}
    except ValueError:
        return {"arguments": text}


def function_of(tool: dict) -> dict:
    return tool["function"]


# --- Wire formats


def openai_tool_choice(tool_choice: str | None) -> Any:
    if tool_choice in (None, ""):
        return None
    if tool_choice in TOOL_CHOICES:
        return tool_choice
    return {"type": "function", "function": {"name": tool_choice}}


def _declarations(tools: list[dict], schema_key: str) -> list[dict[str, Any]]:
    """Each tool as Anthropic and Gemini declare one: its name, its description when it has one, and its schema
    under `schema_key` (an object taking anything when it has none)."""
    return [
        {
            "name": function_of(t)["name"],
            **({"description": function_of(t)["description"]} if function_of(t).get("description") else {}),
            schema_key: function_of(t).get("parameters") or {"type": "object"},
        }
        for t in tools
    ]


def anthropic_tools(tools: list[dict], tool_choice: str | None) -> dict[str, Any]:
    """`tools` with `input_schema` and `tool_choice` {"type": auto|any|tool|none}, as Messages takes them."""
    body: dict[str, Any] = {"tools": _declarations(tools, "input_schema")}
    if tool_choice == "auto":
        body["tool_choice"] = {"type": "auto"}
    elif tool_choice == "required":
        body["tool_choice"] = {"type": "any"}
    elif tool_choice == "none":
        body["tool_choice"] = {"type": "none"}
    elif tool_choice:
        body["tool_choice"] = {"type": "tool", "name": tool_choice}
    return body


def gemini_tools(tools: list[dict], tool_choice: str | None) -> dict[str, Any]:
    """`tools: [{"functionDeclarations"}]` and `toolConfig.functionCallingConfig` (AUTO, ANY, NONE)."""
    body: dict[str, Any] = {"tools": [{"functionDeclarations": _declarations(tools, "parameters")}]}
    if tool_choice in (None, ""):
        return body
    modes = {"auto": "AUTO", "required": "ANY", "none": "NONE"}
    config: dict[str, Any] = {"mode": modes.get(tool_choice, "ANY")}
    if tool_choice not in modes:
        config["allowedFunctionNames"] = [tool_choice]
    body["toolConfig"] = {"functionCallingConfig": config}
    return body


# --- Checking an answer


def checked_calls(calls: list[dict], tools: list[dict] | None) -> list[dict]:
    """Each call as stored: `{"id", "name", "arguments", "valid", "error"}`, `valid` when its arguments parse as JSON
    and validate against its tool's schema (the error says why not)."""
    schemas = {function_of(t)["name"]: function_of(t).get("parameters") or {} for t in tools or []}
    checked = []
    for call in calls:
        arguments = call.get("arguments") or ""
        error = ""
        if call.get("name") not in schemas:
            error = f"No tool is named {call.get('name')!r}."
        else:
            error = json_error(arguments, schemas[call["name"]])
        checked.append(
            {"id": call.get("id") or "", "name": call.get("name") or "", "arguments": arguments}
            | {"valid": not error, "error": error}
        )
    return checked


def json_error(text: str, schema: dict) -> str:
    """Why a text is not JSON valid against the schema, or "" when it is."""
    try:
        value = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        return f"Not JSON: {exc}."
    try:
        errors = sorted(_validator(schema).iter_errors(value), key=lambda e: list(e.path))
    except Exception as exc:  # noqa: BLE001 — an unresolvable $ref and the like: say so, never fail the round
        return f"The schema could not be applied: {exc}."
    error = errors[0] if errors else None
    if error is None:
        return ""
    where = "/".join(str(part) for part in error.absolute_path)
    return f"{error.message}" + (f" (at {where})" if where else "")


def schema_valid(text: str, response_schema: dict | None) -> bool | None:
    """Whether an answer is JSON valid against the response schema; None when there is no schema."""
    if not response_schema:
        return None
    return not json_error(_unfenced(text), response_schema["schema"])


def _unfenced(text: str) -> str:
    """An answer's JSON without a ```json fence around it (models add one when the schema is only validated)."""
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[-1].rsplit("```", 1)[0]
    return stripped or '""'


def _validator(schema: dict):
    # jsonschema is imported where a schema is checked, not at start-up: importing it cost every process (the
    # experiment command among them) about 30 ms before its first call, and most runs check no schema.
    from jsonschema import Draft202012Validator

    return Draft202012Validator(schema)
