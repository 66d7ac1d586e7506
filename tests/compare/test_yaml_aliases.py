"""Small YAML never becomes large data: an alias bomb (700 bytes that expand to half a million values) is refused on
every way YAML comes in, quickly and with nothing stored; a dataset row's values and the row itself have a size
limit, named in the message."""

import json
import re
import time
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from compare.datasets.rows import MAX_ROW_CHARS, MAX_VALUE_CHARS
from compare.experiments.structured import answer_check
from compare.models import CompareGroup, Dataset, DatasetRow
from compare.prompts.models import Prompt
from lab import safe_yaml
from tests.fixtures.experiments import sample

pytestmark = pytest.mark.django_db

REFUSED = "aliases (*name) are not accepted"
GENEROUS_S = 5.0  # each refusal takes milliseconds; expanding the bomb took seconds and a gigabyte


def bomb(indent: str) -> str:
    """Variables a0 … a5, each nine aliases to the one before: a5 alone is 9**6 = 531,441 strings."""
    lines = [f"{indent}a0: &a0 [{', '.join(['lol lol lol lol lol lol lol lol lol lol lol'] * 9)}]"]
    lines += [f"{indent}a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]" for n in range(1, 6)]
    return "\n".join(lines) + "\n"


DATASET = "- name: bomb\n  vars:\n" + bomb("    ")
LIBRARY = "prompt-library: 1\nprompts:\n  - name: Bomb\n    versions:\n      - number: 1\n        text: hi\n"
LIBRARY += "        variables:\n" + bomb("          ")
FORMSET = {"TOTAL_FORMS": "0", "INITIAL_FORMS": "0", "MIN_NUM_FORMS": "0", "MAX_NUM_FORMS": "10"}
EXPERIMENT = sample("minimal.yaml").read_text().split("dataset:")[0] + "dataset:\n" + DATASET


class Clock:
    def __enter__(self):
        self.started = time.monotonic()
        return self

    def __exit__(self, *exc):
        self.seconds = time.monotonic() - self.started


def test_the_bomb_is_small_and_the_loader_refuses_it_with_its_line():
    assert 600 <= len(DATASET.encode()) <= 800
    with pytest.raises(safe_yaml.AliasError) as caught:
        safe_yaml.load(DATASET)
    assert REFUSED in str(caught.value) and (caught.value.problem_mark.line, caught.value.problem_mark.column) == (
        3,
        13,
    )  # a1's first *a0


def test_the_api_import_and_preview_refuse_the_bomb_and_store_nothing(api, workspace):
    for path, body in [
        ("/api/v1/datasets/import/", {"workspace": workspace.pk, "name": "Bomb", "content": DATASET, "format": "yaml"}),
        ("/api/v1/datasets/preview/", {"content": DATASET, "format": "yaml"}),
    ]:
        with Clock() as clock:
            response = api.post(path, body, format="json")
        assert response.status_code == 400 and clock.seconds < GENEROUS_S
        assert REFUSED in " ".join(response.json()["file"]), response.json()
    assert not Dataset.objects.exists() and not DatasetRow.objects.exists()


def test_the_import_page_refuses_the_bomb_on_the_preview_and_on_the_confirmation(client, owner, workspace):
    client.force_login(owner)
    with Clock() as clock:
        preview = client.post(
            f"/w/{workspace.pk}/datasets/preview/", {"name": "Bomb", "text": DATASET, "format": "yaml"}
        )
        confirm = client.post(
            f"/w/{workspace.pk}/datasets/import/", {"name": "Bomb", "content": DATASET, "format": "yaml"}
        )
    assert clock.seconds < GENEROUS_S
    for response in (preview, confirm):
        assert response.status_code == 400 and REFUSED in response.content.decode()
    assert not Dataset.objects.exists()


def test_an_experiment_file_or_form_with_the_bomb_is_refused_by_the_api_and_the_pages(api, client, owner, workspace):
    with Clock() as clock:
        response = api.post("/api/v1/experiments/", {"workspace": workspace.pk, "file": EXPERIMENT}, format="json")
    assert response.status_code == 400 and clock.seconds < GENEROUS_S
    assert REFUSED in " ".join(response.json()["file"]), response.json()
    client.force_login(owner)
    upload = {"kind": "upload", "config": _file("bomb.yaml", EXPERIMENT)}
    page = client.post(f"/w/{workspace.pk}/experiments/estimate/", upload)
    assert page.status_code == 400 and REFUSED in page.content.decode()
    management = {f"{prefix}-{key}": value for prefix in ("params", "prompts") for key, value in FORMSET.items()}
    built = client.post(f"/w/{workspace.pk}/experiments/estimate/", {"name": "Bomb", "rows": DATASET, **management})
    assert built.status_code == 400 and REFUSED in built.content.decode()
    assert not CompareGroup.objects.exists()


def test_a_prompt_library_with_the_bomb_is_refused_by_the_api_and_the_page(api, client, owner, workspace):
    with Clock() as clock:
        response = api.post(f"/api/v1/workspaces/{workspace.pk}/prompt-library/", {"yaml": LIBRARY}, format="json")
    assert response.status_code == 400 and clock.seconds < GENEROUS_S
    assert REFUSED in " ".join(response.json()["yaml"]), response.json()
    client.force_login(owner)
    page = client.post(f"/w/{workspace.pk}/prompts/import/", {"yaml": LIBRARY}, follow=True)
    assert REFUSED in page.content.decode()
    assert not Prompt.objects.exists()


def test_a_models_structured_answer_with_aliases_is_invalid_not_expanded():
    checked = answer_check("a0: &a0 [x, x]\na1: [*a0, *a0]", schema={"type": "object"}, format="yaml")
    assert not checked.valid and REFUSED in checked.errors[0]


def test_a_rows_value_and_a_whole_row_have_a_size_limit_named_in_the_message(api, workspace):
    long_value = [{"name": "long", "vars": {"text": "x" * (MAX_VALUE_CHARS + 1)}}]
    wide_row = [
        {"name": "wide", "vars": {f"v{n}": "x" * MAX_VALUE_CHARS for n in range(MAX_ROW_CHARS // MAX_VALUE_CHARS)}}
    ]
    for rows, field, limit in [(long_value, "vars.text", MAX_VALUE_CHARS), (wide_row, "vars", MAX_ROW_CHARS)]:
        created = api.post("/api/v1/datasets/", {"workspace": workspace.pk, "name": "Big", "rows": rows}, format="json")
        imported = api.post(
            "/api/v1/datasets/import/",
            {"workspace": workspace.pk, "name": "Big", "content": json.dumps(rows), "format": "json"},
            format="json",
        )
        for response, key in [(created, "rows"), (imported, "file")]:
            assert response.status_code == 400, response.json()
            assert f"Row 1: {field}: " in response.json()[key][0] and f"{limit:,} characters" in response.json()[key][0]
    assert not Dataset.objects.exists()


def _file(name: str, text: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, text.encode(), content_type="application/yaml")


def test_no_module_but_safe_yaml_loads_yaml():
    root = Path(__file__).resolve().parents[2]
    loading = re.compile(r"\byaml\.(safe_load|load|full_load|unsafe_load|load_all|safe_load_all)\(")
    found = [
        str(path.relative_to(root))
        for app in ("lab", "compare", "judging", "voting", "promptlab")
        for path in (root / app).rglob("*.py")
        if loading.search(path.read_text()) and path != root / "lab" / "safe_yaml.py"
    ]
    assert found == []
