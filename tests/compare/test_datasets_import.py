"""Datasets from files: CSV, JSON, JSONL and YAML read into rows of a name and variables of any type; every problem
names its row (and line); preview, rename and row edits through the API; another workspace's dataset is a 404."""

import json

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile

from compare.datasets import files as dataset_files
from compare.datasets import services as dataset_services
from compare.models import Dataset
from tests.fixtures.factories import make_workspace

pytestmark = pytest.mark.django_db

NESTED = {"order": {"id": 17, "items": [{"sku": "A1", "qty": 2}]}, "urgent": True, "note": None}


def problems(content: str, format: str) -> list[str]:
    with pytest.raises(ValidationError) as caught:
        dataset_files.rows_parse(content=content, format=format)
    return caught.value.messages


def test_csv_rows_take_their_variables_from_the_header_and_json_cells_stay_structured():
    content = 'question,context\nHow hot?,"{""max"": 100}"\n\n"Two, words",[not json\n'
    rows = dataset_files.rows_parse(content=content, format="csv")
    assert rows == [
        {"name": "", "vars": {"question": "How hot?", "context": {"max": 100}}},
        {"name": "", "vars": {"question": "Two, words", "context": "[not json"}},
    ]


def test_json_yaml_and_jsonl_keep_names_and_values_of_any_type():
    named = [{"name": "first", "vars": NESTED}, {"vars": {"q": 1.5}}]
    assert dataset_files.rows_parse(content=json.dumps(named), format="json") == [
        {"name": "first", "vars": NESTED},
        {"name": "", "vars": {"q": 1.5}},
    ]
    yaml_text = (
        "rows:\n  - name: first\n    vars:\n      order: {id: 17, items: [{sku: A1, qty: 2}]}\n      urgent: true\n"
    )
    assert dataset_files.rows_parse(content=yaml_text, format="yaml")[0]["vars"]["order"]["items"] == [
        {"sku": "A1", "qty": 2}
    ]
    jsonl = '{"q": "a", "n": [1, 2]}\n\n{"name": "b", "vars": {"q": "b"}}\n'
    assert dataset_files.rows_parse(content=jsonl, format="jsonl") == [
        {"name": "", "vars": {"q": "a", "n": [1, 2]}},
        {"name": "b", "vars": {"q": "b"}},
    ]


def test_csv_problems_name_the_row_and_the_line():
    content = "question,context\nfine,ok\ntoo,many,cells\n"
    assert problems(content, "csv") == ["Row 2 (line 3): has 3 cells; the first line names 2 columns."]
    assert problems("a,a,\n1,2,3\n", "csv") == [
        "Line 1: column 2 repeats the name 'a'.",
        "Line 1: column 3 has no name.",
    ]


def test_jsonl_problems_name_the_row_and_the_line():
    [message] = problems('{"q": 1}\n\n{"q": 2\n', "jsonl")
    assert message.startswith("Row 2 (line 3): not valid JSON (")


def test_json_and_yaml_problems_name_the_row_and_the_field():
    content = json.dumps([{"q": 1}, "just text", {"name": "x", "vars": []}, {"name": "x", "vars": {"q": 2}, "z": 1}])
    assert problems(content, "json") == [
        "Row 2: a row is an object of variables, or {name, vars}.",
        "Row 3: vars: give at least one variable as an object of name → value.",
        "Row 4: z: a row with vars has only a name beside them.",
    ]
    assert problems("- name: a\n  vars: {q: 1}\n- name: a\n  vars: {q: 2}\n", "yaml") == [
        "Row 2: name: Row 1 already has the name 'a'."
    ]
    assert problems("- {q: 1\n", "yaml")[0].startswith("Line 2: not valid YAML")
    assert problems('{"q": 1}', "json") == ['The file holds a list of rows (or {"rows": [...]}).']


def test_an_import_creates_the_dataset_with_its_rows_in_order(workspace, owner):
    dataset = dataset_services.dataset_import(
        workspace=workspace, user=owner, name="Tickets", content=b"\xef\xbb\xbfq\nfirst\nsecond\n", format="csv"
    )
    assert [(row.position, row.vars) for row in dataset.rows.order_by("position")] == [
        (1, {"q": "first"}),
        (2, {"q": "second"}),
    ]


