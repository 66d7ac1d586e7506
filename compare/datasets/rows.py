"""A dataset's limits and the rules every way of writing rows asks: the name, how many rows, and how large a row
may be (a file's import, the API's rows, an experiment's rows, rounds saved as rows)."""

from __future__ import annotations

import json
from typing import Any

from lab import values

MAX_DATASET_ROWS = 1000
MAX_DATASET_NAME = 200  # Dataset.name's length
# A dataset row's size, as the JSON it is stored as: a long document fits in one value, and a file's rows cannot
# grow a row past these (safe_yaml refuses aliases, so a row is never larger than its text).
MAX_VALUE_CHARS = 200_000  # one variable's value
MAX_ROW_CHARS = 1_000_000  # all of a row's variables with their names
MAX_ROW_VARIABLES = 1_000  # a CSV file's columns too


def dataset_name_problem(name: str) -> str | None:
    """Why `name` (stripped) cannot name a dataset: the one rule for creating and renaming one, by API or page."""
    return values.name_problem(name, noun="dataset", max_length=MAX_DATASET_NAME)


def row_size_problem(vars: dict[str, Any]) -> tuple[str, str] | None:
    """The field (`vars.<name>`, or `vars`) that makes a row larger than MAX_VALUE_CHARS / MAX_ROW_CHARS or gives more
    than MAX_ROW_VARIABLES, and why; None when the row fits. Every way a row is written asks this
    (services.dataset_create, files.row_from_record)."""
    if len(vars) > MAX_ROW_VARIABLES:
        return "vars", f"a row has at most {MAX_ROW_VARIABLES:,} variables; this one has {len(vars):,}."
    total = 0
    for name, value in vars.items():
        size = len(value) if isinstance(value, str) else len(json.dumps(value, ensure_ascii=False))
        if size > MAX_VALUE_CHARS:
            return f"vars.{name}", f"a value has at most {MAX_VALUE_CHARS:,} characters; this one has {size:,}."
        total += len(name) + size
    if total > MAX_ROW_CHARS:
        return "vars", f"a row has at most {MAX_ROW_CHARS:,} characters of variables; this one has {total:,}."
    return None
