"""A promptfoo config → the lab's experiment data (run by the same engine as the lab's own files), plus what only
promptfoo's output needs: the tests in promptfoo's order, the columns (prompt × provider, providers outermost) and the
assertions (`defaultTest`'s graded first).

Everything is checked before any call: an unknown top-level key, provider prefix, provider config key, Nunjucks
construct or test option is one problem naming the key and its place; all are listed at once (ConfigError).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from django.core.exceptions import ValidationError

from lab.assertions import AssertionSpec, parse_assertions
from lab.assertions.spec import MODEL_GRADED_TYPES

from ..spec import ConfigError
from .cases import RUBRIC_PROMPT_REFUSED, TEST_KEYS, CaseReader, TestCase, expand
from .prompts import PromptReader, PromptSpec
from .providers import ProviderSpec, grader_id, read_providers
from .templates import var_texts, variables_used

TOP_LEVEL = ("description", "prompts", "providers", "tests", "defaultTest", "evaluateOptions", "outputPath")
EVALUATE_OPTIONS = ("maxConcurrency", "repeat")
DEFAULT_TEST_KEYS = ("vars", "assert", "options", "metadata", "threshold")
MAX_REPEAT = 100
# A row needs a variable (compare.datasets); a test without vars gets this one, which no prompt uses.
NO_VARS = "_test"


@dataclass(frozen=True)
class Column:
    index: int  # promptfoo's promptIdx
    provider: ProviderSpec
    prompt: PromptSpec


@dataclass
class Translation:
    data: dict[str, Any]  # the lab's experiment file layout
    providers: list[ProviderSpec]
    prompts: list[PromptSpec]
    tests: list[TestCase]
    default_assertions: list[AssertionSpec] = field(default_factory=list)  # graded first, on every test
    max_concurrency: int | None = None
    output_path: str = ""

    @property
    def columns(self) -> list[Column]:
        pairs = [(provider, prompt) for provider in self.providers for prompt in self.prompts]
        return [Column(i, provider, prompt) for i, (provider, prompt) in enumerate(pairs)]


def promptfoo_translate(data: dict, *, source: str, files) -> Translation:
    """Raises ConfigError listing every problem, each "<file>: <where>: <what>"."""
    problems: list[str] = []

    def problem(where: str, message: str) -> None:
        problems.append(f"{source}: {where}: {message}")

    for key in data:
        if key not in TOP_LEVEL:
            problem(
                str(key), f"not supported in a promptfoo config here; the supported keys are {', '.join(TOP_LEVEL)}"
            )
    providers = read_providers(data.get("providers"), problem)
    prompts = PromptReader(files, problem).prompts(data.get("prompts"))
    cases = CaseReader(files, problem)
    options = _evaluate_options(data.get("evaluateOptions"), problem)
    default = cases.default_test(data.get("defaultTest"))
    if not isinstance(default, dict):
        problem("defaultTest", "a mapping of vars, assert and options")
        default = {}
    for key in sorted(set(default) - set(DEFAULT_TEST_KEYS)):
        problem(f"defaultTest: {key}", f"not supported; defaultTest has {', '.join(DEFAULT_TEST_KEYS)}")
    default_vars = cases.test_vars(default.get("vars"), "defaultTest")
    default_options = cases.options(default.get("options"), "defaultTest")
    default_assertions = _assertions(default.get("assert"), "defaultTest", problem)
    default_grader = _grader(default_options, "defaultTest", problem)
    tests: list[TestCase] = []
    for where, raw in cases.tests(data.get("tests")):
        for key in sorted(set(raw) - set(TEST_KEYS)):
            problem(f"{where}: {key}", "not supported; a test has description, vars, assert, options and threshold")
        own_vars = cases.test_vars(raw.get("vars"), where)
        own_options = cases.options(raw.get("options"), where)
        test_options = {**default_options, **own_options}
        assertions = _assertions(raw.get("assert"), where, problem)
        grader = _grader(own_options, where, problem) if "provider" in own_options else default_grader
        specs = _specs(assertions, where, problem, grader)
        description = raw.get("description") if isinstance(raw.get("description"), str) else ""
        threshold = raw.get("threshold", default.get("threshold"))
        combinations = expand({**default_vars, **own_vars}, disabled=bool(test_options.get("disableVarExpansion")))
        for repeat in range(options.get("repeat", 1)):
            for variables in combinations:
                case = TestCase(len(tests), where, description, variables, assertions, _number(threshold), repeat)
                case.specs = specs
                tests.append(case)
    default_specs = _specs(default_assertions, "defaultTest", problem, default_grader)
    if problems:
        raise ConfigError(problems)
    translation = Translation(
        data=_lab_data(data, source, providers, prompts, tests, default_specs),
        providers=providers,
        prompts=prompts,
        tests=tests,
        default_assertions=default_specs,
        max_concurrency=options.get("maxConcurrency"),
        output_path=data.get("outputPath") if isinstance(data.get("outputPath"), str) else "",
    )
    return translation


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _assertions(value: Any, where: str, problem) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        problem(f"{where}: assert", "a list of assertions")
        return []
    return value


def _grader(options: dict[str, Any], where: str, problem) -> str | None:
    """`options.provider` as the lab model id of the grader (None when not given or refused)."""
    if options.get("provider") is None:
        return None
    found, message = grader_id(options["provider"])
    if found is None:
        problem(f"{where}: options: provider", message)
    return found


NO_GRADER = (
    "needs a grader: set defaultTest.options.provider (or this assertion's provider), e.g. openai:chat:gpt-4o-mini. "
    "promptfoo would default to its own OpenAI grader; the lab has no default grader"
)


def _graded_here(raw: list[Any], where: str, problem, grader: str | None) -> list[Any]:
    """The list with each model-graded assertion's grader as a lab model id (promptfoo's provider ids mapped as the
    config's providers are); a grader missing or refused, and `rubricPrompt`, are problems naming the key."""
    converted = []
    for index, item in enumerate(raw):
        kind = item.get("type") if isinstance(item, dict) else None
        if not isinstance(kind, str) or kind.removeprefix("not-") not in MODEL_GRADED_TYPES:
            converted.append(item)
            continue
        place = f"{where}: assert[{index}]"
        if "rubricPrompt" in item:
            problem(f"{place}: rubricPrompt", RUBRIC_PROMPT_REFUSED)
            continue
        if item.get("provider") is None:
            if grader is None:
                problem(place, f"'{kind}' {NO_GRADER}")
                continue
            converted.append(item)
            continue
        found, message = grader_id(item["provider"])
        if found is None:
            problem(f"{place}: provider", message)
            continue
        converted.append({**item, "provider": found})
    return converted


