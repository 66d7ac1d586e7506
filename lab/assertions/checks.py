"""The deterministic checks, one function per promptfoo type, each following promptfoo's handler for that type
(src/assertions/<type>.ts in github.com/promptfoo/promptfoo): the same comparison, case rule, `not-` handling,
score and reason. Each returns (pass, score, reason); an invariant promptfoo would throw raises CheckError, which
the grader turns into a failure with that reason, as promptfoo does.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import yaml

from lab import safe_yaml
from lab.assertions import overlap

if TYPE_CHECKING:
    from lab.assertions.facts import AnswerFacts
    from lab.assertions.spec import AssertionSpec

Result = tuple[bool, float, str]
PASSED = "Assertion passed"


class CheckError(Exception):
    """A promptfoo invariant failed for this answer (wrong value shape, no cost reported …)."""


def _binary(passed: bool, failure: str) -> Result:
    return passed, 1.0 if passed else 0.0, PASSED if passed else failure


def _js(value: Any) -> str:
    """A value as JavaScript's String() would print it inside a reason (numbers without a trailing .0)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _not(inverse: bool) -> str:
    return "not " if inverse else ""


def check_equals(spec: AssertionSpec, value: Any, facts: AnswerFacts) -> Result:
    # equals.ts: an object value deep-equals the output parsed as JSON; anything else compares as strings, exactly.
    if isinstance(value, dict | list):
        try:
            equal = json.loads(facts.output) == value
        except ValueError:
            equal = False
        shown = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    else:
        equal = _js(value) == facts.output
        shown = _js(value)
    passed = equal != spec.inverse
    return _binary(passed, f'Expected output "{facts.output}" to {_not(spec.inverse)}equal "{shown}"')


def _contains_value(spec: AssertionSpec, value: Any) -> str:
    if isinstance(value, bool) or not ((isinstance(value, str) and value) or isinstance(value, int | float)):
        raise CheckError(f'"{spec.base_type}" assertion type must have a string or number value')
    return _js(value)


def check_contains(spec: AssertionSpec, value: Any, facts: AnswerFacts) -> Result:
    needle = _contains_value(spec, value)
    passed = (needle in facts.output) != spec.inverse
    return _binary(passed, f'Expected output to {_not(spec.inverse)}contain "{needle}"')


def check_icontains(spec: AssertionSpec, value: Any, facts: AnswerFacts) -> Result:
    # JavaScript's toLowerCase, which is Python's lower() for every case that matters here.
    needle = _contains_value(spec, value)
    passed = (needle.lower() in facts.output.lower()) != spec.inverse
    return _binary(passed, f'Expected output to {_not(spec.inverse)}contain "{needle}"')


def comma_separated(value: str) -> list[str]:
    """promptfoo's parseCommaSeparatedValues: fields split on commas and trimmed; "quoted, fields" keep their
    commas (with \\" or "" for a quote inside); empty fields between repeated commas are dropped."""
    fields: list[str] = []
    i, length = 0, len(value)
    while i < length:
        while i < length and (value[i].isspace() or value[i] == ","):
            i += 1
        if i >= length:
            break
        if value[i] == '"':
            i += 1
            field, terminated = "", False
            while i < length:
                if value[i] == "\\" and i + 1 < length and value[i + 1] in '"\\':
                    field, i = field + value[i + 1], i + 2
                elif value[i] == '"' and i + 1 < length and value[i + 1] == '"':
                    field, i = field + '"', i + 2
                elif value[i] == '"':
                    i, terminated = i + 1, True
                    break
                else:
                    field, i = field + value[i], i + 1
            if not terminated:
                raise CheckError("Unterminated quoted field in contains assertion value")
            while i < length and value[i].isspace():
                i += 1
            if i < length and value[i] != ",":
                raise CheckError("Expected comma after quoted field in contains assertion value")
            fields.append(field)
        else:
            end = value.find(",", i)
            end = length if end == -1 else end
            fields.append(value[i:end].strip())
            i = end
    return fields