def test_the_api_imports_an_uploaded_file_by_its_extension(api, workspace):
    upload = SimpleUploadedFile("rows.jsonl", b'{"q": "a"}\n{"q": "b"}\n')
    response = api.post(
        "/api/v1/datasets/import/", {"workspace": workspace.pk, "name": "Two", "file": upload}, format="multipart"
    )
    assert response.status_code == 201, response.json()
    assert response.json()["row_count"] == 2 and response.json()["rows"][1]["vars"] == {"q": "b"}


def test_the_api_refuses_a_file_with_problems_naming_each_row(api, workspace):
    body = {"workspace": workspace.pk, "name": "Bad", "format": "csv", "content": "q,r\n1,2\n3\n"}
    response = api.post("/api/v1/datasets/import/", body, format="json")
    assert response.status_code == 400
    assert "Row 2 (line 3): has 1 cells; the first line names 2 columns." in json.dumps(response.json())
    assert not Dataset.objects.exists()


def test_the_preview_shows_the_rows_and_variables_without_saving(api):
    content = "\n".join(json.dumps({"q": i, "extra": i} if i % 2 else {"q": i}) for i in range(1, 31))
    response = api.post("/api/v1/datasets/preview/", {"format": "jsonl", "content": content}, format="json")
    assert response.status_code == 200
    preview = response.json()
    assert (preview["row_count"], preview["variables"], len(preview["rows"])) == (30, ["q", "extra"], 20)
    assert not Dataset.objects.exists()


def test_a_dataset_is_renamed_and_its_rows_added_changed_and_deleted(api, workspace, owner):
    dataset = dataset_services.dataset_import(
        workspace=workspace, user=owner, name="Old", content="q\na\nb\n", format="csv"
    )
    assert api.patch(f"/api/v1/datasets/{dataset.pk}/", {"name": "New"}, format="json").json()["name"] == "New"
    added = api.post(
        f"/api/v1/datasets/{dataset.pk}/rows/", {"rows": [{"name": "c", "vars": {"q": {"deep": [1]}}}]}, format="json"
    )
    assert added.status_code == 201 and added.json()["row_count"] == 3
    changed = api.patch(f"/api/v1/datasets/{dataset.pk}/rows/1/", {"name": "first", "vars": {"q": "A"}}, format="json")
    assert changed.json() == {
        "id": changed.json()["id"],
        "position": 1,
        "name": "first",
        "vars": {"q": "A"},
        "assertions": [],
    }
    assert api.delete(f"/api/v1/datasets/{dataset.pk}/rows/2/").status_code == 204
    rows = api.get(f"/api/v1/datasets/{dataset.pk}/").json()["rows"]
    assert [(r["position"], r["name"], r["vars"]) for r in rows] == [
        (1, "first", {"q": "A"}),
        (3, "c", {"q": {"deep": [1]}}),
    ]
    bad = api.patch(f"/api/v1/datasets/{dataset.pk}/rows/1/", {"vars": {}}, format="json")
    assert bad.status_code == 400 and "Row 1: vars:" in json.dumps(bad.json())


def test_another_workspaces_dataset_is_not_found(api_for, stranger, workspace, owner):
    dataset = dataset_services.dataset_import(
        workspace=workspace, user=owner, name="Ours", content="q\na\n", format="csv"
    )
    client = api_for(stranger)
    assert client.get(f"/api/v1/datasets/{dataset.pk}/").status_code == 404
    assert client.patch(f"/api/v1/datasets/{dataset.pk}/", {"name": "x"}, format="json").status_code == 404
    assert client.delete(f"/api/v1/datasets/{dataset.pk}/").status_code == 404
    rows = {"rows": [{"vars": {"q": 1}}]}
    assert client.post(f"/api/v1/datasets/{dataset.pk}/rows/", rows, format="json").status_code == 404
    assert client.delete(f"/api/v1/datasets/{dataset.pk}/rows/1/").status_code == 404
    body = {"workspace": workspace.pk, "name": "x", "format": "csv", "content": "q\n1\n"}
    # A workspace named in the body is input: not one of theirs is a 400 on that field, as everywhere.
    assert client.post("/api/v1/datasets/import/", body, format="json").status_code == 400
    theirs = make_workspace(stranger, "Theirs")
    assert client.post("/api/v1/datasets/import/", {**body, "workspace": theirs.pk}, format="json").status_code == 201
    assert dataset.rows.count() == 1 and Dataset.objects.get(pk=dataset.pk).name == "Ours"
