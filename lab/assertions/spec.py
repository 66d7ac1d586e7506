"""What an assertion is and which ones the lab accepts: promptfoo's `{type, value, threshold, weight, metric}`
dicts checked once, before anything runs, with every problem named by index and key.

Three kinds of refusal, each with its own message: types that would run user code (never on this server), types
promptfoo has that the lab does not check yet, and types promptfoo does not know either.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError

from lab import templating

# The deterministic types the lab checks itself (lab/assertions/checks.py); each also accepts the `not-` prefix.
SUPPORTED_TYPES = frozenset(
    {
        "equals",
        "contains",
        "icontains",
        "contains-any",
        "contains-all",
        "icontains-any",
        "icontains-all",
        "starts-with",
        "regex",
        "is-json",
        "contains-json",
        "is-valid-openai-tools-call",
        "levenshtein",
        "rouge-n",
        "bleu",
        "cost",
        "latency",
    }
)
# Types whose whole point is to run code the config's author wrote (a script, a file of code, a URL that decides).
USER_CODE_TYPES = frozenset({"javascript", "python", "ruby", "webhook"})
# promptfoo types the lab knows by name but does not check yet: refused as "not yet supported", not "unknown".
NOT_YET_SUPPORTED_TYPES = frozenset(
    {
        "llm-rubric",
        "g-eval",
        "model-graded-closedqa",
        "model-graded-factuality",
        "factuality",
        "similar",
        "answer-relevance",
        "context-faithfulness",
        "context-recall",
        "context-relevance",
        "select-best",
        "max-score",
        "assert-set",
        "moderation",
        "perplexity",
        "perplexity-score",
        "classifier",
        "is-refusal",
        "is-xml",
        "contains-xml",
        "is-sql",
        "contains-sql",
        "is-html",
        "contains-html",
        "ends-with",
        "rouge-l",
        "rouge-s",
        "gleu",
        "meteor",
        "bertscore",
        "finish-reason",
        "is-valid-function-call",
        "is-valid-openai-function-call",
        "tool-call-f1",
        "trace-span-count",
        "trace-span-duration",
        "trace-error-spans",
        "guardrails",
        "pi",
        "cost-per-token",
        "word-count",
        "character-count",
    }
)
KNOWN_KEYS_ORDER = ("type", "value", "threshold", "weight", "metric", "provider", "rubricPrompt")
KNOWN_KEYS = frozenset(KNOWN_KEYS_ORDER)
# promptfoo keys that would run code on the server: `transform` is a JavaScript expression or file.
USER_CODE_KEYS = frozenset({"transform", "contextTransform"})
# Types whose value must be one string (after placeholders are filled).
STRING_VALUE_TYPES = frozenset({"starts-with", "regex", "levenshtein", "rouge-n"})
LIST_VALUE_TYPES = frozenset({"contains-any", "contains-all", "icontains-any", "icontains-all"})
NO_VALUE_TYPES = frozenset({"cost", "latency", "is-valid-openai-tools-call"})


@dataclass(frozen=True)
class AssertionSpec:
    """One parsed assertion: `type` as written (with any `not-`), `base_type` without it, `inverse` for `not-`."""

    type: str
    base_type: str
    inverse: bool
    value: Any = None
    threshold: float | None = None
    weight: float = 1.0
    metric: str | None = None
    provider: Any = None
    written: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def rendered_value(self, variables: dict[str, Any]) -> Any:
        """The value with `{{var}}` placeholders filled from the row's variables, as promptfoo renders it."""
        return _render(self.value, variables)

    def as_dict(self) -> dict[str, Any]:
        """The assertion as it was written (its known keys, values untouched): what is stored and echoed back."""
        return dict(self.written)


def _render(value: Any, variables: dict[str, Any]) -> Any:
    if isinstance(value, str):
        return templating.render(value, variables).text
    if isinstance(value, list):
        return [_render(item, variables) for item in value]
    if isinstance(value, dict):
        return {key: _render(item, variables) for key, item in value.items()}
    return value


