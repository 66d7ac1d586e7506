"""promptfoo's tests: inline, or read from `file://` YAML, JSON or CSV; `defaultTest` merged in; list vars expanded.

Expansion follows promptfoo's evaluator: a var whose value is a list of texts runs once per value, and several such
vars run every combination (the cartesian product, the first var varying slowest), unless
`options.disableVarExpansion`. Tests keep file order; within a test, `repeat` runs all its expanded combinations
again, that many times (promptfoo loops repeats outside the combinations); each is one test index (`testIdx`).
CSV files follow promptfoo's column rules: `__expected`, `__expected1` … hold an assertion each (`contains: text`,
`not-regex: …`, a bare value meaning `equals`), `__description`, `__metric`, `__threshold` and
`__config:__expectedN:threshold`; every other column is a var.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

import yaml

from lab import safe_yaml

FILE = "file://"
USER_CODE_SUFFIXES = (".py", ".js", ".cjs", ".mjs", ".ts")
BINARY_VAR_SUFFIXES = (".pdf", ".jpg", ".jpeg", ".png", ".gif", ".bmp", ".webp", ".svg", ".mp4", ".webm", ".mov")
TEST_KEYS = ("description", "vars", "assert", "options", "metadata", "threshold")
OPTION_KEYS = ("disableVarExpansion", "provider")  # `provider`: the grader of model-graded assertions
# promptfoo's assertion types a CSV `__expected` cell may start with; any other text is an `equals` value.
CSV_TYPES = (
    "answer-relevance bleu classifier contains-all contains-any contains-html contains-json contains-sql contains-xml "
    "contains context-faithfulness context-recall context-relevance cost equals factuality g-eval icontains-all "
    "icontains-any icontains is-html is-json is-refusal is-sql is-valid-openai-function-call "
    "is-valid-openai-tools-call is-xml latency levenshtein llm-rubric meteor model-graded-closedqa "
    "model-graded-factuality moderation perplexity-score perplexity regex rouge-n similar starts-with webhook "
    "word-count"
).split()
# Why `rubricPrompt` is refused rather than used (docs/promptfoo.md): the lab's graders ask with their own prompt and
# reply schema, and promptfoo's custom prompts expect Nunjucks and its reply format.
RUBRIC_PROMPT_REFUSED = (
    "not supported: the lab's graders use their own prompt (docs/assertions.md); remove it, and the rubric in "
    "`value` is graded by the lab's prompt"
)
CSV_ASSERTION = re.compile(rf"^(not-)?({'|'.join(CSV_TYPES)})(?:\((\d+(?:\.\d+)?)\))?(?::([\s\S]*))?$")
CSV_LISTS = {"contains-all", "contains-any", "icontains-all", "icontains-any"}
CSV_RAW = {"contains-json", "is-json"}
CSV_THRESHOLDS = {"answer-relevance", "classifier", "context-faithfulness", "context-recall", "context-relevance"}
CSV_THRESHOLDS |= {"cost", "latency", "levenshtein", "perplexity-score", "perplexity", "rouge-n", "similar"}
CSV_THRESHOLDS |= {"starts-with"}


@dataclass
class TestCase:
    index: int  # promptfoo's testIdx: position after expansion and repeats, from 0
    source: str  # where it came from, for messages: `tests[2]`, `tests.csv row 3`
    description: str
    vars: dict[str, Any]
    assertions: list[Any] = field(default_factory=list)  # the test's own, as written (defaultTest's kept apart)
    threshold: float | None = None
    repeat: int = 0
    specs: list[Any] = field(default_factory=list)  # `assertions` parsed (lab.assertions.AssertionSpec)


def csv_assertion(expected: str) -> dict[str, Any]:
    """One `__expected` cell as promptfoo reads it."""
    for prefix, kind in (("javascript:", "javascript"), ("fn:", "javascript"), ("eval:", "javascript")):
        if expected.startswith(prefix):
            return {"type": kind, "value": expected[len(prefix) :].strip()}
    for prefix in ("grade:", "llm-rubric:"):
        if expected.startswith(prefix):
            return {"type": "llm-rubric", "value": expected[len(prefix) :]}
    if expected.startswith("python:"):
        return {"type": "python", "value": expected[len("python:") :].strip()}
    match = CSV_ASSERTION.match(expected)
    if match is None:
        return {"type": "equals", "value": expected}
    negated, kind, threshold, value = match.groups()
    full = f"{negated or ''}{kind}"
    if kind in CSV_LISTS:
        return {"type": full, "value": [item.strip() for item in value.split(",")] if value else value}
    if kind in CSV_RAW:
        return {"type": full, **({"value": value} if value is not None else {})}
    out: dict[str, Any] = {"type": full}
    if value is not None:
        out["value"] = value.strip()
    if kind in CSV_THRESHOLDS:
        out["threshold"] = float(threshold) if threshold else (0.8 if kind == "similar" else 0.75)
    return out


def csv_tests(text: str, where: str, problem) -> list[dict[str, Any]]:
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        problem(where, "the CSV file is empty")
        return []
    header = [name.strip() for name in rows[0]]
    tests = []
    for number, cells in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) != len(header):
            problem(where, f"line {number}: has {len(cells)} cells; the first line names {len(header)} columns")
            continue
        tests.append(_csv_test(dict(zip(header, cells, strict=True)), f"{where} line {number}", problem))
    return tests


def _csv_test(row: dict[str, str], where: str, problem) -> dict[str, Any]:
    test: dict[str, Any] = {"vars": {}, "assert": []}
    metric, configs = None, {}
    for key, value in row.items():
        if key.startswith("__expected"):
            if value.strip():
                test["assert"].append(csv_assertion(value.strip()))
        elif key == "__description":
            test["description"] = value
        elif key == "__metric":
            metric = value
        elif key == "__threshold":
            try:
                test["threshold"] = float(value)
            except ValueError:
                problem(where, f"__threshold: {value!r} is not a number")
        elif key.startswith("__config:"):
            parts = key[len("__config:") :].split(":")
            target = re.fullmatch(r"__expected(\d*)", parts[0]) if len(parts) == 2 else None
            if target is None or parts[1] != "threshold":
                problem(where, f"{key}: write __config:__expected<N>:threshold")
                continue
            try:
                configs[int(target.group(1) or 1) - 1] = float(value)
            except ValueError:
                problem(where, f"{key}: {value!r} is not a number")
        elif key in ("__prefix", "__suffix", "__providerOutput") or key.startswith("__metadata"):
            if value.strip():
                problem(where, f"{key}: not supported")
        else:
            test["vars"][key] = value
    for position, assertion in enumerate(test["assert"]):
        if metric:
            assertion["metric"] = metric
        if position in configs:
            assertion["threshold"] = configs[position]
    return test


class CaseReader:
    """Reads `tests` and `defaultTest` through `files` (relative to the config, never outside it)."""

    def __init__(self, files, problem):
        self.files, self.problem = files, problem

    def read_file(self, path: str, where: str) -> str | None:
        try:
            return self.files.read(path)
        except (OSError, ValueError) as exc:
            self.problem(where, f"cannot read {path}: {exc}")
            return None

    def default_test(self, value: Any) -> Any:
        """`defaultTest` as written, or read from `file://default.yaml` (or `.json`), as promptfoo allows."""
        if not isinstance(value, str) or not value.startswith(FILE):
            return value or {}
        path = value[len(FILE) :].strip()
        if PurePosixPath(path).suffix.lower() not in (".yaml", ".yml", ".json"):
            self.problem("defaultTest", f"{value}: defaultTest is read from .yaml, .yml or .json")
            return {}
        text = self.read_file(path, "defaultTest")
        try:
            return {} if text is None else safe_yaml.load(text)  # JSON is YAML
        except yaml.YAMLError as exc:
            self.problem("defaultTest", f"{path}: not valid YAML or JSON: {exc}")
            return {}

    def tests(self, value: Any) -> list[tuple[str, dict]]:
        """Every test as (where, raw test) in file order."""
        if value is None:
            return [("tests", {})]  # promptfoo runs the prompts once with no vars
        entries = value if isinstance(value, list) else [value]
        found: list[tuple[str, dict]] = []
        for index, entry in enumerate(entries, start=1):
            where = f"tests[{index}]"
            if isinstance(entry, str):
                found += self._test_file(entry, where)
            elif isinstance(entry, dict):
                found.append((where, entry))
            else:
                self.problem(where, "a test is a mapping (vars, assert …) or file://path")
        return found

    def _test_file(self, written: str, where: str) -> list[tuple[str, dict]]:
        if not written.startswith(FILE):
            self.problem(where, "a test is a mapping (vars, assert …) or file://path")
            return []
        path = written[len(FILE) :].strip()
        if any(c in path for c in "*?[") or path.endswith(USER_CODE_SUFFIXES):
            self.problem(where, f"{written}: not supported (globs and test generators that run code are refused)")
            return []
        suffix = PurePosixPath(path).suffix.lower()
        if suffix not in (".csv", ".yaml", ".yml", ".json", ".jsonl"):
            self.problem(where, f"{written}: tests are read from .csv, .yaml, .yml, .json or .jsonl")
            return []
        text = self.read_file(path, where)
        if text is None:
            return []
        where = f"{where} ({path})"
        if suffix == ".csv":
            return [(f"{where} row {i}", t) for i, t in enumerate(csv_tests(text, where, self.problem), start=1)]
        try:
            if suffix == ".jsonl":
                data = [json.loads(line) for line in text.splitlines() if line.strip()]
            else:
                data = json.loads(text) if suffix == ".json" else safe_yaml.load(text)
        except (ValueError, yaml.YAMLError) as exc:
            self.problem(where, f"not valid {suffix[1:].upper()}: {exc}")
            return []
        data = data if isinstance(data, list) else [data]
        tests = []
        for i, test in enumerate(data, start=1):
            if isinstance(test, dict):
                tests.append((f"{where} test {i}", test))
            else:
                self.problem(f"{where} test {i}", "a test is a mapping (vars, assert …)")
        return tests

    def test_vars(self, value: Any, where: str) -> dict[str, Any]:
        if value is None:
            return {}
        if isinstance(value, str) and value.startswith(FILE):
            self.problem(f"{where}: vars", "vars from a file are not supported; write them as a mapping")
            return {}
        if not isinstance(value, dict) or not all(isinstance(k, str) and k.isidentifier() for k in value):
            self.problem(f"{where}: vars", "a mapping of var name → value (names are letters, digits and _)")
            return {}
        return {name: self._var(raw, f"{where}: vars: {name}") for name, raw in value.items()}

    def _var(self, raw: Any, where: str) -> Any:
        if isinstance(raw, list):
            return [self._var(item, where) for item in raw]
        if not isinstance(raw, str) or not raw.startswith(FILE):
            return raw
        path = raw[len(FILE) :].strip()
        if path.endswith(USER_CODE_SUFFIXES) or any(c in path for c in "*?["):
            self.problem(where, f"{raw}: not supported (no user code runs here; globs are refused)")
            return raw
        suffix = PurePosixPath(path).suffix.lower()
        if suffix in BINARY_VAR_SUFFIXES:
            self.problem(where, f"{raw}: not supported (PDFs, images and videos are not read into vars here)")
            return raw
        text = self.read_file(path, where)
        if text is None:
            return raw
        # As promptfoo loads a var file: YAML becomes its data as compact JSON text, anything else (JSON too) the
        # file's text, trimmed.
        if suffix in (".yaml", ".yml"):
            try:
                return json.dumps(safe_yaml.load(text), separators=(",", ":"), ensure_ascii=False)
            except (ValueError, yaml.YAMLError) as exc:
                self.problem(where, f"{path}: not valid YAML: {exc}")
        return text.strip()

    def options(self, value: Any, where: str) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.problem(f"{where}: options", "a mapping")
            return {}
        for key in value:
            if key == "rubricPrompt":
                self.problem(f"{where}: options: rubricPrompt", RUBRIC_PROMPT_REFUSED)
            elif key not in OPTION_KEYS:
                self.problem(
                    f"{where}: options: {key}", f"not supported; the supported options are {', '.join(OPTION_KEYS)}"
                )
        return value


def expand(variables: dict[str, Any], *, disabled: bool) -> list[dict[str, Any]]:
    """promptfoo's var expansion: one dict per combination of the list values, the first var varying slowest. Only
    a list whose first item is text expands; any other list (numbers, objects, empty) is one value, as in promptfoo's
    generateVarCombinations."""
    if disabled:
        return [variables]
    names = list(variables)
    choices = [v if isinstance(v, list) and v and isinstance(v[0], str) else [v] for v in variables.values()]
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*choices)]
