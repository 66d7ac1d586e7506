"""Many rows of one table changed in one UPDATE, each to its own values: the batch writes of compare.rounds.worker
(a claim's outputs and rounds, a batch's answers and finishes, a checkpoint's partial texts).

On Postgres the new values go as one JSON parameter read back by `json_to_recordset`, its columns typed as the
model's: passing one array a column (`unnest`) made psycopg build each array literal in Python, 16 ms of CPU for
500 answers' 14 values (a claim or a write of a wave at 500 calls at once, on the thread the event loop shares its
interpreter with), against 4 ms for the JSON, which the C encoder writes and Postgres parses. Elsewhere (SQLite,
embedded mode) a VALUES list. Like `bulk_update`, no signals and no `save()`.
"""

from __future__ import annotations

import datetime
import decimal
import json
import math
import uuid
from typing import Any

from django.db import connection, models
from psycopg.types.json import Json, Jsonb

from .copy_insert import db_preparer


def update_rows(
    fields: list[str],
    rows: list[list],
    *,
    model: type[models.Model],
    expressions: dict[str, str] | None = None,
    only_status=(),
) -> list[int]:
    """UPDATE the rows of `model` in `rows` (each: id, then one value per field) in one statement; returns the ids
    updated.

    `expressions` replaces a field's new value (`{value}`, the row's value) with SQL of its own that may read the
    row as it is (`o`) and the new values (`v`); `only_status` limits the rows updated to those in these statuses."""
    if not rows:
        return []
    meta_fields = [model._meta.get_field(name) for name in fields]
    assignments = [
        f"{meta.column} = " + (expressions or {}).get(name, "{value}").format(value=f"v.{meta.column}")
        for name, meta in zip(fields, meta_fields, strict=True)
    ]
    preparers = [db_preparer(meta, connection) for meta in meta_fields]
    prepared = [[row[0], *(prepare(value) for prepare, value in zip(preparers, row[1:], strict=True))] for row in rows]
    columns = ["row_id", *(meta.column for meta in meta_fields)]
    if connection.vendor == "postgresql":
        types = [model._meta.pk.db_type(connection), *(meta.db_type(connection) for meta in meta_fields)]
        record = ", ".join(f"{column} {db_type}" for column, db_type in zip(columns, types, strict=True))
        source = f"SELECT * FROM json_to_recordset(%s::json) AS v({record})"  # noqa: S608 (names from the model)
        params: list[Any] = [_json([dict(zip(columns, values, strict=True)) for values in prepared])]
    else:
        source = "VALUES " + ", ".join(["(" + ", ".join(["%s"] * len(columns)) + ")"] * len(rows))
        params = [value for values in prepared for value in values]
    where = "o.id = v.row_id"
    if only_status:
        where += " AND o.status IN (" + ", ".join(["%s"] * len(only_status)) + ")"
        params.extend(only_status)
    # Only names from the model and constants are formatted in; every value is a parameter.
    table = model._meta.db_table
    sql = (
        f"WITH v({', '.join(columns)}) AS ({source}) "  # noqa: S608
        f"UPDATE {table} AS o SET {', '.join(assignments)} FROM v WHERE {where} RETURNING id"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [pk for (pk,) in cursor.fetchall()]


def _json(rows: list[dict[str, Any]]) -> str:
    return json.dumps([_finite(row) for row in rows], default=_json_value, ensure_ascii=False, separators=(",", ":"))


def _finite(row: dict[str, Any]) -> dict[str, Any]:
    # JSON has no NaN or infinity; Postgres reads them from text ("NaN", "Infinity") into a float column.
    if any(type(value) is float and not math.isfinite(value) for value in row.values()):
        return {k: str(v) if type(v) is float and not math.isfinite(v) else v for k, v in row.items()}
    return row


def _json_value(value: Any) -> Any:
    """A prepared value JSON does not hold, as text its column reads exactly (or, for a JSON column, its value)."""
    if isinstance(value, decimal.Decimal | uuid.UUID):
        return str(value)
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return f"{value.total_seconds()} seconds"
    if isinstance(value, Json | Jsonb):  # what a JSONField's preparation gives: its value goes as JSON
        return value.obj
    raise TypeError(f"{type(value).__name__} cannot be written by update_rows")