def _list_value(spec: AssertionSpec, value: Any) -> list[str]:
    if not value:
        raise CheckError(f'"{spec.base_type}" assertion type must have a value')
    if isinstance(value, str):
        value = comma_separated(value)
    if not isinstance(value, list):
        raise CheckError(f'"{spec.base_type}" assertion type must have an array value')
    return [_js(item) for item in value]


def _any_or_all(spec: AssertionSpec, value: Any, facts: AnswerFacts, *, fold: bool, every: bool) -> Result:
    items = _list_value(spec, value)
    output = facts.output.lower() if fold else facts.output
    missing = [item for item in items if (item.lower() if fold else item) not in output]
    found = not missing if every else len(missing) < len(items)
    passed = found != spec.inverse
    if every:
        failure = (
            f"Expected output to {_not(spec.inverse)}contain all of [{', '.join(items)}]. "
            f"Missing: [{', '.join(missing)}]"
        )
    else:
        failure = f'Expected output to {_not(spec.inverse)}contain one of "{", ".join(items)}"'
    return _binary(passed, failure)


def _string_value(spec: AssertionSpec, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise CheckError(f'"{spec.base_type}" assertion type must have a string value')
    return value


def check_starts_with(spec: AssertionSpec, value: Any, facts: AnswerFacts) -> Result:
    prefix = _string_value(spec, value)
    passed = facts.output.startswith(prefix) != spec.inverse
    return _binary(passed, f'Expected output to {_not(spec.inverse)}start with "{prefix}"')


def check_regex(spec: AssertionSpec, value: Any, facts: AnswerFacts) -> Result:
    # regex.ts: `new RegExp(value).test(output)`, no flags: a search anywhere, `^`/`$` at the ends of the text.
    pattern = _string_value(spec, value)
    try:
        compiled = re.compile(pattern)
    except re.error as error:
        return False, 0.0, f"Invalid regex pattern: {error}"
    passed = (compiled.search(facts.output) is not None) != spec.inverse
    return _binary(passed, f'Expected output to {_not(spec.inverse)}match regex "{pattern}"')


def _schema_validator(spec: AssertionSpec, value: Any):
    """json.ts getJsonSchemaValidator: a string value is read as YAML (JSON is YAML), then compiled (Ajv; here the
    jsonschema package, draft 7 unless the schema names another, Ajv's default)."""
    from jsonschema import exceptions, validators

    schema = safe_yaml.load(value) if isinstance(value, str) else value
    if not isinstance(schema, bool | dict):
        raise ValueError(f"{spec.base_type} assertion must have a string, boolean, or object value")
    cls = validators.validator_for(schema, default=validators.Draft7Validator) if isinstance(schema, dict) else None
    cls = cls or validators.Draft7Validator
    try:
        cls.check_schema(schema)
    except exceptions.SchemaError as error:
        raise ValueError(error.message) from error
    return cls(schema)


def _schema_errors(validator, instance: Any) -> str:
    return ", ".join(
        f"data{''.join(f'/{p}' for p in error.absolute_path)} {error.message}"
        for error in validator.iter_errors(instance)
    )


def _has_schema(value: Any) -> bool:
    return value is not None and value != ""


def check_is_json(spec: AssertionSpec, value: Any, facts: AnswerFacts) -> Result:
    failure = f"Expected output to {_not(spec.inverse)}be valid JSON"
    try:
        parsed = json.loads(facts.output)
    except ValueError:
        return _binary(spec.inverse, failure)
    if _has_schema(value):
        try:
            validator = _schema_validator(spec, value)
        except (ValueError, yaml.YAMLError) as error:
            return False, 0.0, f"Invalid JSON schema: {error}"
        valid = validator.is_valid(parsed)
        if valid == spec.inverse:
            reason = (
                "Output is JSON that conforms to the provided schema"
                if spec.inverse
                else f"JSON does not conform to the provided schema. Errors: {_schema_errors(validator, parsed)}"
            )
            return False, 0.0, reason
        return True, 1.0, PASSED
    return _binary(not spec.inverse, failure)


def extract_json_objects(text: str) -> list[Any]:
    """util/json.ts extractJsonObjects: from each `{`, the JSON object that starts there (the shortest prefix that
    parses), then on after it."""
    decoder = json.JSONDecoder()
    found, index = [], text.find("{")
    while index != -1:
        try:
            parsed, end = decoder.raw_decode(text, index)
        except ValueError:
            index = text.find("{", index + 1)
            continue
        found.append(parsed)
        index = text.find("{", end)
    return found


def check_contains_json(spec: AssertionSpec, value: Any, facts: AnswerFacts) -> Result:
    objects = extract_json_objects(facts.output)
    passed = (len(objects) == 0) if spec.inverse else (len(objects) > 0)
    failure = "Expected output to contain valid JSON"
    if objects and _has_schema(value):
        try:
            validator = _schema_validator(spec, value)
        except (ValueError, yaml.YAMLError) as error:
            return False, 0.0, f"Invalid JSON schema: {error}"
        for candidate in objects:
            valid = validator.is_valid(candidate)
            passed = not valid if spec.inverse else valid
            if valid:
                if spec.inverse:
                    failure = "Output contains JSON conforming to the provided schema"
                break
            failure = f"JSON does not conform to the provided schema. Errors: {_schema_errors(validator, candidate)}"
    return _binary(passed, failure)


NOT_TOOLS = "OpenAI did not return a valid-looking tools response: "


def check_openai_tools_call(spec: AssertionSpec, value: Any, facts: AnswerFacts) -> Result:
    """openai.ts handleIsValidOpenAiToolsCall: every call names one of the tools and its arguments (a JSON string)
    validate against that tool's parameters. An answer with text besides its calls fails, as promptfoo's provider
    then answers the whole message. promptfoo ignores `not-` here, and so does the lab."""
    calls = facts.tool_calls
    if calls and facts.output.strip():
        # promptfoo's OpenAI provider answers the whole message (not the calls) when it has text too, which this
        # check never takes for a tools response.
        message = {"role": "assistant", "content": facts.output, "tool_calls": calls}
        return False, 0.0, NOT_TOOLS + json.dumps(message, separators=(",", ":"))
    looks_valid = (
        isinstance(calls, list)
        and calls
        and isinstance(calls[0], dict)
        and isinstance(calls[0].get("function"), dict)
        and isinstance(calls[0]["function"].get("name"), str)
        and isinstance(calls[0]["function"].get("arguments"), str)
    )
    if not looks_valid:
        return (
            False,
            0.0,
            NOT_TOOLS + json.dumps(calls or None, separators=(",", ":")),
        )
    if not facts.tools:
        raise CheckError("Tools are expected to be an array of objects with a function property. Got: undefined")
    functions = {tool.get("function", {}).get("name"): tool.get("function", {}) for tool in facts.tools}
    from jsonschema import Draft7Validator

    for call in calls:
        name = call.get("function", {}).get("name")
        function = functions.get(name)
        if function is None:
            return False, 0.0, f'Called "{name}", but there is no function with that name'
        try:
            arguments = json.loads(call["function"].get("arguments") or "")
        except ValueError:
            return False, 0.0, f'Call to "{name}" has arguments that are not valid JSON'
        validator = Draft7Validator(function.get("parameters") or {})
        if not validator.is_valid(arguments):
            return (
                False,
                0.0,
                f'Call to "{name}" does not match schema: {_schema_errors(validator, arguments)}',
            )
    return True, 1.0, PASSED


def check_levenshtein(spec: AssertionSpec, value: Any, facts: AnswerFacts) -> Result:
    """levenshtein.ts: distance ≤ threshold (5 when unset). promptfoo's handler ignores `not-`; so does the lab."""
    from rapidfuzz.distance import Levenshtein

    if not isinstance(value, str):
        raise CheckError('"levenshtein" assertion type must have a string value')
    distance = Levenshtein.distance(facts.output, value)
    threshold = spec.threshold if spec.threshold is not None else 5
    return _binary(distance <= threshold, f"Levenshtein distance {distance} is greater than threshold {_js(threshold)}")


def check_rouge_n(spec: AssertionSpec, value: Any, facts: AnswerFacts) -> Result:
    """rouge.ts: ROUGE-1 F1 with clipped counts, case-insensitive (lab/assertions/overlap.py), threshold 0.75 when
    unset; `not-` inverts the pass and reports 1 − score; the reason compares the score itself either way."""
    if not isinstance(value, str):
        raise CheckError('"rouge" assertion type must be a string value')
    score = overlap.rouge_n(facts.output, value)
    threshold = spec.threshold if spec.threshold is not None else 0.75
    passed = (score >= threshold) != spec.inverse
    comparison = "greater than or equal to" if score >= threshold else "less than"
    return (
        passed,
        1 - score if spec.inverse else score,
        f"ROUGE-N score {score:.2f} is {comparison} threshold {_js(threshold)}",
    )


def check_bleu(spec: AssertionSpec, value: Any, facts: AnswerFacts) -> Result:
    """bleu.ts: BLEU-4 with promptfoo's smoothing against one or more references, threshold 0.5 when unset."""
    if not (isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value))):
        raise CheckError('"bleu" assertion type must have a string or array of strings value')
    references = value if isinstance(value, list) else [value]
    score = overlap.bleu(facts.output, references)
    threshold = spec.threshold if spec.threshold is not None else 0.5
    passed = (score >= threshold) != spec.inverse
    direction = "greater" if spec.inverse else "less"
    return (
        passed,
        1 - score if spec.inverse else score,
        PASSED if passed else f"BLEU score {score:.4f} is {direction} than threshold {_js(threshold)}",
    )


