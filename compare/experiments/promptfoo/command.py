"""What `manage.py experiment run` does differently for a promptfoo config: read and translate it, record its
assertions on the experiment before it starts, and afterwards print promptfoo's table and write its JSON.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path, PurePath

import yaml

from lab import safe_yaml, values
from lab.assertions import PENDING, AssertionSpec, is_model_graded

from ...assertions.models import AssertionResult
from ...hooks import assertion_grader
from ..results import Results
from .detect import is_promptfoo
from .output import counts, output_json, promptfoo_verdicts, table_text
from .store import row_assertions_store, row_lists
from .translate import Translation, promptfoo_translate

EXIT_TESTS_FAILED = 100  # promptfoo's own exit status when a test fails


def parsed(text: str, source: str):
    """The file's data, or None when it does not parse (the lab's reader then says where it breaks)."""
    try:
        return json.loads(text) if PurePath(source).suffix.lower() == ".json" else safe_yaml.load(text)
    except (ValueError, yaml.YAMLError, RecursionError):
        return None


def promptfoo_read(text: str, *, source: str, files) -> Translation | None:
    """The translation of a promptfoo config; None for the lab's own format. Raises ConfigError."""
    data = parsed(text, source)
    if not is_promptfoo(data) or values.value_problem(data):
        return None
    return promptfoo_translate(data, source=source, files=files)


def promptfoo_summary(translation: Translation) -> str:
    tests, columns = len(translation.tests), len(translation.columns)
    return (
        f"Read as a promptfoo config: {tests} test{'s' if tests != 1 else ''} (after var lists expand) × "
        f"{columns} prompt × provider column{'s' if columns != 1 else ''}, providers first"
    )


def promptfoo_on_connections(translation: Translation, names: dict[str, str]) -> Translation:
    """The graders moved onto the person's private connections as the providers are (`names`: the file's
    connection name → the private one; lab.connection_env), so `openai:chat:gpt-4o-mini` grades over the same
    connection it answers on."""

    def moved(spec: AssertionSpec) -> AssertionSpec:
        connection, sep, model = (spec.provider or "").partition("::")
        if not is_model_graded(spec) or not sep or connection not in names:
            return spec
        provider = f"{names[connection]}::{model}"
        return replace(spec, provider=provider, written={**spec.written, "provider": provider})

    moved_lists: dict[int, list[AssertionSpec]] = {}  # expanded tests share one list
    for test in translation.tests:
        test.specs = moved_lists.setdefault(id(test.specs), [moved(spec) for spec in test.specs])
    translation.default_assertions = [moved(spec) for spec in translation.default_assertions]
    if translation.default_assertions:
        translation.data["assertions"] = [spec.as_dict() for spec in translation.default_assertions]
    return translation


def promptfoo_grade(experiment) -> None:
    """Grade the model-graded assertions still pending on the run's answers here, in this process, by the job a
    worker would run (compare.hooks.assertion_grader), before the table is printed."""
    grader = assertion_grader()
    pending = AssertionResult.objects.filter(output__round__group_id=experiment.group_id, state=PENDING)
    output_ids = sorted(set(pending.values_list("output_id", flat=True)))
    if grader is not None and output_ids:
        grader(output_ids)


def promptfoo_prepare(experiment, translation: Translation) -> None:
    """Record the tests' assertions on the experiment's rows before it starts, so its page shows them too (the
    command's own verdicts are graded from the stored answers afterwards, with promptfoo's test thresholds)."""
    row_assertions_store(experiment=experiment, rows=row_lists(translation))


def promptfoo_finish(translation: Translation, results: Results, *, output: Path | None, group_id: int):
    """(the table, whether any test failed); writes promptfoo's JSON to `output` when given."""
    verdicts = promptfoo_verdicts(translation, results)
    if output is not None:
        data = output_json(translation, verdicts, source=results.experiment.source, group_id=group_id)
        output.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    successes, _, _ = counts(verdicts)
    expected = len(translation.tests) * len(translation.columns)
    return table_text(translation, verdicts), successes < expected
