"""Checking an experiment's dataset: rows written in the file, rows read from files, or one workspace dataset.

A row written in the file may carry its own `assertions` (promptfoo's `assert`), checked as a dataset row's are.
Row files go through the dataset import's own parser and rows written in the file through its row reader
(`compare.datasets.files`), so both say the same about a bad row.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django.core.exceptions import ValidationError

from ..assertions.services import assertions_parse
from ..datasets.files import format_for, row_from_record, rows_parse
from ..datasets.rows import MAX_DATASET_ROWS
from .reader import SectionReader, name_suffix
from .spec import Row


class DatasetReader(SectionReader):
    def _dataset(self, value: Any) -> tuple[list[Row], str | int | None]:
        if value is None:
            return [], None
        if isinstance(value, dict):
            value = [value]
        if not isinstance(value, list) or not value:
            self.problem("dataset", "a list of rows {name, vars}, files {file: path} or one {dataset: name}")
            return [], None
        rows: list[tuple[str, Row]] = []
        ref = None
        for index, entry in enumerate(value, start=1):
            where = f"dataset[{index}]{name_suffix(entry, 'name')}"
            if isinstance(entry, dict) and "dataset" in entry:
                if len(value) > 1 or set(entry) != {"dataset"}:
                    self.problem(where, "dataset: a workspace's dataset is used on its own, as the only entry")
                elif not isinstance(entry["dataset"], str | int) or isinstance(entry["dataset"], bool):
                    self.problem(where, "dataset: the name or id of one of the workspace's datasets")
                else:
                    ref = entry["dataset"]
            elif isinstance(entry, dict) and "file" in entry:
                rows += self._file_rows(entry, f"dataset[{index}] (file {entry.get('file')})")
            else:
                checks, entry = self._row_assertions(entry, where)
                problems: list[str] = []
                row = row_from_record(entry, where, problems)
                if isinstance(entry, dict) and "vars" not in entry:
                    problems = [f"{where}: vars: each entry is {{name, vars, assertions}} or {{file: path}}"]
                for message in problems:
                    self.problems.append(f"{self.source}: {message}")
                if row is not None and not problems:
                    rows.append((where, Row(row["name"], row["vars"], checks)))
        return self._named_rows(rows), ref

    def _row_assertions(self, entry: Any, where: str) -> tuple[list[dict], Any]:
        """A `{name, vars}` row's own checks (`assertions`, or promptfoo's `assert`), checked as a dataset row's are,
        and the row without them."""
        if not isinstance(entry, dict) or "vars" not in entry or not {"assertions", "assert"} & set(entry):
            return [], entry
        if "assertions" in entry and "assert" in entry:
            self.problem(where, "assert: write the row's checks under assertions or under assert, not both")
        rest = {key: value for key, value in entry.items() if key not in ("assertions", "assert")}
        try:
            return assertions_parse(entry.get("assertions", entry.get("assert")) or [], where="row"), rest
        except ValidationError as exc:
            for message in exc.message_dict["row"]:
                self.problem(where, f"assertions: {message}")
            return [], rest

    def _file_rows(self, entry: dict, where: str) -> list[tuple[str, Row]]:
        path = entry.get("file")
        if set(entry) != {"file"} or not isinstance(path, str) or not path.strip():
            self.problem(where, "file: a dataset file entry is only {file: path}")
            return []
        kind = format_for(path)
        if kind is None:
            self.problem(where, f"file: {path} is not .yaml, .yml, .json, .jsonl or .csv")
            return []
        try:
            text = self.files.read(path.strip())
        except (OSError, ValueError) as exc:
            self.problem(where, f"file: cannot read {path}: {exc}")
            return []
        try:
            parsed = rows_parse(content=text, format=kind)
        except ValidationError as exc:
            for message in exc.messages:
                self.problem(where, message)
            return []
        return [(f"{where}: row {i}", Row(r["name"], r["vars"])) for i, r in enumerate(parsed, start=1)]

    def _named_rows(self, rows: list[tuple[str, Row]]) -> list[Row]:
        """Unnamed rows are called row-1, row-2 … by position; names must be unique across all entries."""
        named = [(where, replace(row, name=row.name or f"row-{i}")) for i, (where, row) in enumerate(rows, start=1)]
        self._unique([(where, row.name) for where, row in named], "name", "dataset rows have unique names")
        if len(named) > MAX_DATASET_ROWS:
            self.problem("dataset", f"at most {MAX_DATASET_ROWS} rows; this has {len(named)}")
        return [row for _, row in named]
