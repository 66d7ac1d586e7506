"""Checking how an experiment's answers are judged: the evaluation (judge, type, prompt) and the structured output.

The judge comes from the scorer the judging app registers (`scoring`); without one, an evaluation is a problem.
"""

from __future__ import annotations

from typing import Any

import yaml

from lab import safe_yaml
from lab.providers.tools import tools_errors
from lab.templating import PLACEHOLDER, placeholders

from ..hooks import scorer
from .reader import SectionReader, parse_problem
from .spec import FAMILY_RULES, STRUCTURED_FORMATS, Evaluation, StructuredOutput, model_id_from

# Every JSON Schema keyword (draft 2020-12 and earlier): a mapping using none of them is Toor's form of a schema.
SCHEMA_KEYWORDS = frozenset(
    "$schema $id $ref $defs $anchor $dynamicRef $dynamicAnchor $vocabulary $comment definitions type enum const "
    "properties required additionalProperties patternProperties propertyNames minProperties maxProperties "
    "dependentRequired dependentSchemas dependencies unevaluatedProperties items prefixItems additionalItems "
    "contains minContains maxContains minItems maxItems uniqueItems unevaluatedItems allOf anyOf oneOf not if then "
    "else minimum maximum exclusiveMinimum exclusiveMaximum multipleOf minLength maxLength pattern format "
    "contentEncoding contentMediaType contentSchema title description default examples deprecated readOnly "
    "writeOnly".split()
)
# Keywords that say what a schema is about without ruling any value out.
ANNOTATIONS = frozenset(
    "$schema $id $anchor $comment $defs definitions title description default examples deprecated readOnly "
    "writeOnly".split()
)


def schema_from_toor(schema: dict[str, Any]) -> dict[str, Any]:
    """Toor's `schema: {priority: {type: string, enum: […]}, …}` is an object with those properties, each one
    required; a mapping that is already a JSON schema (it uses a keyword) is kept as it is."""
    if not schema or set(schema) & SCHEMA_KEYWORDS or not all(isinstance(v, dict) for v in schema.values()):
        return schema
    return {"type": "object", "properties": schema, "required": list(schema)}


def constrains_nothing(schema: dict[str, Any]) -> bool:
    """True when no keyword of the schema rules any answer out: `{}`, or only titles and descriptions."""
    return set(schema) <= ANNOTATIONS


