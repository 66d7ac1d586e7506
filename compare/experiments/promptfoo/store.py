"""A promptfoo config's per-test assertions recorded on the experiment's dataset rows before it starts, so the lab
grades every answer as its round finishes (compare/assertions/) and the experiment's page shows pass rates, as for
any comparison. `defaultTest`'s assertions need nothing here: they are the experiment file's own `assertions`
(the comparison's list, graded first), which the translation writes.

The command line stores them straight from the translation; the web page carries them through the estimate page
as JSON (`as_json`) and stores them when the run is confirmed, checked again (`from_json`).
"""

from __future__ import annotations

import json
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from ...assertions.services import assertions_parse
from ...models import DatasetRow
from .translate import Translation

INCOMPLETE = "The confirmed assertions did not come back whole; estimate it again."


def row_lists(translation: Translation) -> list[list[dict]]:
    return [[spec.as_dict() for spec in test.specs] for test in translation.tests]


def as_json(translation: Translation) -> str:
    return json.dumps(row_lists(translation))


def from_json(text: str) -> list[list[dict]]:
    """Each row's list, validated; raises ValidationError naming what is wrong."""
    try:
        data: Any = json.loads(text)
    except ValueError:
        raise ValidationError({"assertions": INCOMPLETE}) from None
    if not isinstance(data, list):
        raise ValidationError({"assertions": INCOMPLETE})
    return [assertions_parse(row or [], where=f"tests[{i}]") for i, row in enumerate(data, start=1)]


@transaction.atomic
def row_assertions_store(*, experiment, rows: list[list[dict]]) -> None:
    """Record each test's list on the experiment's dataset row of the same position."""
    dataset_id = experiment.group.dataset_id
    dataset_rows = list(DatasetRow.objects.filter(dataset_id=dataset_id).order_by("position")) if dataset_id else []
    if len(dataset_rows) != len(rows):
        raise ValidationError({"assertions": f"{len(rows)} tests' assertions for {len(dataset_rows)} dataset rows."})
    for row, assertions in zip(dataset_rows, rows, strict=True):
        row.assertions = assertions
    DatasetRow.objects.bulk_update(dataset_rows, ["assertions"])
