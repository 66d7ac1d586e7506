"""A promptfoo config's assertions recorded on the experiment before it starts: `defaultTest.assert` on its
comparison (graded first, on every answer) and each test's `assert` on its dataset row, so the lab grades every
answer as its round finishes (compare/assertions/) and the experiment's page shows pass rates, as for any comparison.

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


def as_json(translation: Translation) -> str:
    return json.dumps(
        {
            "default": [spec.as_dict() for spec in translation.default_assertions],
            "rows": [[spec.as_dict() for spec in test.specs] for test in translation.tests],
        }
    )


def from_json(text: str) -> tuple[list[dict], list[list[dict]]]:
    """(the comparison's list, each row's list), validated; raises ValidationError naming what is wrong."""
    try:
        data: Any = json.loads(text)
    except ValueError:
        raise ValidationError({"assertions": "The confirmed assertions did not come back whole."}) from None
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
        raise ValidationError({"assertions": "The confirmed assertions did not come back whole."})
    default = assertions_parse(data.get("default") or [], where="defaultTest")
    rows = [assertions_parse(row or [], where=f"tests[{i}]") for i, row in enumerate(data["rows"], start=1)]
    return default, rows


def translation_lists(translation: Translation) -> tuple[list[dict], list[list[dict]]]:
    default = [spec.as_dict() for spec in translation.default_assertions]
    return default, [[spec.as_dict() for spec in test.specs] for test in translation.tests]


@transaction.atomic
def assertions_store(*, experiment, default: list[dict], rows: list[list[dict]]) -> None:
    """Record the lists on the experiment's comparison and its dataset's rows (one per test, in order)."""
    group = experiment.group
    group.assertions = default
    group.save(update_fields=["assertions"])
    if group.dataset_id is None:
        return
    dataset_rows = list(DatasetRow.objects.filter(dataset_id=group.dataset_id).order_by("position"))
    if len(dataset_rows) != len(rows):
        raise ValidationError({"assertions": f"{len(rows)} tests' assertions for {len(dataset_rows)} dataset rows."})
    for row, assertions in zip(dataset_rows, rows, strict=True):
        row.assertions = assertions
    DatasetRow.objects.bulk_update(dataset_rows, ["assertions"])