class EvaluationReader(SectionReader):
    def _evaluation(self, value: Any) -> Evaluation | None:
        if value is None:
            return None
        if not isinstance(value, dict):
            self.problem("evaluation", "a mapping: type, model and optionally prompt and family")
            return None
        judge = scorer()
        kind = str(value.get("type", "")).strip()
        classifies = judge is not None and kind in judge.classification_types
        allowed = {"type", "model", "family", *(judge.classification_keys if classifies else ("prompt",))}
        extra = sorted(set(value) - allowed)
        if extra:
            self.problem(
                "evaluation", f"{', '.join(extra)}: a {kind or 'scored'} evaluation has {', '.join(sorted(allowed))}"
            )
        family = str(value.get("family", "warn")).strip()
        if family not in FAMILY_RULES:
            self.problem(
                "evaluation",
                f"family: {value.get('family')!r} is not {' or '.join(FAMILY_RULES)} (what a judge sharing a "
                "candidate's model family does: a warning, or a refusal)",
            )
        if judge is None:
            self.problem("evaluation", "this installation has no judge (the judging app); remove the evaluation")
            return None
        if kind not in judge.types:
            self.problem(
                "evaluation", f"type: {value.get('type')!r} is not a type; the types are {', '.join(judge.types)}"
            )
        model = None
        try:
            model = model_id_from(value["model"]) if isinstance(value.get("model"), str) else None
        except ValueError as exc:
            self.problem("evaluation", f"model: {exc}")
        else:
            if model is None:
                self.problem("evaluation", "model: the judge, as provider:model")
        classification = {key: value[key] for key in judge.classification_keys if key in value} if classifies else {}
        for message in judge.classification_problems(kind, classification) if classifies else []:
            self.problem("evaluation", message)
        prompt = ""
        if value.get("prompt") is not None and not classifies:
            prompt = self._template(value["prompt"], "evaluation: prompt") or ""
            if prompt and kind in judge.types:
                self._check_evaluator_prompt(prompt, *judge.placeholders(kind), kind)
        if model is None or kind not in judge.types:
            return None
        family = family if family in FAMILY_RULES else "warn"
        return Evaluation(type=kind, model=model, prompt=prompt, family=family, classification=classification)

    def _check_evaluator_prompt(self, prompt: str, required: tuple[str, ...], allowed: tuple[str, ...], kind: str):
        used = placeholders(prompt)
        missing = [name for name in required if name not in used]
        if missing:
            needs = ", ".join(f"<<{name}>>" for name in required)
            absent = ", ".join(f"<<{name}>>" for name in missing)
            self.problem("evaluation: prompt", f"missing {absent}; a {kind} evaluator prompt needs {needs}")
        for name in used:
            if name not in allowed:
                known = ", ".join(f"<<{p}>>" for p in allowed)
                self.problem("evaluation: prompt", f"<<{name}>> is not filled by the judge; it fills {known}")
        if any(match.group(2) for match in PLACEHOLDER.finditer(prompt)):
            self.problem("evaluation: prompt", "the evaluator's placeholders take no format (write <<response>>)")

    def _structured(self, value: Any) -> StructuredOutput | None:
        if value is None:
            return None
        where = "structured-output"
        if not isinstance(value, dict):
            self.problem(where, "a mapping: schema and format")
            return None
        extra = sorted(set(value) - {"schema", "format", "mode"})
        if extra:
            self.problem(where, f"{', '.join(extra)}: structured-output has only schema, format and mode")
        mode = str(value.get("mode", "native"))
        if mode not in ("native", "validate"):
            self.problem(where, f"mode: {mode!r} is not native (sent to the model) or validate (only checked)")
        fmt = str(value.get("format", "json")).strip().lower()
        if fmt == "yml":
            fmt = "yaml"
        if fmt not in STRUCTURED_FORMATS:
            self.problem(where, f"format: {value.get('format')!r} is not json or yaml")
        schema = value.get("schema")
        if isinstance(schema, str):
            text = self._file_text(schema, f"{where}: schema")
            try:
                schema = safe_yaml.load(text) if text is not None else None
            except yaml.YAMLError as exc:
                self.problem(f"{where}: schema", f"not valid YAML or JSON: {parse_problem(exc)}")
                return None
        if not isinstance(schema, dict):
            self.problem(where, "schema: the JSON schema of an answer, as a mapping (or $file:path)")
            return None
        schema = schema_from_toor(schema)
        if constrains_nothing(schema):
            self.problem(
                where,
                "schema: constrains nothing (no type, properties, enum or other rule), so every answer would be "
                "valid; write a JSON schema, or Toor's form: each property's name and its schema",
            )
            return None
        from jsonschema import SchemaError, validators  # here, not at start-up (lab.providers.tools._validator)

        try:
            validators.validator_for(schema).check_schema(schema)
        except SchemaError as exc:
            path = "/".join(str(p) for p in exc.path) or "(top)"
            self.problem(where, f"schema: not a valid JSON schema at {path}: {exc.message}")
            return None
        return StructuredOutput(schema=schema, format=fmt, mode=mode) if fmt in STRUCTURED_FORMATS else None

    def _tools(self, data: dict) -> tuple[list, str]:
        """The file's `tools` (OpenAI function format) and `tool-choice`, each problem naming the tool."""
        tools, choice = data.get("tools") or [], data.get("tool-choice") or ""
        problems = tools_errors(tools, choice) if isinstance(choice, str) else ["tool-choice: a text"]
        for problem in problems:
            self.problem("tools", problem)
        return (tools, choice) if not problems else ([], "")
