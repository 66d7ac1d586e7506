"""Writes for datasets: create one from rows, import a file, rename, add, edit and delete rows, delete; the
workspace's dataset of given rows. Every row is checked as a file's row is (files.row_from_record), against the
limits in `rows`."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models import Count, Max

from lab.files.services import file_create
from lab.models import Workspace

from ..assertions.services import row_assertions_parse
from ..field_errors import FieldErrors
from ..models import Dataset, DatasetRow
from .files import ZIP, decode, row_from_record, rows_parse
from .rows import MAX_DATASET_NAME, MAX_DATASET_ROWS, dataset_name_problem, row_size_problem
from .zips import with_file_references, zip_rows


@transaction.atomic
def dataset_create(*, workspace: Workspace, user, name: str, rows: Sequence[dict[str, Any]]) -> Dataset:
    """A dataset from rows of {"name", "vars", "assertions"}, numbered from 1; an unnamed row shows as "Row n"."""
    errors = FieldErrors()
    row_assertions: list[list[dict]] = []
    name = (name or "").strip()
    if problem := dataset_name_problem(name):
        errors.add("name", problem)
    if not 1 <= len(rows) <= MAX_DATASET_ROWS:
        errors.add("rows", f"A dataset has 1 to {MAX_DATASET_ROWS} rows; this has {len(rows)}.")
    for position, row in enumerate(rows, start=1):
        if not isinstance(row.get("vars"), dict) or not row["vars"]:
            errors.add("rows", f"Row {position}: vars: give at least one variable as an object of name → value.")
        elif found := row_size_problem(row["vars"]):
            errors.add("rows", f"Row {position}: {found[0]}: {found[1]}")
        checks, problems = row_assertions_parse(row.get("assertions"), row_label=f"Row {position}")
        row_assertions.append(checks)
        for message in problems:
            errors.add("rows", message)
    errors.raise_if_any()
    dataset = Dataset.objects.create(workspace=workspace, name=name, created_by=user)
    DatasetRow.objects.bulk_create(
        DatasetRow(
            dataset=dataset,
            position=position,
            name=(row.get("name") or "").strip(),
            vars=row["vars"],
            assertions=assertions,
        )
        for position, (row, assertions) in enumerate(zip(rows, row_assertions, strict=True), start=1)
    )
    return dataset


def dataset_import(*, workspace: Workspace, user, name: str, content: bytes | str, format: str) -> Dataset:
    """A dataset from a file's content in one of FORMATS, or a zip of rows and the images they name (zips)."""
    if format == ZIP:
        return _dataset_import_zip(workspace=workspace, user=user, name=name, content=content)
    with transaction.atomic():
        rows = rows_parse(content=decode(content), format=format)
        return dataset_create(workspace=workspace, user=user, name=name, rows=rows)


def _dataset_import_zip(*, workspace: Workspace, user, name: str, content: bytes | str) -> Dataset:
    """Every row and image is checked first (zip_rows); then the images are stored as workspace files (the same
    bytes already there are reused) and the rows name them. A failure removes the bytes this import stored."""
    if isinstance(content, str):
        raise ValidationError({"file": "Upload the zip as a file."})
    read = zip_rows(content)
    created: list[str] = []
    try:
        with transaction.atomic():
            ids = {}
            for path, data in read.images.items():
                stored, new = file_create(workspace=workspace, actor=user, stream=io.BytesIO(data), name=path)
                created += [stored.storage_name] if new else []
                ids[path] = stored.pk
            rows = [{**row, "vars": with_file_references(row["vars"], ids)} for row in read.rows]
            return dataset_create(workspace=workspace, user=user, name=name, rows=rows)
    except BaseException:
        for storage_name in created:
            default_storage.delete(storage_name)
        raise


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
    parsed = [row_assertions_parse(r.get("assertions"), row_label=f"Row {last + i}") for i, r in enumerate(rows, 1)]
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


def dataset_matching(*, workspace: Workspace, rows: Sequence[dict[str, Any]]) -> Dataset | None:
    """The newest dataset of `workspace` whose rows are exactly `rows` (names, variables and assertions, in order),
    or None. Only datasets with as many rows are read, newest first."""
    wanted = [((row.get("name") or "").strip(), row.get("vars"), row.get("assertions") or []) for row in rows]
    candidates = Dataset.objects.filter(workspace=workspace).annotate(count=Count("rows")).filter(count=len(wanted))
    for dataset in candidates.order_by("-created_at", "-id"):
        if list(dataset.rows.order_by("position").values_list("name", "vars", "assertions")) == wanted:
            return dataset
    return None


def dataset_free_name(*, workspace: Workspace, name: str) -> str:
    """`name`, or `name (2)`, `name (3)` … : the first no dataset of the workspace has."""
    taken = set(Dataset.objects.filter(workspace=workspace, name__startswith=name[:150]).values_list("name", flat=True))
    candidate, number = name[:MAX_DATASET_NAME], 1
    while candidate in taken:
        number += 1
        suffix = f" ({number})"
        candidate = name[: MAX_DATASET_NAME - len(suffix)] + suffix
    return candidate


@transaction.atomic
def dataset_for_rows(*, workspace: Workspace, user, name: str, rows: Sequence[dict[str, Any]]) -> Dataset:
    """The workspace's dataset with exactly these rows, else a new one called `name` (or `name (2)` … when that is
    taken): running the same rows again reuses their dataset instead of adding a copy."""
    Workspace.objects.select_for_update().filter(pk=workspace.pk).first()  # two runs of the same rows make one
    found = dataset_matching(workspace=workspace, rows=rows)
    if found is not None:
        return found
    return dataset_create(
        workspace=workspace, user=user, name=dataset_free_name(workspace=workspace, name=name), rows=rows
    )


@transaction.atomic
def dataset_delete(*, dataset: Dataset) -> None:
    """Remove a dataset; comparisons that ran it keep their rounds and each round's variables."""
    dataset.delete()