def parse_assertions(raw: Any, *, where: str) -> list[AssertionSpec]:
    """Validate a promptfoo `assert` list; raises ValidationError({where: [messages]}) listing every problem."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ValidationError({where: ["must be a list of assertions ({type, value, …})."]})
    specs: list[AssertionSpec] = []
    errors: list[str] = []
    for index, item in enumerate(raw):
        spec, problems = _parse_one(item, f"assert[{index}]")
        errors.extend(problems)
        if spec is not None:
            specs.append(spec)
    if errors:
        raise ValidationError({where: errors})
    return specs


def _parse_one(item: Any, place: str) -> tuple[AssertionSpec | None, list[str]]:
    if not isinstance(item, dict):
        return None, [f"{place}: must be an object with a `type`."]
    kind = item.get("type")
    if not isinstance(kind, str) or not kind:
        return None, [f"{place}.type: required, a string such as 'contains'."]
    inverse = kind.startswith("not-")
    base = kind.removeprefix("not-")
    problems = _type_problems(base, kind, place)
    for key in item:
        if key in USER_CODE_KEYS:
            problems.append(f"{place}.{key}: refused, it runs user code (no user code runs on the server).")
        elif key not in KNOWN_KEYS:
            problems.append(f"{place}.{key}: unknown key (known: {', '.join(sorted(KNOWN_KEYS))}).")
    if problems:
        return None, problems
    threshold, weight, metric = item.get("threshold"), item.get("weight", 1), item.get("metric")
    if threshold is not None and not _is_number(threshold):
        problems.append(f"{place}.threshold: must be a number.")
    if not _is_number(weight) or weight < 0:
        problems.append(f"{place}.weight: must be a number ≥ 0.")
    if metric is not None and not isinstance(metric, str):
        problems.append(f"{place}.metric: must be a string.")
    problems.extend(_value_problems(base, item.get("value"), place))
    if problems:
        return None, problems
    return (
        AssertionSpec(
            type=kind,
            base_type=base,
            inverse=inverse,
            value=item.get("value"),
            threshold=float(threshold) if threshold is not None else None,
            weight=float(weight),
            metric=metric,
            provider=item.get("provider"),
            written={key: item[key] for key in KNOWN_KEYS_ORDER if key in item},
        ),
        [],
    )


def _type_problems(base: str, kind: str, place: str) -> list[str]:
    if base in SUPPORTED_TYPES:
        return []
    if base in USER_CODE_TYPES:
        return [f"{place}.type: '{kind}' is refused: it runs user code, and no user code runs on the server."]
    if base in NOT_YET_SUPPORTED_TYPES:
        return [f"{place}.type: not yet supported: '{kind}'."]
    return [f"{place}.type: unknown assertion type '{kind}'."]


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _value_problems(base: str, value: Any, place: str) -> list[str]:
    """Shape checks that hold whatever the row's variables: promptfoo's invariants, raised before any call."""
    key = f"{place}.value"
    if isinstance(value, str) and value.startswith("file://"):
        return [f"{key}: file references are not read on the server; put the content in the assertion."]
    if base in NO_VALUE_TYPES:
        return []
    if base in {"contains", "icontains"}:
        if not ((isinstance(value, str) and value != "") or _is_number(value)):
            return [f"{key}: '{base}' needs a non-empty string or number."]
    elif base in LIST_VALUE_TYPES:
        if not value or not isinstance(value, str | list):
            return [f"{key}: '{base}' needs a list of strings (or one comma-separated string)."]
    elif base in STRING_VALUE_TYPES:
        # promptfoo's starts-with and regex refuse an empty value; levenshtein and rouge-n take any string.
        if not isinstance(value, str) or (value == "" and base in {"starts-with", "regex"}):
            return [f"{key}: '{base}' needs a string."]
        if base == "regex" and not templating.placeholders(value):
            try:
                re.compile(value)
            except re.error as error:
                return [f"{key}: invalid regular expression: {error}."]
    elif base == "bleu":
        if not (isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value))):
            return [f"{key}: 'bleu' needs a string or a list of strings."]
    elif base == "equals" and value is None:
        return [f"{key}: 'equals' needs a value."]
    elif base in {"is-json", "contains-json"} and value not in (None, "") and not isinstance(value, str | dict | bool):
        return [f"{key}: a JSON schema (an object, or YAML/JSON text)."]
    return []
