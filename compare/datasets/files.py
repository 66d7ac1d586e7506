"""Reading dataset files: CSV, JSON, JSONL or YAML into rows, and the preview of an import (writes: datasets.services).

Reading rows is shared with experiment files (their `dataset: [{file: …}]` entries). A row is a name and
variables of any JSON type, written either as `{"name": …, "vars": {…}}` or as a flat record whose every field
is a variable (CSV rows always are). Every problem names its row, and its line where the format has lines.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

import yaml
from django.core.exceptions import ValidationError

from lab import safe_yaml, values

from .rows import MAX_DATASET_ROWS, MAX_ROW_VARIABLES, row_size_problem

FORMATS = ("csv", "json", "jsonl", "yaml")
ZIP = "zip"  # rows and the images they name (datasets.zips)
IMPORT_FORMATS = (*FORMATS, ZIP)  # what an import takes: a rows file, or a zip of one and its images
EXTENSIONS = {".csv": "csv", ".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".yaml": "yaml", ".yml": "yaml"}
MAX_IMPORT_BYTES = 5 * 1024 * 1024
MAX_CELL_CHARS = 100_000  # a CSV cell; below the csv module's own limit, so every long cell gets this message
CELL_TOO_LONG = f"a CSV cell has at most {MAX_CELL_CHARS:,} characters."
PREVIEW_ROWS = 20


def format_for(filename: str) -> str | None:
    """The format a file name's extension says (`zip` for a zip of rows and images), or None."""
    suffix = PurePath(filename or "").suffix.lower()
    return ZIP if suffix == ".zip" else EXTENSIONS.get(suffix)


def decode(content: bytes | str) -> str:
    """File bytes as text (UTF-8, with or without a byte-order mark); ValidationError on anything else."""
    if isinstance(content, str):
        return content
    if len(content) > MAX_IMPORT_BYTES:
        raise ValidationError({"file": f"The file is larger than {MAX_IMPORT_BYTES // (1024 * 1024)} MB."})
    try:
        return content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValidationError({"file": f"The file is not UTF-8 text (byte {exc.start} is not)."}) from None


def rows_parse(*, content: str, format: str) -> list[dict[str, Any]]:
    """Rows as `{"name", "vars"}` dicts; raises ValidationError({"file": [one message per problem]})."""
    if format not in FORMATS:
        raise ValidationError({"format": f"The format is one of: {', '.join(FORMATS)}."})
    problems: list[str] = []
    records = {"csv": _csv_records, "json": _json_records, "jsonl": _jsonl_records, "yaml": _yaml_records}[format](
        content, problems
    )
    rows = _rows(records, problems) if not problems else []
    if not problems and not 1 <= len(rows) <= MAX_DATASET_ROWS:
        problems.append(f"A dataset has 1 to {MAX_DATASET_ROWS} rows; this file has {len(rows)}.")
    if problems:
        raise ValidationError({"file": problems})
    return rows


# A record is (where, value): `where` names the row for messages, e.g. "Row 3" or "Row 3 (line 4)".
Record = tuple[str, Any]


def _csv_records(content: str, problems: list[str]) -> list[Record]:
    reader = csv.reader(io.StringIO(content))
    try:
        header = next(reader, None)
        if not header or not any(cell.strip() for cell in header):
            problems.append("Line 1: the first line names the variables, one per column.")
            return []
        if len(header) > MAX_ROW_VARIABLES:
            problems.append(f"Line 1: a row has at most {MAX_ROW_VARIABLES:,} variables; this names {len(header):,}.")
            return []
        names = [cell.strip() for cell in header]
        problems += _header_problems(names)
        records = []
        for cells in reader:
            if not any(cell.strip() for cell in cells):
                continue  # a blank line
            where = f"Row {len(records) + 1} (line {reader.line_num})"
            if len(cells) != len(names):
                problems.append(f"{where}: has {len(cells)} cells; the first line names {len(names)} columns.")
            if any(len(cell) > MAX_CELL_CHARS for cell in cells):
                problems.append(f"{where}: {CELL_TOO_LONG}")
                return []
            records.append((where, {name: _cell(cell) for name, cell in zip(names, cells, strict=False)}))
    except csv.Error as exc:
        # The csv module's own cap on a cell (131,072 characters) is above ours: say ours.
        too_long = str(exc).startswith("field larger than field limit")
        problems.append(f"Line {reader.line_num}: " + (CELL_TOO_LONG if too_long else f"not readable as CSV ({exc})."))
        return []
    return records


def _header_problems(names: list[str]) -> list[str]:
    # One pass with the first column of each name at hand: a list lookup per column took 47 s on 100,000 columns.
    first: dict[str, int] = {}
    problems = []
    for index, name in enumerate(names, start=1):
        if not name:
            problems.append(f"Line 1: column {index} has no name.")
        elif first.setdefault(name, index) != index:
            problems.append(f"Line 1: column {index} repeats the name {name!r}.")
    return problems


