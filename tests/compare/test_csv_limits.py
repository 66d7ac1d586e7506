"""A CSV file's columns and cells have limits, checked in one pass: a 600 KB header of 100,000 columns is refused
at once (it took 47 s of a web thread, then was stored) by the import, the preview and an experiment's `file:`
dataset, with a message naming the limit."""

import time

import pytest
from django.core.exceptions import ValidationError

from compare.datasets import files as dataset_files
from compare.datasets.files import MAX_CELL_CHARS
from compare.datasets.rows import MAX_ROW_VARIABLES
from compare.models import CompareGroup, Dataset
from tests.fixtures.experiments import sample

pytestmark = pytest.mark.django_db

GENEROUS_S = 10.0  # for all three requests; the quadratic check took 47 s for one


def columns(count: int) -> str:
    return ",".join(f"c{n}" for n in range(count)) + "\n" + ",".join("1" * count) + "\n"


def test_a_hundred_thousand_columns_are_refused_at_once_naming_the_limit(api, workspace):
    wide = columns(100_000)
    assert len(wide.encode()) > 600_000
    experiment = sample("minimal.yaml").read_text().split("dataset:")[0] + "dataset:\n  - file: wide.csv\n"
    warm = api.post("/api/v1/datasets/preview/", {"content": columns(2), "format": "csv"}, format="json")
    assert warm.status_code == 200  # the first request loads the URLconf and the API's modules: not timed
    started = time.monotonic()
    imported = api.post(
        "/api/v1/datasets/import/",
        {"workspace": workspace.pk, "name": "Wide", "content": wide, "format": "csv"},
        format="json",
    )
    previewed = api.post("/api/v1/datasets/preview/", {"content": wide, "format": "csv"}, format="json")
    run = api.post(
        "/api/v1/experiments/",
        {"workspace": workspace.pk, "file": experiment, "files": {"wide.csv": wide}},
        format="json",
    )
    elapsed = time.monotonic() - started
    limit = f"at most {MAX_ROW_VARIABLES:,} variables; this names 100,000."
    for response in (imported, previewed, run):
        assert response.status_code == 400 and limit in response.json()["file"][0], response.json()
    assert elapsed < GENEROUS_S, elapsed
    assert not Dataset.objects.exists() and not CompareGroup.objects.exists()


def test_the_column_limit_is_inclusive_and_repeated_names_are_still_found():
    assert len(dataset_files.rows_parse(content=columns(MAX_ROW_VARIABLES), format="csv")[0]["vars"]) == 1_000
    with pytest.raises(ValidationError) as caught:
        dataset_files.rows_parse(content="a,b,a,c,b\n1,2,3,4,5\n", format="csv")
    assert caught.value.messages == ["Line 1: column 3 repeats the name 'a'.", "Line 1: column 5 repeats the name 'b'."]


@pytest.mark.parametrize(
    "length, where",
    [(MAX_CELL_CHARS + 1, "Row 2 (line 3)"), (200_000, "Line 3")],  # the second is past the csv module's own cap
)
def test_a_cell_longer_than_the_limit_is_refused_naming_it(length, where):
    with pytest.raises(ValidationError) as caught:
        dataset_files.rows_parse(content=f"question\nfine\n{'x' * length}\n", format="csv")
    assert caught.value.messages == [f"{where}: a CSV cell has at most {MAX_CELL_CHARS:,} characters."]
    assert dataset_files.rows_parse(content=f"question\n{'x' * MAX_CELL_CHARS}\n", format="csv")