def _specs(raw: list[Any], where: str, problem, grader: str | None = None) -> list[AssertionSpec]:
    """The assertions checked now, before any call (lab.assertions refuses unknown types and user code)."""
    raw = _graded_here(raw, where, problem, grader)
    try:
        return parse_assertions(raw, where=f"{where}: assert", default_provider=grader)
    except ValidationError as exc:
        for place, messages in exc.message_dict.items():
            for message in messages:
                problem(place, message)
        return []


def _evaluate_options(value: Any, problem) -> dict[str, int]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        problem("evaluateOptions", "a mapping")
        return {}
    found = {}
    for key, raw in value.items():
        if key not in EVALUATE_OPTIONS:
            problem(
                f"evaluateOptions: {key}", f"not supported; the supported options are {', '.join(EVALUATE_OPTIONS)}"
            )
        elif (
            not isinstance(raw, int)
            or isinstance(raw, bool)
            or not 1 <= raw <= (MAX_REPEAT if key == "repeat" else 1000)
        ):
            problem(
                f"evaluateOptions: {key}", "a whole number from 1" + (f" to {MAX_REPEAT}" if key == "repeat" else "")
            )
        else:
            found[key] = raw
    return found


def _lab_data(
    data: dict,
    source: str,
    providers: list[ProviderSpec],
    prompts: list[PromptSpec],
    tests: list[TestCase],
    default_assertions: list[AssertionSpec],
) -> dict[str, Any]:
    """The lab's own file layout: one parameter set per provider, one row per test, combinations providers-first."""
    used = list(dict.fromkeys(name for prompt in prompts for text in prompt.texts for name in variables_used(text)))
    description = data.get("description") if isinstance(data.get("description"), str) else ""
    lab: dict[str, Any] = {
        "name": (description.strip() or PurePath(source).stem or "promptfoo")[:200],
        "models": [{"model": m} for m in dict.fromkeys(p.written for p in providers)],
        "model-parameters": [{"name": _set_name(p), **p.params} for p in providers],
        "prompts": [
            {"name": _prompt_name(p), **({"messages": p.messages} if p.messages else {"prompt": p.text})}
            for p in prompts
        ],
        "dataset": [{"name": _row_name(t), "vars": _row_vars(t.vars, used)} for t in tests],
        "combinations": [
            {"model": p.written, "model-parameters": _set_name(p), "prompt": _prompt_name(q), **p.combination_keys()}
            for p in providers
            for q in prompts
        ],
    }
    if description.strip():
        lab["description"] = description.strip()
    if default_assertions:
        lab["assertions"] = [spec.as_dict() for spec in default_assertions]  # the comparison's, graded first
    return lab


def _row_vars(variables: dict[str, Any], used: list[str]) -> dict[str, Any]:
    """The text promptfoo would insert for each var; a var a prompt uses and the test lacks is empty, as Nunjucks
    renders an undefined var."""
    row = {**var_texts(variables), **{name: "" for name in used if name not in variables}}
    return row or {NO_VARS: 1}


def _set_name(provider: ProviderSpec) -> str:
    """The provider's parameter set is named after it (what the lab's tables and messages show)."""
    return provider.set_name


def _prompt_name(prompt: PromptSpec) -> str:
    return f"prompt-{prompt.index + 1}"


ROW_PREFIX = "test-"


def _row_name(test: TestCase) -> str:
    return f"{ROW_PREFIX}{test.index + 1}"


def test_index_of(row_name: str) -> int:
    """A dataset row's name (`test-3`) → promptfoo's testIdx (2)."""
    return int(row_name.removeprefix(ROW_PREFIX)) - 1


def column_of(combination_position: int) -> int:
    """A variant's position (from 1, in the order of the combinations) → promptfoo's promptIdx."""
    return combination_position - 1