def _measured(spec: AssertionSpec, measure: float, name: str, unit: str, shown: str) -> Result:
    """cost.ts and latency.ts: without a threshold a named metric records the raw figure; with one, ≤ passes."""
    if spec.threshold is None:
        if spec.inverse:
            raise CheckError(f"{name} assertion requires a threshold when using not-{name.lower()}")
        if not spec.metric:
            raise CheckError(f"{name} assertion without a threshold must set `metric` to record as a named metric")
        return True, float(measure), PASSED
    threshold = spec.threshold
    passed = measure > threshold if spec.inverse else measure <= threshold
    if spec.inverse:
        failure = f"{name} {shown} is less than or equal to threshold {_js(threshold)}{unit}"
    else:
        failure = f"{name} {shown} is greater than threshold {_js(threshold)}{unit}"
    return _binary(passed, failure)


def _precision_2(value: float) -> str:
    """JavaScript's Number.prototype.toPrecision(2), which cost.ts uses in its reason."""
    if value == 0:
        return "0.0"
    exponent = math.floor(math.log10(abs(value)))
    if exponent < -6 or exponent >= 2:
        mantissa = f"{value:.1e}".replace("e-0", "e-").replace("e+0", "e+")
        return mantissa
    return f"{value:.{max(0, 1 - exponent)}f}"