def _cell(text: str) -> Any:
    # CSV has only text; a cell holding a JSON object or list is read as one, so nested values survive a round trip.
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            return json.loads(stripped)
        except (ValueError, RecursionError):
            pass
    return text


def _json_records(content: str, problems: list[str]) -> list[Record]:
    try:
        data = json.loads(content)
    except ValueError as exc:
        problems.append(f"Not valid JSON: {exc}.")
        return []
    except RecursionError:
        problems.append(f"Nested more than {values.MAX_DEPTH} levels deep.")
        return []
    return _listed(data, problems)


def _yaml_records(content: str, problems: list[str]) -> list[Record]:
    try:
        data = safe_yaml.load(content)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"Line {mark.line + 1}: " if mark is not None else ""
        problems.append(f"{where}not valid YAML ({getattr(exc, 'problem', None) or exc}).")
        return []
    except RecursionError:
        problems.append(f"Nested more than {values.MAX_DEPTH} levels deep.")
        return []
    return _listed(data, problems)


def _listed(data: Any, problems: list[str]) -> list[Record]:
    if isinstance(data, dict) and set(data) == {"rows"}:
        data = data["rows"]
    if not isinstance(data, list):
        problems.append('The file holds a list of rows (or {"rows": [...]}).')
        return []
    return [(f"Row {index}", value) for index, value in enumerate(data, start=1)]


def _jsonl_records(content: str, problems: list[str]) -> list[Record]:
    records = []
    for line_number, line in enumerate(content.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"Row {len(records) + 1} (line {line_number})"
        try:
            records.append((where, json.loads(line)))
        except RecursionError:
            problems.append(f"{where}: nested more than {values.MAX_DEPTH} levels deep.")
            records.append((where, None))
        except ValueError as exc:
            problems.append(f"{where}: not valid JSON ({exc}).")
            records.append((where, None))
    return records


def _rows(records: list[Record], problems: list[str]) -> list[dict[str, Any]]:
    rows, names = [], {}
    for where, value in records:
        row = row_from_record(value, where, problems)
        if row is None:
            continue
        if row["name"]:
            if row["name"] in names:
                problems.append(f"{where}: name: {names[row['name']]} already has the name {row['name']!r}.")
            names.setdefault(row["name"], where.split(" (")[0])
        rows.append(row)
    return rows


def row_from_record(value: Any, where: str, problems: list[str]) -> dict[str, Any] | None:
    """`{"name", "vars"}` or a flat record of variables, as `{"name", "vars"}`; None (and a problem) otherwise,
    also when a part of it cannot be stored (lab.values) or is larger than a row may be (rows.row_size_problem)."""
    row = _row_shape(value, where, problems)
    if row is not None and (found := values.value_problem(row)):
        path, problem = found
        problems.append(f"{where}: {values.dotted(path)}: {problem}")
        return None
    if row is not None and (found := row_size_problem(row["vars"])):
        problems.append(f"{where}: {found[0]}: {found[1]}")
        return None
    return row


def _row_shape(value: Any, where: str, problems: list[str]) -> dict[str, Any] | None:
    if not isinstance(value, dict):
        problems.append(f"{where}: a row is an object of variables, or {{name, vars}}.")
        return None
    if "vars" in value:
        extra = sorted(set(value) - {"name", "vars"})
        if extra:
            problems.append(f"{where}: {', '.join(extra)}: a row with vars has only a name beside them.")
        if not isinstance(value["vars"], dict) or not value["vars"]:
            problems.append(f"{where}: vars: give at least one variable as an object of name → value.")
            return None
        name = value.get("name")
        if name is not None and not isinstance(name, str | int | float):
            problems.append(f"{where}: name: a row's name is text.")
            return None
        return {"name": "" if name is None else str(name).strip(), "vars": value["vars"]}
    if not value:
        problems.append(f"{where}: has no variables.")
        return None
    bad = [str(key) for key in value if not isinstance(key, str) or not key.isidentifier()]
    if bad:
        problems.append(
            f"{where}: {', '.join(bad)}: a variable's name is letters, digits and _, not starting with a digit."
        )
        return None
    return {"name": "", "vars": value}


@dataclass(frozen=True)
class Preview:
    format: str
    row_count: int
    variables: list[str]  # every variable any row gives, in order of first appearance
    rows: list[dict[str, Any]]  # the first PREVIEW_ROWS rows


def dataset_preview(*, content: bytes | str, format: str) -> Preview:
    """What an import would create, without saving anything."""
    rows = rows_parse(content=decode(content), format=format)
    variables = list(dict.fromkeys(name for row in rows for name in row["vars"]))
    return Preview(format=format, row_count=len(rows), variables=variables, rows=rows[:PREVIEW_ROWS])
