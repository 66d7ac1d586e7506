"""Writes for datasets beyond creating one from rows (services.dataset_create): import a file, rename, add, edit
and delete rows, delete. Every row is checked as a file's row is (files.row_from_record)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max

from lab.models import Workspace

from ..assertions.services import row_assertions_parse
from ..models import Dataset, DatasetRow
from ..services import MAX_DATASET_ROWS, dataset_create, dataset_name_problem
from .files import decode, row_from_record, rows_parse


@transaction.atomic
def dataset_import(*, workspace: Workspace, user, name: str, content: bytes | str, format: str) -> Dataset:
    """A dataset from a file's content in one of FORMATS."""
    rows = rows_parse(content=decode(content), format=format)
    return dataset_create(workspace=workspace, user=user, name=name, rows=rows)


@transaction.atomic
def dataset_update(*, dataset: Dataset, name: str) -> Dataset:
    name = (name or "").strip()
    if problem := dataset_name_problem(name):
        raise ValidationError({"name": problem})
    dataset.name = name
    dataset.save(update_fields=["name"])
    return dataset


def _checked_row(name: Any, vars: Any, where: str) -> dict[str, Any]:
    problems: list[str] = []
    row = row_from_record({"name": name, "vars": vars}, where, problems)
    if problems or row is None:
        raise ValidationError({"rows": problems})
    return row


@transaction.atomic
def dataset_rows_append(*, dataset: Dataset, rows: Sequence[dict[str, Any]]) -> list[DatasetRow]:
    """Add rows after the last one; rounds already run keep the variables they ran with."""
    Dataset.objects.select_for_update().filter(pk=dataset.pk).first()  # one numbering at a time
    last = dataset.rows.aggregate(last=Max("position"))["last"] or 0
    if last + len(rows) > MAX_DATASET_ROWS or not rows:
        raise ValidationError(
            {"rows": f"A dataset has 1 to {MAX_DATASET_ROWS} rows; this would have {last + len(rows)}."}
        )
    checked = [_checked_row(r.get("name"), r.get("vars"), f"Row {last + i}") for i, r in enumerate(rows, start=1)]
    parsed = [
        row_assertions_parse(r.get("assertions"), row_label=f"Row {last + i}", workspace=dataset.workspace)
        for i, r in enumerate(rows, 1)
    ]
    if problems := [message for _, found in parsed for message in found]:
        raise ValidationError({"rows": problems})
    return DatasetRow.objects.bulk_create(
        DatasetRow(dataset=dataset, position=last + index, name=row["name"], vars=row["vars"], assertions=checks)
        for index, (row, (checks, _)) in enumerate(zip(checked, parsed, strict=True), start=1)
    )


@transaction.atomic
def dataset_row_update(*, row: DatasetRow, name: str | None = None, vars: dict[str, Any] | None = None) -> DatasetRow:
    """Change a row's name or variables; rounds already run keep the variables they ran with."""
    checked = _checked_row(
        row.name if name is None else name, row.vars if vars is None else vars, f"Row {row.position}"
    )
    row.name, row.vars = checked["name"], checked["vars"]
    row.save(update_fields=["name", "vars"])
    return row


@transaction.atomic
def dataset_row_delete(*, row: DatasetRow) -> None:
    """Remove a row (its position stays free); a dataset keeps at least one row."""
    if row.dataset.rows.count() <= 1:
        raise ValidationError({"rows": "A dataset keeps at least one row; delete the dataset instead."})
    row.delete()


@transaction.atomic
def dataset_delete(*, dataset: Dataset) -> None:
    """Remove a dataset; comparisons that ran it keep their rounds and each round's variables."""
    dataset.delete()