def check_cost(spec: AssertionSpec, value: Any, facts: AnswerFacts) -> Result:
    if facts.cost is None:
        raise CheckError("Cost assertion does not support providers that do not return cost")
    cost = float(facts.cost)
    return _measured(spec, cost, "Cost", "", _precision_2(cost))


def check_latency(spec: AssertionSpec, value: Any, facts: AnswerFacts) -> Result:
    if facts.latency_ms is None:
        raise CheckError("Latency assertion does not support cached results. Rerun the eval with --no-cache")
    return _measured(spec, facts.latency_ms, "Latency", "ms", f"{facts.latency_ms}ms")


CHECKS: dict[str, Callable[[AssertionSpec, Any, AnswerFacts], Result]] = {
    "equals": check_equals,
    "contains": check_contains,
    "icontains": check_icontains,
    "contains-any": lambda s, v, f: _any_or_all(s, v, f, fold=False, every=False),
    "contains-all": lambda s, v, f: _any_or_all(s, v, f, fold=False, every=True),
    "icontains-any": lambda s, v, f: _any_or_all(s, v, f, fold=True, every=False),
    "icontains-all": lambda s, v, f: _any_or_all(s, v, f, fold=True, every=True),
    "starts-with": check_starts_with,
    "regex": check_regex,
    "is-json": check_is_json,
    "contains-json": check_contains_json,
    "is-valid-openai-tools-call": check_openai_tools_call,
    "levenshtein": check_levenshtein,
    "rouge-n": check_rouge_n,
    "bleu": check_bleu,
    "cost": check_cost,
    "latency": check_latency,
}
